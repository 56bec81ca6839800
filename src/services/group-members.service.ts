import type { Kysely } from 'kysely';
import type { DB, MemberScope } from '../db/schema.js';
import { withTransaction, type Executor } from '../db/transaction.js';
import type { RequestContext } from '../domain/context.js';
import { AppError, badRequest, uidFailure as failure } from '../domain/errors.js';
import { LIMITS, normalizeId } from '../domain/normalize.js';
import { extended } from '../domain/objects.js';
import { pageMeta, type PageMeta, type PageRequest } from '../domain/pagination.js';
import type { PasswordHasher } from '../domain/passwords.js';
import { toUnix } from '../domain/time.js';
import type { GroupMembersRepository } from '../repositories/group-members.repository.js';
import type { GroupRow, GroupsRepository } from '../repositories/groups.repository.js';
import type { UsersRepository } from '../repositories/users.repository.js';
import type { ActionMessages, GroupMemberEvent } from './action-messages.js';
import { groupActor, guidNotFound, lockGroupForActor, rankOf, requireRank, SCOPE_RANK, type GroupActor } from './group-access.js';
import type { Message } from './views/messages.view.js';
import type { RbacService } from './rbac.service.js';
import type { ActorContext } from './actor.js';
import type { UsersService } from './users.service.js';
import { toUser, withBlockFields, withViewerConversation, type User } from './views/users.view.js';
import { againIfDeletedMeanwhile } from './deleted-meanwhile.js';

/** The four arrays of an add-members call (and of create-group's inline `members`). */
export const MEMBER_BUCKETS = ['admins', 'moderators', 'participants', 'usersToBan'] as const;
export type MemberBucket = (typeof MEMBER_BUCKETS)[number];
export type MembersInput = Partial<Record<MemberBucket, string[]>>;

const BUCKET_SCOPE: Record<Exclude<MemberBucket, 'usersToBan'>, MemberScope> = {
  admins: 'admin',
  moderators: 'moderator',
  participants: 'participant',
};

/** A success carries the action message of an added (or joined) member, as the vendor's example shows. */
export type UidResult = { success: true; data?: Message } | { success: false; error: { code: string; message: string } };
export type MembersResult = Partial<Record<MemberBucket, Record<string, UidResult>>>;

export interface Member extends User {
  scope: MemberScope;
  joinedAt: number;
}

/**
 * One bucket per uid: a uid in several arrays is banned if it is in usersToBan, else it gets
 * the highest scope it was given.
 */
export function assignBuckets(input: MembersInput): Array<{ uid: string; bucket: MemberBucket }> {
  const chosen = new Map<string, MemberBucket>();
  for (const bucket of ['usersToBan', 'admins', 'moderators', 'participants'] as const) {
    for (const raw of input[bucket] ?? []) {
      const uid = normalizeId(raw);
      if (!chosen.has(uid)) chosen.set(uid, bucket);
    }
  }
  return [...chosen].map(([uid, bucket]) => ({ uid, bucket }));
}

export class GroupMembersService {
  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      groups: GroupsRepository;
      members: GroupMembersRepository;
      users: UsersRepository;
      usersService: Pick<UsersService, 'withActor' | 'blockRelations'>;
      rbac: RbacService;
      actions: ActionMessages;
      passwords: PasswordHasher;
    },
  ) {}

  /**
   * add-group-members. With onBehalfOf naming a user who is not a member and adds only
   * themselves as a participant, this is a join: free for public groups, with `password` for
   * password groups, refused for private ones.
   */
  async add(ctx: RequestContext, rawGuid: string, input: MembersInput & { password?: string }): Promise<MembersResult> {
    const guid = normalizeId(rawGuid);
    const items = assignBuckets(input);
    if (items.length === 0) throw badRequest({ members: 'name at least one uid in admins, moderators, participants or usersToBan' });
    if (items.length > LIMITS.membersPerCall) throw badRequest({ members: `at most ${LIMITS.membersPerCall} uids per call` });
    // Read after the body's checks, so that a bad body is answered as such whoever onBehalfOf names.
    const actorRow = (await this.deps.usersService.withActor(ctx)).actor;
    const self = ctx.onBehalfOf;
    const selfOnly = self !== undefined && items.length === 1 && items[0]!.uid === self && items[0]!.bucket !== 'usersToBan';
    let joining = false;
    if (selfOnly) {
      // A password check takes tens of milliseconds: before the transaction, not inside it.
      const group = await this.requireGroup(ctx, guid);
      if (await this.deps.members.get(ctx.appId, guid, self)) throw new AppError('ERR_ALREADY_JOINED', { params: { uid: self, guid } });
      if (items[0]!.bucket !== 'participants') {
        throw new AppError('ERR_GROUP_NO_SCOPE_CLEARANCE', { params: { uid: self, scope: BUCKET_SCOPE[items[0]!.bucket as 'admins'], guid } });
      }
      await this.checkJoin(group, self, input);
      await this.deps.rbac.requireGroupTypeAllowed(ctx, actorRow!.role, 'joinGroup', group.type);
      joining = true;
    }
    // A user deleted after their check (users are not locked): run again, they answer not found.
    return againIfDeletedMeanwhile(() =>
      withTransaction(
        this.deps.db,
        'add_group_members',
        async (tx) => {
          const locked = await this.deps.groups.getForUpdate(ctx.appId, guid, tx);
          if (!locked) throw guidNotFound(guid);
          const actor = joining ? { uid: self, rank: SCOPE_RANK.participant, membership: undefined } : await groupActor(this.deps.members, ctx.appId, locked, self, tx);
          if (!joining) requireRank(actor, locked, 'moderator', 'ERR_GROUP_NO_CLEARANCE');
          const result = await this.addInTransaction(ctx, locked, items, actor, tx);
          const joined = joining ? result.participants?.[self!] : undefined;
          if (joined && !joined.success) throw new AppError(joined.error.code as never, { message: joined.error.message });
          return result;
        },
        ctx.log,
      ),
    );
  }

  /** The rules of joining, for a user who is not a member. */
  private async checkJoin(group: GroupRow, uid: string, input: { password?: string }): Promise<void> {
    const banned = await this.deps.members.bannedAmong(group.app_id, group.guid, [uid]);
    if (banned.has(uid)) throw new AppError('ERR_BANNED_GROUPMEMBER', { params: { uid, guid: group.guid } });
    if (group.type === 'private') throw new AppError('ERR_GROUP_JOIN_NOT_ALLOWED', { params: { guid: group.guid } });
    if (group.type === 'password') {
      if (!input.password) throw new AppError('ERR_EMPTY_GROUP_PASS');
      if (!group.password_hash || !(await this.deps.passwords.verify(input.password, group.password_hash))) {
        throw new AppError('ERR_WRONG_GROUP_PASS', { params: { guid: group.guid } });
      }
    }
  }

  /**
   * Adds and bans users inside the caller's transaction (which holds the group's row lock),
   * answering per uid. Used by add-group-members and by create-group's inline members.
   */
  async addInTransaction(ctx: RequestContext, group: GroupRow, items: Array<{ uid: string; bucket: MemberBucket }>, actor: GroupActor, tx: Executor): Promise<MembersResult> {
    const { appId } = ctx;
    const guid = group.guid;
    const uids = items.map((item) => item.uid);
    const known = await this.deps.members.inspect(appId, guid, uids, tx);

    const results = new Map<string, UidResult>();
    const toAdd: Array<{ uid: string; scope: MemberScope }> = [];
    const toBan: string[] = [];
    let vacancies = LIMITS.membersPerGroup - group.members_count;
    for (const { uid, bucket } of items) {
      const refuse = (error: AppError) => results.set(uid, failure(error));
      const { active, scope: currentScope, banned } = known.get(uid)!;
      if (!active) {
        refuse(new AppError('ERR_UID_NOT_FOUND', { params: { uid } }));
        continue;
      }
      if (bucket === 'usersToBan') {
        if (actor.uid === uid) refuse(new AppError('ERR_GROUP_NO_SELF_ACTION', { params: { uid } }));
        else if (group.owner === uid) {
          refuse(new AppError('ERR_GROUP_NO_CLEARANCE', { message: `The owner of the group ${guid} cannot be banned: transfer the ownership first.` }));
        } else if (banned) refuse(new AppError('ERR_ALREADY_BANNED', { params: { uid, guid } }));
        else if (rankOf(group, uid, currentScope) >= actor.rank) {
          refuse(new AppError('ERR_GROUP_NO_CLEARANCE', { params: { uid: actor.uid ?? 'app', target: uid, guid } }));
        } else toBan.push(uid);
        continue;
      }
      const scope = BUCKET_SCOPE[bucket];
      if (banned) refuse(new AppError('ERR_BANNED_GROUPMEMBER', { params: { uid, guid } }));
      else if (currentScope) refuse(new AppError('ERR_ALREADY_JOINED', { params: { uid, guid } }));
      else if (SCOPE_RANK[scope] > actor.rank) {
        refuse(new AppError('ERR_GROUP_NO_SCOPE_CLEARANCE', { params: { uid: actor.uid ?? 'app', scope, guid } }));
      } else if (vacancies <= 0) {
        refuse(new AppError('ERR_PLAN_QUOTA_RESTRICTION', { params: { limit: LIMITS.membersPerGroup, what: `members in the group ${guid}` } }));
      } else {
        vacancies--;
        toAdd.push({ uid, scope });
      }
    }

    const added = new Set((await this.deps.members.addMany(appId, guid, toAdd, tx)).map((row) => row.uid));
    for (const { uid } of toAdd) {
      results.set(uid, added.has(uid) ? { success: true } : failure(new AppError('ERR_ALREADY_JOINED', { params: { uid, guid } })));
    }
    if (toBan.length) {
      await this.deps.members.removeMany(appId, guid, toBan, tx);
      const nowBanned = new Set(await this.deps.members.ban(appId, guid, toBan, actor.uid ?? null, tx));
      for (const uid of toBan) {
        results.set(uid, nowBanned.has(uid) ? { success: true } : failure(new AppError('ERR_ALREADY_BANNED', { params: { uid, guid } })));
      }
    }

    // One action message per change: a user adding themselves joins.
    const events: GroupMemberEvent[] = [];
    for (const { uid, bucket } of items) {
      if (!results.get(uid)!.success) continue;
      events.push({ uid, action: bucket === 'usersToBan' ? 'banned' : uid === actor.uid ? 'joined' : 'added' });
    }
    const messages = await this.deps.actions.groupMember(appId, guid, actor.uid, events, tx);
    events.forEach((event, index) => {
      // The vendor's example answers a ban with `{"success": true}` alone.
      if (event.action !== 'banned') results.set(event.uid, { success: true, data: messages[index]! });
    });

    const answer: MembersResult = {};
    for (const { uid, bucket } of items) (answer[bucket] ??= {})[uid] = results.get(uid)!;
    return answer;
  }

  async list(ctx: ActorContext, rawGuid: string, query: PageRequest & { scopes?: MemberScope[]; status?: string }): Promise<{ data: Member[]; meta: PageMeta }> {
    const guid = normalizeId(rawGuid);
    // With onBehalfOf, each member names that user's conversation with them: the user must exist (the actor).
    const group = await this.requireGroup(ctx, guid);
    const filter = { scopes: query.scopes, status: query.status };
    const page = { page: query.page, perPage: query.perPage };
    const unfiltered = !filter.scopes?.length && !filter.status;
    const [rows, total] = await Promise.all([
      this.deps.members.list(ctx.appId, guid, filter, page),
      unfiltered ? Promise.resolve(group.members_count) : this.deps.members.count(ctx.appId, guid, filter),
    ]);
    return {
      data: rows.map((row) => withViewerConversation(extended(toUser(row, { withTags: false }), { scope: row.scope, joinedAt: toUnix(row.joined_at) }), ctx.onBehalfOf)),
      meta: pageMeta(page, total, rows.length),
    };
  }

  async changeScope(ctx: ActorContext, rawGuid: string, rawUid: string, scope: MemberScope): Promise<{ guid: string; uid: string; scope: MemberScope; joinedAt: number }> {
    const guid = normalizeId(rawGuid);
    const uid = normalizeId(rawUid);
    return withTransaction(
      this.deps.db,
      'change_member_scope',
      async (tx) => {
        const { group, actor } = await lockGroupForActor(this.deps, ctx.appId, guid, ctx.onBehalfOf, tx);
        const target = await this.deps.members.get(ctx.appId, guid, uid, tx);
        if (!target) throw new AppError('ERR_NOT_A_MEMBER', { params: { uid, guid } });
        if (actor.uid === uid) throw new AppError('ERR_GROUP_NO_SELF_ACTION', { params: { uid } });
        if (group.owner === uid) {
          throw new AppError('ERR_GROUP_NO_CLEARANCE', {
            message: `The owner of the group ${guid} is always an admin: transfer the ownership first.`,
          });
        }
        if (target.scope === scope) throw new AppError('ERR_SAME_SCOPE', { params: { uid, scope, guid } });
        if (actor.uid !== undefined) {
          if (actor.rank === 0) throw new AppError('ERR_GROUP_NOT_JOINED', { params: { uid: actor.uid, guid } });
          const targetRank = rankOf(group, uid, target);
          if (actor.rank < SCOPE_RANK.moderator || actor.rank <= targetRank || actor.rank < SCOPE_RANK[scope]) {
            throw new AppError('ERR_GROUP_NO_SCOPE_CLEARANCE', { params: { uid: actor.uid, scope, guid } });
          }
        }
        const updated = (await this.deps.members.setScope(ctx.appId, guid, uid, scope, tx))!;
        const event: GroupMemberEvent = { uid, action: 'scopeChanged', scope: { new: updated.scope, old: target.scope } };
        await this.deps.actions.groupMember(ctx.appId, guid, actor.uid, [event], tx);
        return { guid, uid, scope: updated.scope, joinedAt: toUnix(updated.joined_at) };
      },
      ctx.log,
    );
  }

  /** Kicks a member; a member named by onBehalfOf who kicks themselves leaves the group. */
  async kick(ctx: ActorContext, rawGuid: string, rawUid: string): Promise<{ success: true; message: string }> {
    const guid = normalizeId(rawGuid);
    const uid = normalizeId(rawUid);
    return withTransaction(
      this.deps.db,
      'kick_group_member',
      async (tx) => {
        const { group, actor } = await lockGroupForActor(this.deps, ctx.appId, guid, ctx.onBehalfOf, tx);
        const target = await this.deps.members.get(ctx.appId, guid, uid, tx);
        if (!target) throw new AppError('ERR_NOT_A_MEMBER', { params: { uid, guid } });
        if (group.owner === uid) {
          throw new AppError('ERR_GROUP_NO_CLEARANCE', {
            message: `The owner of the group ${guid} cannot be kicked and cannot leave: transfer the ownership first.`,
          });
        }
        if (actor.uid !== undefined && actor.uid !== uid) {
          requireRank(actor, group, 'moderator', 'ERR_GROUP_NO_CLEARANCE', uid);
          if (actor.rank <= rankOf(group, uid, target)) {
            throw new AppError('ERR_GROUP_NO_CLEARANCE', { params: { uid: actor.uid, target: uid, guid } });
          }
        }
        await this.deps.members.remove(ctx.appId, guid, uid, tx);
        await this.deps.actions.groupMember(ctx.appId, guid, actor.uid, [{ uid, action: actor.uid === uid ? 'left' : 'kicked' }], tx);
        const message = actor.uid === uid ? `The member with ${uid} has left the Group with ${guid}.` : `The member with ${uid} has been kicked from the Group with ${guid}.`;
        return { success: true as const, message };
      },
      ctx.log,
    );
  }

  async ban(ctx: ActorContext, rawGuid: string, rawUid: string): Promise<{ success: true; message: string }> {
    const guid = normalizeId(rawGuid);
    const uid = normalizeId(rawUid);
    return withTransaction(
      this.deps.db,
      'ban_group_user',
      async (tx) => {
        const { group, actor } = await lockGroupForActor(this.deps, ctx.appId, guid, ctx.onBehalfOf, tx);
        if (actor.uid !== undefined && actor.uid !== uid) requireRank(actor, group, 'moderator', 'ERR_GROUP_NO_CLEARANCE', uid);
        const result = await this.addInTransaction(ctx, group, [{ uid, bucket: 'usersToBan' }], actor, tx);
        const outcome = result.usersToBan![uid]!;
        if (!outcome.success) throw new AppError(outcome.error.code as never, { message: outcome.error.message });
        return { success: true as const, message: `The user with uid ${uid} has been banned from the Group with ${guid}.` };
      },
      ctx.log,
    );
  }

  async unban(ctx: ActorContext, rawGuid: string, rawUid: string): Promise<{ success: true; message: string }> {
    const guid = normalizeId(rawGuid);
    const uid = normalizeId(rawUid);
    return withTransaction(
      this.deps.db,
      'unban_group_user',
      async (tx) => {
        const { group, actor } = await lockGroupForActor(this.deps, ctx.appId, guid, ctx.onBehalfOf, tx);
        if (actor.uid === uid) throw new AppError('ERR_GROUP_NO_SELF_ACTION', { params: { uid } });
        requireRank(actor, group, 'moderator', 'ERR_GROUP_NO_CLEARANCE', uid);
        if (!(await this.deps.members.unban(ctx.appId, guid, uid, tx))) {
          throw new AppError('ERR_NOT_A_BANNED_USER', { params: { uid, guid } });
        }
        await this.deps.actions.groupMember(ctx.appId, guid, actor.uid, [{ uid, action: 'unbanned' }], tx);
        return { success: true as const, message: `The user with uid ${uid} has been unbanned from the Group with ${guid}.` };
      },
      ctx.log,
    );
  }

  async listBanned(ctx: ActorContext, rawGuid: string, page: PageRequest): Promise<{ data: Array<User & { bannedAt: number }>; meta: PageMeta }> {
    const guid = normalizeId(rawGuid);
    await this.requireGroup(ctx, guid);
    const { rows, total } = await this.deps.members.listBanned(ctx.appId, guid, page);
    // With onBehalfOf, each banned user as that user sees them: blocks and their conversation.
    const relations = await this.deps.usersService.blockRelations(
      ctx,
      rows.map((row) => row.uid),
    );
    return {
      data: rows.map((row) => {
        const user = toUser(row, { withTags: false });
        const seen = relations ? withBlockFields(user, relations.get(row.uid)) : user;
        return withViewerConversation(extended(seen, { bannedAt: toUnix(row.banned_at) }), ctx.onBehalfOf);
      }),
      meta: pageMeta(page, total, rows.length),
    };
  }

  private async requireGroup(ctx: RequestContext, guid: string): Promise<GroupRow> {
    const group = await this.deps.groups.get(ctx.appId, guid);
    if (!group) throw guidNotFound(guid);
    return group;
  }
}
