import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { withTransaction } from '../db/transaction.js';
import { userConversationWireId } from '../domain/conversation-id.js';
import { AppError, uidFailure } from '../domain/errors.js';
import { LIMITS, normalizeId, normalizeIds } from '../domain/normalize.js';
import { extended } from '../domain/objects.js';
import { pageMeta, type PageMeta, type PageRequest } from '../domain/pagination.js';
import type { BlockedUsersRepository } from '../repositories/blocked-users.repository.js';
import type { FriendsRepository } from '../repositories/friends.repository.js';
import type { UsersRepository } from '../repositories/users.repository.js';
import type { ActorContext } from './actor.js';
import { uidNotFound, type UsersService } from './users.service.js';
import { toUser, withBlockFields, type User } from './views/users.view.js';

/** The answer for one uid of add-friend, block-users and unblock-users. */
export type RelationResult = { success: true; message: string } | ReturnType<typeof uidFailure>;

/** A user as a relation of another: with the conversation between the two. */
export type RelatedUser = User & { conversationId: string };

export class FriendsService {
  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      friends: FriendsRepository;
      blocks: BlockedUsersRepository;
      users: UsersRepository;
      usersService: Pick<UsersService, 'requireActive'>;
    },
  ) {}

  /**
   * add-friend: befriends `uid` with each given user, both ways, answering per uid. Re-adding a
   * friend answers ERR_ALREADY_FRIEND, as re-adding a member answers ERR_ALREADY_JOINED.
   */
  async add(ctx: ActorContext, rawUid: string, rawOthers: string[]): Promise<{ accepted: Record<string, RelationResult> }> {
    const uid = normalizeId(rawUid);
    const others = normalizeIds(rawOthers);
    return withTransaction(
      this.deps.db,
      'add_friends',
      async (tx) => {
        // Locking both ends of every new friendship queues the calls touching the same users, so
        // a pair is befriended once and the limit holds under concurrency.
        const active = await this.deps.users.lockActive(ctx.appId, [uid, ...others], 'noKeyUpdate', tx);
        if (!active.has(uid)) throw uidNotFound(uid);
        const candidates = others.filter((other) => other !== uid && active.has(other));
        const already = await this.deps.friends.friendsAmong(ctx.appId, uid, candidates, tx);
        const counts = await this.deps.friends.countMany(ctx.appId, [uid, ...candidates], tx);
        const full = (user: string) => (counts.get(user) ?? 0) >= LIMITS.friendsPerUser;

        const results = new Map<string, RelationResult>();
        const toAdd: string[] = [];
        for (const other of others) {
          const refuse = (error: AppError) => results.set(other, uidFailure(error));
          if (other === uid) refuse(new AppError('ERR_CANNOT_FORM_SELF_RELATION', { params: { uid } }));
          else if (!active.has(other)) refuse(uidNotFound(other));
          else if (already.has(other)) refuse(new AppError('ERR_ALREADY_FRIEND', { params: { uid: other, friend: uid } }));
          else if (full(uid) || full(other)) {
            refuse(new AppError('ERR_PLAN_QUOTA_RESTRICTION', { params: { limit: LIMITS.friendsPerUser, what: `friends of the user ${full(uid) ? uid : other}` } }));
          } else {
            counts.set(uid, (counts.get(uid) ?? 0) + 1);
            counts.set(other, (counts.get(other) ?? 0) + 1);
            toAdd.push(other);
          }
        }
        const added = new Set(await this.deps.friends.addMany(ctx.appId, uid, toAdd, tx));
        for (const other of toAdd) {
          results.set(
            other,
            added.has(other) ? { success: true, message: 'Created relationship with status accepted.' } : uidFailure(new AppError('ERR_ALREADY_FRIEND', { params: { uid: other, friend: uid } })),
          );
        }
        return { accepted: Object.fromEntries(others.map((other) => [other, results.get(other)!])) };
      },
      ctx.log,
    );
  }

  /** remove-friend: ends the given friendships, both ways; uids that are not friends are ignored. */
  async remove(ctx: ActorContext, rawUid: string, rawOthers: string[]): Promise<{ success: true; message: string }> {
    const { uid } = await this.deps.usersService.requireActive(ctx, rawUid);
    // One statement: atomic without a transaction.
    await this.deps.friends.removeMany(ctx.appId, uid, normalizeIds(rawOthers));
    return { success: true, message: 'Deleted the friend relations successfully.' };
  }

  async list(ctx: ActorContext, rawUid: string, input: PageRequest & { searchKey?: string }): Promise<{ data: RelatedUser[]; meta: PageMeta }> {
    const { uid } = await this.deps.usersService.requireActive(ctx, rawUid);
    const page = { page: input.page, perPage: input.perPage };
    const { rows, total } = await this.deps.friends.list(ctx.appId, uid, { searchKey: input.searchKey }, page);
    const relations = await this.deps.blocks.relations(
      ctx.appId,
      uid,
      rows.map((row) => row.uid),
    );
    return {
      data: rows.map((row) => extended(withBlockFields(toUser(row, { withTags: false }), relations.get(row.uid)), { conversationId: userConversationWireId(uid, row.uid) })),
      meta: pageMeta(page, total, rows.length),
    };
  }
}
