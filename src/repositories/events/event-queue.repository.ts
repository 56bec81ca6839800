import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../db/transaction.js';
import type { EventRow } from '../events.repository.js';
import { logStep } from './log-step.js';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/**
 * What makes a consumer of the event log (docs/events.md, "Consumers"), in SQL: its name, the
 * targets that take deliveries now, and its fan-out. Written by the consumer's repository; the
 * queue's statements are the same for every consumer.
 */
export interface ConsumerQueue {
  /** The `consumer` of its rows. */
  name: string;
  /** `(app_id, target)` of the targets whose lanes may be claimed now (e.g. enabled webhooks). */
  targets: RawBuilder<unknown>;
  /**
   * The fan-out: from the events `batch b` (app_id, id, trigger, conversation_id, message_id, created_at),
   * the deliveries to make, as rows of (app_id, consumer, target, event_id, item, trigger, lane),
   * in (app_id, target, event_id) order. It may lock what a delivery must not outlive.
   */
  expand: RawBuilder<unknown>;
  /**
   * When a lane that gets new deliveries falls due: an expression over the lane's row `l`
   * (app_id, target, lane); now() when not given. A later time makes the lane wait (e-mail and
   * SMS digests wait for more messages). Used when the fan-out makes an idle lane due, and when
   * a round ends with deliveries that arrived during it.
   */
  due?: RawBuilder<unknown>;
}

/** A lane taken by one process's claim: a target's pending deliveries of one lane. */
export interface ClaimedLane {
  app_id: string;
  target: string;
  lane: string;
}

/** A pending delivery with the event it delivers (null when retention deleted it meanwhile). */
export interface PendingDelivery {
  id: string;
  event_id: string;
  item: string;
  trigger: string;
  attempts: number;
  first_attempt_at: Date | null;
  event: EventRow | null;
}

/** What one attempt (or the decision not to make one) did to a delivery. */
export interface AttemptOutcome {
  id: string;
  status: DeliveryStatus;
  /** Whether an attempt was made (counted in `attempts`, and kept in the attempt log). */
  attempted: boolean;
  at: Date;
  /** How long the attempt took. */
  durationMs: number;
  httpStatus: number | null;
  error: string | null;
}

/** A delivery as a delivery log shows it. */
export interface DeliveryRow {
  id: string;
  target: string;
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
 * What the event log owes one consumer's targets: the fan-out of events to deliveries, the
 * lanes that keep each lane's deliveries in order, claims on them, and the delivery and
 * attempt logs. The tables and their invariants are described in migration 0019.
 */
export class EventQueueRepository {
  constructor(
    private readonly db: Executor,
    private readonly queue: ConsumerQueue,
  ) {}

  get consumer(): string {
    return this.queue.name;
  }

  /** When a lane with new deliveries falls due (ConsumerQueue.due). */
  private get due(): RawBuilder<unknown> {
    return this.queue.due ?? sql`now()`;
  }

  /**
   * Starts the app's fan-out at the end of its log, unless it has started: a new target gets
   * the events of changes made after it exists, not the log's past.
   */
  async startCursor(appId: string, tx: Executor = this.db): Promise<void> {
    await sql`
      insert into event_cursors (app_id, consumer, event_id)
      select ${appId}, ${this.queue.name}, coalesce((select max(id) from events where app_id = ${appId}), 0)
      on conflict (app_id, consumer) do nothing`.execute(tx);
  }

  /**
   * One step of the fan-out, in one statement: the cursors of the apps that no other process is
   * moving, each app's next events up to `safeId` (at most `perApp`), the deliveries the
   * consumer's expand makes of them, their lanes made due, and the cursors moved past what was
   * read. Answers how many deliveries it made; `more` when some app had more events than `perApp`.
   */
  async fanOut(safeId: string, perApp: number, tx: Executor = this.db): Promise<{ deliveries: number; more: boolean }> {
    const consumer = this.queue.name;
    const result = await sql<{ deliveries: string; more: boolean }>`
      with ${logStep({ cursors: 'event_cursors', scope: sql`consumer = ${consumer}`, safeId, perApp })},
      made as (
        insert into event_deliveries (app_id, consumer, target, event_id, item, trigger, lane)
        ${this.queue.expand}
        on conflict do nothing
        returning app_id, target, lane
      ),
      lanes as (
        insert into event_lanes (app_id, consumer, target, lane, next_attempt_at)
        -- In key order, as a round's finish locks them.
        select distinct l.app_id, ${consumer}, l.target, l.lane, ${this.due} from made l order by l.app_id, l.target, l.lane
        on conflict (app_id, consumer, target, lane)
        do update set next_attempt_at = coalesce(event_lanes.next_attempt_at, excluded.next_attempt_at)
        returning app_id
      )
      -- (moved and lanes run whether or not they are read: data-modifying CTEs always do.)
      select (select count(*) from made)::text as deliveries,
             exists (select 1 from counted where n >= ${perApp}) as more`.execute(tx);
    const row = result.rows[0]!;
    return { deliveries: Number(row.deliveries), more: row.more };
  }

  /**
   * Takes due lanes of the consumer's targets for this process (`claim`: the key of the lock it
   * holds, see SessionLock): of each target at most its share less what it has in flight here
   * (`inFlight`: app id, target, lanes, share; a target not listed has `perTarget` and none in
   * flight), the targets with the least in flight first, and `total` in all. A taken lane is due
   * again when the lease ends, or once its claimant is gone (releaseClaimsOfGone).
   */
  async claimLanes(
    options: { claim: bigint; perTarget: number; total: number; leaseMs: number; inFlight: ReadonlyArray<readonly [string, string, number, number]> },
    tx: Executor = this.db,
  ): Promise<ClaimedLane[]> {
    if (options.total <= 0) return [];
    const apps = options.inFlight.map(([appId]) => appId);
    const targets = options.inFlight.map(([, target]) => target);
    const counts = options.inFlight.map(([, , n]) => n);
    const shares = options.inFlight.map(([, , , share]) => share);
    const consumer = this.queue.name;
    const result = await sql<ClaimedLane>`
      with busy as (
        select * from unnest(${apps}::text[], ${targets}::text[], ${counts}::int[], ${shares}::int[]) as b (app_id, target, n, share)
      ),
      due as (
        select l.app_id, l.target, l.lane
        from (${this.queue.targets}) w
        left join busy b on b.app_id = w.app_id and b.target = w.target
        cross join lateral (
          select l.app_id, l.target, l.lane from event_lanes l
          where l.app_id = w.app_id and l.consumer = ${consumer} and l.target = w.target and l.next_attempt_at <= now()
          order by l.next_attempt_at limit greatest(0, coalesce(b.share, ${options.perTarget}) - coalesce(b.n, 0))
          for update skip locked) l
        order by coalesce(b.n, 0)
        limit ${options.total}
      )
      update event_lanes l set next_attempt_at = now() + ${options.leaseMs} * interval '1 millisecond', claim = ${options.claim.toString()}::bigint
      from due where l.app_id = due.app_id and l.consumer = ${consumer} and l.target = due.target and l.lane = due.lane
      returning l.app_id, l.target, l.lane`.execute(tx);
    return result.rows;
  }

  /**
   * Makes due now the lanes claimed by processes that are gone: no session of this database
   * holds the advisory lock their claim names (the process died, or lost its connection). A
   * lane whose claimant lives keeps its lease. Answers how many lanes it gave back.
   */
  async releaseClaimsOfGone(tx: Executor = this.db): Promise<number> {
    const result = await sql`
      update event_lanes l set claim = null, next_attempt_at = now()
      where l.claim is not null and l.consumer = ${this.queue.name}
        and l.claim not in (
          select (k.classid::bigint << 32) | k.objid::bigint from pg_locks k
          where k.locktype = 'advisory' and k.granted and k.objsubid = 1
            and k.database = (select oid from pg_database where datname = current_database()))`.execute(tx);
    return Number(result.numAffectedRows ?? 0);
  }

  /**
   * The pending deliveries of these lanes of one target, each lane's in event order (at most
   * `perLane` of each), with their events: one statement for a round of many lanes.
   */
  async pendingOfLanes(appId: string, target: string, lanes: readonly string[], perLane: number, tx: Executor = this.db): Promise<Map<string, PendingDelivery[]>> {
    const result = await sql<{
      lane: string;
      id: string;
      event_id: string;
      item: string;
      trigger: string;
      attempts: number;
      first_attempt_at: Date | null;
      e_id: string | null;
      conversation_id: string | null;
      message_id: string | null;
      data: Record<string, unknown> | null;
      e_created_at: Date | null;
    }>`
      select l.lane, d.*
      from unnest(${[...lanes]}::text[]) as l (lane)
      cross join lateral (
        select d.id::text, d.event_id::text, d.item, d.trigger, d.attempts, d.first_attempt_at,
               e.id::text as e_id, e.conversation_id, e.message_id::text, e.data, e.created_at as e_created_at
        from event_deliveries d left join events e on e.app_id = d.app_id and e.id = d.event_id
        where d.app_id = ${appId} and d.consumer = ${this.queue.name} and d.target = ${target} and d.lane = l.lane and d.status = 'pending'
        order by d.event_id, d.item limit ${perLane}) d
      -- (event_id is text here: ordered as the number it is)
      order by l.lane, d.event_id::bigint, d.item`.execute(tx);
    const byLane = new Map<string, PendingDelivery[]>();
    for (const row of result.rows) {
      const delivery: PendingDelivery = {
        id: row.id,
        event_id: row.event_id,
        item: row.item,
        trigger: row.trigger,
        attempts: row.attempts,
        first_attempt_at: row.first_attempt_at,
        event:
          row.e_id === null
            ? null
            : {
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
   * Records what the attempts of a round of lanes (of one target) did, each attempt in the
   * attempt log, and gives back the lanes still claimed by `claim` (one whose lease ended may be
   * another process's now): each due again at its `retryAt` (its head waits to be retried), at
   * once (the queue's `due`) when deliveries are still pending, else idle. Pending ones are looked for after `after`
   * (the round settled or read everything up to it): the partial index's entries of the
   * deliveries settled before are dead until vacuumed, and reading through them made this
   * transaction, and the safe id of every stream and webhook waiting on it, take ~200 ms under
   * load. The lanes' rows are locked (in key order, as the fan-out locks them) before the pending
   * ones are looked for, so a delivery the fan-out adds meanwhile is seen (or makes the lane due).
   */
  async finishRound(
    appId: string,
    target: string,
    lanes: readonly string[],
    claim: bigint,
    outcomes: readonly AttemptOutcome[],
    retryAt: ReadonlyMap<string, Date>,
    /** Per lane, the last event id the round settled or read: pending ones are looked for after it. */
    after: ReadonlyMap<string, string>,
    tx: Executor,
  ): Promise<void> {
    const consumer = this.queue.name;
    if (outcomes.length > 0) {
      const ids = outcomes.map((o) => o.id);
      const records = JSON.stringify(
        outcomes.map((o) => ({ id: o.id, status: o.status, attempted: o.attempted, at: o.at.toISOString(), ms: Math.round(o.durationMs), httpStatus: o.httpStatus, error: o.error })),
      );
      await sql`
        with r as (
          select * from json_to_recordset(${records}::json) as r (id bigint, status text, attempted boolean, at timestamptz, ms int, "httpStatus" int, error text)
        ),
        settled as (
          update event_deliveries d
          set status = r.status, attempts = d.attempts + case when r.attempted then 1 else 0 end,
              first_attempt_at = case when r.attempted then coalesce(d.first_attempt_at, r.at) else d.first_attempt_at end,
              last_attempt_at = case when r.attempted then r.at else d.last_attempt_at end,
              last_status = case when r.attempted then r."httpStatus" else d.last_status end,
              last_error = r.error
          from r
          where d.app_id = ${appId} and d.id = any(${ids}::bigint[]) and d.id = r.id and d.status = 'pending'
          returning d.id
        )
        insert into event_delivery_attempts (app_id, delivery_id, at, duration_ms, status, error)
        select ${appId}, r.id, r.at, r.ms, r."httpStatus", r.error from r
        where r.attempted and r.id in (select id from settled)
        order by r.at`.execute(tx);
    }
    const mine = await sql<{ lane: string }>`
      select lane from event_lanes
      where app_id = ${appId} and consumer = ${consumer} and target = ${target} and lane = any(${[...lanes]}::text[]) and claim = ${claim.toString()}::bigint
      order by lane for update`.execute(tx);
    if (mine.rows.length === 0) return;
    const held = mine.rows.map((row) => row.lane);
    const retries = held.map((lane) => retryAt.get(lane)?.toISOString() ?? null);
    const afters = held.map((lane) => after.get(lane) ?? '0');
    await sql`
      update event_lanes l
      set claim = null,
          next_attempt_at = case
            when r.retry_at is not null then r.retry_at
            when exists (select 1 from event_deliveries d
                         where d.app_id = l.app_id and d.consumer = l.consumer and d.target = l.target and d.lane = l.lane and d.status = 'pending'
                           and d.event_id > r.after) then ${this.due}
            else null end
      from unnest(${held}::text[], ${retries}::timestamptz[], ${afters}::bigint[]) as r (lane, retry_at, after)
      where l.app_id = ${appId} and l.consumer = ${consumer} and l.target = ${target} and l.lane = r.lane`.execute(tx);
  }

  /**
   * Refreshes the planner's statistics of the queue's tables (see TableStatistics) and answers
   * how many deliveries the queue holds, as the analysis estimates it.
   */
  async analyze(tx: Executor = this.db): Promise<number> {
    await sql`analyze event_deliveries, event_lanes`.execute(tx);
    const result = await sql<{ n: number }>`select reltuples::float8 as n from pg_class where oid = 'event_deliveries'::regclass`.execute(tx);
    return Math.max(0, Number(result.rows[0]?.n ?? 0));
  }

  /** Whether any app's events are fanned out to this consumer (it has, or had, a target). */
  async anyCursor(tx: Executor = this.db): Promise<boolean> {
    return (await tx.selectFrom('event_cursors').select('app_id').where('consumer', '=', this.queue.name).limit(1).execute()).length > 0;
  }

  /** The apps whose events are fanned out to this consumer. */
  async appsWithCursors(tx: Executor = this.db): Promise<string[]> {
    return (await tx.selectFrom('event_cursors').select('app_id').where('consumer', '=', this.queue.name).orderBy('app_id').execute()).map((row) => row.app_id);
  }

  /**
   * Drops what the app's targets that are gone (no longer among the queue's targets: a channel
   * whose last provider was removed or disabled) still owe: their pending deliveries, with their
   * attempts, and their lanes. Settled deliveries stay in the delivery log. Run in the
   * transaction that removes the target, so a provider added back later does not send
   * notifications of long ago.
   */
  async dropGoneTargets(appId: string, tx: Executor = this.db): Promise<void> {
    const consumer = this.queue.name;
    const live = sql`select t.target from (${this.queue.targets}) t where t.app_id = ${appId}`;
    await sql`delete from event_lanes where app_id = ${appId} and consumer = ${consumer} and target not in (${live})`.execute(tx);
    await sql`
      with gone as (
        delete from event_deliveries
        where app_id = ${appId} and consumer = ${consumer} and status = 'pending' and target not in (${live})
        returning id
      )
      delete from event_delivery_attempts a where a.app_id = ${appId} and a.delivery_id in (select id from gone)`.execute(tx);
  }

  /** Forgets a removed target's deliveries, their attempts, and its lanes. */
  async deleteOfTarget(appId: string, target: string, tx: Executor = this.db): Promise<void> {
    const consumer = this.queue.name;
    await tx.deleteFrom('event_lanes').where('app_id', '=', appId).where('consumer', '=', consumer).where('target', '=', target).execute();
    await sql`
      with gone as (
        delete from event_deliveries where app_id = ${appId} and consumer = ${consumer} and target = ${target} returning id
      )
      delete from event_delivery_attempts a where a.app_id = ${appId} and a.delivery_id in (select id from gone)`.execute(tx);
  }
}
