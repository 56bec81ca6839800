import type { ReceiverType } from '../../db/schema.js';
import { groupConversationKey, wireConversationId } from '../../domain/conversation-id.js';
import { extended } from '../../domain/objects.js';
import { toUnix, toUnixOrUndefined } from '../../domain/time.js';
import type { BlockRelation } from '../../repositories/blocked-users.repository.js';
import type { GroupRow } from '../../repositories/groups.repository.js';
import type { MessageRow } from '../../repositories/messages.repository.js';
import type { ReactionCount } from '../../repositories/reactions.repository.js';
import type { UserRow } from '../../repositories/users.repository.js';
import { toGroup } from './groups.view.js';
import { toUser, withBlockFields } from './users.view.js';

// How a message is shown: the message object of every answer, with its entities (a pure
// mapping of the stored row and the users and groups it names).

export type Entity = { entity: Record<string, unknown>; entityType: 'user' | 'group' | 'message' };
/** An action message's entities (docs/compatibility.md, "Edits, deletes, action messages and bots"): who acted, on what, and for whom. */
export type ActionEntities = { by: Entity; on: Entity; for?: Entity };

export interface Message {
  id: string;
  muid?: string;
  conversationId: string;
  sender: string;
  receiverType: ReceiverType;
  receiver: string;
  category: string;
  type: string;
  data: Record<string, unknown> & { entities: { sender: Entity; receiver: Entity } | ActionEntities; mentions?: Record<string, unknown> };
  sentAt: number;
  updatedAt: number;
  tags?: string[];
  parentId?: string;
  replyCount?: number;
  editedAt?: number;
  editedBy?: string;
  deletedAt?: number;
  deletedBy?: string;
  /** Receipts (see receipts.ts). */
  deliveredAt?: number;
  readAt?: number;
}

export function userEntity(uid: string, user: UserRow | undefined, extra: Record<string, unknown> = {}): Entity {
  // A permanently deleted user leaves only their uid.
  return { entity: user ? extended(toUser(user, { withTags: false }), extra) : extended({ uid }, extra), entityType: 'user' };
}

export function groupEntity(guid: string, group: GroupRow | undefined): Entity {
  const entity = group ? { ...toGroup(group, undefined, { withTags: false }) } : { guid, conversationId: groupConversationKey(guid) };
  return { entity, entityType: 'group' };
}

// The entities of the messages of one answer, made once per row read: a page, or an import's
// answer, names the same few people on every message. Shared objects, only serialised.
const userEntities = new WeakMap<UserRow, Entity>();
const receiverEntities = new WeakMap<UserRow, Map<string, Entity>>();
const groupEntities = new WeakMap<GroupRow, Entity>();

/** A user's entity, with the conversation's id when the user is a 1:1 message's receiver. */
function userEntityOf(uid: string, user: UserRow | undefined, conversationId?: string): Entity {
  return userEntity(uid, user, conversationId === undefined ? {} : { conversationId });
}

/** userEntityOf, made once per row read and conversation. */
function sharedUserEntity(uid: string, user: UserRow | undefined, conversationId?: string): Entity {
  if (!user) return userEntityOf(uid, user, conversationId);
  if (conversationId === undefined) {
    let entity = userEntities.get(user);
    if (!entity) userEntities.set(user, (entity = userEntityOf(uid, user)));
    return entity;
  }
  let byConversation = receiverEntities.get(user);
  if (!byConversation) receiverEntities.set(user, (byConversation = new Map()));
  let entity = byConversation.get(conversationId);
  if (!entity) byConversation.set(conversationId, (entity = userEntityOf(uid, user, conversationId)));
  return entity;
}

function sharedGroupEntity(guid: string, group: GroupRow | undefined): Entity {
  if (!group) return groupEntity(guid, group);
  let entity = groupEntities.get(group);
  if (!entity) groupEntities.set(group, (entity = groupEntity(guid, group)));
  return entity;
}

/** A message's (not an action message's) entities: its sender, and its receiver user or group. */
export function entitiesOf(
  row: Pick<MessageRow, 'sender' | 'receiver' | 'receiver_type' | 'conversation_id'>,
  users: Map<string, UserRow>,
  groups: Map<string, GroupRow>,
  shared: boolean,
): { sender: Entity; receiver: Entity } {
  const userEntityFor = shared ? sharedUserEntity : userEntityOf;
  return {
    sender: userEntityFor(row.sender, users.get(row.sender)),
    receiver:
      row.receiver_type === 'user'
        ? userEntityFor(row.receiver, users.get(row.receiver), wireConversationId(row.conversation_id))
        : (shared ? sharedGroupEntity : groupEntity)(row.receiver, groups.get(row.receiver)),
  };
}

export function toMessage(
  row: MessageRow,
  users: Map<string, UserRow>,
  groups: Map<string, GroupRow>,
  options: { withTags: boolean; mentionsWithTagInfo?: boolean; mentionBlocks?: Map<string, BlockRelation>; shareEntities?: boolean },
  reactions: ReactionCount[] = [],
): Message {
  const stored = (row.data ?? {}) as Record<string, unknown>;
  const data: Message['data'] = extended(stored, {
    // An action message keeps the entities stored with it: what was acted on, as it was then.
    entities: row.category === 'action' ? (stored.entities as ActionEntities) : entitiesOf(row, users, groups, options.shareEntities ?? true),
  });
  const mentions = mentionsOf(row.mentioned_uids, users, options);
  if (mentions) data.mentions = mentions;
  if (reactions.length) data.reactions = reactionsShown(reactions);
  const message: Message = {
    id: String(row.id),
    conversationId: wireConversationId(row.conversation_id),
    sender: row.sender,
    receiverType: row.receiver_type,
    receiver: row.receiver,
    category: row.category,
    type: row.type,
    data,
    sentAt: toUnix(row.sent_at),
    updatedAt: toUnix(row.updated_at ?? row.sent_at),
  };
  if (row.muid !== null) message.muid = row.muid;
  if (options.withTags && row.tags.length) message.tags = row.tags;
  if (row.parent_id !== null) message.parentId = String(row.parent_id);
  if (row.reply_count > 0) message.replyCount = row.reply_count;
  const editedAt = toUnixOrUndefined(row.edited_at);
  if (editedAt !== undefined) message.editedAt = editedAt;
  if (row.edited_by !== null) message.editedBy = row.edited_by;
  const deletedAt = toUnixOrUndefined(row.deleted_at);
  if (deletedAt !== undefined) message.deletedAt = deletedAt;
  if (row.deleted_by !== null) message.deletedBy = row.deleted_by;
  return message;
}

/** A message's `data.mentions`: the mentioned users who exist, or undefined for none. */
export function mentionsOf(
  uids: readonly string[],
  users: Map<string, UserRow>,
  options: { mentionsWithTagInfo?: boolean; mentionBlocks?: Map<string, BlockRelation> },
): Record<string, unknown> | undefined {
  let mentions: Record<string, unknown> | undefined;
  for (const uid of uids) {
    const user = users.get(uid);
    if (!user) continue;
    const mentioned = toUser(user, { withTags: options.mentionsWithTagInfo ?? false });
    // mentionsWithBlockedInfo: blockedByMe and hasBlockedMe relative to the viewer, as on get-user.
    (mentions ??= {})[uid] = options.mentionBlocks ? withBlockFields(mentioned, options.mentionBlocks.get(uid)) : mentioned;
  }
  return mentions;
}

/** A message's `data.reactions` (in data, as the vendor's reaction examples show; reactedByMe only when true). */
export function reactionsShown(reactions: ReactionCount[]): Array<Record<string, unknown>> {
  return reactions.map(({ reaction, count, reactedByMe }) => (reactedByMe ? { reaction, count, reactedByMe } : { reaction, count }));
}
