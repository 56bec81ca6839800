import type { Executor } from '../db/transaction.js';
import type { PageRequest } from '../domain/pagination.js';
import { listUsersIn, type UserRow } from './users.repository.js';

/** Friendships, stored as one row per direction. */
export class FriendsRepository {
  constructor(private readonly db: Executor) {}

  /** Which of `others` are friends of `uid`. */
  async friendsAmong(appId: string, uid: string, others: string[], tx: Executor = this.db): Promise<Set<string>> {
    if (others.length === 0) return new Set();
    const rows = await tx.selectFrom('friends').select('friend_uid').where('app_id', '=', appId).where('uid', '=', uid).where('friend_uid', 'in', others).execute();
    return new Set(rows.map((row) => row.friend_uid));
  }

  /** How many friends each of the given users has (absent: none). */
  async countMany(appId: string, uids: string[], tx: Executor = this.db): Promise<Map<string, number>> {
    if (uids.length === 0) return new Map();
    const rows = await tx
      .selectFrom('friends')
      .select((eb) => ['uid', eb.fn.countAll<string>().as('n')])
      .where('app_id', '=', appId)
      .where('uid', 'in', uids)
      .groupBy('uid')
      .execute();
    return new Map(rows.map((row) => [row.uid, Number(row.n)]));
  }

  /** Makes `uid` a friend of each of `others`, both ways; existing friendships are kept. Returns the uids befriended now. */
  async addMany(appId: string, uid: string, others: string[], tx: Executor = this.db): Promise<string[]> {
    if (others.length === 0) return [];
    const now = new Date();
    const rows = await tx
      .insertInto('friends')
      .values(
        others.flatMap((other) => [
          { app_id: appId, uid, friend_uid: other, created_at: now },
          { app_id: appId, uid: other, friend_uid: uid, created_at: now },
        ]),
      )
      .onConflict((oc) => oc.columns(['app_id', 'uid', 'friend_uid']).doNothing())
      .returning(['uid', 'friend_uid'])
      .execute();
    return rows.filter((row) => row.uid === uid).map((row) => row.friend_uid);
  }

  /** Ends the friendships of `uid` with `others`, both ways, in one statement. */
  async removeMany(appId: string, uid: string, others: string[], tx: Executor = this.db): Promise<void> {
    if (others.length === 0) return;
    await tx
      .deleteFrom('friends')
      .where('app_id', '=', appId)
      .where((eb) => eb.or([eb.and([eb('uid', '=', uid), eb('friend_uid', 'in', others)]), eb.and([eb('friend_uid', '=', uid), eb('uid', 'in', others)])]))
      .execute();
  }

  /** A page of the friends of `uid`, sorted as list-users sorts. */
  async list(appId: string, uid: string, filter: { searchKey?: string }, page: PageRequest, tx: Executor = this.db): Promise<{ rows: UserRow[]; total: number }> {
    const friendUids = tx.selectFrom('friends').select('friend_uid as uid').where('app_id', '=', appId).where('uid', '=', uid);
    return listUsersIn(tx, appId, friendUids, filter.searchKey, page);
  }
}
