import type { RequestContext } from '../domain/context.js';
import {
  APP_CLASSES,
  USER_CLASSES,
  windowEndSeconds,
  windowOf,
  type AppClass,
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
  constructor(
    private readonly deps: {
      counters: RateLimitCounters;
      /** The deployment's limits (PARLEY_RATE_LIMITS). */
      limits: Readonly<RateLimits>;
      /** The clock, in ms since the epoch. */
      now: () => number;
    },
  ) {}

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
