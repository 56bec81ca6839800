import type { AppWithKey } from './app-rows.js';

/**
 * A short-lived cache of successful key lookups, the one query every request makes before its
 * own work. Only hits are cached (a flood of wrong keys cannot fill it). The repositories that
 * change keys invalidate it on this node at once; other nodes see a change within the TTL.
 *
 * Under load an entry must not simply expire: every request of that moment would miss together
 * and each run the lookup (measured: 64 at once, on as many pool connections, stalling sends for
 * up to 200 ms every TTL). So concurrent misses of one key share one lookup, and a hit in the
 * last fifth of an entry's life refreshes it in the background while the entry still answers.
 */
export class CredentialCache {
  private readonly entries = new Map<string, { value: AppWithKey; expires: number; refreshAt: number }>();
  /** Lookups running, by cache key: concurrent misses (and the refresh) share one. */
  private readonly loading = new Map<string, Promise<AppWithKey | undefined>>();
  /** Bumped by every invalidation: a lookup that began before one is not stored. */
  private generation = 0;

  constructor(
    private readonly ttlMs = 5_000,
    private readonly maxEntries = 10_000,
  ) {}

  /** The cached lookup of the pair, or `load`'s answer (shared with concurrent callers). */
  async lookup(appId: string, keyHash: string, load: () => Promise<AppWithKey | undefined>): Promise<AppWithKey | undefined> {
    const key = `${appId}\u0000${keyHash}`;
    const entry = this.entries.get(key);
    const now = Date.now();
    if (entry && entry.expires >= now) {
      // A failed refresh leaves the entry to expire; the next miss then reports the failure.
      if (now >= entry.refreshAt && !this.loading.has(key)) this.load(key, load).catch(() => {});
      return entry.value;
    }
    if (entry) this.entries.delete(key);
    return this.loading.get(key) ?? this.load(key, load);
  }

  private load(key: string, load: () => Promise<AppWithKey | undefined>): Promise<AppWithKey | undefined> {
    const generation = this.generation;
    const running = load().then(
      (value) => {
        if (this.loading.get(key) === running) this.loading.delete(key);
        if (value?.key && generation === this.generation) this.store(key, value);
        return value;
      },
      (error: unknown) => {
        if (this.loading.get(key) === running) this.loading.delete(key);
        throw error;
      },
    );
    this.loading.set(key, running);
    return running;
  }

  private store(key: string, value: AppWithKey): void {
    if (this.ttlMs <= 0) return;
    if (!this.entries.has(key) && this.entries.size >= this.maxEntries) {
      // Drop the oldest entry: a Map iterates in insertion order.
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    const now = Date.now();
    this.entries.delete(key);
    this.entries.set(key, { value, expires: now + this.ttlMs, refreshAt: now + this.ttlMs * 0.8 });
  }

  /** Forgets one key of an app, or all of an app's keys, and any lookup of them running now. */
  invalidate(appId: string, keyHash?: string): void {
    this.generation++;
    const prefix = `${appId}\u0000`;
    for (const map of [this.entries, this.loading]) {
      if (keyHash !== undefined) map.delete(`${prefix}${keyHash}`);
      else for (const key of map.keys()) if (key.startsWith(prefix)) map.delete(key);
    }
  }
}
