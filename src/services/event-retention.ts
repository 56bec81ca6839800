import type { Logger } from '../domain/context.js';
import type { EventsRepository } from '../repositories/events.repository.js';

/** Events deleted by one statement of the cleanup: small, so it never holds many row locks or a long transaction. */
const BATCH = 1_000;

/**
 * The event log's retention (docs/events.md): events older than the retention are deleted, a
 * small batch at a time, by a job that the server runs every minute.
 */
export class EventRetention {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;

  constructor(private readonly deps: { events: EventsRepository; retentionMs: number; now?: () => number }) {}

  /** Deletes every event older than the retention, app by app, batch after batch; answers how many. */
  async sweep(): Promise<number> {
    const cutoff = new Date((this.deps.now ?? Date.now)() - this.deps.retentionMs);
    let total = 0;
    for (const appId of await this.deps.events.appsWithEvents()) {
      for (;;) {
        const deleted = await this.deps.events.deleteOlderThan(appId, cutoff, BATCH);
        total += deleted;
        if (this.stopped) return total;
        if (deleted < BATCH) break;
        // Other work gets the database between batches.
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    return total;
  }

  /** Runs the sweep now and then every `intervalMs` (a failure is logged and tried again next time). */
  start(intervalMs: number, log: Logger): void {
    this.stopped = false;
    const run = () => {
      this.running ??= this.sweep()
        .then((deleted) => deleted > 0 && log.info({ deleted }, 'deleted events older than the retention'))
        .catch((error: unknown) => log.warn({ err: error }, 'the event cleanup failed'))
        .finally(() => (this.running = undefined));
    };
    run();
    this.timer = setInterval(run, intervalMs);
    this.timer.unref();
  }

  /** Stops the job: a sweep in progress ends after its current batch. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
