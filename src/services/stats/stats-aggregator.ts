import { silentLogger, type Logger } from '../../domain/context.js';
import type { EventsRepository } from '../../repositories/events.repository.js';
import type { StatsRepository } from '../../repositories/stats/stats.repository.js';
import type { EventFeed } from '../event-feed.js';
import { fanOutRuns, type FanOutRuns } from '../events/fan-out-runs.js';

/** Events of one app read by one step. */
const PER_APP = 5_000;
/** Rows deleted by one statement of the cleanup. */
const CLEANUP_BATCH = 1_000;
/** How often counts older than the retention are deleted. */
const CLEANUP_EVERY_MS = 3_600_000;
/** How long counts are kept: past a year, so a range a year back still answers. */
export const STATS_RETENTION_MS = 400 * 86_400_000;

/**
 * The event log counted into usage statistics (docs/stats.md): each time the feed's safe id
 * moves (no event at or below it can still appear), the events up to it are added to the
 * counts, step after step while an app has more, after a short gather so that a busy log makes
 * a step per gather, not per poll. Every process runs it; each app's stretch is taken by one
 * (its cursor's row lock), and its counts commit with its cursor, so an event is counted once
 * whoever reads it, and a step that fails counts nothing and is read again. The counts outlive
 * the log's retention; counts older than STATS_RETENTION_MS are deleted every hour.
 */
export class StatsAggregator {
  private runs: FanOutRuns;
  private stopped = true;
  private listening = false;
  /** The safe id the last completed run reached. */
  private done = -1n;
  private readonly waiters: Array<{ upTo: bigint; resolve: () => void }> = [];
  private cleanupTimer: NodeJS.Timeout | undefined;
  private cleaning: Promise<void> | undefined;
  private log: Logger = silentLogger;

  constructor(
    private readonly deps: {
      stats: StatsRepository;
      /** Where the log ends (settled). */
      events: EventsRepository;
      feed: EventFeed;
      /** How often the feed polls while the log moves (it polls from the aggregation's start). */
      feedPollMs: number;
      /** How long new events wait for others before a step. */
      gatherMs: number;
      retentionMs?: number;
      now?: () => number;
    },
  ) {
    this.runs = fanOutRuns(() => this.run(), {
      gatherMs: deps.gatherMs,
      stopped: () => this.stopped,
      failed: (error) => this.log.warn({ err: error }, 'counting the event log into statistics failed; it is tried again with the next events'),
    });
  }

  /** Starts counting (the server does; tests that read statistics do), and the feed if it was not polling. */
  start(log: Logger): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.log = log;
    if (!this.listening) {
      this.listening = true;
      this.deps.feed.onAdvance(() => this.runs.soon());
    }
    this.deps.feed.start(this.deps.feedPollMs, log);
    this.runs.now();
    const cleanup = () => {
      this.cleaning ??= this.cleanup()
        .catch((error: unknown) => this.log.warn({ err: error }, 'the statistics cleanup failed'))
        .finally(() => (this.cleaning = undefined));
    };
    cleanup();
    this.cleanupTimer = setInterval(cleanup, CLEANUP_EVERY_MS);
    this.cleanupTimer.unref();
  }

  /** Stops: a step under way ends, and no other begins. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.cleanupTimer);
    this.runs.cancel();
    await this.runs.idle();
    await this.cleaning;
    for (const waiter of this.waiters.splice(0)) waiter.resolve();
  }

  /**
   * Resolves once this process has counted the log as it stands now (every event committed
   * before the call), or once it stops. An app's stretch that another process holds is counted
   * by that one.
   */
  async settled(): Promise<void> {
    if (this.stopped) return;
    const upTo = BigInt((await this.deps.events.position()).lastId);
    if (this.done >= upTo) return;
    await new Promise<void>((resolve) => {
      this.waiters.push({ upTo, resolve });
      this.runs.now();
    });
  }

  /** Counts the events up to the safe id, step after step while an app has more. */
  private async run(): Promise<void> {
    const safe = this.deps.feed.safeId;
    if (safe === undefined) return;
    for (;;) {
      const step = await this.deps.stats.aggregate(String(safe), PER_APP);
      if (!step.more || this.stopped) break;
    }
    if (safe > this.done) this.done = safe;
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const waiter = this.waiters[i]!;
      if (waiter.upTo <= this.done) {
        this.waiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }

  /** Deletes the counts older than the retention, app by app, a batch at a time. */
  private async cleanup(): Promise<void> {
    const cutoff = new Date((this.deps.now ?? Date.now)() - (this.deps.retentionMs ?? STATS_RETENTION_MS));
    for (const appId of await this.deps.stats.apps()) {
      while (!this.stopped && (await this.deps.stats.deleteBefore(appId, cutoff, CLEANUP_BATCH)) > 0);
      if (this.stopped) return;
    }
  }
}
