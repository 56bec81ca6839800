import { sql, type Selectable } from 'kysely';
import { translated } from '../db/driver-errors.js';
import type { UsersTable } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';
import type { PageRequest } from '../domain/pagination.js';
import { pageOffset } from '../domain/pagination.js';
import { escapeLike } from './sql-helpers.js';

export type UserRow = Selectable<UsersTable>;

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

/** The users list's order and name search, matching the users_app_name index. */
const NAME_ORDER = sql<string>`lower(name) collate "C"`;

export class UsersRepository {
  constructor(
    private readonly db: Executor,
    /** Told how many rows a bulk write changed (the embedded engine vacuums after many). */
    private readonly noteBulkWrite: (rows: number) => void = () => {},
  ) {}

  async create(appId: string, user: NewUser, tx: Executor = this.db): Promise<UserRow> {
    return translated(() =>
      tx
        .insertInto('users')
        .values({
          app_id: appId,
          uid: user.uid,
          name: user.name,
          avatar: user.avatar ?? null,
          link: user.link ?? null,
          role: user.role ?? 'default',
          status_message: user.statusMessage ?? null,
          metadata: user.metadataJson ?? null,
          tags: user.tags ?? [],
          created_at: user.createdAt ?? new Date(),
          last_active_at: user.lastActiveAt ?? null,
          deactivated_at: user.deactivatedAt ?? null,
        })
        .returningAll()
        .executeTakeFirstOrThrow(),
    );
  }

  /** A user, deactivated or not. */
  async get(appId: string, uid: string, tx: Executor = this.db): Promise<UserRow | undefined> {
    return tx.selectFrom('users').selectAll().where('app_id', '=', appId).where('uid', '=', uid).executeTakeFirst();
  }

  /** An active (not deactivated) user. */
  async getActive(appId: string, uid: string, tx: Executor = this.db): Promise<UserRow | undefined> {
    return tx
      .selectFrom('users')
      .selectAll()
      .where('app_id', '=', appId)
      .where('uid', '=', uid)
      .where('deactivated_at', 'is', null)
      .executeTakeFirst();
  }

  async list(
    appId: string,
    filter: UserListFilter,
    page: PageRequest,
    tx: Executor = this.db,
  ): Promise<{ rows: UserRow[]; total: number }> {
    let query = tx.selectFrom('users').where('app_id', '=', appId);
    if (filter.deactivated === 'exclude') query = query.where('deactivated_at', 'is', null);
    if (filter.deactivated === 'only') query = query.where('deactivated_at', 'is not', null);
    if (filter.status) query = query.where('status', '=', filter.status);
    if (filter.roles?.length) query = query.where('role', 'in', filter.roles);
    if (filter.tags?.length) query = query.where(sql<boolean>`tags && ${sql.val(filter.tags)}::text[]`);
    if (filter.searchKey) {
      const prefix = `${escapeLike(filter.searchKey.toLowerCase())}%`;
      const fields = filter.searchIn?.length ? filter.searchIn : ['name', 'uid'];
      query = query.where((eb) =>
        eb.or(
          fields.map((field) =>
            field === 'uid' ? eb('uid', 'like', prefix) : eb(NAME_ORDER, 'like', prefix),
          ),
        ),
      );
    }
    const [rows, count] = await Promise.all([
      query
        .selectAll()
        .orderBy(NAME_ORDER)
        .orderBy('uid')
        .limit(page.perPage)
        .offset(pageOffset(page))
        .execute(),
      query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
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
    return tx
      .updateTable('users')
      .set(set)
      .where('app_id', '=', appId)
      .where('uid', '=', uid)
      .where('deactivated_at', 'is', null)
      .returningAll()
      .executeTakeFirst();
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

  /** Deletes a user and, through foreign keys, everything that belongs to them. */
  async delete(appId: string, uid: string, tx: Executor = this.db): Promise<boolean> {
    const result = await tx.deleteFrom('users').where('app_id', '=', appId).where('uid', '=', uid).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }
}
