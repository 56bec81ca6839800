/** How long the client waits before it reconnects (README.md, "Reconnecting"). */
export interface BackoffOptions {
  /** The first delay, before the jitter (default 500 ms). */
  initialMs?: number;
  /** Each failed attempt multiplies the delay by this (default 2). */
  factor?: number;
  /** The delay stops growing here (default 30 s). */
  maxMs?: number;
  /** The share of each delay drawn at random, 0 to 1 (default 0.5: between half and all of it). */
  jitter?: number;
  /** After a close with 4008 (rate limited), at least this (default 15 s), also jittered. */
  rateLimitedMs?: number;
  /** After a close with 1012 (the server restarting), a delay drawn between 0 and this (default 1 s). */
  restartSpreadMs?: number;
}

export type ResolvedBackoff = Required<BackoffOptions>;

export function resolveBackoff(options: BackoffOptions = {}): ResolvedBackoff {
  const resolved = {
    initialMs: options.initialMs ?? 500,
    factor: options.factor ?? 2,
    maxMs: options.maxMs ?? 30_000,
    jitter: options.jitter ?? 0.5,
    rateLimitedMs: options.rateLimitedMs ?? 15_000,
    restartSpreadMs: options.restartSpreadMs ?? 1_000,
  };
  for (const [name, value] of Object.entries(resolved)) {
    if (!Number.isFinite(value) || value < 0) throw new RangeError(`backoff.${name} must be a number ≥ 0, not ${value}`);
  }
  if (resolved.factor < 1) throw new RangeError('backoff.factor must be ≥ 1');
  if (resolved.jitter > 1) throw new RangeError('backoff.jitter must be between 0 and 1');
  return resolved;
}

/** Why the client reconnects, as far as the delay is concerned. */
export type ReconnectCause = 'failure' | 'rate_limited' | 'restarting';

/**
 * The delay before reconnect attempt `attempt` (0 for the first after a connection that worked):
 * `initialMs · factor^attempt`, capped at `maxMs`, of which the `jitter` share is drawn from
 * `random()` (a number in [0, 1), as Math.random), so that clients dropped together do not come
 * back together.
 */
export function reconnectDelay(backoff: ResolvedBackoff, attempt: number, cause: ReconnectCause, random: () => number): number {
  if (cause === 'restarting' && attempt === 0) return Math.round(backoff.restartSpreadMs * random());
  const grown = Math.min(backoff.maxMs, backoff.initialMs * backoff.factor ** attempt);
  const base = cause === 'rate_limited' ? Math.max(grown, backoff.rateLimitedMs) : grown;
  return Math.round(base * (1 - backoff.jitter + backoff.jitter * random()));
}
