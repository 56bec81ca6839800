import type { AppNotificationSettings, NotificationKind } from './preferences.js';

/**
 * What a push notification says (docs/notifications.md, "What a notification says" and "What
 * triggers a push notification"): a message's title and body from the app's templates (the
 * privacy ones when the recipient's preferences say so); an edit's, a delete's, a reaction's and
 * a group action's from plain texts (below: the vendor has no templates for them); and the
 * details every provider gets (the vendor's notificationDetails).
 */

/** The message as the REST API renders it (the event's `data.message`): the fields read here. */
export interface NotifiedMessage {
  id: string | number;
  conversationId: string;
  sender: string;
  receiver: string;
  receiverType: 'user' | 'group';
  category: string;
  type: string;
  sentAt: number;
  parentId?: string | number;
  quotedMessageId?: string | number;
  data: Record<string, unknown>;
}

/** A notification's details, as every provider gets them (the vendor's notificationDetails, docs/notifications.md). */
export interface NotificationDetails {
  title: string;
  body: string;
  sender: string;
  senderName: string;
  senderAvatar?: string;
  receiver: string;
  receiverName: string;
  receiverAvatar?: string;
  receiverType: 'user' | 'group';
  /** Groups one conversation's notifications on the device. */
  tag: string;
  conversationId: string;
  type: 'chat';
  /** Unix seconds. */
  sentAt: number;
}

/** The longest title and body sent (APNs takes 4 KiB in all; a message's text may be far longer). */
export const MAX_TEXT = 1_000;

/** Which preference a message's notification falls under. */
export function messageKind(message: NotifiedMessage): Extract<NotificationKind, 'message' | 'reply' | 'quotedReply'> {
  if (message.parentId !== undefined && message.parentId !== null && String(message.parentId) !== '0') return 'reply';
  if (message.quotedMessageId !== undefined && message.quotedMessageId !== null) return 'quotedReply';
  return 'message';
}

/** Whether the message mentions `uid`. */
export function mentions(message: NotifiedMessage, uid: string): boolean {
  const mentioned = message.data.mentions;
  return typeof mentioned === 'object' && mentioned !== null && Object.hasOwn(mentioned, uid);
}

/** `{{a.b.c}}` placeholders filled from `context` (a missing value is empty); the result cut to MAX_TEXT. */
export function fillTemplate(template: string, context: Record<string, unknown>): string {
  const filled = template.replace(/\{\{\s*([A-Za-z0-9_.]+)\s*\}\}/g, (_, path: string) => {
    let value: unknown = context;
    for (const key of path.split('.')) value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
    return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
  });
  return filled.length > MAX_TEXT ? `${filled.slice(0, MAX_TEXT - 1)}…` : filled;
}

/** The template of a message's notification: by its category and type, default or privacy. */
function templateOf(settings: AppNotificationSettings, message: NotifiedMessage, privacy: boolean, mentioned: boolean): Record<string, string> {
  const templates = settings.templates as Record<string, unknown>;
  const which = privacy ? 'Privacy' : 'Default';
  const media = ['image', 'video', 'audio', 'file'].includes(message.type);
  const name = mentioned ? 'userMentionTemplate' : message.category === 'custom' ? 'customMessageTemplate' : media ? 'mediaMessageTemplate' : 'textMessageTemplate';
  const template = templates[`${name}${which}`];
  return typeof template === 'object' && template !== null ? (template as Record<string, string>) : {};
}

/** The title and body of `message`'s notification to one recipient, and the details every provider gets. */
export function notificationOf(settings: AppNotificationSettings, message: NotifiedMessage, options: { privacy: boolean; mentioned: boolean }): NotificationDetails {
  const entities = (message.data.entities ?? {}) as Record<string, { entity?: Record<string, unknown> } | undefined>;
  const sender = entities.sender?.entity ?? {};
  const template = templateOf(settings, message, options.privacy, options.mentioned);
  const group = message.receiverType === 'group';
  const context = { message: { data: message.data, type: message.type, category: message.category } };
  const title = fillTemplate((group ? template.titleGroup : template.titleOneOnOne) ?? String(sender.name ?? message.sender), context);
  const media = ['image', 'video', 'audio', 'file'].includes(message.type);
  const bodyTemplate = (media ? template[`body_${message.type}`] : undefined) ?? (group ? template.bodyGroup : template.bodyOneOnOne) ?? template.body ?? '{{message.data.text}}';
  let body = fillTemplate(bodyTemplate, context);
  if (body === '') body = fillTemplate(template.body_fallback ?? 'New message', context) || 'New message';
  return detailsOf(message, title, body);
}

/** The details of a notification about `message` (or an action message) with this title and body. */
export function detailsOf(message: NotifiedMessage, title: string, body: string): NotificationDetails {
  const entities = (message.data.entities ?? {}) as Record<string, { entity?: Record<string, unknown> } | undefined>;
  // An action message names its actor `by` and its conversation `for`.
  const sender = (entities.sender ?? entities.by)?.entity ?? {};
  const receiver = (entities.receiver ?? entities.for)?.entity ?? {};
  const details: NotificationDetails = {
    title,
    body,
    sender: message.sender,
    senderName: String(sender.name ?? message.sender),
    receiver: message.receiver,
    receiverName: String(receiver.name ?? message.receiver),
    receiverType: message.receiverType,
    tag: message.conversationId,
    conversationId: message.conversationId,
    type: 'chat',
    sentAt: message.sentAt,
  };
  if (typeof sender.avatar === 'string') details.senderAvatar = sender.avatar;
  if (typeof receiver.avatar === 'string') details.receiverAvatar = receiver.avatar;
  return details;
}

// The texts of the notifications the vendor has no templates for (edits, deletes, reactions,
// group actions): plain English naming who did what, never a message's content, so they read the
// same whether or not the recipient uses the privacy templates. Cut to MAX_TEXT like the rest.

const cut = (text: string) => (text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT - 1)}…` : text);

/** The title of a notification about a message, as the default templates title one: "Alice", or "Alice @ Support" in a group. */
export function conversationTitle(actor: string, groupName?: string): string {
  return cut(groupName === undefined ? actor : `${actor} @ ${groupName}`);
}

/** "Alice edited a message", "Alice deleted a message". */
export function messageActionText(actor: string, action: 'edited' | 'deleted'): string {
  return cut(`${actor} ${action} a message`);
}

/** "Alice reacted 👍 to your message", or "… to a message" when it is not the recipient's. */
export function reactionText(actor: string, reaction: string, own: boolean): string {
  return cut(`${actor} reacted ${reaction} to ${own ? 'your' : 'a'} message`);
}

export type GroupActionKind = 'memberJoined' | 'memberLeft' | 'memberAdded' | 'memberKicked' | 'memberBanned' | 'memberUnbanned' | 'memberScopeChanged';

/** A group action as its notification tells it to one recipient. */
export interface GroupActionStory {
  kind: GroupActionKind;
  /** Who acted on the members; undefined when the app did (or the members joined or left themselves). */
  actor?: string;
  /** The members acted on, in order, with their names and (a scope change) their new scope. */
  members: ReadonlyArray<{ uid: string; name: string; scope?: string }>;
  recipient: string;
}

const VERBS = { memberAdded: 'added', memberKicked: 'kicked', memberBanned: 'banned', memberUnbanned: 'unbanned' } as const;
const SCOPES: Record<string, string> = { admin: 'an admin', moderator: 'a moderator', participant: 'a participant' };

/**
 * The body of a group action's notification: "Bob joined", "Bob left", "Alice added you, Carol
 * and 3 others", "Alice kicked Bob", "Alice banned you", "Alice unbanned Bob", "Alice made Bob a
 * moderator"; when the app acted, "Bob was added", "You were banned", "Bob is now an admin".
 */
export function groupActionText(story: GroupActionStory): string {
  const you = story.members.some((m) => m.uid === story.recipient);
  const names = [...(you ? ['you'] : []), ...story.members.filter((m) => m.uid !== story.recipient).map((m) => m.name)];
  const shown = names.length > 3 ? [...names.slice(0, 2), `${names.length - 2} others`] : names;
  const list = shown.length <= 1 ? (shown[0] ?? 'someone') : `${shown.slice(0, -1).join(', ')} and ${shown.at(-1)}`;
  const subject = list.charAt(0).toUpperCase() + list.slice(1);
  const plural = names.length > 1 || you;
  if (story.kind === 'memberJoined') return cut(`${subject} joined`);
  if (story.kind === 'memberLeft') return cut(`${subject} left`);
  if (story.kind === 'memberScopeChanged') {
    const scopes = new Set(story.members.map((m) => m.scope));
    const scope = scopes.size === 1 ? SCOPES[[...scopes][0] ?? ''] : undefined;
    if (story.actor !== undefined) return cut(scope ? `${story.actor} made ${list} ${scope}` : `${story.actor} changed the scope of ${list}`);
    return cut(scope ? `${subject} ${plural ? 'are' : 'is'} now ${scope}` : `${subject} ${plural ? 'have' : 'has'} a new scope`);
  }
  const verb = VERBS[story.kind];
  return cut(story.actor !== undefined ? `${story.actor} ${verb} ${list}` : `${subject} ${plural ? 'were' : 'was'} ${verb}`);
}
