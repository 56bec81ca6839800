import type { AppWithKey } from './apps.repository.js';

/**
 * A short-lived cache of successful key lookups, the one query every request makes before its
 * own work. Only hits are cached (a flood of wrong keys cannot fill it). The repositories that
 * change keys invalidate it on this node at once; other nodes see a change within the TTL.
 */
export class CredentialCache {
  private readonly entries = new Map<string, { value: AppWithKey; expires: number }>();

  constructor(
    private readonly ttlMs = 5_000,
    private readonly maxEntries = 10_000,
  ) {}

  get(appId: string, keyHash: string): AppWithKey | undefined {
    const key = `${appId}\u0000${keyHash}`;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expires < Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(appId: string, keyHash: string, value: AppWithKey): void {
    if (this.ttlMs <= 0) return;
    if (this.entries.size >= this.maxEntries) {
      // Drop the oldest entry: a Map iterates in insertion order.
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(`${appId}\u0000${keyHash}`, { value, expires: Date.now() + this.ttlMs });
  }

  /** Forgets one key of an app, or all of an app's keys. */
  invalidate(appId: string, keyHash?: string): void {
    if (keyHash !== undefined) {
      this.entries.delete(`${appId}\u0000${keyHash}`);
      return;
    }
    for (const key of this.entries.keys()) if (key.startsWith(`${appId}\u0000`)) this.entries.delete(key);
  }
}
