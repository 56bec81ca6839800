import type { Logger } from '../domain/context.js';

/**
 * Shortens the wait between a commit and the feeds that hand its events out (docs/events.md):
 * this process's feed is woken at once, and other processes' through `notify` (PostgreSQL's
 * NOTIFY, which their feeds LISTEN for), at most once per `notifyEveryMs`: a woken feed polls
 * at its active pace for a second, so it sees the commits that follow without more signals.
 * The event log stays the source; a lost signal costs only the wait for the next poll.
 */
export class EventSignals {
  private lastNotify = 0;

  constructor(
    private readonly deps: {
      feed: { wake(): void };
      /** Absent where no other process reads the database (the embedded one). */
      notify?: () => Promise<void>;
      notifyEveryMs: number;
    },
  ) {}

  /** A change that may have recorded events has committed. */
  committed(log: Logger): void {
    this.deps.feed.wake();
    const notify = this.deps.notify;
    if (!notify) return;
    const now = Date.now();
    if (now - this.lastNotify < this.deps.notifyEveryMs) return;
    this.lastNotify = now;
    notify().catch((error: unknown) => log.warn({ err: error }, 'could not signal other processes of a commit; their feeds poll'));
  }
}
