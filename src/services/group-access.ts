import type { GroupRow, GroupsRepository } from '../repositories/groups.repository.js';
import type { GroupMembersRepository, MemberRow } from '../repositories/group-members.repository.js';
import type { MemberScope } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';
import { AppError } from '../domain/errors.js';

/**
 * Who acts on a group, and how far they reach. Without onBehalfOf the app itself acts and may
 * do anything the rules allow; with it, the acting member's rank applies:
 * owner > admin > moderator > participant.
 */
export interface GroupActor {
  /** The acting user; undefined when the app acts (no onBehalfOf). */
  uid: string | undefined;
  rank: number;
  membership: MemberRow | undefined;
}

export const SCOPE_RANK: Record<MemberScope, number> = { participant: 1, moderator: 2, admin: 3 };
export const OWNER_RANK = 4;
/** The app itself (no onBehalfOf), and a group's creator placing its first members. */
export const APP_RANK = 5;

export function rankOf(group: GroupRow, uid: string, membership: MemberRow | MemberScope | null | undefined): number {
  if (group.owner === uid) return OWNER_RANK;
  if (!membership) return 0;
  return SCOPE_RANK[typeof membership === 'string' ? membership : membership.scope];
}

/** The actor of a request on a group. */
export async function groupActor(members: GroupMembersRepository, appId: string, group: GroupRow, onBehalfOf: string | undefined, tx?: Executor): Promise<GroupActor> {
  if (onBehalfOf === undefined) return { uid: undefined, rank: APP_RANK, membership: undefined };
  const membership = await members.get(appId, group.guid, onBehalfOf, tx);
  return { uid: onBehalfOf, rank: rankOf(group, onBehalfOf, membership), membership };
}

/**
 * The group, locked until the transaction ends (ERR_GUID_NOT_FOUND when there is none), and the
 * actor of the request on it: the start of every change to a group or its members.
 */
export async function lockGroupForActor(
  repositories: { groups: GroupsRepository; members: GroupMembersRepository },
  appId: string,
  guid: string,
  onBehalfOf: string | undefined,
  tx: Executor,
): Promise<{ group: GroupRow; actor: GroupActor }> {
  const group = await repositories.groups.getForUpdate(appId, guid, tx);
  if (!group) throw guidNotFound(guid);
  return { group, actor: await groupActor(repositories.members, appId, group, onBehalfOf, tx) };
}

export function guidNotFound(guid: string): AppError {
  return new AppError('ERR_GUID_NOT_FOUND', { params: { guid } });
}

/** The actor must be a member of the group, with at least `scope`. */
export function requireRank(actor: GroupActor, group: GroupRow, scope: MemberScope, code: 'ERR_GROUP_NO_CLEARANCE' | 'ERR_GROUP_NO_ADMIN_SCOPE', target = ''): void {
  if (actor.uid === undefined) return;
  if (actor.rank === 0) throw new AppError('ERR_GROUP_NOT_JOINED', { params: { uid: actor.uid, guid: group.guid } });
  if (actor.rank < SCOPE_RANK[scope]) throw new AppError(code, { params: { uid: actor.uid, guid: group.guid, target } });
}
