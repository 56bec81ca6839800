import { sql, type Selectable } from 'kysely';
import type { ModerationReasonsTable } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';

export type ReasonRow = Selectable<ModerationReasonsTable>;

export interface ReasonValues {
  id: string;
  name: string;
  description: string | null;
}

/** An app's reasons as stored: its own rows (own reasons, and built-in ones it changed) and the built-in ones it deleted. */
export class ReasonsRepository {
  constructor(private readonly db: Executor) {}

  /** The app's rows, oldest first, and the ids of the built-in reasons it deleted. */
  async list(appId: string, tx: Executor = this.db): Promise<{ rows: ReasonRow[]; deleted: Set<string> }> {
    const rows = await tx.selectFrom('moderation_reasons').selectAll().where('app_id', '=', appId).orderBy('created_at').orderBy('id').execute();
    const deleted = await this.deletedDefaults(appId, tx);
    return { rows, deleted };
  }

  async get(appId: string, id: string, tx: Executor = this.db): Promise<ReasonRow | undefined> {
    return tx.selectFrom('moderation_reasons').selectAll().where('app_id', '=', appId).where('id', '=', id).executeTakeFirst();
  }

  /** Whether the app deleted the built-in reason with this id. */
  async isDeletedDefault(appId: string, id: string, tx: Executor = this.db): Promise<boolean> {
    const row = await tx.selectFrom('moderation_deleted_defaults').select('id').where('app_id', '=', appId).where('kind', '=', 'reason').where('id', '=', id).executeTakeFirst();
    return row !== undefined;
  }

  private async deletedDefaults(appId: string, tx: Executor): Promise<Set<string>> {
    const rows = await tx.selectFrom('moderation_deleted_defaults').select('id').where('app_id', '=', appId).where('kind', '=', 'reason').execute();
    return new Set(rows.map((row) => row.id));
  }

  /**
   * Makes the app's reason writes take turns until the transaction ends (an advisory lock of
   * the app's reasons), so that the limit and the "already exists" check hold under concurrent creates.
   */
  async lock(appId: string, tx: Executor): Promise<void> {
    await sql`select pg_advisory_xact_lock(hashtextextended(${`moderation_reasons:${appId}`}, 0))`.execute(tx);
  }

  /** How many rows the app has, those of the given ids (its changed built-in reasons) aside. */
  async countExcept(appId: string, ids: readonly string[], tx: Executor = this.db): Promise<number> {
    let query = tx
      .selectFrom('moderation_reasons')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('app_id', '=', appId);
    if (ids.length > 0) query = query.where('id', 'not in', [...ids]);
    const row = await query.executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Inserts a reason; an existing id rejects with UniqueViolation. */
  async create(appId: string, reason: ReasonValues, createdAt: Date, tx: Executor = this.db): Promise<ReasonRow> {
    return tx
      .insertInto('moderation_reasons')
      .values({ app_id: appId, id: reason.id, name: reason.name, description: reason.description, created_at: createdAt, updated_at: new Date() })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async update(appId: string, id: string, changes: { name?: string; description?: string }, tx: Executor = this.db): Promise<ReasonRow | undefined> {
    const set: { updated_at: Date; name?: string; description?: string } = { updated_at: new Date() };
    if (changes.name !== undefined) set.name = changes.name;
    if (changes.description !== undefined) set.description = changes.description;
    return tx.updateTable('moderation_reasons').set(set).where('app_id', '=', appId).where('id', '=', id).returningAll().executeTakeFirst();
  }

  async delete(appId: string, id: string, tx: Executor = this.db): Promise<boolean> {
    const result = await tx.deleteFrom('moderation_reasons').where('app_id', '=', appId).where('id', '=', id).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /** Records that the app deleted a built-in reason. */
  async addDeletedDefault(appId: string, id: string, tx: Executor = this.db): Promise<void> {
    await tx
      .insertInto('moderation_deleted_defaults')
      .values({ app_id: appId, kind: 'reason', id, deleted_at: new Date() })
      .onConflict((oc) => oc.columns(['app_id', 'kind', 'id']).doNothing())
      .execute();
  }

  /** A deleted built-in reason made again: it is no longer deleted. */
  async removeDeletedDefault(appId: string, id: string, tx: Executor = this.db): Promise<void> {
    await tx.deleteFrom('moderation_deleted_defaults').where('app_id', '=', appId).where('kind', '=', 'reason').where('id', '=', id).execute();
  }
}
