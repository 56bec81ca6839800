/**
 * The timers the client runs on: the platform's by default; a test or an app with a clock of
 * its own may pass others.
 */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const platformTimers: Timers = {
  setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as Parameters<typeof globalThis.clearTimeout>[0]),
};

/** One pending timer at a time, by name: arming it again replaces it. */
export class Timer {
  private handle: unknown;
  private armed = false;

  constructor(private readonly timers: Timers) {}

  start(ms: number, callback: () => void): void {
    this.stop();
    this.armed = true;
    this.handle = this.timers.setTimeout(() => {
      this.armed = false;
      callback();
    }, ms);
  }

  stop(): void {
    if (this.armed) this.timers.clearTimeout(this.handle);
    this.armed = false;
  }

  get pending(): boolean {
    return this.armed;
  }
}
