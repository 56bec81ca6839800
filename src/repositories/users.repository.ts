import { sql, type ExpressionBuilder, type Selectable, type SelectQueryBuilder } from 'kysely';
import { UniqueViolation } from '../db/driver-errors.js';
import type { DB, UsersTable } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';
import type { PageRequest } from '../domain/pagination.js';
import { pageOffset } from '../domain/pagination.js';
import { jsonRowCodec } from './json-rows.js';
import { anyOf, anyOfQuery, escapeLike } from './sql-helpers.js';

export type UserRow = Selectable<UsersTable>;

/** A user row as one JSON array (see json-rows.ts): lists and pages read their users this way. */
export const USER_ROW = jsonRowCodec<UserRow>({
  app_id: 'value',
  uid: 'value',
  name: 'value',
  avatar: 'value',
  link: 'value',
  role: 'value',
  status_message: 'value',
  metadata: 'value',
  tags: 'value',
  status: 'value',
  created_at: 'timestamp',
  updated_at: 'timestamp',
  last_active_at: 'timestamp',
  deactivated_at: 'timestamp',
});

export interface NewUser {
  uid: string;
  name: string;
  avatar?: string | null;
  link?: string | null;
  role?: string;
  statusMessage?: string | null;
  /** Already serialised JSON, so key order is kept. */
  metadataJson?: string | null;
  tags?: string[];
  createdAt?: Date;
  lastActiveAt?: Date | null;
  deactivatedAt?: Date | null;
}

export interface UserChanges {
  name?: string;
  avatar?: string | null;
  link?: string | null;
  role?: string;
  statusMessage?: string | null;
  metadataJson?: string | null;
  tags?: string[];
}

export interface UserListFilter {
  searchKey?: string;
  searchIn?: Array<'name' | 'uid'>;
  status?: string;
  roles?: string[];
  /** Users having at least one of these tags. */
  tags?: string[];
  deactivated: 'exclude' | 'include' | 'only';
}

/**
 * Inserts users in one statement whatever their number: the rows travel as one JSON
 * parameter, so the statement text (and its prepared plan) is the same for 1 row or 1,000.
 * Rows whose uid exists already are skipped; the inserted rows are returned.
 */
async function insertUsers(db: Executor, items: Array<{ appId: string; user: NewUser }>): Promise<UserRow[]> {
  // In key order, so racing statements that insert the same keys wait for each other, never deadlock.
  const ordered = [...items].sort((a, b) => compareKeys(a.appId, a.user.uid, b.appId, b.user.uid));
  const records = ordered.map(({ appId, user }) => {
    const fields = JSON.stringify({
      app_id: appId,
      uid: user.uid,
      name: user.name,
      avatar: user.avatar ?? null,
      link: user.link ?? null,
      role: user.role ?? null,
      status_message: user.statusMessage ?? null,
      tags: user.tags ?? [],
      created_at: user.createdAt?.toISOString() ?? null,
      last_active_at: user.lastActiveAt?.toISOString() ?? null,
      deactivated_at: user.deactivatedAt?.toISOString() ?? null,
    });
    // metadata is already JSON text: splice it in as is, keeping its key order.
    return `${fields.slice(0, -1)},"metadata":${user.metadataJson ?? 'null'}}`;
  });
  const result = await sql<UserRow>`
    insert into users (app_id, uid, name, avatar, link, role, status_message, metadata, tags,
                       created_at, last_active_at, deactivated_at)
    select app_id, uid, name, avatar, link, coalesce(role, 'default'), status_message, metadata, tags,
           coalesce(created_at, now()), last_active_at, deactivated_at
    from json_to_recordset(${`[${records.join(',')}]`}::json) as r(
      app_id text, uid text, name text, avatar text, link text, role text, status_message text,
      metadata json, tags text[], created_at timestamptz, last_active_at timestamptz, deactivated_at timestamptz)
    on conflict (app_id, uid) do nothing
    returning *`.execute(db);
  return result.rows;
}

function compareKeys(appA: string, uidA: string, appB: string, uidB: string): number {
  if (appA !== appB) return appA < appB ? -1 : 1;
  return uidA < uidB ? -1 : uidA > uidB ? 1 : 0;
}

/** The active users of these keys, in one statement: a key probe per pair (absent: no row). */
async function readActiveUsers(db: Executor, keys: Array<{ appId: string; uid: string }>): Promise<UserRow[]> {
  const records = JSON.stringify(keys.map(({ appId, uid }) => ({ app_id: appId, uid })));
  const result = await sql<UserRow>`
    select u.* from json_to_recordset(${records}::json) as r(app_id text, uid text)
    cross join lateral (select * from users x where x.app_id = r.app_id and x.uid = r.uid and x.deactivated_at is null limit 1) u`.execute(db);
  return result.rows;
}

/** The users list's order and name search, matching the users_app_name index. */
const NAME_ORDER = sql<string>`lower(name) collate "C"`;

/** From this offset on, a page of users (or of group members) is found in an index before its rows are read. */
export const DEEP_PAGE_OFFSET = 1_000;

/** searchKey: a case-insensitive prefix of the name or uid (or of the fields named). */
function matchesSearch(searchKey: string, fields: ReadonlyArray<'name' | 'uid'> = ['name', 'uid']) {
  const prefix = `${escapeLike(searchKey.toLowerCase())}%`;
  return (eb: ExpressionBuilder<DB, 'users'>) => eb.or(fields.map((field) => (field === 'uid' ? eb('uid', 'like', prefix) : eb(NAME_ORDER, 'like', prefix))));
}

/**
 * A page of the users whose uids `uids` selects, searched and sorted as list-users does, with
 * their total: the lists of a user's friends and blocked users.
 */
export async function listUsersIn(
  tx: Executor,
  appId: string,
  // biome-ignore lint/suspicious/noExplicitAny: any query whose rows have a uid
  uids: SelectQueryBuilder<DB, any, { uid: string }>,
  searchKey: string | undefined,
  page: PageRequest,
): Promise<{ rows: UserRow[]; total: number }> {
  let query = tx.selectFrom('users').where('app_id', '=', appId).where('uid', 'in', uids);
  if (searchKey) query = query.where(matchesSearch(searchKey));
  const [rows, count] = await Promise.all([
    query.select(USER_ROW.select('users').as('row')).orderBy(NAME_ORDER).orderBy('uid').limit(page.perPage).offset(pageOffset(page)).execute(),
    query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows: rows.map((row) => USER_ROW.read(row.row as unknown[])), total: Number(count.n) };
}

export class UsersRepository {
  constructor(
    private readonly db: Executor,
    /** Told how many rows a bulk write changed (the embedded engine vacuums after many). */
    private readonly noteBulkWrite: (rows: number) => void = () => {},
    /**
     * The cached lookups of auth tokens (authTokenCache, container.ts): when users of an app are
     * deactivated or deleted, the app's are forgotten, so their tokens are refused at once here.
     */
    private readonly tokenLookups: { invalidate(appId: string): void } = { invalidate() {} },
  ) {}

  /** Inserts a user; a uid that exists already rejects with UniqueViolation (createMany for one). */
  async create(appId: string, user: NewUser, tx: Executor = this.db): Promise<UserRow> {
    const [row] = await this.createMany([{ appId, user }], tx);
    if (row instanceof Error) throw row;
    return row!;
  }

  /**
   * Inserts users of any apps in one statement, each answered on its own: its row, or
   * UniqueViolation for a uid that exists already (or repeats: the first wins). The form that
   * concurrent creates are coalesced into (container.ts).
   */
  async createMany(items: Array<{ appId: string; user: NewUser }>, tx: Executor = this.db): Promise<Array<UserRow | Error>> {
    const rows = await insertUsers(tx, items);
    const inserted = new Map(rows.map((row) => [`${row.app_id}\u0000${row.uid}`, row]));
    return items.map(({ appId, user }) => {
      const key = `${appId}\u0000${user.uid}`;
      const row = inserted.get(key);
      inserted.delete(key); // a uid twice in one statement: the first one wins
      return row ?? new UniqueViolation('users_pkey', undefined);
    });
  }

  /**
   * Inserts users in one statement (the data import); uids that exist already, or repeat in
   * `users`, are skipped. Returns the rows inserted.
   */
  async insertMany(appId: string, users: NewUser[], tx: Executor = this.db): Promise<UserRow[]> {
    if (users.length === 0) return [];
    const rows = await insertUsers(
      tx,
      users.map((user) => ({ appId, user })),
    );
    this.noteBulkWrite(rows.length);
    return rows;
  }

  /**
   * Which of the given users exist, deactivated or not, locking their rows against deletion
   * until the transaction ends (in uid order, so concurrent callers cannot deadlock).
   */
  async lockExisting(appId: string, uids: string[], tx: Executor): Promise<Set<string>> {
    if (uids.length === 0) return new Set();
    const rows = await tx.selectFrom('users').select('uid').where('app_id', '=', appId).where('uid', 'in', uids).orderBy('uid').forKeyShare().execute();
    return new Set(rows.map((row) => row.uid));
  }

  /** A user, deactivated or not. */
  async get(appId: string, uid: string, tx: Executor = this.db): Promise<UserRow | undefined> {
    return tx.selectFrom('users').selectAll().where('app_id', '=', appId).where('uid', '=', uid).executeTakeFirst();
  }

  /** Users by uid, deactivated or not; unknown uids are absent. */
  async getMany(appId: string, uids: string[], tx: Executor = this.db): Promise<UserRow[]> {
    if (uids.length === 0) return [];
    return tx.selectFrom('users').selectAll().where('app_id', '=', appId).where('uid', '=', anyOf(uids)).execute();
  }

  /** An active (not deactivated) user (getActiveMany for one). */
  async getActive(appId: string, uid: string, tx: Executor = this.db): Promise<UserRow | undefined> {
    return (await this.getActiveMany([{ appId, uid }], tx))[0];
  }

  /**
   * Active users of any apps in one statement, each caller's own (a user asked for twice is
   * two row objects). The form that concurrent reads of the onBehalfOf user are coalesced into
   * (container.ts): most requests read it, and a statement each cost more in socket writes and
   * wake-ups than the reads themselves.
   */
  async getActiveMany(items: Array<{ appId: string; uid: string }>, tx: Executor = this.db): Promise<Array<UserRow | undefined>> {
    const found = new Map((await readActiveUsers(tx, items)).map((row) => [`${row.app_id}\u0000${row.uid}`, row]));
    const answered = new Set<string>();
    return items.map(({ appId, uid }) => {
      const key = `${appId}\u0000${uid}`;
      const row = found.get(key);
      if (!row) return undefined;
      if (answered.has(key)) return { ...row };
      answered.add(key);
      return row;
    });
  }

  async list(appId: string, filter: UserListFilter, page: PageRequest, tx: Executor = this.db): Promise<{ rows: UserRow[]; total: number }> {
    let query = tx.selectFrom('users').where('app_id', '=', appId);
    if (filter.deactivated === 'exclude') query = query.where('deactivated_at', 'is', null);
    if (filter.deactivated === 'only') query = query.where('deactivated_at', 'is not', null);
    if (filter.status) query = query.where('status', '=', filter.status);
    if (filter.roles?.length) query = query.where('role', 'in', filter.roles);
    if (filter.tags?.length) query = query.where(sql<boolean>`tags && ${sql.val(filter.tags)}::text[]`);
    if (filter.searchKey) query = query.where(matchesSearch(filter.searchKey, filter.searchIn?.length ? filter.searchIn : undefined));
    // Filters the name index holds: deactivation and searchKey (name and uid).
    const indexed = !filter.status && !filter.roles?.length && !filter.tags?.length;
    const unfiltered = indexed && !filter.searchKey;
    const offset = pageOffset(page);
    // A deep page with only such filters skips its offset in the index alone (an index-only
    // scan: users_app_name includes name and deactivated_at), then reads its rows by key.
    // Shallow pages read their rows at once: there the lookups by key would cost more than the
    // rows skipped.
    // Each row as one JSON array: the driver's field-by-field parsing of 14 columns was most of
    // a 100-user page's CPU.
    const pageQuery =
      indexed && offset >= DEEP_PAGE_OFFSET
        ? tx
            .selectFrom('users')
            .select(USER_ROW.select('users').as('row'))
            .where('app_id', '=', appId)
            .where('uid', '=', anyOfQuery(query.select('uid').orderBy(NAME_ORDER).orderBy('uid').limit(page.perPage).offset(offset)))
        : query.select(USER_ROW.select('users').as('row')).limit(page.perPage).offset(offset);
    const [rows, total] = await Promise.all([
      pageQuery
        .orderBy(NAME_ORDER)
        .orderBy('uid')
        .execute()
        .then((found) => found.map((row) => USER_ROW.read(row.row as unknown[]))),
      unfiltered
        ? this.countAll(appId, filter.deactivated, tx)
        : query
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .executeTakeFirstOrThrow()
            .then((row) => Number(row.n)),
    ]);
    return { rows, total };
  }

  /** How many users an app has, from the counters the users triggers keep (no scan). */
  async countAll(appId: string, which: UserListFilter['deactivated'], tx: Executor = this.db): Promise<number> {
    const row = await tx
      .selectFrom('user_counts')
      .select((eb) => [eb.fn.sum<string>('active').as('active'), eb.fn.sum<string>('deactivated').as('deactivated')])
      .where('app_id', '=', appId)
      .executeTakeFirst();
    const active = Number(row?.active ?? 0);
    const deactivated = Number(row?.deactivated ?? 0);
    return which === 'exclude' ? active : which === 'only' ? deactivated : active + deactivated;
  }

  /** Updates an active user; undefined when there is none. */
  async update(appId: string, uid: string, changes: UserChanges, tx: Executor = this.db): Promise<UserRow | undefined> {
    const set: Record<string, unknown> = { updated_at: new Date() };
    if (changes.name !== undefined) set.name = changes.name;
    if (changes.avatar !== undefined) set.avatar = changes.avatar;
    if (changes.link !== undefined) set.link = changes.link;
    if (changes.role !== undefined) set.role = changes.role;
    if (changes.statusMessage !== undefined) set.status_message = changes.statusMessage;
    if (changes.metadataJson !== undefined) set.metadata = changes.metadataJson;
    if (changes.tags !== undefined) set.tags = changes.tags;
    return tx.updateTable('users').set(set).where('app_id', '=', appId).where('uid', '=', uid).where('deactivated_at', 'is', null).returningAll().executeTakeFirst();
  }

  /**
   * Deactivates (or reactivates) the given users. Returns the uids, among those given, that
   * exist and are in the requested state afterwards.
   */
  async setDeactivated(appId: string, uids: string[], deactivated: boolean, tx: Executor = this.db): Promise<string[]> {
    if (uids.length === 0) return [];
    const now = new Date();
    const changed = await tx
      .updateTable('users')
      .set(deactivated ? { deactivated_at: now, updated_at: now } : { deactivated_at: null, updated_at: now })
      .where('app_id', '=', appId)
      .where('uid', 'in', uids)
      .where('deactivated_at', deactivated ? 'is' : 'is not', null)
      .executeTakeFirst();
    this.noteBulkWrite(Number(changed.numUpdatedRows));
    if (deactivated && changed.numUpdatedRows > 0n) this.tokenLookups.invalidate(appId);
    const rows = await tx
      .selectFrom('users')
      .select('uid')
      .where('app_id', '=', appId)
      .where('uid', 'in', uids)
      .where('deactivated_at', deactivated ? 'is not' : 'is', null)
      .orderBy('uid')
      .execute();
    return rows.map((row) => row.uid);
  }

  /**
   * Which of the given users are active, locking their rows until the transaction ends, in uid
   * order so that concurrent callers cannot deadlock. `keyShare` only keeps them from being
   * deleted meanwhile; `noKeyUpdate` also queues the callers that lock the same users.
   */
  async lockActive(appId: string, uids: string[], strength: 'keyShare' | 'noKeyUpdate', tx: Executor): Promise<Set<string>> {
    if (uids.length === 0) return new Set();
    const query = tx.selectFrom('users').select('uid').where('app_id', '=', appId).where('uid', 'in', uids).where('deactivated_at', 'is', null).orderBy('uid');
    const rows = await (strength === 'keyShare' ? query.forKeyShare() : query.forNoKeyUpdate()).execute();
    return new Set(rows.map((row) => row.uid));
  }

  /** Deletes a user and, through foreign keys, everything that belongs to them. */
  async delete(appId: string, uid: string, tx: Executor = this.db): Promise<boolean> {
    const result = await tx.deleteFrom('users').where('app_id', '=', appId).where('uid', '=', uid).executeTakeFirst();
    if (result.numDeletedRows > 0n) this.tokenLookups.invalidate(appId);
    return result.numDeletedRows > 0n;
  }
}
