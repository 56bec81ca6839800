import { sql } from 'kysely';
import type { Executor } from '../db/transaction.js';
import type { NewEvent } from '../domain/events.js';
import { anyOf } from './sql-helpers.js';

/** An event as the log holds it (docs/events.md). */
export interface EventRow {
  app_id: string;
  id: string;
  /** The recording transaction's id (`events.tx`), where the read gives it (the log's lists do). */
  tx?: string;
  trigger: string;
  conversation_id: string | null;
  /** Message events: the message their payload shows. */
  message_id: string | null;
  /** Other events: their payload's data as recorded. */
  data: Record<string, unknown> | null;
  created_at: Date;
}

/** The channel on which a process that committed events tells the others (see signal). */
export const EVENT_CHANNEL = 'parley_events';

/**
 * The event log: the events of changes other than stored messages (those are recorded by the
 * message store: repositories/message-store/message-events.ts), always inside the change's
 * transaction; reading it in order; and its retention.
 */
export class EventsRepository {
  constructor(private readonly db: Executor) {}

  /** Records the events, in order, in the transaction of the change they describe. */
  async record(appId: string, events: readonly NewEvent[], tx: Executor): Promise<void> {
    if (events.length === 0) return;
    const records = JSON.stringify(
      events.map((event, n) => ({
        n,
        trigger: event.trigger,
        conversation_id: event.conversationId ?? null,
        message_id: 'messageId' in event ? event.messageId : null,
        data: event.data,
      })),
    );
    await sql`
      insert into events (app_id, trigger, conversation_id, message_id, data)
      select ${appId}, r.trigger, r.conversation_id, r.message_id, r.data
      from json_to_recordset(${records}::json) as r (n int, trigger text, conversation_id text, message_id bigint, data json)
      order by r.n`.execute(tx);
  }

  /**
   * Tells other processes' feeds (listening on EVENT_CHANNEL) that events may have been
   * committed, in a statement of its own: a NOTIFY inside the change's transaction would hold
   * PostgreSQL's notification lock through its commit, serialising every such commit.
   */
  async signal(tx: Executor = this.db): Promise<void> {
    await sql`select pg_notify(${EVENT_CHANNEL}, '')`.execute(tx);
  }

  /**
   * Where the log stands, for readers that must never pass an event still to come (see
   * EventFeed): the last event id drawn so far (the sequence, which no transaction hides); the
   * next transaction id to be assigned (`xmax`); and the oldest transaction id still running
   * **in this database** (`xmin`; `xmax` when none runs).
   *
   * Neither comes from the snapshot: its xmax is one past the newest *completed* transaction, so
   * a running transaction with a newer id is neither in its running list nor below its xmax (an
   * event it drew would look safe), and its xmin counts every database of the server (a long
   * transaction elsewhere would hold every stream and webhook back). Both come from age(), which
   * counts from the next transaction id (read once per statement): next = xmax + age(xmax), and
   * the oldest running = next less the greatest age among the transaction ids pg_stat_activity
   * shows for this database (visible to any role). A transaction with no id yet has drawn no
   * event id (each takes its transaction id before an event id) and will get one of `xmax` or more.
   */
  async position(tx: Executor = this.db): Promise<{ lastId: string; xmin: string; xmax: string }> {
    const result = await sql<{ last_id: string | null; xmin: string; xmax: string }>`
      with snap as (select pg_snapshot_xmax(pg_current_snapshot())::text::bigint as xmax),
      -- A normal transaction id near xmax to count from (ids 0-2 of each epoch are special:
      -- their age() is 2^31-1); age() is a signed difference, so one a little past next is fine.
      base as (select s.xmax + greatest(0, 3 - s.xmax % 4294967296) as xid from snap s),
      next as (select b.xid + age((b.xid % 4294967296)::text::xid) as xid from base b)
      select pg_sequence_last_value(pg_get_serial_sequence('events', 'id')::regclass)::text as last_id,
             (n.xid - coalesce((select max(age(a.backend_xid)) from pg_stat_activity a
                                where a.datname = current_database() and a.backend_xid is not null), 0))::text as xmin,
             n.xid::text as xmax
      from next n`.execute(tx);
    const row = result.rows[0]!;
    return { lastId: row.last_id ?? '0', xmin: row.xmin, xmax: row.xmax };
  }

  /**
   * Where a reader starting now starts (EventFeed.startPoint): the transactions committed now (the
   * statement's snapshot: `xmin`, `xmax` and the ids `running` between them) and the last event id
   * drawn, read after the snapshot was taken. Every event of a transaction committed in the
   * snapshot has an id at or below `lastId` (it drew its ids before its commit, which came before
   * the snapshot); an event above it belongs to a transaction that had not committed.
   */
  async startPosition(tx: Executor = this.db): Promise<{ lastId: string; committed: { xmin: string; xmax: string; running: string[] } }> {
    const result = await sql<{ snapshot: string; last_id: string | null }>`
      select pg_current_snapshot()::text as snapshot,
             pg_sequence_last_value(pg_get_serial_sequence('events', 'id')::regclass)::text as last_id`.execute(tx);
    const row = result.rows[0]!;
    const [xmin, xmax, running] = row.snapshot.split(':') as [string, string, string];
    return { lastId: row.last_id ?? '0', committed: { xmin, xmax, running: running === '' ? [] : running.split(',') } };
  }

  /** Events of these apps with `afterId < id <= upToId`, oldest first, at most `limit`. */
  async listBetween(appIds: readonly string[], afterId: string, upToId: string, limit: number, tx: Executor = this.db): Promise<EventRow[]> {
    if (appIds.length === 0) return [];
    const rows = await selectEvents(tx).where('app_id', '=', anyOf(appIds)).where('id', '>', afterId).where('id', '<=', upToId).orderBy('id').limit(limit).execute();
    return rows.map(eventRow);
  }

  /** The app's events after `afterId` (up to `upToId` when given), oldest first. */
  async listAfter(appId: string, afterId: string, limit: number, upToId?: string, tx: Executor = this.db): Promise<EventRow[]> {
    let query = selectEvents(tx).where('app_id', '=', appId).where('id', '>', afterId);
    if (upToId !== undefined) query = query.where('id', '<=', upToId);
    return (await query.orderBy('id').limit(limit).execute()).map(eventRow);
  }

  /** The oldest event id the log still holds for the app (retention deletes older ones), if any. */
  async firstId(appId: string, tx: Executor = this.db): Promise<string | undefined> {
    const row = await tx.selectFrom('events').select('id').where('app_id', '=', appId).orderBy('id').limit(1).executeTakeFirst();
    return row === undefined ? undefined : String(row.id);
  }

  /** The apps that have events. */
  async appsWithEvents(tx: Executor = this.db): Promise<string[]> {
    const rows = await sql<{ app_id: string }>`
      select a.id as app_id from apps a where exists (select 1 from events e where e.app_id = a.id)`.execute(tx);
    return rows.rows.map((row) => row.app_id);
  }

  /**
   * Deletes up to `batch` of the app's events recorded before `cutoff`, oldest first: the
   * retention's cleanup, a small batch at a time. Events are appended in time order, so the old
   * ones are the app's first ids, found through its key up to the first one to keep. Answers
   * how many it deleted.
   */
  async deleteOlderThan(appId: string, cutoff: Date, batch: number, tx: Executor = this.db): Promise<number> {
    const result = await sql`
      delete from events e
      where e.app_id = ${appId} and e.id in (
        select o.id from events o
        where o.app_id = ${appId}
          and o.id < coalesce((select k.id from events k where k.app_id = ${appId} and k.created_at >= ${cutoff} order by k.id limit 1),
                              9223372036854775807)
        order by o.id limit ${batch})`.execute(tx);
    return Number(result.numAffectedRows ?? 0);
  }
}

/** The columns of an EventRow, read by every list. */
function selectEvents(tx: Executor) {
  return tx.selectFrom('events').select(['app_id', 'id', sql<string>`tx::text`.as('tx'), 'trigger', 'conversation_id', 'message_id', 'data', 'created_at']);
}

/** An event as its columns read (ids as text or numbers): the one codec of an EventRow. */
export function eventRow(row: { app_id: string; id: string; tx: string; trigger: string; conversation_id: string | null; message_id: string | null; data: unknown; created_at: Date }): EventRow {
  return {
    app_id: row.app_id,
    id: String(row.id),
    tx: row.tx,
    trigger: row.trigger,
    conversation_id: row.conversation_id,
    message_id: row.message_id === null ? null : String(row.message_id),
    data: row.data as Record<string, unknown> | null,
    created_at: row.created_at,
  };
}
