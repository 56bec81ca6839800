import { isDataError, isRetryable } from './driver-errors.js';
import { retryPause } from './transaction.js';

/** Runs of a batch (or part of one) after a deadlock or serialization failure. */
const MAX_ATTEMPTS = 4;

/**
 * Coalesces concurrent single-row writes into multi-row statements: the application's own
 * group commit. Items submitted while the database is busy wait and go together in the next
 * batch; an idle system sends each item at once (after one turn of the event loop). Every
 * caller's promise settles only when its batch has committed, so an answer still means the
 * row is durably stored.
 *
 * `run` receives the items of one batch and returns one result per item, in order; a result
 * that is an Error rejects only that item's caller.
 *
 * Few batches in flight make large batches, and large batches are cheap per item. But a batch
 * can wait on a lock (a row another transaction holds), and it must not hold up the items
 * behind it: with `stalledAfterMs`, a batch still running after that long gives its place to
 * the next one, up to `maxStalled` such batches at once.
 *
 * One item must never fail the others of its batch. A batch the database refuses for its data
 * (isDataError: one item's text it cannot store, a constraint) is split in halves, each run on
 * its own, until the items at fault are alone: each caller gets its own answer, in about
 * 2·log2(batch) more statements for one bad item. A batch aborted by a deadlock or a
 * serialization failure is run again (a few times). Any other failure (a lost connection, a
 * timeout) would fail every part alike: it fails the batch's callers at once.
 */
/** How a Batcher groups: items per batch, batches at once, and when a slow batch gives up its place. */
export interface BatcherOptions {
  maxBatch: number;
  maxInFlight: number;
  stalledAfterMs?: number;
  maxStalled?: number;
}

/**
 * The upper bounds of the batch-size buckets a Batcher counts (BatcherStats.sizes): powers of
 * two, the last bucket for anything larger.
 */
export const BATCH_SIZE_BOUNDS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512] as const;

/** What a Batcher holds now and has done since it was made (read by the metrics: docs/metrics.md). */
export interface BatcherStats {
  /** Items waiting for a batch. */
  queued: number;
  /** Batches running that hold a place, and those past stalledAfterMs that gave theirs up. */
  inFlight: number;
  stalled: number;
  /** Batches started, and the items they held. */
  batches: number;
  items: number;
  /** Batches by size: sizes[i] counts those of at most BATCH_SIZE_BOUNDS[i] items (and above the bound before); the last, larger ones. */
  sizes: readonly number[];
}

/** A coalesced call (see coalesced), with its Batcher's stats. */
export type Coalesced<I, O> = ((item: I) => Promise<O>) & { stats(): BatcherStats };

/**
 * `many` (a statement for many items), called one item at a time by concurrent callers and
 * coalesced by a Batcher: the composition root (container.ts) applies it, so that a service's
 * dependencies name which of its calls are coalesced. Each caller gets its own item's answer.
 */
export function coalesced<I, O>(many: (items: I[]) => Promise<Array<O | Error>>, options: BatcherOptions): Coalesced<I, O> {
  const batcher = new Batcher(many, options);
  return Object.assign((item: I) => batcher.submit(item), { stats: () => batcher.stats() });
}

export class Batcher<I, O> {
  private queue: Array<{ item: I; resolve: (value: O) => void; reject: (error: unknown) => void }> = [];
  private inFlight = 0;
  private stalled = 0;
  /** Running batches past stalledAfterMs that still hold a place (maxStalled was reached). */
  private overdue: Array<{ holdsPlace: boolean; done: boolean }> = [];
  private scheduled = false;
  private batches = 0;
  private items = 0;
  private readonly sizes: number[] = new Array<number>(BATCH_SIZE_BOUNDS.length + 1).fill(0);

  constructor(
    private readonly run: (items: I[]) => Promise<Array<O | Error>>,
    private readonly options: BatcherOptions,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  stats(): BatcherStats {
    return { queued: this.queue.length, inFlight: this.inFlight, stalled: this.stalled, batches: this.batches, items: this.items, sizes: this.sizes.slice() };
  }

  /** Batches past stalledAfterMs give up their places, as far as maxStalled allows. */
  private releaseOverdue(): void {
    while (this.overdue.length > 0 && this.stalled < (this.options.maxStalled ?? 0)) {
      const running = this.overdue.shift()!;
      if (running.done) continue;
      running.holdsPlace = false;
      this.inFlight--;
      this.stalled++;
    }
  }

  /** Counts a batch of `size` items in its bucket (a few comparisons: a batch is much dearer). */
  private noteBatch(size: number): void {
    this.batches++;
    this.items += size;
    let bucket = 0;
    while (bucket < BATCH_SIZE_BOUNDS.length && size > BATCH_SIZE_BOUNDS[bucket]!) bucket++;
    this.sizes[bucket] = (this.sizes[bucket] ?? 0) + 1;
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.options.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    while (this.queue.length > 0 && this.inFlight < this.options.maxInFlight) {
      const batch = this.queue.splice(0, this.options.maxBatch);
      this.inFlight++;
      this.noteBatch(batch.length);
      const running = { holdsPlace: true, done: false };
      const stallTimer =
        this.options.stalledAfterMs === undefined
          ? undefined
          : setTimeout(() => {
              this.overdue.push(running);
              this.releaseOverdue();
              this.schedule();
            }, this.options.stalledAfterMs);
      runApart(
        this.run,
        batch.map((entry) => entry.item),
      )
        .then(
          (results) => {
            batch.forEach((entry, index) => {
              const result = results[index];
              if (result instanceof Error) entry.reject(result);
              else entry.resolve(result as O);
            });
          },
          (error: unknown) => batch.forEach((entry) => entry.reject(error)),
        )
        .finally(() => {
          clearTimeout(stallTimer);
          running.done = true;
          if (running.holdsPlace) this.inFlight--;
          else this.stalled--;
          this.releaseOverdue();
          this.schedule();
        });
    }
  }
}

/**
 * Runs items with `run` as one statement; when the database refuses its data, in halves, until
 * the items at fault are alone (see Batcher). Retries deadlocks and serialization failures.
 * Throws a failure that is not about the data (every item would fail alike).
 */
export async function runApart<I, O>(run: (items: I[]) => Promise<Array<O | Error>>, items: I[]): Promise<Array<O | Error>> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run(items);
    } catch (error) {
      if (isRetryable(error) && attempt < MAX_ATTEMPTS) {
        await retryPause(attempt);
        continue;
      }
      if (items.length === 1 || !isDataError(error)) throw error;
      const half = items.length >>> 1;
      const part = (slice: I[]) => runApart(run, slice).catch((failed: unknown): Array<O | Error> => slice.map(() => asError(failed)));
      return [...(await part(items.slice(0, half))), ...(await part(items.slice(half)))];
    }
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
