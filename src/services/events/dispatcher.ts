import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { SessionLock } from '../../db/session-lock.js';
import type { DB } from '../../db/schema.js';
import type { TableStatistics } from '../../db/table-statistics.js';
import { withTransaction } from '../../db/transaction.js';
import { silentLogger, type Logger } from '../../domain/context.js';
import { nextRetryAt } from '../../domain/webhooks.js';
import type { AttemptOutcome } from '../../repositories/events/event-queue.repository.js';
import type { EventFeed } from '../event-feed.js';
import type { EventPayloads, RenderedEvent } from '../event-payloads.js';
import type { EventConsumer } from './consumer.js';
import { fanOutRuns, type FanOutRuns } from './fan-out-runs.js';
import { oneAtATime } from './one-at-a-time.js';

/** How much one process does at once, for all its consumers (docs/events.md). */
export interface DispatcherLimits {
  /** Lanes being sent at once. */
  lanes: number;
  /**
   * How often due lanes are looked for besides when work arrives, a round ends or one of this
   * process's retries falls due: for other processes' expired claims and retries, and lanes a
   * claim skipped while another statement held them.
   */
  claimEveryMs: number;
  /** How often claims of processes that are gone (their lock's session ended) are given back. */
  takeoverEveryMs: number;
  /** How often a process whose consumers have no target in the deployment looks whether one exists. */
  targetCheckEveryMs: number;
  /** How often the event log is polled for the safe id. */
  feedPollMs: number;
}

/** One consumer's state in this process. */
interface Lanes {
  consumer: EventConsumer;
  /** Lanes in flight here, per target (keyed by app id and target). */
  busy: Map<string, { appId: string; target: string; lanes: number }>;
  /** Targets whose last round here, within answeringForMs, had every attempt succeed within quickAnswerMs, with when it ended. */
  answering: Map<string, { appId: string; target: string; at: number }>;
  fanOut: FanOutRuns;
  claimRound: ReturnType<typeof oneAtATime>;
  /** Whether the deployment has (or had) a target of this consumer: its events are fanned out. */
  started: boolean;
  counts: ConsumerCounts;
}

/** What one consumer's deliveries did in this process since it started (for metrics). */
export interface ConsumerCounts {
  /** Deliveries its fan-out made. */
  fannedOut: number;
  /** Attempts, by what they got. */
  delivered: number;
  retried: number;
  failed: number;
  /** Deliveries failed without an attempt (their event or its message gone). */
  dropped: number;
  /** Lanes of processes that were gone, given back by this one. */
  takenOver: number;
  /** Lanes being sent here now. */
  lanesInFlight: number;
}

/**
 * Delivers the event log to its consumers (docs/events.md, "Consumers"): webhooks, notifications.
 * Each time the feed's safe id moves, each consumer's fan-out turns the new events into
 * deliveries (one process per app's stretch, through the cursor's row lock). Then due lanes are
 * claimed with a lease in this process's name (the key of an advisory lock it holds on a session
 * of its own), and each lane's deliveries are attempted in event order: a failure to retry holds
 * the lane until its retry time, so a lane's order is kept; a failure without (or past the
 * horizon) fails the delivery and the lane goes on. Another process takes over a lane whose
 * claimant's lock is gone (within takeoverEveryMs), or whose lease ended.
 */
export class EventDispatcher {
  private lock: SessionLock | undefined;
  private readonly consumers: Lanes[];
  private lanesInFlight = 0;
  private readonly running = new Set<Promise<void>>();
  private safe: bigint | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private listening = false;
  private feeding = false;
  private lastTargetCheck = 0;
  private lastTakeover = 0;
  private log: Logger = silentLogger;

  constructor(
    private readonly deps: {
      /** The consumers' own connections (Database.consumerDb). */
      db: Kysely<DB>;
      /** Takes the session lock this process's claims name (Database.holdLock). */
      holdLock: (key: bigint, log: Logger) => Promise<SessionLock>;
      feed: EventFeed;
      payloads: EventPayloads;
      consumers: EventConsumer[];
      limits: DispatcherLimits;
      /** Told of every delivery a fan-out makes: keeps the queue's statistics current. */
      statistics?: TableStatistics;
    },
  ) {
    this.consumers = deps.consumers.map((consumer) => {
      const lanes: Lanes = {
        consumer,
        busy: new Map(),
        answering: new Map(),
        started: false,
        counts: { fannedOut: 0, delivered: 0, retried: 0, failed: 0, dropped: 0, takenOver: 0, lanesInFlight: 0 },
        fanOut: fanOutRuns(() => this.fanOutOf(lanes), {
          gatherMs: consumer.limits.gatherMs,
          spareAfterMs: consumer.limits.spareFanOutAfterMs,
          stopped: () => this.stopped,
          failed: (error) => this.log.warn({ err: error, consumer: consumer.queue.consumer }, 'a fan-out of the event log failed; it is tried again with the next events'),
        }),
        claimRound: oneAtATime(
          () => this.claimOf(lanes),
          () => this.stopped,
          (error) => this.log.warn({ err: error, consumer: consumer.queue.consumer }, 'claiming deliveries failed'),
        ),
      };
      return lanes;
    });
  }

  /** What each consumer did here, and the feed's safe id: counters for metrics (docs/events.md). */
  stats(): { safeId: string | null; lanesInFlight: number; consumers: Record<string, ConsumerCounts> } {
    return {
      safeId: this.safe === undefined ? null : String(this.safe),
      lanesInFlight: this.lanesInFlight,
      consumers: Object.fromEntries(this.consumers.map((lanes) => [lanes.consumer.queue.consumer, { ...lanes.counts }])),
    };
  }

  /** Starts delivering (the server does; tests that deliver do). */
  async start(log: Logger): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    this.log = log;
    // A key no other process draws (62 bits: positive as PostgreSQL's pg_locks shows it).
    this.lock ??= await this.deps.holdLock(BigInt.asUintN(62, crypto.randomBytes(8).readBigUInt64BE()), log);
    if (!this.listening) {
      this.listening = true;
      this.deps.feed.onAdvance((safe) => {
        this.safe = safe;
        for (const lanes of this.consumers) if (lanes.started) lanes.fanOut.soon();
      });
    }
    // Nothing is read while the deployment has never had a target (an idle server stays idle);
    // once one exists, the fan-out starts from its app's cursor, so nothing is missed meanwhile.
    this.timer = setInterval(() => void this.tick(), this.deps.limits.claimEveryMs);
    this.timer.unref();
    void this.tick();
  }

  /** The periodic look: consumers with targets started (looked for every second), dead claims taken over, due lanes claimed. */
  private async tick(): Promise<void> {
    const now = Date.now();
    if (this.consumers.some((lanes) => !lanes.started) && now - this.lastTargetCheck >= this.deps.limits.targetCheckEveryMs) {
      this.lastTargetCheck = now;
      for (const lanes of this.consumers) {
        if (lanes.started || this.stopped) continue;
        try {
          lanes.started = await lanes.consumer.queue.anyCursor();
        } catch (error) {
          this.log.warn({ err: error }, 'the event dispatcher could not read the database');
        }
        if (lanes.started) lanes.fanOut.now();
      }
    }
    if (this.stopped || !this.consumers.some((lanes) => lanes.started)) return;
    if (!this.feeding) {
      this.feeding = true;
      this.deps.feed.start(this.deps.limits.feedPollMs, this.log);
    }
    if (now - this.lastTakeover >= this.deps.limits.takeoverEveryMs) {
      this.lastTakeover = now;
      await this.takeOver();
    }
    for (const lanes of this.consumers) if (lanes.started) lanes.claimRound();
  }

  /** Gives back the lanes whose claimant is gone, while this process's own lock stands (else it might be its own). */
  private async takeOver(): Promise<void> {
    if (!this.lock?.held()) return;
    for (const lanes of this.consumers) {
      if (!lanes.started) continue;
      try {
        const released = await lanes.consumer.queue.releaseClaimsOfGone();
        lanes.counts.takenOver += released;
        if (released > 0) this.log.info({ consumer: lanes.consumer.queue.consumer, lanes: released }, 'took over the lanes of a process that is gone');
      } catch (error) {
        this.log.warn({ err: error }, 'could not look for the claims of processes that are gone');
      }
    }
  }

  /** Stops: no new work; attempts in flight end (within their timeout) and their lanes are given back. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    for (const lanes of this.consumers) {
      lanes.fanOut.cancel();
      await lanes.fanOut.idle();
      await lanes.claimRound.idle();
    }
    await Promise.all(this.running);
    await this.deps.statistics?.idle();
    for (const lanes of this.consumers) lanes.consumer.close();
    await this.lock?.release();
    this.lock = undefined;
  }

  /** Turns the events up to the safe id into the consumer's deliveries, step after step while an app has more. */
  private async fanOutOf(lanes: Lanes): Promise<void> {
    const safe = this.safe;
    if (safe === undefined) return;
    for (;;) {
      const step = await lanes.consumer.queue.fanOut(String(safe), lanes.consumer.limits.fanOutPerApp, this.deps.db);
      if (step.deliveries > 0) {
        lanes.counts.fannedOut += step.deliveries;
        lanes.claimRound();
        this.deps.statistics?.noteWritten(step.deliveries, this.log);
      }
      if (!step.more || this.stopped) return;
    }
  }

  /** Claims the consumer's due lanes while this process has room (and its lock), and sends each. */
  private async claimOf(lanes: Lanes): Promise<void> {
    const room = this.deps.limits.lanes - this.lanesInFlight;
    if (room <= 0 || !this.lock?.held()) return;
    const { limits } = lanes.consumer;
    // Each target's share: larger while it answers, less what it has in flight.
    const shares = new Map<string, { appId: string; target: string; lanes: number; share: number }>();
    const since = Date.now() - limits.answeringForMs;
    for (const [key, { appId, target, at }] of lanes.answering) {
      if (at < since) lanes.answering.delete(key);
      else shares.set(key, { appId, target, lanes: 0, share: limits.lanesPerAnsweringTarget });
    }
    for (const [key, { appId, target, lanes: n }] of lanes.busy) {
      shares.set(key, { appId, target, lanes: n, share: shares.get(key)?.share ?? limits.lanesPerTarget });
    }
    const claimed = await lanes.consumer.queue.claimLanes(
      {
        claim: this.lock.key,
        perTarget: limits.lanesPerTarget,
        total: room,
        leaseMs: this.leaseMs(lanes),
        inFlight: [...shares.values()].map((s) => [s.appId, s.target, s.lanes, s.share] as const),
      },
      this.deps.db,
    );
    // A round per target: its lanes' deliveries read, rendered and recorded together.
    const byTarget = new Map<string, { appId: string; target: string; lanes: string[] }>();
    for (const lane of claimed) {
      const key = targetKey(lane.app_id, lane.target);
      const group = byTarget.get(key);
      if (group) group.lanes.push(lane.lane);
      else byTarget.set(key, { appId: lane.app_id, target: lane.target, lanes: [lane.lane] });
    }
    for (const group of byTarget.values()) this.runRound(lanes, group.appId, group.target, group.lanes);
  }

  /** A claim outlives a lane's round: the round stops starting attempts before the lease's last two timeouts. */
  private leaseMs(lanes: Lanes): number {
    return Math.max(4 * lanes.consumer.attemptTimeoutMs, 2_000);
  }

  private runRound(lanes: Lanes, appId: string, target: string, claimed: string[]): void {
    const key = targetKey(appId, target);
    const busy = lanes.busy.get(key) ?? { appId, target, lanes: 0 };
    busy.lanes += claimed.length;
    lanes.busy.set(key, busy);
    this.lanesInFlight += claimed.length;
    lanes.counts.lanesInFlight += claimed.length;
    const run: Promise<void> = this.sendRound(lanes, appId, target, claimed)
      .catch((error: unknown) => this.log.warn({ err: error, consumer: lanes.consumer.queue.consumer, target }, 'a delivery round failed; its lanes are retried when their claim ends'))
      .finally(() => {
        busy.lanes -= claimed.length;
        if (busy.lanes <= 0) lanes.busy.delete(key);
        this.lanesInFlight -= claimed.length;
        lanes.counts.lanesInFlight -= claimed.length;
        this.running.delete(run);
        lanes.claimRound();
      });
    this.running.add(run);
  }

  /**
   * One round of a target's lanes: their pending deliveries read and rendered together, each
   * lane's attempted in order (the lanes side by side) until one waits for a retry, the budget
   * ends or the dispatcher stops; then every outcome recorded and the lanes given back in one
   * transaction.
   */
  private async sendRound(lanes: Lanes, appId: string, target: string, claimed: string[]): Promise<void> {
    const { consumer } = lanes;
    const started = Date.now();
    const leaseMs = this.leaseMs(lanes);
    const outcomes: AttemptOutcome[] = [];
    const retryAt = new Map<string, Date>();
    // Per lane, the last event settled (or, when a lane stopped early, the one before the first left).
    const after = new Map<string, string>();
    const key = targetKey(appId, target);
    const open = await consumer.open(appId, target);
    // Whether every attempt of this round succeeded within quickAnswerMs (see `answering`).
    let attempted = 0;
    let answered = true;
    if (!open) lanes.answering.delete(key);
    else {
      const pending = await consumer.queue.pendingOfLanes(appId, target, claimed, consumer.limits.perRound, this.deps.db);
      const events = [...pending.values()].flatMap((list) => list.flatMap((p) => (p.event ? [p.event] : [])));
      const rendered = new Map<string, RenderedEvent>();
      for (const event of await this.deps.payloads.render(events)) rendered.set(event.id, event);
      if (open.prepare) {
        const items = [...pending.values()].flatMap((list) =>
          list.flatMap((delivery) => {
            const event = rendered.get(delivery.event_id);
            return event ? [{ delivery, event }] : [];
          }),
        );
        await open.prepare(items);
      }
      await Promise.all(
        [...pending].map(async ([lane, deliveries]) => {
          for (const delivery of deliveries) {
            if (this.stopped || Date.now() - started > leaseMs - 2 * consumer.attemptTimeoutMs) return;
            // Settled below, or left pending for a retry: either way nothing before it is pending.
            after.set(lane, String(BigInt(delivery.event_id) - 1n));
            const event = rendered.get(delivery.event_id);
            const at = new Date();
            if (!event) {
              const error = delivery.event ? "the event's message no longer exists" : 'the event is no longer in the log (retention)';
              outcomes.push({ id: delivery.id, status: 'failed', attempted: false, at, durationMs: 0, httpStatus: null, error });
              lanes.counts.dropped++;
              after.set(lane, delivery.event_id);
              continue;
            }
            const result = await open.attempt(delivery, event);
            const durationMs = Date.now() - at.getTime();
            attempted++;
            if (!result.ok || durationMs > consumer.limits.quickAnswerMs) answered = false;
            let again: Date | undefined;
            if (!result.ok && result.retry) {
              again = nextRetryAt(consumer.retry, delivery.attempts + 1, delivery.first_attempt_at ?? at, new Date());
              if (again && result.retryAfterMs !== undefined) again = new Date(Math.max(again.getTime(), Date.now() + result.retryAfterMs));
            }
            const status = result.ok ? 'delivered' : again ? 'pending' : 'failed';
            if (status === 'delivered') lanes.counts.delivered++;
            else if (status === 'pending') lanes.counts.retried++;
            else lanes.counts.failed++;
            outcomes.push({ id: delivery.id, status, attempted: true, at, durationMs, httpStatus: result.status, error: result.error });
            if (again) {
              retryAt.set(lane, again);
              return;
            }
            after.set(lane, delivery.event_id);
          }
        }),
      );
      if (open.finish) {
        try {
          await open.finish();
        } catch (error) {
          this.log.warn({ err: error, consumer: consumer.queue.consumer, target }, "a delivery round's finish failed; its outcomes are recorded");
        }
      }
    }
    if (attempted > 0) {
      if (answered) lanes.answering.set(key, { appId, target, at: Date.now() });
      else lanes.answering.delete(key);
    }
    await withTransaction(this.deps.db, 'delivery_round', (tx) => consumer.queue.finishRound(appId, target, claimed, this.lock!.key, outcomes, retryAt, after, tx), this.log);
    // Its lanes that wait for a retry are looked for again when the first falls due.
    if (retryAt.size > 0) {
      const first = Math.min(...[...retryAt.values()].map((at) => at.getTime()));
      setTimeout(() => lanes.claimRound(), Math.max(0, first - Date.now()) + 5).unref();
    }
  }
}

function targetKey(appId: string, target: string): string {
  return `${appId}\u0000${target}`;
}
