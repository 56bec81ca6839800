import { type RawBuilder, sql } from 'kysely';
import type { Executor } from '../../db/transaction.js';
import { eventRow, type EventRow } from '../events.repository.js';

/** The channel on which gateways tell each other of typing, presence and revocations (docs/realtime.md, "Several nodes"). */
export const GATEWAY_CHANNEL = 'parley_gateway';

/**
 * The triggers of events about a user outside the conversations they are in now: the groups
 * they left or were removed from, and their blocks (the partial index events_app_about_users,
 * migration 0028, holds exactly these).
 */
export const ABOUT_USER_TRIGGERS = ['group_member_left', 'group_member_kicked', 'group_member_banned', 'user_blocked', 'user_unblocked'] as const;

/** What the gateway reads and writes (docs/realtime.md): a user's groups, friends and events, their tokens, presence. */
export class GatewayRepository {
  constructor(private readonly db: Executor) {}

  /** The groups of each of the users (group_members_app_uid), in one statement; a user of none is absent. */
  async groupsOfMany(appId: string, uids: readonly string[], tx: Executor = this.db): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (uids.length === 0) return out;
    const rows = await sql<{ uid: string; guid: string }>`select uid, guid from group_members where app_id = ${appId} and uid = any(${uids}::text[])`.execute(tx);
    for (const row of rows.rows) {
      const groups = out.get(row.uid);
      if (groups) groups.push(row.guid);
      else out.set(row.uid, [row.guid]);
    }
    return out;
  }

  /** Up to `limit` friends of each of the users (either direction), in one statement; a user with none is absent. */
  async friendsOfMany(appId: string, uids: readonly string[], limit: number, tx: Executor = this.db): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (uids.length === 0 || limit <= 0) return out;
    const rows = await sql<{ of: string; uid: string }>`
      select u.uid as of, f.uid from unnest(${uids}::text[]) as u (uid) cross join lateral (
        (select friend_uid as uid from friends where app_id = ${appId} and uid = u.uid limit ${limit})
        union
        (select uid from friends where app_id = ${appId} and friend_uid = u.uid limit ${limit})
      ) f`.execute(tx);
    for (const row of rows.rows) {
      const friends = out.get(row.of);
      if (!friends) out.set(row.of, [row.uid]);
      else if (friends.length < limit) friends.push(row.uid);
    }
    return out;
  }

  /** The group's member count, or undefined when there is no such group. */
  async groupSize(appId: string, guid: string, tx: Executor = this.db): Promise<number | undefined> {
    const row = (await sql<{ n: number }>`select members_count as n from groups where app_id = ${appId} and guid = ${guid}`.execute(tx)).rows[0];
    return row === undefined ? undefined : Number(row.n);
  }

  /** Whether `receiver` is an active user of the app, and whether either of the two blocked the other. */
  async userRelation(appId: string, sender: string, receiver: string, tx: Executor = this.db): Promise<{ exists: boolean; blocked: boolean }> {
    const row = (
      await sql<{ exists: boolean; blocked: boolean }>`
        select exists (select 1 from users where app_id = ${appId} and uid = ${receiver} and deactivated_at is null) as exists,
               exists (select 1 from blocked_users where app_id = ${appId}
                       and ((uid = ${sender} and blocked_uid = ${receiver}) or (uid = ${receiver} and blocked_uid = ${sender}))) as blocked`.execute(tx)
    ).rows[0]!;
    return { exists: row.exists, blocked: row.blocked };
  }

  /** Of these token hashes, those still held by an active user of the app (the others were revoked). */
  async validTokens(appId: string, tokenHashes: readonly string[], tx: Executor = this.db): Promise<Set<string>> {
    if (tokenHashes.length === 0) return new Set();
    const rows = await sql<{ token_hash: string }>`
      select t.token_hash from auth_tokens t
      join users u on u.app_id = t.app_id and u.uid = t.uid and u.deactivated_at is null
      where t.app_id = ${appId} and t.token_hash = any(${tokenHashes}::text[])`.execute(tx);
    return new Set(rows.rows.map((row) => row.token_hash));
  }

  /**
   * The events a resuming user may be shown with `afterId < id <= upToId`, oldest first, at most
   * `limit`: those of their 1:1 conversations (user_conversations), of their groups, of the
   * groups they left or were removed from within the range (up to then they were a member), and
   * of the groups deleted within the range while they were a member (gateway_deleted_group_members,
   * migration 0029), each read by events_app_conversation; and the blocks. The removals and the
   * blocks come from one scan of events_app_about_users over the range. Candidates: the
   * gateway's audience rule decides, following the user's memberships through the range
   * (services/gateway/resume.ts).
   */
  async userEventsAfter(appId: string, uid: string, afterId: string, upToId: string, limit: number, tx: Executor = this.db): Promise<EventRow[]> {
    const rows = await userEventsAfterQuery(appId, uid, afterId, upToId, limit).execute(tx);
    return rows.rows.map(eventRow);
  }

  /** The apps with rows of deleted groups' members (the retention's). */
  async appsWithDeletedGroupMembers(tx: Executor = this.db): Promise<string[]> {
    return (await sql<{ app_id: string }>`select distinct app_id from gateway_deleted_group_members`.execute(tx)).rows.map((row) => row.app_id);
  }

  /** Deletes up to `batch` of the app's rows of deleted groups' members older than `cutoff` (the retention's); answers how many. */
  async deleteDeletedGroupMembersBefore(appId: string, cutoff: Date, batch: number, tx: Executor = this.db): Promise<number> {
    const result = await sql`
      delete from gateway_deleted_group_members d
      where (d.app_id, d.uid, d.guid, d.tx) in (
        select app_id, uid, guid, tx from gateway_deleted_group_members
        where app_id = ${appId} and deleted_at < ${cutoff} order by deleted_at limit ${batch})`.execute(tx);
    return Number(result.numAffectedRows ?? 0n);
  }

  /**
   * The oldest event the app's log still holds (its id and when it was recorded), if any: the
   * first of events_pkey's range (ordered by the column: its text would order '10' before '9',
   * and read the whole log to sort it).
   */
  async firstEvent(appId: string, tx: Executor = this.db): Promise<{ id: string; createdAt: Date } | undefined> {
    const row = (await sql<{ id: string; created_at: Date }>`select e.id::text as id, e.created_at from events e where e.app_id = ${appId} order by e.id limit 1`.execute(tx)).rows[0];
    return row && { id: row.id, createdAt: row.created_at };
  }

  /**
   * This node holds the users' connections: their presence rows (refreshed), in one statement
   * for all of them. Answers, for each user that exists, whether they were offline before (their
   * status offline), having set those online; their rows are locked in uid order (two nodes
   * marking overlapping users cannot deadlock).
   */
  async markOnline(appId: string, uids: readonly string[], nodeId: string, tx: Executor): Promise<Map<string, { wasOffline: boolean; lastActiveAt: Date | null }>> {
    const out = new Map<string, { wasOffline: boolean; lastActiveAt: Date | null }>();
    if (uids.length === 0) return out;
    const users = (
      await sql<{ uid: string; status: string; last_active_at: Date | null }>`
        select uid, status, last_active_at from users where app_id = ${appId} and uid = any(${uids}::text[]) order by uid for update`.execute(tx)
    ).rows;
    if (users.length === 0) return out;
    const present = users.map((user) => user.uid);
    await sql`insert into gateway_presence (app_id, uid, node_id)
              select ${appId}, u.uid, ${nodeId} from unnest(${present}::text[]) as u (uid)
              on conflict (app_id, uid, node_id) do update set seen_at = now()`.execute(tx);
    const offline: string[] = [];
    for (const user of users) {
      if (user.status === 'online') out.set(user.uid, { wasOffline: false, lastActiveAt: user.last_active_at });
      else offline.push(user.uid);
    }
    if (offline.length === 0) return out;
    const rows = await sql<{ uid: string; last_active_at: Date }>`update users set status = 'online', last_active_at = now()
                where app_id = ${appId} and uid = any(${offline}::text[]) returning uid, last_active_at`.execute(tx);
    for (const row of rows.rows) out.set(row.uid, { wasOffline: true, lastActiveAt: row.last_active_at });
    return out;
  }

  /**
   * `nodeId` holds none of the user's connections any more (its row goes; none given: rows were
   * taken already). Answers whether the user is now offline (no other node's row), having set
   * them offline, with their lastActiveAt.
   */
  async markOffline(appId: string, uid: string, nodeId: string | undefined, tx: Executor): Promise<{ offline: boolean; lastActiveAt: Date | null } | undefined> {
    const user = (await sql<{ status: string }>`select status from users where app_id = ${appId} and uid = ${uid} for update`.execute(tx)).rows[0];
    if (!user) return undefined;
    if (nodeId !== undefined) await sql`delete from gateway_presence where app_id = ${appId} and uid = ${uid} and node_id = ${nodeId}`.execute(tx);
    const others = await sql`select 1 from gateway_presence where app_id = ${appId} and uid = ${uid} limit 1`.execute(tx);
    if (others.rows.length > 0 || user.status !== 'online') return { offline: false, lastActiveAt: null };
    const row = (
      await sql<{ last_active_at: Date }>`update users set status = 'offline', last_active_at = now()
                where app_id = ${appId} and uid = ${uid} returning last_active_at`.execute(tx)
    ).rows[0]!;
    return { offline: true, lastActiveAt: row.last_active_at };
  }

  /** The users' lastActiveAt moved to now (at most once a minute each: the caller decides). */
  async touchActive(appId: string, uids: readonly string[], tx: Executor = this.db): Promise<void> {
    if (uids.length === 0) return;
    await sql`update users set last_active_at = now() where app_id = ${appId} and uid = any(${uids}::text[])`.execute(tx);
  }

  /** This node is alive: its presence rows refreshed. */
  async refreshNode(nodeId: string, tx: Executor = this.db): Promise<void> {
    await sql`update gateway_presence set seen_at = now() where node_id = ${nodeId}`.execute(tx);
  }

  /**
   * This node stops cleanly: its rows are left to be taken as stale (takeStale with `staleMs`)
   * `graceMs` from now, unless the node refreshes them first. Its users stay online meanwhile.
   */
  async handOverNode(nodeId: string, staleMs: number, graceMs: number, tx: Executor = this.db): Promise<void> {
    await sql`update gateway_presence set seen_at = now() - make_interval(secs => ${(staleMs - graceMs) / 1000}) where node_id = ${nodeId}`.execute(tx);
  }

  /** The (app, uid) pairs whose only presence rows are of nodes silent for `staleMs` (gone), those rows taken away. */
  async takeStale(staleMs: number, limit: number, tx: Executor = this.db): Promise<Array<{ appId: string; uid: string }>> {
    const rows = await sql<{ app_id: string; uid: string }>`
      delete from gateway_presence p
      where (p.app_id, p.uid, p.node_id) in (
        select app_id, uid, node_id from gateway_presence where seen_at < now() - make_interval(secs => ${staleMs / 1000}) limit ${limit})
      returning p.app_id, p.uid`.execute(tx);
    return rows.rows.map((row) => ({ appId: row.app_id, uid: row.uid }));
  }

  /** Sends `payload` to every gateway listening on GATEWAY_CHANNEL (PostgreSQL), in a statement of its own. */
  async signal(payload: string, tx: Executor = this.db): Promise<void> {
    await sql`select pg_notify(${GATEWAY_CHANNEL}, ${payload})`.execute(tx);
  }
}

/**
 * The statement of GatewayRepository.userEventsAfter (its plan is held to the 0028 indexes by
 * test/gateway/limits-resume-plan.test.ts): each of the user's conversation keys read by
 * events_app_conversation, the events about users by events_app_about_users. The keys are
 * compared in events.conversation_id's collation (the default): user_conversations' and
 * group_members' ids are "C", and a comparison of two collations matches no index, so each key
 * scanned the whole app's log instead.
 */
export function userEventsAfterQuery(appId: string, uid: string, afterId: string, upToId: string, limit: number): RawBuilder<EventRow & { tx: string }> {
  return sql<EventRow & { tx: string }>`
      with about as materialized (
        select e.app_id, e.id, e.tx, e.trigger, e.conversation_id, e.message_id, e.data, e.created_at
        from events e
        where e.app_id = ${appId} and e.id > ${afterId} and e.id <= ${upToId}
          and e.trigger in ('group_member_left', 'group_member_kicked', 'group_member_banned', 'user_blocked', 'user_unblocked')
      ),
      keys as (
        select conversation_id collate "default" as key from user_conversations where app_id = ${appId} and uid = ${uid}
        union
        select ('group_' || guid) collate "default" from group_members where app_id = ${appId} and uid = ${uid}
        union
        select a.conversation_id from about a
        where a.trigger in ('group_member_left', 'group_member_kicked', 'group_member_banned')
          and a.conversation_id is not null and (a.data -> 'members' -> ${uid}) is not null
        union
        select ('group_' || d.guid) collate "default" from gateway_deleted_group_members d
        where d.app_id = ${appId} and d.uid = ${uid} and exists (
          select 1 from events e
          where e.app_id = ${appId} and e.conversation_id = ('group_' || d.guid) collate "default" and e.id > ${afterId} and e.id <= ${upToId}
            and e.trigger = 'group_deleted' and e.tx = d.tx)
      ),
      candidates as (
        select e.* from keys k cross join lateral (
          select e.app_id, e.id, e.tx::text as tx, e.trigger, e.conversation_id, e.message_id, e.data, e.created_at
          from events e
          where e.app_id = ${appId} and e.conversation_id = k.key and e.id > ${afterId} and e.id <= ${upToId}
          order by e.conversation_id, e.id limit ${limit}
        ) e
        union all
        (select a.app_id, a.id, a.tx::text as tx, a.trigger, a.conversation_id, a.message_id, a.data, a.created_at
         from about a
         where a.trigger in ('user_blocked', 'user_unblocked') and a.conversation_id is null
         order by a.id limit ${limit})
      )
      select * from candidates order by id limit ${limit}`;
}
