import type { Selectable } from 'kysely';
import type { ManagementKeysTable } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';

export type ManagementKeyRow = Selectable<ManagementKeysTable>;

/** The deployment's management credentials (docs/management-api.md): not rows of any app. */
export class ManagementKeysRepository {
  constructor(private readonly db: Executor) {}

  /** Inserts a credential; undefined when the key is taken (the caller draws another). */
  async create(values: { key: string; secretHash: string; name: string }, tx: Executor = this.db): Promise<ManagementKeyRow | undefined> {
    return tx
      .insertInto('management_keys')
      .values({ key: values.key, secret_hash: values.secretHash, name: values.name })
      .onConflict((oc) => oc.column('key').doNothing())
      .returningAll()
      .executeTakeFirst();
  }

  async get(key: string, tx: Executor = this.db): Promise<ManagementKeyRow | undefined> {
    return tx.selectFrom('management_keys').selectAll().where('key', '=', key).executeTakeFirst();
  }

  async list(tx: Executor = this.db): Promise<ManagementKeyRow[]> {
    return tx.selectFrom('management_keys').selectAll().orderBy('created_at').orderBy('key').execute();
  }

  async count(tx: Executor = this.db): Promise<number> {
    const row = await tx.selectFrom('management_keys').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async delete(key: string, tx: Executor = this.db): Promise<boolean> {
    const result = await tx.deleteFrom('management_keys').where('key', '=', key).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }
}
