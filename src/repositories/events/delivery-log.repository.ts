import { sql } from 'kysely';
import type { Executor } from '../../db/transaction.js';
import { extended } from '../../domain/objects.js';
import type { ConsumerQueue, DeliveryRow, DeliveryStatus } from './event-queue.repository.js';

/**
 * One consumer's delivery log (docs/events.md, "Consumers"): its deliveries and their attempts as
 * a log shows them, redelivery, the log's retention, and forgetting a removed target. The queue's
 * moving parts are EventQueueRepository's.
 */
export class DeliveryLogRepository {
  constructor(
    private readonly db: Executor,
    private readonly queue: ConsumerQueue,
  ) {}

  /** A page of the target's deliveries, newest first: those with ids below `beforeId` when given. */
  async list(appId: string, target: string, filter: { status?: DeliveryStatus; beforeId?: string; limit: number }, tx: Executor = this.db): Promise<DeliveryRow[]> {
    let query = this.selectDeliveries(tx).where('app_id', '=', appId).where('target', '=', target);
    if (filter.status) query = query.where('status', '=', filter.status);
    if (filter.beforeId !== undefined) query = query.where('id', '<', filter.beforeId);
    return (await query.orderBy('id', 'desc').limit(filter.limit).execute()).map(deliveryRow);
  }

  async get(appId: string, target: string, id: string, tx: Executor = this.db): Promise<DeliveryRow | undefined> {
    const row = await this.selectDeliveries(tx).where('app_id', '=', appId).where('target', '=', target).where('id', '=', id).executeTakeFirst();
    return row && deliveryRow(row);
  }

  /** A delivery's attempts, oldest first. */
  async attempts(appId: string, deliveryId: string, tx: Executor = this.db): Promise<Array<{ at: Date; duration_ms: number; status: number | null; error: string | null }>> {
    return tx.selectFrom('event_delivery_attempts').select(['at', 'duration_ms', 'status', 'error']).where('app_id', '=', appId).where('delivery_id', '=', deliveryId).orderBy('id').execute();
  }

  /**
   * Makes deliveries pending again, for a new run of attempts (same id, attempts counted from 0),
   * and their lanes due: the one `id` whatever its status, or (`failedSince`) every failed one
   * created since then. Answers how many.
   */
  async redeliver(appId: string, target: string, which: { id: string } | { failedSince: Date }, tx: Executor = this.db): Promise<number> {
    const id = 'id' in which ? which.id : null;
    const since = 'failedSince' in which ? which.failedSince : null;
    const consumer = this.queue.name;
    const result = await sql<{ n: string }>`
      with again as (
        update event_deliveries d set status = 'pending', attempts = 0, first_attempt_at = null, last_error = null
        where d.app_id = ${appId} and d.consumer = ${consumer} and d.target = ${target}
          and (${id}::bigint is null or d.id = ${id}::bigint)
          and (${since}::timestamptz is null or (d.status = 'failed' and d.created_at >= ${since}::timestamptz))
        returning d.lane
      ),
      lanes as (
        insert into event_lanes (app_id, consumer, target, lane, next_attempt_at)
        select distinct ${appId}, ${consumer}, ${target}, lane, now() from again
        on conflict (app_id, consumer, target, lane)
        -- Due now, even when waiting for a retry. A lane a process is sending stays with it until
        -- its lease ends, but is no longer its to give back: that round looks for pending
        -- deliveries only after those it settled, and would not see this older one again.
        do update set next_attempt_at = case when event_lanes.claim is null then excluded.next_attempt_at else event_lanes.next_attempt_at end,
                      claim = null
        returning lane
      )
      select (select count(*) from again)::text as n`.execute(tx);
    return Number(result.rows[0]!.n);
  }

  /**
   * The retention of the delivery log: deletes up to `batch` of the app's delivered and failed
   * deliveries of this consumer created before `cutoff` (pending ones stay until settled), with
   * their attempts, found through the app's key as the event cleanup finds events; and up to
   * `batch` of its idle lanes. Answers how many deliveries and lanes it deleted.
   */
  async deleteSettledBefore(appId: string, cutoff: Date, batch: number, tx: Executor = this.db): Promise<number> {
    const consumer = this.queue.name;
    const deliveries = await sql<{ n: string }>`
      with gone as (
        delete from event_deliveries d
        where d.app_id = ${appId} and d.id in (
          select o.id from event_deliveries o
          where o.app_id = ${appId} and o.consumer = ${consumer} and o.status <> 'pending'
            and o.id < coalesce((select k.id from event_deliveries k where k.app_id = ${appId} and k.created_at >= ${cutoff} order by k.id limit 1),
                                9223372036854775807)
          order by o.id limit ${batch})
        returning d.id
      ),
      attempts as (
        delete from event_delivery_attempts a where a.app_id = ${appId} and a.delivery_id in (select id from gone)
        returning 1
      )
      select (select count(*) from gone)::text as n`.execute(tx);
    // An idle lane is made again by the fan-out when its lane has a new delivery; one the
    // fan-out is making due meanwhile is no longer idle when this delete gets its row.
    const lanes = await sql`
      delete from event_lanes l
      where l.app_id = ${appId} and l.consumer = ${consumer} and (l.target, l.lane) in (
        select i.target, i.lane from event_lanes i where i.app_id = ${appId} and i.consumer = ${consumer} and i.next_attempt_at is null limit ${batch})
        and l.next_attempt_at is null`.execute(tx);
    return Number(deliveries.rows[0]?.n ?? 0) + Number(lanes.numAffectedRows ?? 0);
  }

  private selectDeliveries(tx: Executor) {
    return tx
      .selectFrom('event_deliveries')
      .select(['id', 'target', 'event_id', 'trigger', 'status', 'attempts', 'last_status', 'last_error', 'last_attempt_at', 'created_at'])
      .where('consumer', '=', this.queue.name);
  }
}

function deliveryRow(row: DeliveryRow): DeliveryRow {
  // bigint columns arrive as strings from pg and as numbers from PGlite.
  return extended(row, { id: String(row.id), event_id: String(row.event_id) });
}
