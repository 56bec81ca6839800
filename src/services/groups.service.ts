import type { Kysely } from 'kysely';
import { UniqueViolation } from '../db/driver-errors.js';
import type { DB, GroupType, MemberScope } from '../db/schema.js';
import { withTransaction } from '../db/transaction.js';
import type { RequestContext } from '../domain/context.js';
import { AppError, badRequest } from '../domain/errors.js';
import { LIMITS, metadataJson, normalizeId, normalizeTags } from '../domain/normalize.js';
import { pageMeta, type PageMeta, type PageRequest } from '../domain/pagination.js';
import type { PasswordHasher } from '../domain/passwords.js';
import type { GroupMembersRepository } from '../repositories/group-members.repository.js';
import type { GroupChanges, GroupListFilter, GroupsRepository } from '../repositories/groups.repository.js';
import type { UsersRepository } from '../repositories/users.repository.js';
import { APP_RANK, guidNotFound, lockGroupForActor, requireRank } from './group-access.js';
import { assignBuckets, type GroupMembersService, type MembersInput, type MembersResult } from './group-members.service.js';
import type { RbacService } from './rbac.service.js';
import type { ActorContext } from './actor.js';
import type { UsersService } from './users.service.js';
import { toGroup, type Group, type GroupViewer as Viewer } from './views/groups.view.js';
import type { EventsRepository } from '../repositories/events.repository.js';
import { groupEvent } from './views/events.view.js';

/** create-group answers the group with the result of its inline members, per uid. */
export type CreatedGroup = Group & { members?: MembersResult };

export interface CreateGroupInput {
  guid: string;
  name: string;
  type: GroupType;
  password?: string;
  icon?: string;
  description?: string;
  metadata?: Record<string, unknown>;
  owner?: string;
  tags?: string[];
  members?: MembersInput;
}

export type UnsettableGroupField = 'icon' | 'description' | 'metadata' | 'tags';

export interface UpdateGroupInput {
  name?: string;
  type?: GroupType;
  password?: string;
  icon?: string;
  description?: string;
  metadata?: Record<string, unknown>;
  owner?: string;
  tags?: string[];
  unset?: UnsettableGroupField[];
}

export interface ListGroupsInput extends PageRequest {
  searchKey?: string;
  searchIn?: Array<'name' | 'guid'>;
  sortBy?: GroupListFilter['sortBy'];
  sortOrder?: GroupListFilter['sortOrder'];
  affix?: 'append' | 'prepend';
  updatedAt?: number;
  withTags?: boolean;
  tags?: string[];
  types?: GroupType[];
  hasJoined?: boolean;
}

/** The viewer's membership, when the request names one (onBehalfOf). */

export class GroupsService {
  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      groups: GroupsRepository;
      members: GroupMembersRepository;
      users: UsersRepository;
      usersService: Pick<UsersService, 'withActor'>;
      membersService: GroupMembersService;
      rbac: RbacService;
      passwords: PasswordHasher;
      events: EventsRepository;
    },
  ) {}

  /**
   * Creates a group, in one transaction: the owner (the `owner` field, else the onBehalfOf
   * user) becomes its first admin, then the inline members are added, each answered on its
   * own. Without an owner (the app creates it), the group starts with no members.
   */
  async create(ctx: RequestContext, input: CreateGroupInput): Promise<CreatedGroup> {
    const guid = normalizeId(input.guid);
    if (input.type === 'password' && !input.password) throw new AppError('ERR_EMPTY_GROUP_PASS');
    const memberItems = assignBuckets(input.members ?? {});
    if (memberItems.length > LIMITS.membersPerCall) {
      throw badRequest({ members: `at most ${LIMITS.membersPerCall} uids across admins, moderators, participants and usersToBan` });
    }
    // Read after the body's checks, so that a bad body is answered as such whoever onBehalfOf names.
    const actor = (await this.deps.usersService.withActor(ctx)).actor;
    if (actor) await this.deps.rbac.requireGroupTypeAllowed(ctx, actor.role, 'createGroup', input.type);
    const owner = input.owner !== undefined ? normalizeId(input.owner) : ctx.onBehalfOf;
    const passwordHash = input.type === 'password' ? await this.deps.passwords.hash(input.password!) : null;
    const metadata = metadataJson(input.metadata);
    try {
      return await withTransaction(
        this.deps.db,
        'create_group',
        async (tx) => {
          if (owner !== undefined && !(await this.deps.users.getActive(ctx.appId, owner, tx))) {
            throw new AppError('ERR_UID_NOT_FOUND', { params: { uid: owner } });
          }
          await this.deps.groups.create(
            ctx.appId,
            {
              guid,
              name: input.name,
              type: input.type,
              passwordHash,
              icon: input.icon,
              description: input.description,
              metadataJson: metadata,
              tags: input.tags && normalizeTags(input.tags),
              owner: owner ?? null,
            },
            tx,
          );
          if (owner !== undefined) await this.deps.members.addMany(ctx.appId, guid, [{ uid: owner, scope: 'admin' }], tx);
          // Its event before those of its inline members (recorded as they are added).
          const created = (await this.deps.groups.get(ctx.appId, guid, tx))!;
          await this.deps.events.record(ctx.appId, [groupEvent('group_created', created, actor)], tx);
          let membersResult: MembersResult | undefined;
          if (memberItems.length > 0) {
            // The creator may give every scope: they act with the app's reach.
            const group = (await this.deps.groups.getForUpdate(ctx.appId, guid, tx))!;
            membersResult = await this.deps.membersService.addInTransaction(ctx, group, memberItems, { uid: owner, rank: APP_RANK, membership: undefined }, tx);
          }
          const row = (await this.deps.groups.get(ctx.appId, guid, tx))!;
          const viewerMembership = ctx.onBehalfOf ? await this.deps.members.get(ctx.appId, guid, ctx.onBehalfOf, tx) : undefined;
          const group: CreatedGroup = toGroup(row, viewerOf(ctx, viewerMembership), { withTags: true });
          if (membersResult) group.members = membersResult;
          return group;
        },
        ctx.log,
      );
    } catch (error) {
      if (error instanceof UniqueViolation) throw new AppError('ERR_GUID_ALREADY_EXISTS', { params: { guid } });
      throw error;
    }
  }

  async list(ctx: RequestContext, input: ListGroupsInput): Promise<{ data: Group[]; meta: PageMeta }> {
    if (input.hasJoined !== undefined && ctx.onBehalfOf === undefined) {
      throw badRequest({ hasJoined: 'needs the onBehalfOf header, naming whose groups to list' });
    }
    if ((input.affix === undefined) !== (input.updatedAt === undefined)) {
      throw badRequest({ [input.affix === undefined ? 'affix' : 'updatedAt']: `is required with ${input.affix === undefined ? 'updatedAt' : 'affix'}` });
    }
    // After the query's checks, as create does.
    await this.deps.usersService.withActor(ctx);
    const filter: GroupListFilter = {
      searchKey: input.searchKey,
      searchIn: input.searchIn,
      types: input.types,
      tags: input.tags,
      joinedBy: input.hasJoined ? ctx.onBehalfOf : undefined,
      updated: input.affix && input.updatedAt !== undefined ? { affix: input.affix, at: new Date(input.updatedAt * 1000) } : undefined,
      sortBy: input.sortBy ?? 'name',
      sortOrder: input.sortOrder ?? 'asc',
    };
    const page = { page: input.page, perPage: input.perPage };
    const { rows, total } = await this.deps.groups.list(ctx.appId, filter, page, ctx.onBehalfOf);
    return {
      data: rows.map((row) =>
        toGroup(row, ctx.onBehalfOf ? { scope: row.viewer_scope, joinedAt: row.viewer_joined_at } : undefined, {
          withTags: input.withTags ?? false,
        }),
      ),
      meta: pageMeta(page, total, rows.length),
    };
  }

  async get(ctx: ActorContext, rawGuid: string): Promise<Group> {
    const guid = normalizeId(rawGuid);
    const row = await this.deps.groups.get(ctx.appId, guid);
    if (!row) throw guidNotFound(guid);
    const membership = ctx.onBehalfOf ? await this.deps.members.get(ctx.appId, guid, ctx.onBehalfOf) : undefined;
    return toGroup(row, viewerOf(ctx, membership), { withTags: true });
  }

  /**
   * Updates a group. With onBehalfOf, only its admins may; only the owner may hand the
   * ownership on, and the new owner becomes an admin member.
   */
  async update(ctx: ActorContext, rawGuid: string, input: UpdateGroupInput): Promise<Group> {
    const guid = normalizeId(rawGuid);
    const passwordHash = input.password !== undefined ? await this.deps.passwords.hash(input.password) : undefined;
    const unset = new Set(input.unset ?? []);
    return withTransaction(
      this.deps.db,
      'update_group',
      async (tx) => {
        const { group, actor } = await lockGroupForActor(this.deps, ctx.appId, guid, ctx.onBehalfOf, tx);
        requireRank(actor, group, 'admin', 'ERR_GROUP_NO_ADMIN_SCOPE');
        const type = input.type ?? group.type;
        if (type === 'password' && passwordHash === undefined && !group.password_hash) throw new AppError('ERR_EMPTY_GROUP_PASS');
        const changes: GroupChanges = {
          name: input.name,
          type: input.type,
          passwordHash: type === 'password' ? passwordHash : input.type !== undefined ? null : undefined,
          icon: unset.has('icon') ? null : input.icon,
          description: unset.has('description') ? null : input.description,
          metadataJson: unset.has('metadata') ? null : metadataJson(input.metadata),
          tags: unset.has('tags') ? [] : input.tags && normalizeTags(input.tags),
        };
        if (input.owner !== undefined) {
          const owner = normalizeId(input.owner);
          if (owner !== group.owner) {
            if (actor.uid !== undefined && actor.uid !== group.owner) {
              throw new AppError('ERR_GROUP_NO_CLEARANCE', { message: `Only the owner of the group ${guid} may hand its ownership on.` });
            }
            if (!(await this.deps.users.getActive(ctx.appId, owner, tx))) throw new AppError('ERR_UID_NOT_FOUND', { params: { uid: owner } });
            if ((await this.deps.members.bannedAmong(ctx.appId, guid, [owner], tx)).has(owner)) {
              throw new AppError('ERR_BANNED_GROUPMEMBER', { params: { uid: owner, guid } });
            }
            const added = await this.deps.members.addMany(ctx.appId, guid, [{ uid: owner, scope: 'admin' }], tx);
            if (added.length === 0) await this.deps.members.setScope(ctx.appId, guid, owner, 'admin', tx);
            changes.owner = owner;
          }
        }
        const row = (await this.deps.groups.update(ctx.appId, guid, changes, tx))!;
        const events = [groupEvent('group_updated', row, ctx.actor)];
        if (changes.owner !== undefined) events.push(groupEvent('group_owner_transferred', row, ctx.actor, { oldOwner: group.owner }));
        await this.deps.events.record(ctx.appId, events, tx);
        const membership = ctx.onBehalfOf ? await this.deps.members.get(ctx.appId, guid, ctx.onBehalfOf, tx) : undefined;
        return toGroup(row, viewerOf(ctx, membership), { withTags: true });
      },
      ctx.log,
    );
  }

  /** Deletes a group with its members and bans. With onBehalfOf, only its admins may. */
  async delete(ctx: ActorContext, rawGuid: string): Promise<{ success: true; message: string }> {
    const guid = normalizeId(rawGuid);
    return withTransaction(
      this.deps.db,
      'delete_group',
      async (tx) => {
        const { group, actor } = await lockGroupForActor(this.deps, ctx.appId, guid, ctx.onBehalfOf, tx);
        requireRank(actor, group, 'admin', 'ERR_GROUP_NO_ADMIN_SCOPE');
        await this.deps.groups.delete(ctx.appId, guid, tx);
        await this.deps.events.record(ctx.appId, [groupEvent('group_deleted', group, ctx.actor)], tx);
        return { success: true as const, message: `Group with guid ${guid} has been deleted successfully.` };
      },
      ctx.log,
    );
  }
}

function viewerOf(ctx: RequestContext, membership: { scope: MemberScope; joined_at: Date } | undefined): Viewer {
  if (ctx.onBehalfOf === undefined) return undefined;
  return { scope: membership?.scope ?? null, joinedAt: membership?.joined_at ?? null };
}
