import type { Logger } from '../domain/context.js';

/**
 * Keeps the planner's statistics of tables current as rows are written, whatever autovacuum
 * does: after `firstAfter` rows written, and then each time the rows written since the last
 * analysis reach the size `analyze` answered (so about each doubling of a growing table), it
 * runs `analyze`, one at a time, beside the writes. Used for the webhook queue's tables, which
 * fill from empty under load (container.ts), and for PGlite's VACUUM ANALYZE after bulk writes
 * (database.ts; it answers 0, so it runs every `firstAfter` rows).
 *
 * Why: PostgreSQL plans with statistics, and a table analysed while empty (or never) has none.
 * Without them the webhook queue's statements took the wrong index or a scan of the app's whole
 * backlog (a lane's pending deliveries read through every delivery of the webhook: 100–460 ms a
 * round at 20,000 pending), and a prepared statement's plan made then stayed until an ANALYZE
 * replaced it. Autovacuum would analyse within a minute or so, but it may be off, and PGlite has
 * none (docs/performance-log.md, "The webhook queue's statistics").
 */
export class TableStatistics {
  private written = 0;
  private next: number;
  private running: Promise<void> | undefined;

  constructor(
    private readonly options: {
      /** Analyses the tables; answers the size of the one that grows (PostgreSQL's estimate). */
      analyze: () => Promise<number>;
      /** Rows written before the first analysis. */
      firstAfter: number;
      /** What the log says failed (e.g. `ANALYZE of the webhook queue`). */
      what: string;
    },
  ) {
    this.next = options.firstAfter;
  }

  /** Notes rows written; starts an analysis (one at a time, not awaited) when they reach the threshold. */
  noteWritten(rows: number, log: Logger): void {
    this.written += rows;
    if (this.written < this.next || this.running) return;
    this.written = 0;
    this.running = this.options
      .analyze()
      .then((size) => {
        this.next = Math.max(this.options.firstAfter, size);
      })
      .catch((error: unknown) => log.warn({ err: error }, `${this.options.what} failed; tried again after more writes`))
      .finally(() => {
        this.running = undefined;
      });
  }

  /** Waits for an analysis under way. */
  async idle(): Promise<void> {
    await this.running;
  }
}
