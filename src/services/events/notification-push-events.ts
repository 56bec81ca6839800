import { groupConversationKey, wireConversationId } from '../../domain/conversation-id.js';
import type { NotificationLogEntry, NotificationTrigger } from '../../domain/notifications/log.js';
import {
  conversationTitle,
  detailsOf,
  groupActionText,
  mentions,
  messageActionText,
  messageKind,
  notificationOf,
  reactionText,
  type GroupActionKind,
  type NotificationDetails,
  type NotifiedMessage,
} from '../../domain/notifications/payload.js';
import type { AppNotificationSettings, ConversationType, NotificationEvent } from '../../domain/notifications/preferences.js';
import { toUnix } from '../../domain/time.js';
import type { PendingDelivery } from '../../repositories/events/event-queue.repository.js';
import { GROUP_ACTION_TRIGGERS } from '../../repositories/events/notification-push-fanout.js';
import type { GroupRow, GroupsRepository } from '../../repositories/groups.repository.js';
import type { MessageRow, MessagesRepository } from '../../repositories/messages.repository.js';
import type { UserRow, UsersRepository } from '../../repositories/users.repository.js';
import { APP_SENDER } from '../action-messages.js';
import type { RenderedEvent } from '../event-payloads.js';
import type { DeliveryResult } from '../notifications/providers/types.js';
import type { AttemptResult } from './consumer.js';
import type { NotificationRecipient } from '../notifications/preferences.service.js';

/** What a push notification's log entries say about its event, whatever became of it. */
export type NoticeFields = Omit<
  NotificationLogEntry,
  'processingStartedAtMS' | 'processingEndedAtMS' | 'channel' | 'provider' | 'providerId' | 'tokenType' | 'pushToken' | 'payload' | 'notificationTriggered' | 'success' | 'error' | 'reason'
>;

/**
 * One event as the push channel notifies it (docs/notifications.md, "What triggers a push
 * notification"), for any of its recipients: what their preferences judge, the conversation
 * their mutes name, the log's fields, and what they are sent.
 */
export interface PushNotice {
  /** The conversation as `uid`'s mutes name it: the group, or the other user of a 1:1. */
  conversation(uid: string): { type: ConversationType; id: string };
  /** The event as `uid`'s preferences judge it. */
  event(uid: string): NotificationEvent;
  fields(uid: string): NoticeFields;
  /** The title, body and details `recipient` gets. */
  details(recipient: NotificationRecipient, settings: AppNotificationSettings): NotificationDetails;
  /** The message it is about, when there is one (FCM's data has its id). */
  messageId?: string;
}

/** What notices read besides the events: the messages reacted to, their groups, the users of 1:1 ones. */
export interface NoticeReads {
  messages: Pick<MessagesRepository, 'getMany'>;
  groups: Pick<GroupsRepository, 'getMany'>;
  users: Pick<UsersRepository, 'getMany'>;
}

const GROUP_LOG_TRIGGERS: Record<keyof typeof GROUP_ACTION_TRIGGERS, NotificationTrigger> = {
  group_member_joined: 'after_group_joined',
  group_member_left: 'after_group_left',
  group_member_added: 'after_group_members_added',
  group_member_kicked: 'after_group_members_kicked',
  group_member_banned: 'after_group_members_banned',
  group_member_unbanned: 'after_group_members_unbanned',
  group_member_scope_changed: 'after_scope_changed',
};

const isGroupAction = (trigger: string): trigger is keyof typeof GROUP_ACTION_TRIGGERS => Object.hasOwn(GROUP_ACTION_TRIGGERS, trigger);

interface Reaction {
  id: string;
  messageId: string;
  reaction: string;
  uid: string;
  reactedAt: number;
  reactedBy?: { name?: string; avatar?: string };
}

/** The notices of a round's events (by event id); an event none can be made of (its message gone) has none. */
export async function noticesOf(appId: string, items: ReadonlyArray<{ delivery: PendingDelivery; event: RenderedEvent }>, reads: NoticeReads): Promise<Map<string, PushNotice>> {
  const data = (event: RenderedEvent) => (event.payload.data ?? {}) as Record<string, unknown>;
  const reactions = items.filter(({ event }) => event.trigger === 'message_reaction_added').map(({ event }) => data(event).reaction as Reaction);
  const messages = new Map((await reads.messages.getMany(appId, [...new Set(reactions.map((r) => String(r.messageId)))])).map((row) => [String(row.id), row]));
  const guids = new Set<string>();
  const uids = new Set<string>();
  for (const row of messages.values()) {
    if (row.receiver_type === 'group') guids.add(row.receiver);
    else for (const uid of [row.sender, row.receiver]) uids.add(uid);
  }
  const [groups, users] = await Promise.all([reads.groups.getMany(appId, [...guids]), reads.users.getMany(appId, [...uids])]);
  const groupOf = new Map(groups.map((group) => [group.guid, group]));
  const userOf = new Map(users.map((user) => [user.uid, user]));
  const notices = new Map<string, PushNotice>();
  for (const { delivery, event } of items) {
    if (notices.has(event.id)) continue;
    const { trigger } = event;
    let notice: PushNotice | undefined;
    const message = data(event).message as NotifiedMessage | undefined;
    if (trigger === 'message_sent' && message) notice = messageSent(message);
    else if ((trigger === 'message_edited' || trigger === 'message_deleted') && message) notice = messageAction(message, trigger === 'message_edited' ? 'edited' : 'deleted');
    else if (trigger === 'message_reaction_added') {
      const reaction = data(event).reaction as Reaction;
      const row = messages.get(String(reaction.messageId));
      if (row) notice = reactionAdded(reaction, row, groupOf.get(row.receiver), userOf);
    } else if (isGroupAction(trigger)) {
      notice = groupAction(trigger, data(event) as unknown as GroupChange, delivery.event?.created_at ?? new Date());
    }
    if (notice) notices.set(event.id, notice);
  }
  return notices;
}

/** A new message's conversation as its recipients' mutes name it: the group, or (1:1) the sender. */
export function mutedConversationOf(message: NotifiedMessage): { type: ConversationType; id: string } {
  return message.receiverType === 'group' ? { type: 'group', id: message.receiver } : { type: 'oneOnOne', id: message.sender };
}

/** A provider's answer that it did not take a send (429, 5xx) as the attempt's result: tried again, after its Retry-After. */
export function retriedAttempt(result: DeliveryResult): AttemptResult {
  return { ok: false, status: result.status, error: result.error, retry: true, ...(result.retryAfterMs !== undefined ? { retryAfterMs: result.retryAfterMs } : {}) };
}

const logCategory = (category: string) => (category === 'custom' ? ('custom' as const) : ('message' as const));

/** What a message's notification logs, for `uid` (push, and the digests of e-mail and SMS). */
export function messageFields(message: NotifiedMessage, trigger: NotificationTrigger, uid: string): NoticeFields {
  return {
    trigger,
    messageId: String(message.id),
    messageSentAtMS: message.sentAt * 1000,
    messageCategory: logCategory(message.category),
    messageType: message.type,
    sender: message.sender,
    receiver: message.receiver,
    receiverType: message.receiverType,
    ...(message.receiverType === 'group' ? { member: uid } : {}),
  };
}

/** A new message: its kind, the recipient's mention, the app's templates. */
function messageSent(message: NotifiedMessage): PushNotice {
  const kind = messageKind(message);
  return {
    messageId: String(message.id),
    conversation: () => mutedConversationOf(message),
    event: (uid) => ({ conversationType: message.receiverType === 'group' ? 'group' : 'oneOnOne', kind, mentioned: mentions(message, uid), ownMessage: false }),
    fields: (uid) => messageFields(message, 'after_message', uid),
    details: (recipient, settings) => notificationOf(settings, message, { privacy: recipient.preferences.usePrivacyTemplate, mentioned: mentions(message, recipient.uid) }),
  };
}

/** An edit or a delete: its action message, sent by whoever acted (`entities.by`), about the message `entities.on`. */
function messageAction(message: NotifiedMessage, action: 'edited' | 'deleted'): PushNotice {
  const entities = (message.data.entities ?? {}) as Record<string, { entity?: Record<string, unknown> } | undefined>;
  const actor = String(entities.by?.entity?.name ?? message.sender);
  const group = message.receiverType === 'group';
  const author = typeof entities.on?.entity?.sender === 'string' ? entities.on.entity.sender : message.sender;
  return {
    messageId: String(message.id),
    // A 1:1's users are the action's receiver and the message's sender (either may have acted, or the app).
    conversation: (uid) => (group ? { type: 'group', id: message.receiver } : { type: 'oneOnOne', id: uid === message.receiver ? author : message.receiver }),
    event: () => ({ conversationType: group ? 'group' : 'oneOnOne', kind: action, mentioned: false, ownMessage: false }),
    fields: (uid) => messageFields(message, action === 'edited' ? 'message_edited' : 'message_deleted', uid),
    details: () => detailsOf(message, conversationTitle(actor, group ? String(entities.for?.entity?.name ?? message.receiver) : undefined), messageActionText(actor, action)),
  };
}

/** A reaction to the message `row` (its group's, or its users', rows to name them). */
function reactionAdded(reaction: Reaction, row: MessageRow, group: GroupRow | undefined, users: Map<string, UserRow>): PushNotice {
  const inGroup = row.receiver_type === 'group';
  const reactor = String(reaction.reactedBy?.name ?? reaction.uid);
  const other = (uid: string) => (uid === row.sender ? row.receiver : row.sender);
  return {
    messageId: String(row.id),
    conversation: (uid) => (inGroup ? { type: 'group', id: row.receiver } : { type: 'oneOnOne', id: other(uid) }),
    event: (uid) => ({ conversationType: inGroup ? 'group' : 'oneOnOne', kind: 'reaction', mentioned: false, ownMessage: uid === row.sender }),
    fields: (uid) => ({
      trigger: 'message_reaction_added',
      messageId: String(row.id),
      reactionId: String(reaction.id),
      messageSentAtMS: row.sent_at.getTime(),
      messageCategory: logCategory(row.category),
      messageType: row.type,
      sender: row.sender,
      receiver: row.receiver,
      receiverType: row.receiver_type,
      reactionSender: reaction.uid,
      reactionReceiver: row.sender,
      ...(inGroup ? { member: uid } : {}),
    }),
    details: (recipient) => {
      const receiver = inGroup ? { uid: row.receiver, name: group?.name, avatar: group?.icon } : { uid: recipient.uid, name: users.get(recipient.uid)?.name, avatar: users.get(recipient.uid)?.avatar };
      const details: NotificationDetails = {
        title: conversationTitle(reactor, inGroup ? (group?.name ?? row.receiver) : undefined),
        body: reactionText(reactor, reaction.reaction, recipient.uid === row.sender),
        sender: reaction.uid,
        senderName: reactor,
        receiver: receiver.uid,
        receiverName: receiver.name ?? receiver.uid,
        receiverType: row.receiver_type,
        tag: wireConversationId(row.conversation_id),
        conversationId: wireConversationId(row.conversation_id),
        type: 'chat',
        sentAt: reaction.reactedAt,
      };
      if (typeof reaction.reactedBy?.avatar === 'string') details.senderAvatar = reaction.reactedBy.avatar;
      if (typeof receiver.avatar === 'string') details.receiverAvatar = receiver.avatar;
      return details;
    },
  };
}

/** A group action's recorded data (views/events.view.ts, memberEvents). */
interface GroupChange {
  group: { guid: string; name?: string; icon?: string };
  members: Record<string, { uid?: string; name?: string; scope?: string }>;
  by?: { uid: string; name?: string; avatar?: string };
}

/** A change to a group's members: told by the group, with who acted on whom. */
function groupAction(trigger: keyof typeof GROUP_ACTION_TRIGGERS, change: GroupChange, at: Date): PushNotice {
  const kind: GroupActionKind = GROUP_ACTION_TRIGGERS[trigger];
  const guid = change.group.guid;
  const members = Object.entries(change.members ?? {}).map(([uid, member]) => ({ uid, name: String(member.name ?? uid), ...(member.scope ? { scope: member.scope } : {}) }));
  // Who acted: `by`, or the member who joined or left; when the app acted on others, the app.
  const self = kind === 'memberJoined' || kind === 'memberLeft' ? members[0] : undefined;
  const sender = change.by
    ? { uid: change.by.uid, name: String(change.by.name ?? change.by.uid), avatar: change.by.avatar }
    : self
      ? { uid: self.uid, name: self.name, avatar: undefined }
      : { uid: APP_SENDER, name: 'System', avatar: undefined };
  const conversationId = groupConversationKey(guid);
  return {
    conversation: () => ({ type: 'group', id: guid }),
    event: () => ({ conversationType: 'group', kind, mentioned: false, ownMessage: false }),
    fields: (uid) => ({ trigger: GROUP_LOG_TRIGGERS[trigger], messageSentAtMS: at.getTime(), sender: sender.uid, receiver: guid, receiverType: 'group', member: uid }),
    details: (recipient) => {
      const details: NotificationDetails = {
        title: conversationTitle(String(change.group.name ?? guid)),
        body: groupActionText({ kind, ...(change.by ? { actor: sender.name } : {}), members, recipient: recipient.uid }),
        sender: sender.uid,
        senderName: sender.name,
        receiver: guid,
        receiverName: String(change.group.name ?? guid),
        receiverType: 'group',
        tag: conversationId,
        conversationId,
        type: 'chat',
        sentAt: toUnix(at),
      };
      if (typeof sender.avatar === 'string') details.senderAvatar = sender.avatar;
      if (typeof change.group.icon === 'string') details.receiverAvatar = change.group.icon;
      return details;
    },
  };
}
