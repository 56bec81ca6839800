import { Type } from '@sinclair/typebox';
import { ID_MAX_LENGTH, ID_PATTERN, LIMITS } from '../domain/normalize.js';
import { LOG_CHANNELS, LOG_LIMITS, LOG_MESSAGE_CATEGORIES, LOG_PROVIDERS, LOG_REASONS, LOG_TRIGGERS } from '../domain/notifications/log.js';

// The notification log (docs/notifications.md, "Logs"): the vendor's notifications-logs filters.

const StringEnum = <T extends readonly string[]>(values: T, description: string) => Type.Unsafe<T[number]>({ type: 'string', enum: [...values], description });

/** A message or reaction id: positive, within bigint (and JavaScript's exact integers). */
const RowId = (description: string) => Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description });

/** Unix milliseconds, bounded so that none overflows (the year 2286 at most). */
const UnixMs = (description: string) => Type.Integer({ minimum: 0, maximum: 9_999_999_999_999, description });

const Uid = (description: string) => Type.String({ pattern: ID_PATTERN, minLength: 1, maxLength: ID_MAX_LENGTH, description });

export const NotificationLogQuery = Type.Object({
  messageId: Type.Optional(RowId('The message or reply the notification is about.')),
  reactionId: Type.Optional(RowId('The reaction the notification is about.')),
  from: Type.Optional(UnixMs('Entries for messages sent at or after this time, in Unix milliseconds.')),
  to: Type.Optional(UnixMs('Entries for messages sent at or before this time, in Unix milliseconds.')),
  messageCategory: Type.Optional(StringEnum(LOG_MESSAGE_CATEGORIES, 'The category of the message or reply.')),
  messageType: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.messageTypeLength, description: 'The type of the message or reply (text, image, ... or a custom type).' })),
  trigger: Type.Optional(StringEnum(LOG_TRIGGERS, 'The event that triggered the notification.')),
  sender: Type.Optional(Uid('The uid of the message’s sender.')),
  reactionSender: Type.Optional(Uid('The uid of the user who reacted.')),
  receiver: Type.Optional(Uid('The receiver of the message: a uid or a guid, as receiverType says.')),
  receiverType: Type.Optional(StringEnum(['user', 'group'] as const, 'user: a one-on-one conversation; group: a group’s.')),
  reactionReceiver: Type.Optional(Uid('The uid of the user notified of a reaction.')),
  member: Type.Optional(Uid('In a group, the uid of the member notified.')),
  channel: Type.Optional(StringEnum(LOG_CHANNELS, 'push, email or sms.')),
  provider: Type.Optional(StringEnum(LOG_PROVIDERS, 'push: fcm, apns or custom; email: sendgrid or custom; sms: twilio or custom.')),
  notificationTriggered: Type.Optional(Type.Boolean({ description: 'Whether the provider was called; false: a preference (or a missing detail) stopped it, as `reason` says.' })),
  reason: Type.Optional(StringEnum(LOG_REASONS, 'Why the notification was not triggered (with notificationTriggered false or absent).')),
  success: Type.Optional(Type.Boolean({ description: 'Whether the provider took the notification (with notificationTriggered true or absent).' })),
  affix: Type.Optional(StringEnum(['append', 'prepend'] as const, 'With logId: entries after it (append) or before it (prepend); without: the oldest (append) or the newest (prepend, the default).')),
  logId: Type.Optional(Type.String({ pattern: '^[0-9]{1,18}$', description: 'The `_id` of an entry: the page starts next to it, in the direction of affix (append unless given).' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LOG_LIMITS.pageMax, description: `Entries per page, ${LOG_LIMITS.pageDefault} unless given (a Parley extension).` })),
});

export const NotificationLogEntry = Type.Object(
  {
    _id: Type.String({ description: 'The entry’s id: a string of digits, increasing in the order entries are recorded.' }),
    processingStartedAtMS: Type.Integer(),
    processingEndedAtMS: Type.Integer(),
    totalProcessingTimeInMS: Type.Integer(),
    component: Type.String(),
    channel: Type.String(),
    provider: Type.Optional(Type.String()),
    messageId: Type.Optional(Type.Integer()),
    reactionId: Type.Optional(Type.Integer()),
    trigger: Type.String(),
    messageSentAtMS: Type.Integer(),
    messageCategory: Type.Optional(Type.String()),
    messageType: Type.Optional(Type.String()),
    sender: Type.Optional(Type.String()),
    reactionSender: Type.Optional(Type.String()),
    receiver: Type.Optional(Type.String()),
    reactionReceiver: Type.Optional(Type.String()),
    receiverType: Type.Optional(Type.String()),
    member: Type.Optional(Type.String()),
    tokenType: Type.Optional(Type.String({ description: 'Push: the platform of the token.' })),
    pushToken: Type.Optional(Type.String()),
    providerId: Type.Optional(Type.String()),
    payload: Type.Optional(Type.Unknown({ description: 'What was sent to the provider (or would have been).' })),
    notificationTriggered: Type.Boolean(),
    reason: Type.Optional(Type.String({ description: 'Why not, when notificationTriggered is false.' })),
    success: Type.Optional(Type.Boolean({ description: 'Whether the provider took it, when notificationTriggered is true.' })),
    error: Type.Optional(Type.String({ description: 'What the provider answered, when it refused.' })),
  },
  { description: 'An attempted notification.' },
);

const Cursor = <A extends 'append' | 'prepend'>(affix: A) => Type.Object({ affix: Type.Literal(affix), logId: Type.String() });

export const NotificationLogResponse = Type.Object({
  data: Type.Array(NotificationLogEntry),
  meta: Type.Object({
    previous: Type.Optional(Cursor('prepend')),
    current: Type.Object({ limit: Type.Integer(), count: Type.Integer() }),
    next: Type.Optional(Cursor('append')),
  }),
});
