import { userConversationWireId } from '../../domain/conversation-id.js';
import { extended } from '../../domain/objects.js';
import { toUnix, toUnixOrUndefined } from '../../domain/time.js';
import type { BlockRelation } from '../../repositories/blocked-users.repository.js';
import type { UserRow } from '../../repositories/users.repository.js';

// How a user is shown: the user object of every answer (a pure mapping of the stored row).

export interface User {
  uid: string;
  name: string;
  avatar?: string;
  link?: string;
  role: string;
  status: string;
  statusMessage?: string;
  metadata?: Record<string, unknown>;
  tags?: string[];
  createdAt: number;
  updatedAt?: number;
  lastActiveAt?: number;
  deactivatedAt?: number;
  authToken?: string;
  /** Relative to a viewer (onBehalfOf, or the user whose friends or blocked users are listed). */
  blockedByMe?: boolean;
  hasBlockedMe?: boolean;
  blockedByMeAt?: number;
  hasBlockedMeAt?: number;
  blockedAt?: number;
}

/** The metadata key that is stored but never returned (the vendor keeps e-mail and phone there). */
const PRIVATE_METADATA_KEY = '@private';

/**
 * Adds blockedByMe and hasBlockedMe (with their times) to a user seen by a viewer. blockedAt is
 * when the viewer blocked the user, else when the user blocked the viewer.
 */
export function withBlockFields(user: User, relation: BlockRelation | undefined): User {
  user.blockedByMe = relation?.blockedByMeAt !== undefined;
  user.hasBlockedMe = relation?.hasBlockedMeAt !== undefined;
  if (relation?.blockedByMeAt) user.blockedByMeAt = toUnix(relation.blockedByMeAt);
  if (relation?.hasBlockedMeAt) user.hasBlockedMeAt = toUnix(relation.hasBlockedMeAt);
  const blockedAt = relation?.blockedByMeAt ?? relation?.hasBlockedMeAt;
  if (blockedAt) user.blockedAt = toUnix(blockedAt);
  return user;
}

/** With a viewer (onBehalfOf), a listed user also names the viewer's 1:1 conversation with them. */
export function withViewerConversation<T extends User>(user: T, viewer: string | undefined): T & { conversationId?: string } {
  if (viewer === undefined) return user;
  return extended(user, { conversationId: userConversationWireId(viewer, user.uid) }) as T & { conversationId: string };
}

export function publicMetadata(metadata: unknown): Record<string, unknown> | undefined {
  if (metadata === null || metadata === undefined || typeof metadata !== 'object') return undefined;
  const { [PRIVATE_METADATA_KEY]: _hidden, ...visible } = metadata as Record<string, unknown>;
  return visible;
}

export function toUser(row: UserRow, options: { withTags: boolean }): User {
  const user: User = { uid: row.uid, name: row.name, role: row.role, status: row.status, createdAt: toUnix(row.created_at) };
  if (row.avatar !== null) user.avatar = row.avatar;
  if (row.link !== null) user.link = row.link;
  if (row.status_message !== null) user.statusMessage = row.status_message;
  const metadata = publicMetadata(row.metadata);
  if (metadata) user.metadata = metadata;
  if (options.withTags && row.tags.length) user.tags = row.tags;
  const updatedAt = toUnixOrUndefined(row.updated_at);
  if (updatedAt !== undefined) user.updatedAt = updatedAt;
  const lastActiveAt = toUnixOrUndefined(row.last_active_at);
  if (lastActiveAt !== undefined) user.lastActiveAt = lastActiveAt;
  const deactivatedAt = toUnixOrUndefined(row.deactivated_at);
  if (deactivatedAt !== undefined) user.deactivatedAt = deactivatedAt;
  return user;
}
