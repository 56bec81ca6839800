import type { Executor } from '../db/transaction.js';
import type { PageRequest } from '../domain/pagination.js';
import { anyOf } from './sql-helpers.js';
import { listUsersIn, type UserRow } from './users.repository.js';

/** How a user and a viewer block each other: when each did, if they did. */
export interface BlockRelation {
  blockedByMeAt?: Date;
  hasBlockedMeAt?: Date;
}

export type BlockDirection = 'blockedByMe' | 'hasBlockedMe' | 'both';

/** Blocks between users, one row per direction. */
export class BlockedUsersRepository {
  constructor(private readonly db: Executor) {}

  /** Blocks `others` for `uid`; blocks that exist keep their time. */
  /** Blocks `others` for `uid`; answers those not blocked before. */
  async addMany(appId: string, uid: string, others: string[], tx: Executor = this.db): Promise<string[]> {
    if (others.length === 0) return [];
    const now = new Date();
    const rows = await tx
      .insertInto('blocked_users')
      .values(others.map((other) => ({ app_id: appId, uid, blocked_uid: other, blocked_at: now })))
      .onConflict((oc) => oc.columns(['app_id', 'uid', 'blocked_uid']).doNothing())
      .returning('blocked_uid')
      .execute();
    return rows.map((row) => row.blocked_uid);
  }

  /** Unblocks `others` for `uid`; answers those that were blocked. */
  async removeMany(appId: string, uid: string, others: string[], tx: Executor = this.db): Promise<string[]> {
    if (others.length === 0) return [];
    const rows = await tx.deleteFrom('blocked_users').where('app_id', '=', appId).where('uid', '=', uid).where('blocked_uid', 'in', others).returning('blocked_uid').execute();
    return rows.map((row) => row.blocked_uid);
  }

  /** The blocks between `viewer` and each of `uids`, in one query (uids with none are absent). */
  async relations(appId: string, viewer: string, uids: string[], tx: Executor = this.db): Promise<Map<string, BlockRelation>> {
    if (uids.length === 0) return new Map();
    const rows = await tx
      .selectFrom('blocked_users')
      .select(['uid', 'blocked_uid', 'blocked_at'])
      .where('app_id', '=', appId)
      .where((eb) => eb.or([eb.and([eb('uid', '=', viewer), eb('blocked_uid', '=', anyOf(uids))]), eb.and([eb('blocked_uid', '=', viewer), eb('uid', '=', anyOf(uids))])]))
      .execute();
    const relations = new Map<string, BlockRelation>();
    for (const row of rows) {
      const byViewer = row.uid === viewer;
      const relation = relations.get(byViewer ? row.blocked_uid : row.uid) ?? {};
      if (byViewer) relation.blockedByMeAt = row.blocked_at;
      else relation.hasBlockedMeAt = row.blocked_at;
      relations.set(byViewer ? row.blocked_uid : row.uid, relation);
    }
    return relations;
  }

  /** A page of the users `uid` has blocked, who have blocked `uid`, or both, sorted as list-users sorts. */
  async list(appId: string, uid: string, filter: { direction: BlockDirection; searchKey?: string }, page: PageRequest, tx: Executor = this.db): Promise<{ rows: UserRow[]; total: number }> {
    const blockedByMe = tx.selectFrom('blocked_users').select('blocked_uid as uid').where('app_id', '=', appId).where('uid', '=', uid);
    const hasBlockedMe = tx.selectFrom('blocked_users').select('uid').where('app_id', '=', appId).where('blocked_uid', '=', uid);
    const uids = filter.direction === 'blockedByMe' ? blockedByMe : filter.direction === 'hasBlockedMe' ? hasBlockedMe : blockedByMe.union(hasBlockedMe);
    return listUsersIn(tx, appId, uids, filter.searchKey, page);
  }
}
