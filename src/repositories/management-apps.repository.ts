import { sql } from 'kysely';
import type { Executor } from '../db/transaction.js';
import type { AppRow } from './app-rows.js';
import type { CredentialCache } from './credential-cache.js';
import { escapeLike } from './sql-helpers.js';

/** An app as the management API lists it: deleting when its delete has begun and not finished. */
export interface ManagedAppRow extends AppRow {
  deleting: boolean;
}

export interface AppKeyRow {
  app_id: string;
  key_hint: string;
  name: string;
  scope: 'fullAccess' | 'authOnly';
}

/**
 * The order in which an app's rows are deleted: what other rows point at (or what a trigger
 * of another table touches) goes after them. Messages go before groups, whose delete trigger
 * would otherwise take a whole group's history in one statement; the counters that triggers keep
 * (conversation_versions, user_counts) after the rows that write them. Tables with an `app_id`
 * column not named here (added by later migrations) follow in name order, and every pass goes
 * over all of them again until one deletes nothing.
 */
const PURGE_ORDER = [
  'api_keys',
  'events',
  'webhooks',
  'app_settings',
  'app_rate_limits',
  'message_reactions',
  'messages',
  'conversation_states',
  'user_conversations',
  'conversations',
  'conversation_versions',
  'group_scope_permissions',
  'group_members',
  'group_bans',
  'groups',
  'auth_tokens',
  'friends',
  'blocked_users',
  'users',
  'user_counts',
  'role_permissions',
  'role_restricted_features',
  'roles',
];

/** Passes over the tables before giving up on a table that keeps getting rows. */
const MAX_PASSES = 10;

/**
 * The apps of the deployment as the management API sees them: pages of apps with their keys,
 * the usage counts of a period, and an app's delete (its keys, then its rows in small batches,
 * then the app itself).
 */
export class ManagementAppsRepository {
  constructor(
    private readonly db: Executor,
    /** Key lookups cached for authentication, forgotten here when an app's keys go. */
    private readonly credentials?: CredentialCache,
  ) {}

  /** The app in `region`, with whether its delete has begun. */
  async get(appId: string, region: string, tx: Executor = this.db): Promise<ManagedAppRow | undefined> {
    const row = await tx
      .selectFrom('apps')
      .leftJoin('app_deletions as d', 'd.app_id', 'apps.id')
      .select(['apps.id', 'apps.name', 'apps.region', 'apps.created_at', 'd.app_id as deleting_id'])
      .where('apps.id', '=', appId)
      .where('apps.region', '=', region)
      .executeTakeFirst();
    return row && { id: row.id, name: row.name, region: row.region, created_at: row.created_at, deleting: row.deleting_id !== null };
  }

  /** Whether the app exists in `region` and is not being deleted, locking its row until the transaction ends. */
  async lockActive(appId: string, region: string, tx: Executor): Promise<boolean> {
    const row = await tx
      .selectFrom('apps')
      .select('id')
      .where('id', '=', appId)
      .where('region', '=', region)
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('app_deletions').select('app_id').where('app_deletions.app_id', '=', appId))))
      .forUpdate()
      .executeTakeFirst();
    return row !== undefined;
  }

  /** A page of the apps of `region`, oldest first, and how many match in all. */
  async list(region: string, filter: { search?: string; limit: number; offset: number }, tx: Executor = this.db): Promise<{ rows: ManagedAppRow[]; total: number }> {
    let query = tx.selectFrom('apps').where('apps.region', '=', region);
    if (filter.search) {
      const pattern = `%${escapeLike(filter.search)}%`;
      query = query.where((eb) => eb.or([eb('apps.id', 'ilike', pattern), eb('apps.name', 'ilike', pattern)]));
    }
    const rows = await query
      .leftJoin('app_deletions as d', 'd.app_id', 'apps.id')
      .select(['apps.id', 'apps.name', 'apps.region', 'apps.created_at', 'd.app_id as deleting_id'])
      .orderBy('apps.created_at')
      .orderBy('apps.id')
      .limit(filter.limit)
      .offset(filter.offset)
      .execute();
    const total = await query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    return {
      rows: rows.map((row) => ({ id: row.id, name: row.name, region: row.region, created_at: row.created_at, deleting: row.deleting_id !== null })),
      total: Number(total.n),
    };
  }

  /** The keys of the apps (their masked forms), oldest first. */
  async keysOf(appIds: readonly string[], tx: Executor = this.db): Promise<AppKeyRow[]> {
    if (appIds.length === 0) return [];
    return (
      tx
        .selectFrom('api_keys')
        .select(['app_id', 'key_hint', 'name', 'scope'])
        .where('app_id', 'in', [...appIds])
        .orderBy('app_id')
        .orderBy('created_at')
        // Keys made together (an app's first two): the fullAccess key first.
        .orderBy('scope', 'desc')
        .orderBy('key_hint')
        .execute()
    );
  }

  /** Users and groups created, and messages sent (action messages aside), in [from, to). */
  async usage(appId: string, from: Date, to: Date, tx: Executor = this.db): Promise<{ users: number; groups: number; messages: number }> {
    const result = await sql<{ users: string; groups: string; messages: string }>`
      select
        (select count(*) from users where app_id = ${appId} and created_at >= ${from} and created_at < ${to}) as users,
        (select count(*) from groups where app_id = ${appId} and created_at >= ${from} and created_at < ${to}) as groups,
        (select count(*) from messages
          where app_id = ${appId} and sent_at >= ${from} and sent_at < ${to} and category <> 'action') as messages`.execute(tx);
    const row = result.rows[0]!;
    return { users: Number(row.users), groups: Number(row.groups), messages: Number(row.messages) };
  }

  /**
   * Begins the app's delete, in the caller's transaction: marks it (a second delete finds it
   * marked and goes on) and removes its keys, so that no request authenticates for it any more.
   */
  async beginDeletion(appId: string, tx: Executor): Promise<void> {
    this.credentials?.invalidate(appId);
    await tx
      .insertInto('app_deletions')
      .values({ app_id: appId })
      .onConflict((oc) => oc.column('app_id').doNothing())
      .execute();
    await tx.deleteFrom('api_keys').where('app_id', '=', appId).execute();
    // Again, in case a request cached a key while the delete ran.
    this.credentials?.invalidate(appId);
  }

  /**
   * Deletes every row of the app in every table with an `app_id` column (found in the catalogue,
   * so tables added later are covered too), `batch` rows per statement, each statement its own
   * transaction. Returns how many rows went.
   */
  async purge(appId: string, batch: number): Promise<number> {
    const tables = await this.appTables();
    let total = 0;
    for (let pass = 0; pass < MAX_PASSES; pass++) {
      let deleted = 0;
      for (const table of tables) {
        for (;;) {
          const n = await this.deleteBatch(table, appId, batch);
          deleted += n;
          if (n < batch) break;
        }
      }
      total += deleted;
      if (deleted === 0) break;
    }
    return total;
  }

  /** Ends the delete: the app's own row and its mark, together. */
  async finishDeletion(appId: string, tx: Executor): Promise<void> {
    await tx.deleteFrom('app_deletions').where('app_id', '=', appId).execute();
    await tx.deleteFrom('apps').where('id', '=', appId).execute();
    this.credentials?.invalidate(appId);
  }

  /** The tables holding rows of apps, in PURGE_ORDER, then the others by name. */
  private async appTables(): Promise<string[]> {
    const result = await sql<{ table_name: string }>`
      select c.table_name
      from information_schema.columns c
      join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
      where c.table_schema = current_schema() and c.column_name = 'app_id' and t.table_type = 'BASE TABLE'
        and c.table_name <> 'app_deletions'
      order by c.table_name`.execute(this.db);
    const present = new Set(result.rows.map((row) => row.table_name));
    const ordered = PURGE_ORDER.filter((table) => present.has(table));
    return [...ordered, ...[...present].filter((table) => !PURGE_ORDER.includes(table))];
  }

  private async deleteBatch(table: string, appId: string, batch: number): Promise<number> {
    // By row address: one statement shape for every table, whatever its key.
    const result = await sql`
      delete from ${sql.table(table)}
      where ctid = any(array(select ctid from ${sql.table(table)} where app_id = ${appId} limit ${batch}))`.execute(this.db);
    return Number(result.numAffectedRows ?? 0n);
  }
}
