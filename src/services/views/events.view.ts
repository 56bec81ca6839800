import type { MemberScope } from '../../db/schema.js';
import { groupConversationKey } from '../../domain/conversation-id.js';
import type { NewEvent } from '../../domain/events.js';
import type { GroupRow } from '../../repositories/groups.repository.js';
import { toUnix } from '../../domain/time.js';
import type { MessageRow } from '../../repositories/messages.repository.js';
import type { ReactionChange } from '../../repositories/reactions.repository.js';
import type { UserRow } from '../../repositories/users.repository.js';
import { toGroup } from './groups.view.js';
import { toUser } from './users.view.js';

// The `data` of the events whose payload is recorded with them, in the vendor's webhook shapes
// (docs/webhooks.md, "What a delivery is"; docs/events.md). Message events are rendered when delivered instead.

/** A reaction added or removed: `data.reaction`. */
export function reactionEvent(trigger: 'message_reaction_added' | 'message_reaction_removed', message: MessageRow, reaction: string, actor: UserRow, change: ReactionChange): NewEvent {
  const reactedBy = toUser(actor, { withTags: false });
  return {
    trigger,
    conversationId: message.conversation_id,
    data: {
      reaction: { id: String(change.id), messageId: String(message.id), reaction, uid: actor.uid, reactedAt: toUnix(change.reacted_at), reactedBy },
    },
  };
}

/**
 * A delivery or read receipt: `reader` marked the conversation up to `message`. `receiver` is
 * whom the receipt is for: the other user of a 1:1, the group of a group conversation.
 */
export function receiptEvent(action: 'delivered' | 'read', reader: UserRow, receiver: string, message: MessageRow, at: Date): NewEvent {
  return {
    trigger: action === 'read' ? 'message_read_receipt' : 'message_delivery_receipt',
    conversationId: message.conversation_id,
    data: {
      receiver,
      receiverType: message.receiver_type,
      type: 'receipts',
      sender: reader.uid,
      messageSender: message.sender,
      body: {
        action,
        messageId: String(message.id),
        user: { uid: reader.uid, name: reader.name, status: reader.status },
        timestamp: toUnix(at),
      },
    },
  };
}

/** A block or unblock: `data.users` keyed by uid (the users blocked or unblocked), and `data.by`. */
export function blockEvent(trigger: 'user_blocked' | 'user_unblocked', by: UserRow, users: UserRow[]): NewEvent {
  return {
    trigger,
    data: {
      users: Object.fromEntries(users.map((user) => [user.uid, toUser(user, { withTags: false })])),
      by: toUser(by, { withTags: false }),
    },
  };
}

const MEMBER_TRIGGERS = {
  joined: 'group_member_joined',
  left: 'group_member_left',
  added: 'group_member_added',
  kicked: 'group_member_kicked',
  banned: 'group_member_banned',
  unbanned: 'group_member_unbanned',
  scopeChanged: 'group_member_scope_changed',
} as const;

/** A change to a group's members, one entry per member acted on. */
export interface MemberChange {
  action: keyof typeof MEMBER_TRIGGERS;
  uid: string;
  scope?: { new: MemberScope; old: MemberScope };
}

/**
 * The events of a change to a group's members: one per run of the same action (adding three
 * members is one group_member_added), with `data.group`, `data.members` keyed by uid (a scope
 * change adds `scope` and `oldScope`), and `data.by` when a user acted on others (not for
 * joined and left, which the member does).
 */
export function memberEvents(group: GroupRow, actor: UserRow | undefined, changes: MemberChange[], users: Map<string, UserRow>): NewEvent[] {
  const events: NewEvent[] = [];
  const groupObject = toGroup(group, undefined, { withTags: false });
  let members: Record<string, unknown> = {};
  for (const [n, change] of changes.entries()) {
    const user = users.get(change.uid);
    const member: Record<string, unknown> = user ? { ...toUser(user, { withTags: false }) } : { uid: change.uid };
    if (change.scope) {
      member.scope = change.scope.new;
      member.oldScope = change.scope.old;
    }
    members[change.uid] = member;
    if (changes[n + 1]?.action === change.action) continue;
    const data: Record<string, unknown> = { group: groupObject, members };
    if (actor && change.action !== 'joined' && change.action !== 'left') data.by = toUser(actor, { withTags: false });
    events.push({ trigger: MEMBER_TRIGGERS[change.action], conversationId: groupConversationKey(group.guid), data });
    members = {};
  }
  return events;
}

/** A group created, updated or deleted (as it was), or handed to a new owner: `data.group`, and `data.by` when a user acted. */
export function groupEvent(
  trigger: 'group_created' | 'group_updated' | 'group_deleted' | 'group_owner_transferred',
  group: GroupRow,
  actor: UserRow | undefined,
  extra: Record<string, unknown> = {},
): NewEvent {
  const data: Record<string, unknown> = { group: toGroup(group, undefined, { withTags: false }), ...extra };
  if (actor) data.by = toUser(actor, { withTags: false });
  return { trigger, conversationId: groupConversationKey(group.guid), data };
}
