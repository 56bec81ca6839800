import type { Logger } from '../domain/context.js';
import type { EventsRepository } from '../repositories/events.repository.js';
import type { WebhookDeliveriesRepository } from '../repositories/webhook-deliveries.repository.js';

/** A log kept as long as the events (a consumer's delivery log, the notification log): its apps, and the delete of one app's old entries. */
export interface RetainedLog {
  apps(): Promise<string[]>;
  deleteBefore(appId: string, cutoff: Date, batch: number): Promise<number>;
}

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
  private readonly logs: RetainedLog[];

  constructor(
    private readonly deps: {
      events: EventsRepository;
      /** The webhook delivery log, kept as long as the events (docs/webhooks.md). */
      deliveries?: WebhookDeliveriesRepository;
      /** Other logs kept as long as the events (notifications': docs/notifications.md). */
      logs?: readonly RetainedLog[];
      retentionMs: number;
      now?: () => number;
    },
  ) {
    this.logs = (deps.logs ?? []).slice();
  }

  /** Keeps another log as long as the events, from the next sweep on (the gateway's: container-gateway.ts). */
  retain(log: RetainedLog): void {
    this.logs.push(log);
  }

  /**
   * Deletes every event older than the retention, app by app, batch after batch, and the
   * delivery log's settled deliveries as old (with idle lanes); answers how many rows.
   */
  async sweep(): Promise<number> {
    const cutoff = new Date((this.deps.now ?? Date.now)() - this.deps.retentionMs);
    let total = 0;
    for (const appId of await this.deps.events.appsWithEvents()) {
      total += await this.inBatches(() => this.deps.events.deleteOlderThan(appId, cutoff, BATCH));
      if (this.stopped) return total;
    }
    const deliveries = this.deps.deliveries;
    for (const appId of deliveries ? await deliveries.appsWithCursors() : []) {
      total += await this.inBatches(() => deliveries!.deleteSettledBefore(appId, cutoff, BATCH));
      if (this.stopped) return total;
    }
    for (const log of this.logs) {
      for (const appId of await log.apps()) {
        total += await this.inBatches(() => log.deleteBefore(appId, cutoff, BATCH));
        if (this.stopped) return total;
      }
    }
    return total;
  }

  /** Runs `batch` until it deletes fewer than a batch (or the job stops); answers how many it deleted. */
  private async inBatches(batch: () => Promise<number>): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await batch();
      total += deleted;
      if (this.stopped || deleted < BATCH) return total;
      // Other work gets the database between batches.
      await new Promise((resolve) => setImmediate(resolve));
    }
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
