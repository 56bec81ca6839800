import type { Kysely } from 'kysely';
import { UniqueViolation } from '../db/driver-errors.js';
import type { DB } from '../db/schema.js';
import { withTransaction } from '../db/transaction.js';
import type { RequestContext } from '../domain/context.js';
import { AppError } from '../domain/errors.js';
import { metadataJson, normalizeId, normalizeIds, normalizeTags } from '../domain/normalize.js';
import { extended } from '../domain/objects.js';
import { pageMeta, type PageMeta, type PageRequest } from '../domain/pagination.js';
import type { BlockedUsersRepository, BlockRelation } from '../repositories/blocked-users.repository.js';
import { DEFAULT_ROLE, type RolesRepository } from '../repositories/roles.repository.js';
import type { UserPurgeRepository } from '../repositories/user-purge.repository.js';
import type { NewUser, UserChanges, UserListFilter, UserRow, UsersRepository } from '../repositories/users.repository.js';
import { isActorContext, type ActorContext } from './actor.js';
import type { AuthTokensService } from './auth-tokens.service.js';
import { toUser, withBlockFields, withViewerConversation, type User } from './views/users.view.js';
import { roleNotFound } from './roles.service.js';
import type { Revocations } from './gateway/revocations.js';

export interface CreateUserInput {
  uid: string;
  name: string;
  avatar?: string;
  link?: string;
  role?: string;
  statusMessage?: string;
  metadata?: Record<string, unknown>;
  tags?: string[];
  withAuthToken?: boolean;
}

export type UnsettableUserField = 'avatar' | 'link' | 'metadata' | 'statusMessage' | 'tags';

export interface UpdateUserInput {
  name?: string;
  avatar?: string;
  link?: string;
  role?: string;
  statusMessage?: string;
  metadata?: Record<string, unknown>;
  tags?: string[];
  unset?: UnsettableUserField[];
}

export interface ListUsersInput extends PageRequest {
  searchKey?: string;
  searchIn?: Array<'name' | 'uid'>;
  status?: string;
  roles?: string[];
  tags?: string[];
  withTags?: boolean;
  onlyDeactivated?: boolean;
  withDeactivated?: boolean;
}

/** Messages of the app scanned per transaction when a user is deleted permanently. */
const PURGE_WINDOW = 10_000;

export class UsersService {
  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      users: UsersRepository;
      /** A user created with the creates of the same moment (coalesced: container.ts). */
      createUser: (item: { appId: string; user: NewUser }) => Promise<UserRow>;
      /** An active user, read with the reads of the same moment (coalesced: container.ts). */
      activeUser: (item: { appId: string; uid: string }) => Promise<UserRow | undefined>;
      blocks: BlockedUsersRepository;
      authTokens: AuthTokensService;
      roles: RolesRepository;
      purge: UserPurgeRepository;
      /** Told of users deactivated or deleted (the gateway closes their connections: services/gateway/revocations.ts). */
      revocations?: Revocations;
    },
  ) {}

  async create(ctx: RequestContext, input: CreateUserInput): Promise<User> {
    const uid = normalizeId(input.uid);
    const values = {
      uid,
      name: input.name,
      avatar: input.avatar,
      link: input.link,
      role: input.role === undefined ? undefined : normalizeId(input.role),
      statusMessage: input.statusMessage,
      metadataJson: metadataJson(input.metadata),
      tags: input.tags && normalizeTags(input.tags),
    };
    await this.requireRole(ctx, values.role);
    try {
      // One INSERT is atomic on its own; a transaction only when a token is issued with it.
      if (!input.withAuthToken) return toUser(await this.deps.createUser({ appId: ctx.appId, user: values }), { withTags: true });
      return await withTransaction(
        this.deps.db,
        'create_user',
        async (tx) => {
          const user = toUser(await this.deps.users.create(ctx.appId, values, tx), { withTags: true });
          user.authToken = (await this.deps.authTokens.issue(ctx, uid, tx)).authToken;
          return user;
        },
        ctx.log,
      );
    } catch (error) {
      if (error instanceof UniqueViolation) throw new AppError('ERR_UID_ALREADY_EXISTS', { params: { uid } });
      throw error;
    }
  }

  async list(ctx: ActorContext, input: ListUsersInput): Promise<{ data: User[]; meta: PageMeta }> {
    const filter: UserListFilter = {
      searchKey: input.searchKey,
      searchIn: input.searchIn,
      status: input.status,
      roles: input.roles && normalizeIds(input.roles),
      tags: input.tags,
      deactivated: input.onlyDeactivated ? 'only' : input.withDeactivated ? 'include' : 'exclude',
    };
    const page = { page: input.page, perPage: input.perPage };
    const { rows, total } = await this.deps.users.list(ctx.appId, filter, page);
    const relations = await this.blockRelations(
      ctx,
      rows.map((row) => row.uid),
    );
    return {
      data: rows.map((row) => {
        const user = toUser(row, { withTags: input.withTags ?? false });
        return withViewerConversation(relations ? withBlockFields(user, relations.get(row.uid)) : user, ctx.onBehalfOf);
      }),
      meta: pageMeta(page, total, rows.length),
    };
  }

  async get(ctx: ActorContext, rawUid: string): Promise<User> {
    const row = await this.requireActive(ctx, rawUid);
    const relations = await this.blockRelations(ctx, [row.uid]);
    const user = toUser(row, { withTags: true });
    return relations ? withBlockFields(user, relations.get(row.uid)) : user;
  }

  /** With onBehalfOf: how that user and each of these block each other, in one query. */
  async blockRelations(ctx: RequestContext, uids: string[]): Promise<Map<string, BlockRelation> | undefined> {
    if (ctx.onBehalfOf === undefined) return undefined;
    return this.deps.blocks.relations(ctx.appId, ctx.onBehalfOf, uids);
  }

  async update(ctx: RequestContext, rawUid: string, input: UpdateUserInput): Promise<User> {
    const uid = normalizeId(rawUid);
    const unset = new Set(input.unset ?? []);
    const changes: UserChanges = {
      name: input.name,
      avatar: unset.has('avatar') ? null : input.avatar,
      link: unset.has('link') ? null : input.link,
      role: input.role === undefined ? undefined : normalizeId(input.role),
      statusMessage: unset.has('statusMessage') ? null : input.statusMessage,
      metadataJson: unset.has('metadata') ? null : metadataJson(input.metadata),
      tags: unset.has('tags') ? [] : input.tags && normalizeTags(input.tags),
    };
    await this.requireRole(ctx, changes.role);
    const row = await this.deps.users.update(ctx.appId, uid, changes);
    if (!row) throw uidNotFound(uid);
    return toUser(row, { withTags: true });
  }

  /**
   * Soft delete deactivates the user. A permanent delete removes them "along with all the
   * messages, conversations, etc." (the vendor's words): first their messages, in short
   * transactions (purgeMessages), then the user with what the database cascades (tokens, sides
   * of conversations, states, memberships, friends, blocks), then once more the messages that
   * sends in flight stored meanwhile. Interrupted, it can be run again: the user is still there
   * until their messages are gone.
   */
  async delete(ctx: RequestContext, rawUid: string, permanent: boolean): Promise<{ success: true; message: string }> {
    const uid = normalizeId(rawUid);
    if (permanent) {
      if (!(await this.deps.users.get(ctx.appId, uid))) throw uidNotFound(uid);
      const scannedTo = await this.purgeMessages(ctx, uid, '0');
      if (!(await this.deps.users.delete(ctx.appId, uid))) throw uidNotFound(uid);
      await this.purgeMessages(ctx, uid, scannedTo);
    } else {
      const done = await withTransaction(
        this.deps.db,
        'deactivate_user',
        async (tx) => {
          if (!(await this.deps.users.getActive(ctx.appId, uid, tx))) return false;
          await this.deps.users.setDeactivated(ctx.appId, [uid], true, tx);
          return true;
        },
        ctx.log,
      );
      if (!done) throw uidNotFound(uid);
    }
    this.deps.revocations?.revoked(ctx.appId, [uid]);
    return { success: true, message: `User with ${uid} has been deleted successfully.` };
  }

  /**
   * Deletes the user's messages after `afterId`, PURGE_WINDOW messages of the app scanned per
   * transaction, so that a user with a million messages holds no long transaction. Answers the
   * last id scanned.
   */
  private async purgeMessages(ctx: RequestContext, uid: string, afterId: string): Promise<string> {
    let after = afterId;
    for (;;) {
      const step = await withTransaction(this.deps.db, 'purge_user_messages', (tx) => this.deps.purge.step(ctx.appId, uid, after, PURGE_WINDOW, tx), ctx.log);
      if (step.scannedTo !== null) after = step.scannedTo;
      if (step.done) return after;
    }
  }

  /** Returns the given uids that exist and are deactivated afterwards; unknown uids are left out. */
  async deactivate(ctx: RequestContext, rawUids: string[]): Promise<{ deactivatedUids: string[] }> {
    const deactivatedUids = await this.deps.users.setDeactivated(ctx.appId, normalizeIds(rawUids), true);
    this.deps.revocations?.revoked(ctx.appId, deactivatedUids);
    return { deactivatedUids };
  }

  /** Returns the given uids that exist and are active afterwards; unknown uids are left out. */
  async reactivate(ctx: RequestContext, rawUids: string[]): Promise<{ nonDeactivatedUids: string[] }> {
    const nonDeactivatedUids = await this.deps.users.setDeactivated(ctx.appId, normalizeIds(rawUids), false);
    return { nonDeactivatedUids };
  }

  /**
   * The context with its actor: the user named by `onBehalfOf`, which must be an active user of
   * this app (else ERR_UID_NOT_FOUND), or none when the request names none. A context that
   * already carries its actor is answered as it is. Routes get one through actorContext
   * (http/plugins/actor.ts); services, the import and tests call this.
   */
  async withActor(ctx: RequestContext): Promise<ActorContext> {
    return isActorContext(ctx) ? ctx : this.readActor(ctx);
  }

  /** As withActor, but read again even when `ctx` carries one (a run again: see againAsActor). */
  async readActor(ctx: RequestContext): Promise<ActorContext> {
    const actor = ctx.onBehalfOf === undefined ? undefined : await this.requireActive(ctx, ctx.onBehalfOf);
    return extended(ctx, { actor });
  }

  /**
   * A role given in a body must exist (one indexed read, skipped for none or `default`). A role
   * deleted at that very moment can still slip through: there is no foreign key (see 0004).
   */
  private async requireRole(ctx: RequestContext, role: string | undefined): Promise<void> {
    if (role !== undefined && role !== DEFAULT_ROLE && !(await this.deps.roles.exists(ctx.appId, role))) throw roleNotFound(role);
  }

  /** The active user with this uid (in any case), else ERR_UID_NOT_FOUND. */
  async requireActive(ctx: RequestContext, rawUid: string): Promise<UserRow> {
    const uid = normalizeId(rawUid);
    const row = await this.deps.activeUser({ appId: ctx.appId, uid });
    if (!row) throw uidNotFound(uid);
    return row;
  }
}

export function uidNotFound(uid: string): AppError {
  return new AppError('ERR_UID_NOT_FOUND', { params: { uid } });
}
