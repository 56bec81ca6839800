import type { AppWithKey } from './app-rows.js';

/**
 * Refusals remembered for a short while, so that a wrong credential sent again costs no query:
 * at most `maxEntries` (the oldest dropped first, so a flood of distinct wrong credentials
 * evicts only refusals), each for `ttlMs`. A refusal is stored only if no invalidation happened
 * while it was looked up (`generation`), and the owner forgets it when the credential is created
 * or changed, as for hits.
 */
export class RefusalCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  /** Bumped by every invalidation: a lookup that began before one is not stored. */
  generation = 0;

  constructor(
    private readonly ttlMs = 5_000,
    private readonly maxEntries = 10_000,
  ) {}

  /** The refusal remembered for `key`, if it has not expired. */
  get(key: string): { value: V } | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expires >= Date.now()) return entry;
    this.entries.delete(key);
    return undefined;
  }

  /** Remembers a refusal found by a lookup that began at `generation`. */
  add(key: string, value: V, generation: number): void {
    if (this.ttlMs <= 0 || generation !== this.generation) return;
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, { value, expires: Date.now() + this.ttlMs });
  }

  /** Forgets the refusal of `key`, or of every key starting with `prefix`. */
  forget(key: string | { prefix: string }): void {
    this.generation++;
    if (typeof key === 'string') this.entries.delete(key);
    else for (const entry of this.entries.keys()) if (entry.startsWith(key.prefix)) this.entries.delete(entry);
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * A short-lived cache of credential lookups, the one query every request makes before its own
 * work: an app's keys (`V` = AppWithKey, found when it holds the key), and users' auth tokens
 * (container.ts makes one of each, with what counts as found). Hits are cached, and refusals
 * (no such app, or not one of its keys; no such token, or its user deactivated) in a
 * RefusalCache of their own, so a wrong key sent again costs no query and a flood of wrong keys cannot evict
 * the hits. The repositories that create or change apps and keys invalidate both on this node
 * at once; other nodes see a change within the TTL.
 *
 * Under load an entry must not simply expire: every request of that moment would miss together
 * and each run the lookup (measured: 64 at once, on as many pool connections, stalling sends for
 * up to 200 ms every TTL). So concurrent misses of one key share one lookup, and a hit in the
 * last fifth of an entry's life refreshes it in the background while the entry still answers.
 */
/** How long a key found valid is known to be so, for the limit on failed authentications. */
export const KNOWN_VALID_MS = 10 * 60_000;

export class CredentialCache<V = AppWithKey> {
  private readonly entries = new Map<string, { value: V; expires: number; refreshAt: number }>();
  /** Lookups running, by cache key: concurrent misses (and the refresh) share one. */
  private readonly loading = new Map<string, Promise<V | undefined>>();
  /** Bumped by every invalidation: a lookup that began before one is not stored. */
  private generation = 0;
  /** Lookups answered from an entry, and those that read (or waited for a read of) the database. */
  private hits = 0;
  private misses = 0;

  /** Lookups that found nothing, or a value that is not `found` (the app without the key). */
  private readonly refusals: RefusalCache<V | undefined>;

  constructor(
    private readonly ttlMs = 5_000,
    private readonly maxEntries = 10_000,
    /** Whether a lookup's answer is a valid credential (kept as a hit) or a refusal. */
    private readonly found: (value: V) => boolean = (value) => (value as AppWithKey).key !== undefined,
  ) {
    this.refusals = new RefusalCache(ttlMs, maxEntries);
  }

  /**
   * Pairs found valid lately, with when: kept for KNOWN_VALID_MS after their entry expires, and
   * forgotten with it on an invalidation. Only a valid key gets here, so a flood of wrong keys
   * neither fills nor evicts it.
   */
  private readonly valid = new Map<string, number>();

  /**
   * Whether the pair was found valid on this node in the last KNOWN_VALID_MS (and not changed
   * since): the limit on failed authentications leaves such a key alone, so a flood of wrong
   * keys against an app does not hold up its backends' keys in use.
   */
  knownValid(appId: string, keyHash: string): boolean {
    const at = this.valid.get(`${appId}\u0000${keyHash}`);
    return at !== undefined && at >= Date.now() - KNOWN_VALID_MS;
  }

  /** The cached lookup of the pair, or `load`'s answer (shared with concurrent callers). */
  async lookup(appId: string, keyHash: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const key = `${appId}\u0000${keyHash}`;
    const entry = this.entries.get(key);
    const now = Date.now();
    if (entry && entry.expires >= now) {
      // A failed refresh leaves the entry to expire; the next miss then reports the failure.
      if (now >= entry.refreshAt && !this.loading.has(key)) this.load(key, load).catch(() => {});
      this.hits++;
      return entry.value;
    }
    if (entry) this.entries.delete(key);
    const refused = this.refusals.get(key);
    if (refused !== undefined) {
      this.hits++;
      return refused.value;
    }
    this.misses++;
    return this.loading.get(key) ?? this.load(key, load);
  }

  private load(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const generation = this.generation;
    const refusalGeneration = this.refusals.generation;
    const running = load().then(
      (value) => {
        if (this.loading.get(key) === running) this.loading.delete(key);
        if (value !== undefined && this.found(value)) {
          if (generation === this.generation) this.store(key, value);
        } else {
          // A refresh that finds the key gone (deleted on another node) ends its entry now.
          if (generation === this.generation) this.entries.delete(key);
          this.refusals.add(key, value, refusalGeneration);
        }
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

  private store(key: string, value: V): void {
    if (this.ttlMs <= 0) return;
    if (!this.entries.has(key) && this.entries.size >= this.maxEntries) {
      // Drop the oldest entry: a Map iterates in insertion order.
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    const now = Date.now();
    this.entries.delete(key);
    this.entries.set(key, { value, expires: now + this.ttlMs, refreshAt: now + this.ttlMs * 0.8 });
    this.valid.delete(key);
    if (this.valid.size >= this.maxEntries) this.valid.delete(this.valid.keys().next().value!);
    this.valid.set(key, now);
  }

  /** Lookups answered from the cache and not, since it was made, and the entries it holds (for the metrics). */
  stats(): { hits: number; misses: number; entries: number } {
    return { hits: this.hits, misses: this.misses, entries: this.entries.size + this.refusals.size };
  }

  /** Forgets one key of an app, or all of an app's keys, and any lookup of them running now. */
  invalidate(appId: string, keyHash?: string): void {
    this.generation++;
    const prefix = `${appId}\u0000`;
    this.refusals.forget(keyHash === undefined ? { prefix } : `${prefix}${keyHash}`);
    for (const map of [this.entries, this.loading, this.valid]) {
      if (keyHash !== undefined) map.delete(`${prefix}${keyHash}`);
      else for (const key of map.keys()) if (key.startsWith(prefix)) map.delete(key);
    }
  }
}
