import { compareEventIds, type EventFrame } from './protocol.js';

/** How many recent ids are remembered to drop repeats of ids that are not the log's numbers. */
const RECENT_IDS = 1_000;

/**
 * The durable events as the app sees them: each once, in the log's order, across reconnects
 * (README.md, "Resume"). The server replays from the last id the client sends; an id that is not
 * after the newest one seen is a repeat and is dropped. While the app refetches after
 * resync_required, events wait and follow the refetch in order.
 */
export class EventSequence {
  private newest: string | undefined;
  private delivered: string | undefined;
  private readonly recent = new Set<string>();
  private held: EventFrame[] | undefined;
  /** Another resync_required came during a refetch: refetch again once it ends. */
  private again = false;

  constructor(
    lastEventId: string | undefined,
    private readonly deliver: (event: EventFrame) => void,
  ) {
    this.newest = this.delivered = lastEventId;
  }

  /** The id to resume after: the newest accepted (delivered, or waiting for a refetch). */
  get resumeFrom(): string | undefined {
    return this.newest;
  }

  get lastDelivered(): string | undefined {
    return this.delivered;
  }

  accept(event: EventFrame): void {
    if (!this.isNew(event.id)) return;
    this.newest = event.id;
    this.recent.add(event.id);
    if (this.recent.size > RECENT_IDS) this.recent.delete(this.recent.values().next().value!);
    if (this.held) this.held.push(event);
    else this.hand(event);
  }

  /**
   * Runs the app's refetch; events accepted meanwhile wait for it. A failed refetch is reported,
   * and the events that waited are delivered all the same.
   */
  resync(refetch: (() => void | Promise<void>) | undefined, onError: (error: unknown) => void): void {
    if (!refetch) return;
    if (this.held) {
      this.again = true;
      return;
    }
    const held: EventFrame[] = [];
    this.held = held;
    const run = (): Promise<void> =>
      Promise.resolve()
        .then(refetch)
        .catch(onError)
        .then(() => {
          if (!this.again) return;
          this.again = false;
          return run();
        });
    void run().then(() => {
      if (this.held !== held) return;
      this.held = undefined;
      for (const event of held) this.hand(event);
    });
  }

  /** The client closed: events waiting for a refetch are not delivered (nor counted as delivered). */
  discardHeld(): void {
    if (!this.held) return;
    this.held = undefined;
    this.again = false;
    this.newest = this.delivered;
  }

  private hand(event: EventFrame): void {
    this.delivered = event.id;
    this.deliver(event);
  }

  private isNew(id: string): boolean {
    if (this.recent.has(id) || id === this.newest) return false;
    if (this.newest === undefined) return true;
    const order = compareEventIds(id, this.newest);
    return order === undefined || order > 0;
  }
}
