import type { NotificationKind, SkipReason } from './preferences.js';
import type { PushPlatform } from './push-tokens.js';

/**
 * The notification log (docs/notifications.md, "Logs"): one entry per notification the delivery
 * engine attempted, triggered or not (and then why not), in the vendor's vocabulary (its
 * notifications-logs operation).
 */

export const LOG_CHANNELS = ['push', 'email', 'sms'] as const;
export type NotificationChannel = (typeof LOG_CHANNELS)[number];

export const LOG_PROVIDERS = ['fcm', 'apns', 'sendgrid', 'twilio', 'custom'] as const;
export type NotificationProvider = (typeof LOG_PROVIDERS)[number];

export const LOG_TRIGGERS = [
  'after_message',
  'message_deleted',
  'message_edited',
  'message_reaction_added',
  'initiated',
  'rejected',
  'cancelled',
  'unanswered',
  'after_group_joined',
  'after_group_left',
  'after_group_members_added',
  'after_group_members_kicked',
  'after_group_members_banned',
  'after_group_members_unbanned',
  'after_scope_changed',
] as const;
export type NotificationTrigger = (typeof LOG_TRIGGERS)[number];

export const LOG_REASONS = [
  'MESSAGES_PREFERENCE',
  'REPLIES_PREFERENCE',
  'QUOTED_REPLIES_PREFERENCE',
  'MESSAGE_ACTIONS_PREFERENCE',
  'REACTIONS_PREFERENCE',
  'GROUP_ACTIONS_PREFERENCE',
  'DND_PREFERENCE',
  'MUTE_PREFERENCE',
  'SCHEDULE_PREFERENCE',
  'CALL_PREFERENCE',
  'QUOTA_PREFERENCE',
  'MISSING_EMAIL',
  'MISSING_PHNO',
  'INVALID_PUSH_PROVIDER_ID',
  'TIMED_OUT',
  'NOT_FOUND',
  'TWILIO_CREATE_ERROR',
] as const;
export type NotificationLogReason = (typeof LOG_REASONS)[number];

/** The categories of message a log entry can be about (the vendor's filter names `message`). */
export const LOG_MESSAGE_CATEGORIES = ['message', 'custom'] as const;
export type LogMessageCategory = (typeof LOG_MESSAGE_CATEGORIES)[number];

/** The component the vendor names in its entries. */
export const LOG_COMPONENT = 'notifications-core';

export const LOG_LIMITS = {
  /** Entries per page: the vendor's 20 unless `limit` says otherwise. */
  pageDefault: 20,
  pageMax: 100,
  /** A provider's error, as recorded (longer ones are cut). */
  errorLength: 1000,
  /** Entries per record() call (one statement). */
  entriesPerRecord: 1000,
} as const;

/** What an entry says whichever way it went. Ids are Parley's (strings of digits); times are Unix milliseconds. */
interface LogEntryBase {
  processingStartedAtMS: number;
  processingEndedAtMS: number;
  /** LOG_COMPONENT unless given. */
  component?: string;
  channel: NotificationChannel;
  provider?: NotificationProvider;
  /** The provider the notification went (or would have gone) through. */
  providerId?: string;
  trigger: NotificationTrigger;
  /** The message (or reply, or action or call message) the notification is about. */
  messageId?: string;
  reactionId?: string;
  /** When that message was sent: the `from` and `to` filters read it. */
  messageSentAtMS: number;
  messageCategory?: LogMessageCategory;
  messageType?: string;
  sender?: string;
  reactionSender?: string;
  /** A uid or a guid, as receiverType says. */
  receiver?: string;
  reactionReceiver?: string;
  receiverType?: 'user' | 'group';
  /** In a group, the member notified. */
  member?: string;
  /** Push: the token's platform and the token. */
  tokenType?: PushPlatform;
  pushToken?: string;
  /** What was sent (or would have been), as the provider takes it. */
  payload?: Record<string, unknown>;
}

/**
 * One entry, as the delivery engine records it (NotificationLogRepository.record): triggered
 * (and then whether the provider took it), or not triggered and why not.
 */
export type NotificationLogEntry =
  | (LogEntryBase & { notificationTriggered: true; success: boolean; error?: string })
  | (LogEntryBase & { notificationTriggered: false; reason: NotificationLogReason });

/** The filters of the notifications-logs operation, normalised (ids lower-cased). */
export interface NotificationLogFilter {
  messageId?: string;
  reactionId?: string;
  /** messageSentAtMS at or after. */
  from?: number;
  /** messageSentAtMS at or before. */
  to?: number;
  messageCategory?: LogMessageCategory;
  messageType?: string;
  trigger?: NotificationTrigger;
  sender?: string;
  reactionSender?: string;
  receiver?: string;
  receiverType?: 'user' | 'group';
  reactionReceiver?: string;
  member?: string;
  channel?: NotificationChannel;
  provider?: NotificationProvider;
  notificationTriggered?: boolean;
  reason?: NotificationLogReason;
  success?: boolean;
}

/** A page of the log: `append` after `logId` (newer), `prepend` before it (older), in id order. */
export interface NotificationLogCursor {
  affix: 'append' | 'prepend';
  logId?: string;
  limit: number;
}

/** The log's reason for each way a recipient's preferences say no, by what happened. */
export function skipReasonOf(skip: SkipReason, kind: NotificationKind): NotificationLogReason {
  if (skip === 'muted') return 'MUTE_PREFERENCE';
  if (skip === 'dnd') return 'DND_PREFERENCE';
  if (skip === 'schedule') return 'SCHEDULE_PREFERENCE';
  if (kind === 'message') return 'MESSAGES_PREFERENCE';
  if (kind === 'reply') return 'REPLIES_PREFERENCE';
  if (kind === 'quotedReply') return 'QUOTED_REPLIES_PREFERENCE';
  if (kind === 'edited' || kind === 'deleted') return 'MESSAGE_ACTIONS_PREFERENCE';
  if (kind === 'reaction') return 'REACTIONS_PREFERENCE';
  if (kind.startsWith('call')) return 'CALL_PREFERENCE';
  return 'GROUP_ACTIONS_PREFERENCE';
}
