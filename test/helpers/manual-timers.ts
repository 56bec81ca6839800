import assert from 'node:assert/strict';
import type { Timers } from '../../packages/client/src/index.js';

/**
 * Timers that run when the test says (the client library's `timers` option): each timer is
 * known by its delay, so a test fires "the heartbeat" or "the reconnect" by the ms it was set for.
 */
export class ManualTimers implements Timers {
  private readonly pending = new Map<number, { callback: () => void; ms: number }>();
  private next = 1;
  private readonly armed = new Map<number, number>();

  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.next++;
    this.armed.set(ms, (this.armed.get(ms) ?? 0) + 1);
    this.pending.set(id, { callback, ms });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  /** The delays of the timers pending, in the order they were set. */
  get delays(): number[] {
    return [...this.pending.values()].map((timer) => timer.ms);
  }

  /** How many timers of `ms` were ever set. */
  timesSet(ms: number): number {
    return this.armed.get(ms) ?? 0;
  }

  has(ms: number): boolean {
    return this.delays.includes(ms);
  }

  /** Runs the pending timer set for `ms` (the one set first, if there are several); fails if there is none. */
  fire(ms: number): void {
    const found = [...this.pending].find(([, timer]) => timer.ms === ms);
    assert.ok(found, `a timer of ${ms} ms pending (pending: ${this.delays.join(', ') || 'none'})`);
    this.pending.delete(found[0]);
    found[1].callback();
  }
}

/** Resolves once `predicate` holds, checked every few ms (rejects after `timeoutMs`). */
export async function until(predicate: () => boolean, what: string, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
