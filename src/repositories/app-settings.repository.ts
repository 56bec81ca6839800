import { sql } from 'kysely';
import type { Executor } from '../db/transaction.js';
import { anyOf } from './sql-helpers.js';

/** An app's settings, the vendor's "map settings": boolean values by key. */
export class AppSettingsRepository {
  constructor(private readonly db: Executor) {}

  /** The app's settings, in key order. */
  async list(appId: string, tx: Executor = this.db): Promise<Array<{ key: string; value: boolean }>> {
    return tx.selectFrom('app_settings').select(['key', 'value']).where('app_id', '=', appId).orderBy('key').execute();
  }

  async count(appId: string, tx: Executor = this.db): Promise<number> {
    const row = await tx
      .selectFrom('app_settings')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('app_id', '=', appId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** How many of `keys` the app has set already. */
  async countExisting(appId: string, keys: readonly string[], tx: Executor = this.db): Promise<number> {
    if (keys.length === 0) return 0;
    const row = await tx
      .selectFrom('app_settings')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('app_id', '=', appId)
      .where('key', '=', anyOf(keys))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Sets each key to its value, in one statement (keys in order, so racing writers queue rather than deadlock). */
  async upsert(appId: string, settings: ReadonlyArray<{ key: string; value: boolean }>, tx: Executor = this.db): Promise<void> {
    if (settings.length === 0) return;
    const sorted = [...settings].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    await sql`
      insert into app_settings (app_id, key, value)
      select ${appId}, s.key, s.value
      from unnest(${sorted.map((s) => s.key)}::text[], ${sorted.map((s) => String(s.value))}::boolean[]) as s (key, value)
      on conflict (app_id, key) do update set value = excluded.value, updated_at = now()`.execute(tx);
  }

  /** Removes the given keys, or every setting of the app when `keys` is undefined; the number removed. */
  async delete(appId: string, keys: readonly string[] | undefined, tx: Executor = this.db): Promise<number> {
    let query = tx.deleteFrom('app_settings').where('app_id', '=', appId);
    if (keys) query = query.where('key', '=', anyOf(keys));
    const result = await query.executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
