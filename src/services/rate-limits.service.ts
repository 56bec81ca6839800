import type { RequestContext } from '../domain/context.js';
import {
  APP_CLASSES,
  clientAddressKey,
  DEFAULT_AUTH_FAILURE_LIMITS,
  secondsUntilEnd,
  USER_CLASSES,
  windowEndSeconds,
  windowOf,
  type AppClass,
  type AuthFailureLimits,
  type RateLimitClass,
  type RateLimits,
  type UserClass,
} from '../domain/rate-limits.js';
import { RateLimitHit, type RateLimitCounters } from '../repositories/rate-limit-counters.js';
import type { ActorContext } from './actor.js';

/** One class's standing in the current window. */
export interface RateLimitStanding {
  limit: number;
  remaining: number;
  /** The end of the window, in unix seconds. */
  reset: number;
}

/** The classes that are on, each with its standing. */
export type RateLimitUsage = Partial<Record<RateLimitClass, RateLimitStanding>>;

/**
 * Counts requests against the app's limits (its own, read with its key, else the deployment's)
 * in fixed one-minute windows, and reports where an app stands.
 */
export class RateLimitsService {
  /** Requests refused since the process started, by app id and the class that refused them (for the metrics). */
  private readonly refusedCounts = new Map<string, Partial<Record<RateLimitClass, number>>>();

  constructor(
    private readonly deps: {
      counters: RateLimitCounters;
      /** The deployment's limits (PARLEY_RATE_LIMITS). */
      limits: Readonly<RateLimits>;
      /** The clock, in ms since the epoch. */
      now: () => number;
      /** Failed authentications a minute, per client address and per app. */
      authFailures?: Readonly<AuthFailureLimits> | undefined;
    },
  ) {}

  private get authFailureLimits(): Readonly<AuthFailureLimits> {
    return this.deps.authFailures ?? DEFAULT_AUTH_FAILURE_LIMITS;
  }

  /**
   * Whether failed authentications have used up this minute's limit of the client `address`
   * or of the app `ctx.appId` (none for an empty one: the management API): the seconds until
   * the minute ends if so, else 0. Counts nothing.
   */
  async authFailuresBlocked(ctx: RequestContext, address: string): Promise<number> {
    const { perAddress, perApp } = this.authFailureLimits;
    const now = this.deps.now();
    const window = windowOf(now);
    if (perAddress > 0 && (await this.deps.counters.readKey(addressCounter(address), window)) >= perAddress) return secondsUntilEnd(window, now);
    if (perApp > 0 && ctx.appId !== '' && (await this.deps.counters.readKey(appCounter(ctx.appId), window)) >= perApp) return secondsUntilEnd(window, now);
    return 0;
  }

  /**
   * Counts a failed authentication of the client `address`, and of the app when `ofApp` (the
   * app exists: a wrong key for an app id that is none is counted per address only, so made-up
   * ids hold no counters). The seconds until the minute ends when a limit was already reached
   * (that attempt then counts nowhere further), else 0.
   */
  async authFailed(ctx: RequestContext, address: string, ofApp: boolean): Promise<number> {
    const { perAddress, perApp } = this.authFailureLimits;
    const now = this.deps.now();
    const window = windowOf(now);
    if (perAddress > 0 && (await this.deps.counters.hitKey(addressCounter(address), perAddress, window, now)).refused) return secondsUntilEnd(window, now);
    if (perApp > 0 && ofApp && ctx.appId !== '' && (await this.deps.counters.hitKey(appCounter(ctx.appId), perApp, window, now)).refused) return secondsUntilEnd(window, now);
    return 0;
  }

  /** The limit of `cls` for the app of `ctx`: its own when it has one, else the deployment's; 0 is off. */
  limitOf(ctx: RequestContext, cls: RateLimitClass): number {
    return ctx.credential?.limits?.[cls] ?? this.deps.limits[cls];
  }

  /**
   * Counts one request of class `cls` (and of `userClass` for `uid`, when given and on), or
   * refuses it when a limit is reached: see RateLimitHit.refusedBy. Undefined when nothing is
   * counted (the classes are off). Synchronous with the memory counters.
   */
  hit(ctx: RequestContext, cls: AppClass, userClass: UserClass | undefined, uid: string | undefined): RateLimitHit | Promise<RateLimitHit> | undefined {
    const limit = this.limitOf(ctx, cls);
    const userLimit = userClass !== undefined && uid !== undefined ? this.limitOf(ctx, userClass) : 0;
    if (limit === 0 && userLimit === 0) return undefined;
    const now = this.deps.now();
    return this.deps.counters.hit(new RateLimitHit(ctx.appId, cls, limit, userClass, uid, userLimit, windowOf(now), now));
  }

  /** Notes a request `hit` refused (its refusedBy names the class). */
  refused(hit: RateLimitHit): void {
    const cls = hit.refusedBy === 2 ? hit.userClass : hit.cls;
    if (cls === undefined) return;
    let counts = this.refusedCounts.get(hit.appId);
    if (counts === undefined) this.refusedCounts.set(hit.appId, (counts = {}));
    counts[cls] = (counts[cls] ?? 0) + 1;
  }

  /** The requests refused since the process started, by app and class. */
  refusals(): Array<{ appId: string; cls: RateLimitClass; count: number }> {
    const out: Array<{ appId: string; cls: RateLimitClass; count: number }> = [];
    for (const [appId, counts] of this.refusedCounts) {
      for (const [cls, count] of Object.entries(counts) as Array<[RateLimitClass, number]>) out.push({ appId, cls, count });
    }
    return out;
  }

  /**
   * Where the app stands in the current window, for each class that is on; with onBehalfOf, also
   * the per-user classes that are on, for that user, who must be an active user (the actor, as on
   * every operation that takes one). Reads, counts nothing.
   */
  async usage(ctx: ActorContext): Promise<RateLimitUsage> {
    const uid = ctx.onBehalfOf;
    const window = windowOf(this.deps.now());
    const reset = windowEndSeconds(window);
    const classes: RateLimitClass[] = [...APP_CLASSES, ...(uid === undefined ? [] : USER_CLASSES)];
    const counts = await this.deps.counters.read(ctx.appId, window, uid);
    const usage: RateLimitUsage = {};
    for (const cls of classes) {
      const limit = this.limitOf(ctx, cls);
      if (limit > 0) usage[cls] = { limit, remaining: Math.max(0, limit - counts[cls]), reset };
    }
    return usage;
  }
}

function addressCounter(address: string): string {
  return `auth:addr:${clientAddressKey(address)}`;
}

function appCounter(appId: string): string {
  return `auth:app:${appId}`;
}
