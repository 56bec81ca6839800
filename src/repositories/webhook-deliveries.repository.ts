import { sql } from 'kysely';
import type { Executor } from '../db/transaction.js';
import { extended } from '../domain/objects.js';
import type { EventRow } from './events.repository.js';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** A lane taken by one process's claim: a webhook's pending deliveries of one conversation. */
export interface ClaimedLane {
  app_id: string;
  webhook_id: string;
  lane: string;
}

/** A pending delivery with the event it delivers (null when retention deleted it meanwhile). */
export interface PendingDelivery {
  id: string;
  event_id: string;
  trigger: string;
  attempts: number;
  first_attempt_at: Date | null;
  event: EventRow | null;
}

/** What one attempt (or the decision not to make one) did to a delivery. */
export interface AttemptOutcome {
  id: string;
  status: DeliveryStatus;
  /** Whether an HTTP request was made (counted in `attempts`). */
  attempted: boolean;
  at: Date;
  httpStatus: number | null;
  error: string | null;
}

/** A delivery as the delivery log shows it. */
export interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_id: string;
  trigger: string;
  status: DeliveryStatus;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  last_attempt_at: Date | null;
  created_at: Date;
}

/**
 * What the event log owes each webhook (docs/webhooks.md): the fan-out of events to deliveries,
 * the lanes that keep each conversation's deliveries in order, and the delivery log. The
 * tables and their invariants are described in migration 0015.
 */
export class WebhookDeliveriesRepository {
  constructor(private readonly db: Executor) {}

  /**
   * Starts the app's fan-out at the end of its log, unless it has started: a new webhook gets
   * the events of changes made after it exists, not the log's past.
   */
  async startCursor(appId: string, tx: Executor = this.db): Promise<void> {
    await sql`
      insert into webhook_cursors (app_id, event_id)
      select ${appId}, coalesce((select max(id) from events where app_id = ${appId}), 0)
      on conflict (app_id) do nothing`.execute(tx);
  }

  /**
   * One step of the fan-out, in one statement: the cursors of the apps that no other process is
   * moving, each app's next events up to `safeId` (at most `perApp`), one delivery per event and
   * enabled webhook subscribed to its trigger (created before the event's change began), their
   * lanes made due, and the cursors moved past what was read. Answers how many deliveries it
   * made; `more` when some app had more events than `perApp`.
   */
  async fanOut(safeId: string, perApp: number, tx: Executor = this.db): Promise<{ deliveries: number; more: boolean }> {
    const result = await sql<{ deliveries: string; more: boolean }>`
      with claimed as (
        select app_id, event_id from webhook_cursors where event_id < ${safeId}::bigint
        order by app_id for update skip locked
      ),
      batch as (
        select c.app_id, e.id, e.trigger, e.conversation_id, e.created_at
        from claimed c cross join lateral (
          select e.id, e.trigger, e.conversation_id, e.created_at from events e
          where e.app_id = c.app_id and e.id > c.event_id and e.id <= ${safeId}::bigint
          order by e.id limit ${perApp}) e
      ),
      counted as (
        select c.app_id, count(b.id) as n, max(b.id) as last
        from claimed c left join batch b on b.app_id = c.app_id group by c.app_id
      ),
      moved as (
        update webhook_cursors w set event_id = case when n.n >= ${perApp} then n.last else ${safeId}::bigint end
        from counted n where w.app_id = n.app_id
        returning w.app_id
      ),
      made as (
        insert into webhook_deliveries (app_id, webhook_id, event_id, trigger, lane)
        select b.app_id, w.id, b.id, b.trigger, coalesce(b.conversation_id, '')
        from batch b join webhooks w on w.app_id = b.app_id and w.enabled and b.trigger = any(w.triggers) and w.created_at <= b.created_at
        order by b.app_id, w.id, b.id
        -- A webhook being deleted waits for this statement (and then deletes what it made), or
        -- this one skips it: no delivery outlives its webhook.
        for key share of w
        on conflict do nothing
        returning app_id, webhook_id, lane
      ),
      lanes as (
        insert into webhook_lanes (app_id, webhook_id, lane, next_attempt_at)
        -- In key order, as a round's finish locks them.
        select distinct app_id, webhook_id, lane, now() from made order by app_id, webhook_id, lane
        on conflict (app_id, webhook_id, lane)
        do update set next_attempt_at = coalesce(webhook_lanes.next_attempt_at, excluded.next_attempt_at)
        returning app_id
      )
      -- (moved and lanes run whether or not they are read: data-modifying CTEs always do.)
      select (select count(*) from made)::text as deliveries,
             exists (select 1 from counted where n >= ${perApp}) as more`.execute(tx);
    const row = result.rows[0]!;
    return { deliveries: Number(row.deliveries), more: row.more };
  }

  /**
   * Takes due lanes of enabled webhooks for this process (`claim`): of each webhook at most its
   * share less what it has in flight here (`inFlight`: app id, webhook id, lanes, share; a
   * webhook not listed has `perWebhook` and none in flight), the webhooks with the least in
   * flight first, and `total` in all. A taken lane is due again when
   * the lease ends, so a process that died gives its lanes up.
   */
  async claimLanes(
    options: { claim: string; perWebhook: number; total: number; leaseMs: number; inFlight: ReadonlyArray<readonly [string, string, number, number]> },
    tx: Executor = this.db,
  ): Promise<ClaimedLane[]> {
    if (options.total <= 0) return [];
    const apps = options.inFlight.map(([appId]) => appId);
    const webhooks = options.inFlight.map(([, webhookId]) => webhookId);
    const counts = options.inFlight.map(([, , n]) => n);
    const shares = options.inFlight.map(([, , , share]) => share);
    const result = await sql<ClaimedLane>`
      with busy as (
        select * from unnest(${apps}::text[], ${webhooks}::text[], ${counts}::int[], ${shares}::int[]) as b (app_id, webhook_id, n, share)
      ),
      due as (
        select l.app_id, l.webhook_id, l.lane
        from webhooks w
        left join busy b on b.app_id = w.app_id and b.webhook_id = w.id
        cross join lateral (
          select l.app_id, l.webhook_id, l.lane from webhook_lanes l
          where l.app_id = w.app_id and l.webhook_id = w.id and l.next_attempt_at <= now()
          order by l.next_attempt_at limit greatest(0, coalesce(b.share, ${options.perWebhook}) - coalesce(b.n, 0))
          for update skip locked) l
        where w.enabled
        order by coalesce(b.n, 0)
        limit ${options.total}
      )
      update webhook_lanes l set next_attempt_at = now() + ${options.leaseMs} * interval '1 millisecond', claim = ${options.claim}
      from due where l.app_id = due.app_id and l.webhook_id = due.webhook_id and l.lane = due.lane
      returning l.app_id, l.webhook_id, l.lane`.execute(tx);
    return result.rows;
  }

  /**
   * The pending deliveries of these lanes of one webhook, each lane's in event order (at most
   * `perLane` of each), with their events: one statement for a round of many lanes.
   */
  async pendingOfLanes(appId: string, webhookId: string, lanes: readonly string[], perLane: number, tx: Executor = this.db): Promise<Map<string, PendingDelivery[]>> {
    const result = await sql<{
      lane: string; id: string; event_id: string; trigger: string; attempts: number; first_attempt_at: Date | null;
      e_id: string | null; conversation_id: string | null; message_id: string | null; data: Record<string, unknown> | null; e_created_at: Date | null;
    }>`
      select l.lane, d.*
      from unnest(${[...lanes]}::text[]) as l (lane)
      cross join lateral (
        select d.id::text, d.event_id::text, d.trigger, d.attempts, d.first_attempt_at,
               e.id::text as e_id, e.conversation_id, e.message_id::text, e.data, e.created_at as e_created_at
        from webhook_deliveries d left join events e on e.app_id = d.app_id and e.id = d.event_id
        where d.app_id = ${appId} and d.webhook_id = ${webhookId} and d.lane = l.lane and d.status = 'pending'
        order by d.event_id limit ${perLane}) d
      -- (event_id is text here: ordered as the number it is)
      order by l.lane, d.event_id::bigint`.execute(tx);
    const byLane = new Map<string, PendingDelivery[]>();
    for (const row of result.rows) {
      const delivery: PendingDelivery = {
        id: row.id,
        event_id: row.event_id,
        trigger: row.trigger,
        attempts: row.attempts,
        first_attempt_at: row.first_attempt_at,
        event: row.e_id === null ? null : {
          app_id: appId,
          id: row.e_id,
          trigger: row.trigger,
          conversation_id: row.conversation_id,
          message_id: row.message_id,
          data: row.data,
          created_at: row.e_created_at!,
        },
      };
      const list = byLane.get(row.lane);
      if (list) list.push(delivery);
      else byLane.set(row.lane, [delivery]);
    }
    return byLane;
  }

  /**
   * Records what the attempts of a round of lanes (of one webhook) did, and gives back the lanes
   * still claimed by `claim` (one whose lease ended may be another process's now): each due again
   * at its `retryAt` (its head waits to be retried), at once when deliveries are still pending,
   * else idle. Pending ones are looked for after `after` (the round settled or read everything
   * up to it): the partial index's entries of the deliveries settled before are dead until
   * vacuumed, and reading through them made this transaction, and the safe id of every stream
   * and webhook waiting on it, take ~200 ms under load. The lanes' rows are locked (in key order, as the fan-out locks them) before the
   * pending ones are looked for, so a delivery the fan-out adds meanwhile is seen (or makes the
   * lane due).
   */
  async finishRound(
    appId: string,
    webhookId: string,
    lanes: readonly string[],
    claim: string,
    outcomes: readonly AttemptOutcome[],
    retryAt: ReadonlyMap<string, Date>,
    /** Per lane, the last event id the round settled or read: pending ones are looked for after it. */
    after: ReadonlyMap<string, string>,
    tx: Executor,
  ): Promise<void> {
    if (outcomes.length > 0) {
      const ids = outcomes.map((o) => o.id);
      const records = JSON.stringify(outcomes.map((o) => ({ id: o.id, status: o.status, attempted: o.attempted, at: o.at.toISOString(), httpStatus: o.httpStatus, error: o.error })));
      await sql`
        update webhook_deliveries d
        set status = r.status, attempts = d.attempts + case when r.attempted then 1 else 0 end,
            first_attempt_at = case when r.attempted then coalesce(d.first_attempt_at, r.at) else d.first_attempt_at end,
            last_attempt_at = case when r.attempted then r.at else d.last_attempt_at end,
            last_status = case when r.attempted then r."httpStatus" else d.last_status end,
            last_error = r.error
        from json_to_recordset(${records}::json) as r (id bigint, status text, attempted boolean, at timestamptz, "httpStatus" int, error text)
        where d.app_id = ${appId} and d.id = any(${ids}::bigint[]) and d.id = r.id and d.status = 'pending'`.execute(tx);
    }
    const mine = await sql<{ lane: string }>`
      select lane from webhook_lanes
      where app_id = ${appId} and webhook_id = ${webhookId} and lane = any(${[...lanes]}::text[]) and claim = ${claim}
      order by lane for update`.execute(tx);
    if (mine.rows.length === 0) return;
    const held = mine.rows.map((row) => row.lane);
    const retries = held.map((lane) => retryAt.get(lane)?.toISOString() ?? null);
    const afters = held.map((lane) => after.get(lane) ?? '0');
    await sql`
      update webhook_lanes l
      set claim = null,
          next_attempt_at = case
            when r.retry_at is not null then r.retry_at
            when exists (select 1 from webhook_deliveries d
                         where d.app_id = l.app_id and d.webhook_id = l.webhook_id and d.lane = l.lane and d.status = 'pending'
                           and d.event_id > r.after) then now()
            else null end
      from unnest(${held}::text[], ${retries}::timestamptz[], ${afters}::bigint[]) as r (lane, retry_at, after)
      where l.app_id = ${appId} and l.webhook_id = ${webhookId} and l.lane = r.lane`.execute(tx);
  }

  /** A page of the webhook's deliveries, newest first: those with ids below `beforeId` when given. */
  async list(appId: string, webhookId: string, filter: { status?: DeliveryStatus; beforeId?: string; limit: number }, tx: Executor = this.db): Promise<DeliveryRow[]> {
    let query = selectDeliveries(tx).where('app_id', '=', appId).where('webhook_id', '=', webhookId);
    if (filter.status) query = query.where('status', '=', filter.status);
    if (filter.beforeId !== undefined) query = query.where('id', '<', filter.beforeId);
    return (await query.orderBy('id', 'desc').limit(filter.limit).execute()).map(deliveryRow);
  }

  async get(appId: string, webhookId: string, id: string, tx: Executor = this.db): Promise<DeliveryRow | undefined> {
    const row = await selectDeliveries(tx).where('app_id', '=', appId).where('webhook_id', '=', webhookId).where('id', '=', id).executeTakeFirst();
    return row && deliveryRow(row);
  }

  /**
   * Makes deliveries pending again, for a new run of attempts (same id, attempts counted from 0),
   * and their lanes due: the one `id` whatever its status, or (`failedSince`) every failed one
   * created since then. Answers how many.
   */
  async redeliver(appId: string, webhookId: string, which: { id: string } | { failedSince: Date }, tx: Executor = this.db): Promise<number> {
    const id = 'id' in which ? which.id : null;
    const since = 'failedSince' in which ? which.failedSince : null;
    const result = await sql<{ n: string }>`
      with again as (
        update webhook_deliveries d set status = 'pending', attempts = 0, first_attempt_at = null, last_error = null
        where d.app_id = ${appId} and d.webhook_id = ${webhookId}
          and (${id}::bigint is null or d.id = ${id}::bigint)
          and (${since}::timestamptz is null or (d.status = 'failed' and d.created_at >= ${since}::timestamptz))
        returning d.lane
      ),
      lanes as (
        insert into webhook_lanes (app_id, webhook_id, lane, next_attempt_at)
        select distinct ${appId}, ${webhookId}, lane, now() from again
        on conflict (app_id, webhook_id, lane)
        -- Due now, even when waiting for a retry. A lane a process is sending stays with it until
        -- its lease ends, but is no longer its to give back: that round looks for pending
        -- deliveries only after those it settled, and would not see this older one again.
        do update set next_attempt_at = case when webhook_lanes.claim is null then excluded.next_attempt_at else webhook_lanes.next_attempt_at end,
                      claim = null
        returning lane
      )
      select (select count(*) from again)::text as n`.execute(tx);
    return Number(result.rows[0]!.n);
  }

  /**
   * Refreshes the planner's statistics of the queue's tables (see TableStatistics) and answers
   * how many deliveries the log holds, as the analysis estimates it.
   */
  async analyze(tx: Executor = this.db): Promise<number> {
    await sql`analyze webhook_deliveries, webhook_lanes`.execute(tx);
    const result = await sql<{ n: number }>`select reltuples::float8 as n from pg_class where oid = 'webhook_deliveries'::regclass`.execute(tx);
    return Math.max(0, Number(result.rows[0]?.n ?? 0));
  }

  /** Whether any app has, or had, a webhook (its events are fanned out). */
  async anyCursor(tx: Executor = this.db): Promise<boolean> {
    return (await tx.selectFrom('webhook_cursors').select('app_id').limit(1).execute()).length > 0;
  }

  /** The apps whose events are fanned out to webhooks (they have, or had, one). */
  async appsWithCursors(tx: Executor = this.db): Promise<string[]> {
    return (await tx.selectFrom('webhook_cursors').select('app_id').orderBy('app_id').execute()).map((row) => row.app_id);
  }

  /**
   * The retention of the delivery log (docs/webhooks.md): deletes up to `batch` of the app's
   * delivered and failed deliveries created before `cutoff` (pending ones stay until settled),
   * found through the app's key as the event cleanup finds events; and up to `batch` of its idle
   * lanes. Answers how many rows it deleted.
   */
  async deleteSettledBefore(appId: string, cutoff: Date, batch: number, tx: Executor = this.db): Promise<number> {
    const deliveries = await sql`
      delete from webhook_deliveries d
      where d.app_id = ${appId} and d.id in (
        select o.id from webhook_deliveries o
        where o.app_id = ${appId} and o.status <> 'pending'
          and o.id < coalesce((select k.id from webhook_deliveries k where k.app_id = ${appId} and k.created_at >= ${cutoff} order by k.id limit 1),
                              9223372036854775807)
        order by o.id limit ${batch})`.execute(tx);
    // An idle lane is made again by the fan-out when its conversation has a new delivery; one the
    // fan-out is making due meanwhile is no longer idle when this delete gets its row.
    const lanes = await sql`
      delete from webhook_lanes l
      where l.app_id = ${appId} and (l.webhook_id, l.lane) in (
        select i.webhook_id, i.lane from webhook_lanes i where i.app_id = ${appId} and i.next_attempt_at is null limit ${batch})
        and l.next_attempt_at is null`.execute(tx);
    return Number(deliveries.numAffectedRows ?? 0) + Number(lanes.numAffectedRows ?? 0);
  }

  /** Forgets a deleted webhook's deliveries and lanes. */
  async deleteOfWebhook(appId: string, webhookId: string, tx: Executor = this.db): Promise<void> {
    await tx.deleteFrom('webhook_lanes').where('app_id', '=', appId).where('webhook_id', '=', webhookId).execute();
    await tx.deleteFrom('webhook_deliveries').where('app_id', '=', appId).where('webhook_id', '=', webhookId).execute();
  }
}

function selectDeliveries(tx: Executor) {
  return tx
    .selectFrom('webhook_deliveries')
    .select(['id', 'webhook_id', 'event_id', 'trigger', 'status', 'attempts', 'last_status', 'last_error', 'last_attempt_at', 'created_at']);
}

function deliveryRow(row: DeliveryRow): DeliveryRow {
  // bigint columns arrive as strings from pg and as numbers from PGlite.
  return extended(row, { id: String(row.id), event_id: String(row.event_id) });
}
