/**
 * Rate limits: the vendor's classes and numbers (docs/rate-limits.md), per app and per fixed minute.
 *
 * - `core`: create and delete user, create group, join group (add-members), leave group (remove
 *   a member), create auth token: 10,000 a minute per app.
 * - `standard`: every other `/v3` operation: 20,000 a minute per app.
 * - `import`: the data import API: 60 calls a minute per app.
 * - `send_per_user`: sends (send-message, send-bot-message, thread replies) per sender, and
 *   `unread_per_user`: mark-as-unread per onBehalfOf user; 30 and 5 a minute at the vendor,
 *   off here unless configured.
 *
 * A limit of 0 turns its class off. Which class a route belongs to is said in its route options
 * (`config.rateLimit`), so a route that says nothing is standard.
 */

export const APP_CLASSES = ['core', 'standard', 'import'] as const;
export const USER_CLASSES = ['send_per_user', 'unread_per_user'] as const;
export const RATE_LIMIT_CLASSES = [...APP_CLASSES, ...USER_CLASSES] as const;

/** A class counted per app. */
export type AppClass = (typeof APP_CLASSES)[number];
/** A class counted per user of an app. */
export type UserClass = (typeof USER_CLASSES)[number];
export type RateLimitClass = AppClass | UserClass;

/** Requests a minute, per class; 0 is off. */
export type RateLimits = Record<RateLimitClass, number>;

/** An app's own limits: a class it does not set (null) has the deployment's. */
export type RateLimitOverrides = Record<RateLimitClass, number | null>;

/** The vendor's numbers, with the per-user classes off (the vendor's: send 30, unread 5). */
export const DEFAULT_RATE_LIMITS: Readonly<RateLimits> = Object.freeze({
  core: 10_000,
  standard: 20_000,
  import: 60,
  send_per_user: 0,
  unread_per_user: 0,
});

/** The vendor's per-user numbers, for a deployment that turns them on. */
export const VENDOR_PER_USER_LIMITS: Readonly<Pick<RateLimits, UserClass>> = Object.freeze({ send_per_user: 30, unread_per_user: 5 });

export const MAX_RATE_LIMIT = 1_000_000_000;

/** The windows are fixed minutes of the clock: [n·60 s, (n+1)·60 s). */
export const WINDOW_MS = 60_000;

/** The window a moment (ms since the epoch) falls in. */
export function windowOf(nowMs: number): number {
  return Math.floor(nowMs / WINDOW_MS);
}

/** When a window ends, in unix seconds. */
export function windowEndSeconds(window: number): number {
  return ((window + 1) * WINDOW_MS) / 1000;
}

/** Whole seconds from `nowMs` until the window ends: at least 1. */
export function secondsUntilEnd(window: number, nowMs: number): number {
  return Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - nowMs) / 1000));
}

export class RateLimitsFormatError extends Error {
  override name = 'RateLimitsFormatError';
}

/**
 * Reads `core=10000,standard=20000,import=60,send_per_user=0`: any subset of the classes, each
 * at most once, each a whole number from 0 (off) to MAX_RATE_LIMIT. An empty text sets nothing.
 */
export function parseRateLimits(text: string): Partial<RateLimits> {
  const result: Partial<RateLimits> = {};
  if (text.trim() === '') return result;
  for (const entry of text.split(',')) {
    const equals = entry.indexOf('=');
    if (equals < 0) throw new RateLimitsFormatError(`"${entry.trim()}" is not class=number (e.g. core=10000)`);
    const name = entry.slice(0, equals).trim();
    const raw = entry.slice(equals + 1).trim();
    if (!(RATE_LIMIT_CLASSES as readonly string[]).includes(name)) {
      throw new RateLimitsFormatError(`unknown class "${name}" (the classes: ${RATE_LIMIT_CLASSES.join(', ')})`);
    }
    const cls = name as RateLimitClass;
    if (result[cls] !== undefined) throw new RateLimitsFormatError(`${cls} is given twice`);
    if (!/^\d+$/.test(raw) || Number(raw) > MAX_RATE_LIMIT) {
      throw new RateLimitsFormatError(`${cls} must be a whole number from 0 (off) to ${MAX_RATE_LIMIT}; got "${raw}"`);
    }
    result[cls] = Number(raw);
  }
  return result;
}

/** The limits in force: the given ones, and the defaults for the classes not given. */
export function withDefaults(limits: Partial<RateLimits> | undefined, defaults: Readonly<RateLimits> = DEFAULT_RATE_LIMITS): RateLimits {
  const result = { core: 0, standard: 0, import: 0, send_per_user: 0, unread_per_user: 0 };
  for (const cls of RATE_LIMIT_CLASSES) result[cls] = limits?.[cls] ?? defaults[cls];
  return result;
}

/** An app's limits in force: its own where it has one, else the deployment's. */
export function effectiveLimits(deployment: Readonly<RateLimits>, overrides: RateLimitOverrides | undefined): RateLimits {
  const result = { core: 0, standard: 0, import: 0, send_per_user: 0, unread_per_user: 0 };
  for (const cls of RATE_LIMIT_CLASSES) result[cls] = overrides?.[cls] ?? deployment[cls];
  return result;
}

/** The text form, as PARLEY_RATE_LIMITS and `--set` read it. */
export function formatRateLimits(limits: Partial<RateLimits>): string {
  return RATE_LIMIT_CLASSES.filter((cls) => limits[cls] !== undefined)
    .map((cls) => `${cls}=${limits[cls]}`)
    .join(',');
}

/**
 * Failed authentications (a wrong or missing key or management secret), a minute: per client
 * address, across every app, and per app; 0 is off. Past either limit, a request that would
 * need a credential lookup is answered 429 without one (docs/rate-limits.md).
 */
export interface AuthFailureLimits {
  perAddress: number;
  perApp: number;
}

export const DEFAULT_AUTH_FAILURE_LIMITS: Readonly<AuthFailureLimits> = Object.freeze({ perAddress: 100, perApp: 1_000 });

/**
 * The client address failed authentications are counted under: an IPv4 address as it is (also
 * when written IPv4-mapped, `::ffff:10.0.0.1`), an IPv6 address by its /64, the block one
 * subscriber is given, so that one client cannot spread its attempts across its own addresses.
 */
export function clientAddressKey(ip: string): string {
  if (!ip.includes(':')) return ip;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  const [head = '', tail] = ip.toLowerCase().split('%')[0]!.split('::');
  const front = head === '' ? [] : head.split(':');
  const back = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? front : [...front, ...Array<string>(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back];
  return `${groups
    .slice(0, 4)
    .map((group) => group.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
