import { sql, type Selectable } from 'kysely';
import type { GroupBansTable, GroupMembersTable, MemberScope } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';
import { pageOffset, type PageRequest } from '../domain/pagination.js';
import { anyOfQuery } from './sql-helpers.js';
import { DEEP_PAGE_OFFSET, type UserRow } from './users.repository.js';

export type MemberRow = Selectable<GroupMembersTable>;
export type BanRow = Selectable<GroupBansTable>;

/** A member with their user. */
export type MemberWithUser = UserRow & { scope: MemberScope; joined_at: Date };
export type BannedUser = UserRow & { banned_at: Date };

/** Memberships and bans of groups. */
export class GroupMembersRepository {
  constructor(private readonly db: Executor) {}

  async get(appId: string, guid: string, uid: string, tx: Executor = this.db): Promise<MemberRow | undefined> {
    return tx.selectFrom('group_members').selectAll().where('app_id', '=', appId).where('guid', '=', guid).where('uid', '=', uid).executeTakeFirst();
  }

  /**
   * For each given uid, in one query: whether it is an active user of the app, its scope in the
   * group (if a member) and whether it is banned from it.
   */
  async inspect(appId: string, guid: string, uids: string[], tx: Executor = this.db): Promise<Map<string, { active: boolean; scope: MemberScope | null; banned: boolean }>> {
    if (uids.length === 0) return new Map();
    const result = await sql<{ uid: string; active: boolean; scope: MemberScope | null; banned: boolean }>`
      select x.uid, u.uid is not null as active, m.scope, b.uid is not null as banned
      from unnest(${sql.val(uids)}::text[]) as x(uid)
      left join users u on u.app_id = ${appId} and u.uid = x.uid and u.deactivated_at is null
      left join group_members m on m.app_id = ${appId} and m.guid = ${guid} and m.uid = x.uid
      left join group_bans b on b.app_id = ${appId} and b.guid = ${guid} and b.uid = x.uid`.execute(tx);
    return new Map(result.rows.map((row) => [row.uid, { active: row.active, scope: row.scope, banned: row.banned }]));
  }

  /** Adds members; those already members are skipped. Returns the uids added. */
  async addMany(appId: string, guid: string, members: Array<{ uid: string; scope: MemberScope; joinedAt?: Date }>, tx: Executor = this.db): Promise<MemberRow[]> {
    if (members.length === 0) return [];
    return tx
      .insertInto('group_members')
      .values(members.map((member) => ({ app_id: appId, guid, uid: member.uid, scope: member.scope, joined_at: member.joinedAt ?? new Date() })))
      .onConflict((oc) => oc.columns(['app_id', 'guid', 'uid']).doNothing())
      .returningAll()
      .execute();
  }

  async setScope(appId: string, guid: string, uid: string, scope: MemberScope, tx: Executor = this.db): Promise<MemberRow | undefined> {
    return tx.updateTable('group_members').set({ scope }).where('app_id', '=', appId).where('guid', '=', guid).where('uid', '=', uid).returningAll().executeTakeFirst();
  }

  async remove(appId: string, guid: string, uid: string, tx: Executor = this.db): Promise<boolean> {
    const result = await tx.deleteFrom('group_members').where('app_id', '=', appId).where('guid', '=', guid).where('uid', '=', uid).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /**
   * A page of members with their users, in uid order, which the primary key serves: a page
   * costs the same in a group of 1k or 100k members.
   */
  async list(appId: string, guid: string, filter: { scopes?: MemberScope[]; status?: string }, page: PageRequest, tx: Executor = this.db): Promise<MemberWithUser[]> {
    let query = tx
      .selectFrom('group_members as m')
      .innerJoin('users as u', (join) => join.onRef('u.app_id', '=', 'm.app_id').onRef('u.uid', '=', 'm.uid'))
      .where('m.app_id', '=', appId)
      .where('m.guid', '=', guid);
    if (filter.scopes?.length) query = query.where('m.scope', 'in', filter.scopes);
    if (filter.status) query = query.where('u.status', '=', filter.status);
    const offset = pageOffset(page);
    // A deep page's members are found among the memberships alone (in key order) before their
    // users are read: otherwise each skipped member costs a read of its user. Every membership
    // has its user (a foreign key that cascades), so the join drops none; a filter on the
    // users' side (status) still needs it, and reads every skipped row.
    if (offset >= DEEP_PAGE_OFFSET && !filter.status) {
      let keys = tx.selectFrom('group_members as k').select('k.uid').where('k.app_id', '=', appId).where('k.guid', '=', guid);
      if (filter.scopes?.length) keys = keys.where('k.scope', 'in', filter.scopes);
      query = query.where('m.uid', '=', anyOfQuery(keys.orderBy('k.uid').limit(page.perPage).offset(offset)));
    } else {
      query = query.limit(page.perPage).offset(offset);
    }
    const rows = await query.selectAll('u').select(['m.scope', 'm.joined_at']).orderBy('m.uid').execute();
    return rows as MemberWithUser[];
  }

  async count(appId: string, guid: string, filter: { scopes?: MemberScope[]; status?: string }, tx: Executor = this.db): Promise<number> {
    let query = tx.selectFrom('group_members as m').where('m.app_id', '=', appId).where('m.guid', '=', guid);
    if (filter.scopes?.length) query = query.where('m.scope', 'in', filter.scopes);
    if (filter.status) {
      query = query.where((eb) => eb.exists(eb.selectFrom('users as u').select('u.uid').whereRef('u.app_id', '=', 'm.app_id').whereRef('u.uid', '=', 'm.uid').where('u.status', '=', filter.status!)));
    }
    const row = await query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  // --- data import: many groups per statement ------------------------------------------------

  /**
   * Inserts memberships of any groups in one statement (the data import); those that exist
   * already are skipped. Returns the rows inserted.
   */
  async insertAcrossGroups(appId: string, members: Array<{ guid: string; uid: string; scope: MemberScope; joinedAt: Date }>, tx: Executor = this.db): Promise<MemberRow[]> {
    if (members.length === 0) return [];
    const records = members.map((m) => ({ guid: m.guid, uid: m.uid, scope: m.scope, joined_at: m.joinedAt.toISOString() }));
    const result = await sql<MemberRow>`
      insert into group_members (app_id, guid, uid, scope, joined_at)
      select ${appId}, guid, uid, scope, joined_at
      from json_to_recordset(${JSON.stringify(records)}::json) as r(guid text, uid text, scope text, joined_at timestamptz)
      order by guid, uid
      on conflict (app_id, guid, uid) do nothing
      returning *`.execute(tx);
    return result.rows;
  }

  /** Which of the given (guid, uid) pairs are banned, as `guid uid` keys. */
  async bannedPairs(appId: string, pairs: Array<{ guid: string; uid: string }>, tx: Executor = this.db): Promise<Set<string>> {
    if (pairs.length === 0) return new Set();
    const result = await sql<{ guid: string; uid: string }>`
      select b.guid, b.uid
      from json_to_recordset(${JSON.stringify(pairs)}::json) as r(guid text, uid text)
      join group_bans b on b.app_id = ${appId} and b.guid = r.guid and b.uid = r.uid`.execute(tx);
    return new Set(result.rows.map((row) => pairKey(row.guid, row.uid)));
  }

  /** Removes the memberships of the given (guid, uid) pairs, in one statement. */
  async removePairs(appId: string, pairs: Array<{ guid: string; uid: string }>, tx: Executor = this.db): Promise<void> {
    if (pairs.length === 0) return;
    await sql`
      delete from group_members m
      using json_to_recordset(${JSON.stringify(pairs)}::json) as r(guid text, uid text)
      where m.app_id = ${appId} and m.guid = r.guid and m.uid = r.uid`.execute(tx);
  }

  /** Bans users from any groups in one statement; existing bans are skipped. Returns the bans made. */
  async banAcrossGroups(appId: string, bans: Array<{ guid: string; uid: string; bannedAt: Date }>, tx: Executor = this.db): Promise<BanRow[]> {
    if (bans.length === 0) return [];
    const records = bans.map((b) => ({ guid: b.guid, uid: b.uid, banned_at: b.bannedAt.toISOString() }));
    const result = await sql<BanRow>`
      insert into group_bans (app_id, guid, uid, banned_at, banned_by)
      select ${appId}, guid, uid, banned_at, null
      from json_to_recordset(${JSON.stringify(records)}::json) as r(guid text, uid text, banned_at timestamptz)
      order by guid, uid
      on conflict (app_id, guid, uid) do nothing
      returning *`.execute(tx);
    return result.rows;
  }

  // --- bans ---------------------------------------------------------------------------------

  /** Which of the given users are banned from the group. */
  async bannedAmong(appId: string, guid: string, uids: string[], tx: Executor = this.db): Promise<Set<string>> {
    if (uids.length === 0) return new Set();
    const rows = await tx.selectFrom('group_bans').select('uid').where('app_id', '=', appId).where('guid', '=', guid).where('uid', 'in', uids).execute();
    return new Set(rows.map((row) => row.uid));
  }

  /** Bans users; those banned already are skipped. Returns the uids banned now. */
  async ban(appId: string, guid: string, uids: string[], bannedBy: string | null, tx: Executor = this.db): Promise<string[]> {
    if (uids.length === 0) return [];
    const rows = await tx
      .insertInto('group_bans')
      .values(uids.map((uid) => ({ app_id: appId, guid, uid, banned_by: bannedBy, banned_at: new Date() })))
      .onConflict((oc) => oc.columns(['app_id', 'guid', 'uid']).doNothing())
      .returning('uid')
      .execute();
    return rows.map((row) => row.uid);
  }

  async unban(appId: string, guid: string, uid: string, tx: Executor = this.db): Promise<boolean> {
    const result = await tx.deleteFrom('group_bans').where('app_id', '=', appId).where('guid', '=', guid).where('uid', '=', uid).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /** Removes the memberships of the given users (banning them). */
  async removeMany(appId: string, guid: string, uids: string[], tx: Executor = this.db): Promise<void> {
    if (uids.length === 0) return;
    await tx.deleteFrom('group_members').where('app_id', '=', appId).where('guid', '=', guid).where('uid', 'in', uids).execute();
  }

  async listBanned(appId: string, guid: string, page: PageRequest, tx: Executor = this.db): Promise<{ rows: BannedUser[]; total: number }> {
    const base = tx.selectFrom('group_bans as b').where('b.app_id', '=', appId).where('b.guid', '=', guid);
    const [rows, count] = await Promise.all([
      base
        .innerJoin('users as u', (join) => join.onRef('u.app_id', '=', 'b.app_id').onRef('u.uid', '=', 'b.uid'))
        .selectAll('u')
        .select('b.banned_at')
        .orderBy('b.uid')
        .limit(page.perPage)
        .offset(pageOffset(page))
        .execute(),
      base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows: rows as BannedUser[], total: Number(count.n) };
  }
}

/** A (guid, uid) pair as one map key. */
export function pairKey(guid: string, uid: string): string {
  return `${guid}\u0000${uid}`;
}
