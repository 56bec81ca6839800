import { sql, type Selectable } from 'kysely';
import type { ModerationHooksTable } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';

/** An app's moderation hook as stored (what the set-up loader hands the Moderator, with its times). */
export interface StoredHook {
  url: string;
  enabled: boolean;
  timeoutMs: number;
  onFailure: 'open' | 'closed';
  /** Signs each call (X-Parley-Signature). */
  secret: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface HookValues {
  url: string;
  enabled: boolean;
  timeoutMs: number;
  onFailure: 'open' | 'closed';
  secret: string;
}

/** The moderation hook of each app (moderation_hooks): at most one per app. */
export class ModerationHooksRepository {
  constructor(private readonly db: Executor) {}

  async get(appId: string, tx: Executor = this.db): Promise<StoredHook | undefined> {
    const row = await tx.selectFrom('moderation_hooks').selectAll().where('app_id', '=', appId).executeTakeFirst();
    return row ? toStoredHook(row) : undefined;
  }

  /** Creates the app's hook or replaces it whole (its creation time kept). */
  async upsert(appId: string, values: HookValues, tx: Executor = this.db): Promise<StoredHook> {
    // Field by field: `values` may come from a body holding more fields than its type names.
    const row = await tx
      .insertInto('moderation_hooks')
      .values({ app_id: appId, url: values.url, enabled: values.enabled, timeout_ms: values.timeoutMs, on_failure: values.onFailure, secret: values.secret })
      .onConflict((oc) =>
        oc.column('app_id').doUpdateSet({
          url: values.url,
          enabled: values.enabled,
          timeout_ms: values.timeoutMs,
          on_failure: values.onFailure,
          secret: values.secret,
          updated_at: sql`now()`,
        }),
      )
      .returningAll()
      .executeTakeFirstOrThrow();
    return toStoredHook(row);
  }

  /** Deletes the app's hook; whether it had one. */
  async delete(appId: string, tx: Executor = this.db): Promise<boolean> {
    const row = await tx.deleteFrom('moderation_hooks').where('app_id', '=', appId).returning('app_id').executeTakeFirst();
    return row !== undefined;
  }
}

function toStoredHook(row: Selectable<ModerationHooksTable>): StoredHook {
  return {
    url: row.url,
    enabled: row.enabled,
    timeoutMs: row.timeout_ms,
    onFailure: row.on_failure,
    secret: row.secret,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
