import type { RequestContext } from '../../domain/context.js';
import { badRequest } from '../../domain/errors.js';
import type { NotificationLogCursor, NotificationLogFilter } from '../../domain/notifications/log.js';
import { LOG_LIMITS } from '../../domain/notifications/log.js';
import { normalizeId } from '../../domain/normalize.js';
import type { NotificationLogRepository, NotificationLogRow } from '../../repositories/notifications/notification-log.repository.js';

/** The notifications-logs operation's query: the filters as sent, and its paging. */
export interface ListNotificationLogInput extends Omit<NotificationLogFilter, 'messageId' | 'reactionId'> {
  messageId?: number;
  reactionId?: number;
  affix?: 'append' | 'prepend';
  logId?: string;
  limit?: number;
}

/** An entry as the vendor shows it: `_id`, times in Unix milliseconds, absent fields left out. */
export interface NotificationLogView {
  _id: string;
  processingStartedAtMS: number;
  processingEndedAtMS: number;
  totalProcessingTimeInMS: number;
  component: string;
  channel: string;
  provider?: string;
  messageId?: number;
  reactionId?: number;
  trigger: string;
  messageSentAtMS: number;
  messageCategory?: string;
  messageType?: string;
  sender?: string;
  reactionSender?: string;
  receiver?: string;
  reactionReceiver?: string;
  receiverType?: string;
  member?: string;
  tokenType?: string;
  pushToken?: string;
  providerId?: string;
  payload?: unknown;
  notificationTriggered: boolean;
  reason?: string;
  success?: boolean;
  error?: string;
}

export interface NotificationLogMeta {
  previous?: { affix: 'prepend'; logId: string };
  current: { limit: number; count: number };
  next?: { affix: 'append'; logId: string };
}

/** Ids compared with the stored ones, lower-cased as every uid and guid is. */
const ID_FILTERS = ['sender', 'reactionSender', 'receiver', 'reactionReceiver', 'member'] as const;

/**
 * The notification log (docs/notifications.md, "Logs"): what the delivery engine recorded
 * (NotificationLogRepository.record), read a page at a time with the vendor's filters.
 */
export class NotificationLogService {
  constructor(private readonly deps: { log: NotificationLogRepository }) {}

  /** notifications-logs. */
  async list(ctx: RequestContext, input: ListNotificationLogInput): Promise<{ data: NotificationLogView[]; meta: NotificationLogMeta }> {
    const { affix, logId, limit, messageId, reactionId, ...given } = input;
    const filter: NotificationLogFilter = { ...given };
    if (messageId !== undefined) filter.messageId = String(messageId);
    if (reactionId !== undefined) filter.reactionId = String(reactionId);
    for (const name of ID_FILTERS) {
      const value = filter[name];
      if (value !== undefined) filter[name] = normalizeId(value);
    }
    if (filter.from !== undefined && filter.to !== undefined && filter.from > filter.to) throw badRequest({ to: 'must not be before from' });
    if (filter.reason !== undefined && filter.notificationTriggered === true) {
      throw badRequest({ reason: 'is only given when notificationTriggered is false (a triggered notification has no reason)' });
    }
    if (filter.success !== undefined && filter.notificationTriggered === false) {
      throw badRequest({ success: 'is only given when notificationTriggered is true (one not triggered reached no provider)' });
    }
    // The vendor's `logId` reads "after": without an affix, a cursor pages forward.
    const cursor: NotificationLogCursor = {
      affix: affix ?? (logId !== undefined ? 'append' : 'prepend'),
      limit: limit ?? LOG_LIMITS.pageDefault,
      ...(logId !== undefined ? { logId } : {}),
    };
    const rows = await this.deps.log.list(ctx.appId, filter, cursor);
    const data = rows.map(toView);
    const meta: NotificationLogMeta = { current: { limit: cursor.limit, count: data.length } };
    const first = data[0];
    const last = data[data.length - 1];
    if (first && last) {
      meta.previous = { affix: 'prepend', logId: first._id };
      meta.next = { affix: 'append', logId: last._id };
    }
    return { data, meta };
  }
}

function toView(row: NotificationLogRow): NotificationLogView {
  const started = Number(row.processing_started_at_ms);
  const ended = Number(row.processing_ended_at_ms);
  const entry: NotificationLogView = {
    _id: String(row.id),
    processingStartedAtMS: started,
    processingEndedAtMS: ended,
    totalProcessingTimeInMS: ended - started,
    component: row.component,
    channel: row.channel,
    trigger: row.trigger,
    messageSentAtMS: Number(row.message_sent_at_ms),
    notificationTriggered: row.notification_triggered,
  };
  const optional: Array<[keyof NotificationLogView, unknown]> = [
    ['provider', row.provider],
    ['messageId', row.message_id === null ? null : Number(row.message_id)],
    ['reactionId', row.reaction_id === null ? null : Number(row.reaction_id)],
    ['messageCategory', row.message_category],
    ['messageType', row.message_type],
    ['sender', row.sender],
    ['reactionSender', row.reaction_sender],
    ['receiver', row.receiver],
    ['reactionReceiver', row.reaction_receiver],
    ['receiverType', row.receiver_type],
    ['member', row.member],
    ['tokenType', row.token_type],
    ['pushToken', row.push_token],
    ['providerId', row.provider_id],
    ['payload', row.payload],
    ['reason', row.reason],
    ['success', row.success],
    ['error', row.error],
  ];
  const record = entry as unknown as Record<string, unknown>;
  for (const [name, value] of optional) if (value !== null && value !== undefined) record[name] = value;
  return entry;
}
