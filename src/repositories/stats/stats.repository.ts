import { sql } from 'kysely';
import type { Executor } from '../../db/transaction.js';
import { logStep } from '../events/log-step.js';

/** The triggers counted in the five-minute buckets. */
const COUNTED = ['message_sent', 'message_read_receipt', 'message_delivery_receipt'];

/** A five-minute bucket's counts; `start` in Unix seconds (a multiple of 300). */
export interface MessageBucketRow {
  start: number;
  messagesSent: number;
  readReceipts: number;
  deliveryReceipts: number;
}

/**
 * Usage statistics (docs/stats.md, migration 0027): the event log's aggregation into counts and
 * their reads. Only the aggregation writes the counts, one statement per step for every app it
 * takes, so no request ever waits on a counter row.
 */
export class StatsRepository {
  constructor(private readonly db: Executor) {}

  /**
   * One step of the aggregation, in one statement: a cursor for each app that has none yet
   * (taken by the next step), the cursors of the apps no other process is moving and each
   * app's next events up to `safeId`, at most `perApp` (logStep), their counts added
   * to their buckets, their users' hours marked, and the cursors moved past what was read. The
   * counts and the cursor commit together, so an event is counted once. Answers how many events
   * it read; `more` when an app had more than `perApp`, or got its cursor (its events are read
   * by the next step).
   */
  async aggregate(safeId: string, perApp: number, tx: Executor = this.db): Promise<{ events: number; more: boolean }> {
    const result = await sql<{ events: string; more: boolean }>`
      with ensured as (
        insert into stats_cursors (app_id, event_id)
        select a.id, 0 from apps a
        where not exists (select 1 from stats_cursors c where c.app_id = a.id)
          and not exists (select 1 from app_deletions d where d.app_id = a.id)
        order by a.id
        on conflict do nothing
        returning app_id
      ),
      ${logStep({ cursors: 'stats_cursors', scope: sql`true`, safeId, perApp, data: true })},
      buckets as (
        insert into stats_message_buckets as s (app_id, bucket, messages_sent, read_receipts, delivery_receipts)
        select b.app_id, to_timestamp(floor(extract(epoch from b.created_at) / 300) * 300),
               count(*) filter (where b.trigger = 'message_sent'),
               count(*) filter (where b.trigger = 'message_read_receipt'),
               count(*) filter (where b.trigger = 'message_delivery_receipt')
        from batch b where b.trigger = any(${COUNTED}::text[])
        group by 1, 2 order by 1, 2
        on conflict (app_id, bucket) do update
        set messages_sent = s.messages_sent + excluded.messages_sent,
            read_receipts = s.read_receipts + excluded.read_receipts,
            delivery_receipts = s.delivery_receipts + excluded.delivery_receipts
        returning s.app_id
      ),
      -- Who acted in each event (docs/stats.md, "active_users"): a message's sender (the actor
      -- of an edit or a delete is its action message's), a receipt's reader, a reaction's
      -- user, the user of a change's by, the members who joined or left; never the app itself.
      actors as (
        select b.app_id, b.created_at at time zone 'UTC' as at, u.uid
        from batch b cross join lateral (
          select m.sender as uid from messages m
          where b.trigger in ('message_sent', 'message_edited', 'message_deleted') and m.app_id = b.app_id and m.id = b.message_id
          union all select b.data->>'sender' where b.trigger in ('message_read_receipt', 'message_delivery_receipt')
          union all select b.data->'reaction'->>'uid' where b.trigger in ('message_reaction_added', 'message_reaction_removed')
          union all select b.data->'by'->>'uid'
          union all select k from json_object_keys(case when b.trigger in ('group_member_joined', 'group_member_left') then b.data->'members' end) as k
        ) u
        where u.uid is not null and u.uid <> 'app_system'
      ),
      users as (
        insert into stats_active_users as s (app_id, day, uid, hours)
        select a.app_id, a.at::date, a.uid, bit_or(1 << extract(hour from a.at)::int)
        from actors a group by 1, 2, 3 order by 1, 2, 3
        on conflict (app_id, day, uid) do update set hours = s.hours | excluded.hours
        where (s.hours | excluded.hours) <> s.hours
        returning s.app_id
      )
      -- (the data-modifying CTEs run whether or not they are read)
      select (select count(*) from batch)::text as events,
             exists (select 1 from counted where n >= ${perApp}) or exists (select 1 from ensured) as more`.execute(tx);
    const row = result.rows[0]!;
    return { events: Number(row.events), more: row.more };
  }

  /** The app's buckets with counts starting in [from, to) (Unix seconds), in order. */
  async messageBuckets(appId: string, from: number, to: number, tx: Executor = this.db): Promise<MessageBucketRow[]> {
    const result = await sql<{ start: string; messages_sent: string; read_receipts: string; delivery_receipts: string }>`
      select extract(epoch from bucket)::bigint::text as start, messages_sent::text, read_receipts::text, delivery_receipts::text
      from stats_message_buckets
      where app_id = ${appId} and bucket >= to_timestamp(${from}) and bucket < to_timestamp(${to})
      order by bucket`.execute(tx);
    return result.rows.map((row) => ({
      start: Number(row.start),
      messagesSent: Number(row.messages_sent),
      readReceipts: Number(row.read_receipts),
      deliveryReceipts: Number(row.delivery_receipts),
    }));
  }

  /**
   * The app's distinct users active in any of these hours: `days` (YYYY-MM-DD, UTC) each with
   * the mask of its hours (bit h: hour h). Each day is read by its key.
   */
  async activeUsers(appId: string, days: readonly string[], masks: readonly number[], tx: Executor = this.db): Promise<number> {
    const result = await sql<{ n: string }>`
      select count(distinct a.uid)::text as n
      from unnest(${[...days]}::date[], ${[...masks]}::int[]) as r (day, mask)
      cross join lateral (
        select s.uid from stats_active_users s where s.app_id = ${appId} and s.day = r.day and (s.hours & r.mask) <> 0
      ) a`.execute(tx);
    return Number(result.rows[0]?.n ?? 0);
  }

  /** The apps with counts. */
  async apps(tx: Executor = this.db): Promise<string[]> {
    return (await tx.selectFrom('stats_cursors').select('app_id').orderBy('app_id').execute()).map((row) => row.app_id);
  }

  /** Deletes up to `batch` of the app's buckets and user days older than `cutoff`; answers how many rows. */
  async deleteBefore(appId: string, cutoff: Date, batch: number, tx: Executor = this.db): Promise<number> {
    const buckets = await sql`
      delete from stats_message_buckets
      where app_id = ${appId} and bucket in (
        select bucket from stats_message_buckets where app_id = ${appId} and bucket < ${cutoff} order by bucket limit ${batch})`.execute(tx);
    const days = await sql`
      delete from stats_active_users
      where app_id = ${appId} and (day, uid) in (
        select day, uid from stats_active_users where app_id = ${appId} and day < (${cutoff}::timestamptz at time zone 'UTC')::date order by day, uid limit ${batch})`.execute(tx);
    return Number(buckets.numAffectedRows ?? 0n) + Number(days.numAffectedRows ?? 0n);
  }
}
