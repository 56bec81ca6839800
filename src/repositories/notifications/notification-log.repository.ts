import { sql, type Selectable } from 'kysely';
import type { NotificationLogsTable } from '../../db/notification-tokens-tables.js';
import type { Executor } from '../../db/transaction.js';
import { LOG_COMPONENT, LOG_LIMITS, type NotificationLogCursor, type NotificationLogEntry, type NotificationLogFilter } from '../../domain/notifications/log.js';

export type NotificationLogRow = Selectable<NotificationLogsTable>;

/** Filters → columns, for the filters that compare one column for equality. */
const EQUALS: Array<[keyof NotificationLogFilter, keyof NotificationLogsTable]> = [
  ['messageId', 'message_id'],
  ['reactionId', 'reaction_id'],
  ['messageCategory', 'message_category'],
  ['messageType', 'message_type'],
  ['trigger', 'trigger'],
  ['sender', 'sender'],
  ['reactionSender', 'reaction_sender'],
  ['receiver', 'receiver'],
  ['receiverType', 'receiver_type'],
  ['reactionReceiver', 'reaction_receiver'],
  ['member', 'member'],
  ['channel', 'channel'],
  ['provider', 'provider'],
  ['notificationTriggered', 'notification_triggered'],
  ['reason', 'reason'],
  ['success', 'success'],
];

/**
 * The notification log (migration 0023): the delivery engine records its entries, many per
 * statement, in its own transaction if it likes; the notifications-logs operation reads a page;
 * the retention deletes an app's oldest entries a batch at a time.
 */
export class NotificationLogRepository {
  constructor(private readonly db: Executor) {}

  /** Records the entries, in order (their ids in the order given), in one statement. */
  async record(appId: string, entries: readonly NotificationLogEntry[], tx: Executor = this.db): Promise<void> {
    if (entries.length === 0) return;
    if (entries.length > LOG_LIMITS.entriesPerRecord) throw new Error(`at most ${LOG_LIMITS.entriesPerRecord} log entries per statement, not ${entries.length}`);
    const records = JSON.stringify(entries.map((entry, n) => storedEntry(entry, n)));
    await sql`
      insert into notification_logs (
        app_id, processing_started_at_ms, processing_ended_at_ms, component, channel, provider, provider_id, trigger,
        message_id, reaction_id, message_sent_at_ms, message_category, message_type, sender, reaction_sender, receiver,
        reaction_receiver, receiver_type, member, token_type, push_token, payload, notification_triggered, reason, success, error)
      select ${appId}, r.processing_started_at_ms, r.processing_ended_at_ms, r.component, r.channel, r.provider, r.provider_id, r.trigger,
             r.message_id, r.reaction_id, r.message_sent_at_ms, r.message_category, r.message_type, r.sender, r.reaction_sender, r.receiver,
             r.reaction_receiver, r.receiver_type, r.member, r.token_type, r.push_token, r.payload, r.notification_triggered, r.reason, r.success, r.error
      from json_to_recordset(${records}::json) as r (
        n int, processing_started_at_ms bigint, processing_ended_at_ms bigint, component text, channel text, provider text,
        provider_id text, trigger text, message_id bigint, reaction_id bigint, message_sent_at_ms bigint, message_category text,
        message_type text, sender text, reaction_sender text, receiver text, reaction_receiver text, receiver_type text, member text,
        token_type text, push_token text, payload json, notification_triggered boolean, reason text, success boolean, error text)
      order by r.n`.execute(tx);
  }

  /**
   * A page of the app's entries matching `filter`, in id order: the newest `limit` without a
   * logId (prepend) or the oldest (append); with one, the `limit` before it (prepend) or after it
   * (append).
   */
  async list(appId: string, filter: NotificationLogFilter, cursor: NotificationLogCursor, tx: Executor = this.db): Promise<NotificationLogRow[]> {
    let query = tx.selectFrom('notification_logs').selectAll().where('app_id', '=', appId);
    for (const [name, column] of EQUALS) {
      const value = filter[name];
      if (value !== undefined) query = query.where(column, '=', value as never);
    }
    if (filter.from !== undefined) query = query.where('message_sent_at_ms', '>=', String(filter.from));
    if (filter.to !== undefined) query = query.where('message_sent_at_ms', '<=', String(filter.to));
    const append = cursor.affix === 'append';
    if (cursor.logId !== undefined) query = query.where('id', append ? '>' : '<', cursor.logId as never);
    const rows = await query
      .orderBy('id', append ? 'asc' : 'desc')
      .limit(cursor.limit)
      .execute();
    if (!append) rows.reverse();
    return rows;
  }

  /** The apps that have log entries (for the retention). */
  async appsWithEntries(tx: Executor = this.db): Promise<string[]> {
    const rows = await sql<{ app_id: string }>`
      select a.id as app_id from apps a where exists (select 1 from notification_logs l where l.app_id = a.id)`.execute(tx);
    return rows.rows.map((row) => row.app_id);
  }

  /**
   * Deletes up to `batch` of the app's entries recorded before `cutoff`, oldest first: the
   * retention's cleanup, a small batch at a time. Entries are appended in time order, so the old
   * ones are the app's first ids, found through its key up to the first one to keep (as the event
   * log's: EventsRepository.deleteOlderThan). Answers how many it deleted.
   */
  async deleteOlderThan(appId: string, cutoff: Date, batch: number, tx: Executor = this.db): Promise<number> {
    if (!Number.isSafeInteger(batch) || batch < 1) throw new Error(`not a batch size: ${batch}`);
    const result = await sql`
      delete from notification_logs l
      where l.app_id = ${appId} and l.id in (
        select o.id from notification_logs o
        where o.app_id = ${appId}
          and o.id < coalesce((select k.id from notification_logs k where k.app_id = ${appId} and k.created_at >= ${cutoff} order by k.id limit 1),
                              9223372036854775807)
        order by o.id limit ${batch})`.execute(tx);
    return Number(result.numAffectedRows ?? 0);
  }
}

/** An entry as json_to_recordset reads it: the table's columns, `n` its place. */
function storedEntry(entry: NotificationLogEntry, n: number): Record<string, unknown> {
  const triggered = entry.notificationTriggered;
  return {
    n,
    processing_started_at_ms: entry.processingStartedAtMS,
    processing_ended_at_ms: entry.processingEndedAtMS,
    component: entry.component ?? LOG_COMPONENT,
    channel: entry.channel,
    provider: entry.provider ?? null,
    provider_id: entry.providerId ?? null,
    trigger: entry.trigger,
    message_id: entry.messageId ?? null,
    reaction_id: entry.reactionId ?? null,
    message_sent_at_ms: entry.messageSentAtMS,
    message_category: entry.messageCategory ?? null,
    message_type: entry.messageType ?? null,
    sender: entry.sender ?? null,
    reaction_sender: entry.reactionSender ?? null,
    receiver: entry.receiver ?? null,
    reaction_receiver: entry.reactionReceiver ?? null,
    receiver_type: entry.receiverType ?? null,
    member: entry.member ?? null,
    token_type: entry.tokenType ?? null,
    push_token: entry.pushToken ?? null,
    payload: entry.payload ?? null,
    notification_triggered: triggered,
    reason: triggered ? null : entry.reason,
    success: triggered ? entry.success : null,
    error: triggered && entry.error !== undefined ? entry.error.slice(0, LOG_LIMITS.errorLength) : null,
  };
}
