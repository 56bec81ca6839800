import type { AppNotificationSettings, NotificationKind } from './preferences.js';

/**
 * What a push notification of a message says (docs/notifications.md, "What is sent"): its title
 * and body from the app's templates (the privacy ones when the recipient's preferences say so),
 * and the details every provider gets (the vendor's notificationDetails, NOTES.md §13).
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

/** A notification's details, as every provider gets them (the vendor's notificationDetails, NOTES.md §13). */
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
  const receiver = entities.receiver?.entity ?? {};
  const template = templateOf(settings, message, options.privacy, options.mentioned);
  const group = message.receiverType === 'group';
  const context = { message: { data: message.data, type: message.type, category: message.category } };
  const title = fillTemplate((group ? template.titleGroup : template.titleOneOnOne) ?? String(sender.name ?? message.sender), context);
  const media = ['image', 'video', 'audio', 'file'].includes(message.type);
  const bodyTemplate = (media ? template[`body_${message.type}`] : undefined) ?? (group ? template.bodyGroup : template.bodyOneOnOne) ?? template.body ?? '{{message.data.text}}';
  let body = fillTemplate(bodyTemplate, context);
  if (body === '') body = fillTemplate(template.body_fallback ?? 'New message', context) || 'New message';
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
