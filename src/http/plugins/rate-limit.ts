import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestHookHandler } from 'fastify';
import { AppError } from '../../domain/errors.js';
import { ID_MAX_LENGTH, normalizeId } from '../../domain/normalize.js';
import type { AppClass, UserClass } from '../../domain/rate-limits.js';
import type { RateLimitHit } from '../../repositories/rate-limit-counters.js';
import type { RateLimitsService } from '../../services/rate-limits.service.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route's rate-limit class: standard unless it says otherwise. `uncounted`: neither
     * counted nor refused (reading the limits).
     */
    rateLimit?: AppClass | 'uncounted';
    /** A per-user class the route also counts against, for the onBehalfOf user. */
    perUserLimit?: UserClass;
    /** The path parameter naming that user instead of onBehalfOf (the bot of send-bot-message). */
    perUserParam?: string;
  }
}

/** The rate-limit headers of a response: both spellings the vendor's docs use (NOTES.md §2.2). */
export function setRateLimitHeaders(reply: FastifyReply, limit: number, remaining: number, reset: number): void {
  reply.header('x-rate-limit', limit);
  reply.header('x-rate-limit-remaining', remaining);
  reply.header('x-ratelimit-limit', limit);
  reply.header('x-ratelimit-remaining', remaining);
  reply.header('x-ratelimit-reset', reset);
}

/**
 * Rate limits for every route registered in `scope` after this call: each route gets an
 * onRequest hook of its own, bound to its class when the route is registered, that runs after
 * the scope's authentication (route hooks follow the scope's) and before the body is read. A
 * refused request is answered 429 with nothing else done.
 */
export function installRateLimits(scope: FastifyInstance, limits: RateLimitsService): void {
  scope.addHook('onRoute', (route) => {
    const config = route.config ?? {};
    if (config.rateLimit === 'uncounted') return;
    const hook = rateLimitHook(limits, config.rateLimit ?? 'standard', config.perUserLimit, config.perUserParam);
    const existing = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    // A new array: Fastify's HEAD twin of a GET route shares the original one.
    route.onRequest = [...existing, hook];
  });
}

function rateLimitHook(limits: RateLimitsService, cls: AppClass, userClass: UserClass | undefined, userParam: string | undefined): onRequestHookHandler {
  // A callback hook, not an async one: it runs on every request, and with the memory counters
  // it completes synchronously with no promise.
  return function checkRateLimit(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
    const uid = userClass === undefined ? undefined : userOf(request, userParam);
    let hit: RateLimitHit | Promise<RateLimitHit> | undefined;
    try {
      hit = limits.hit(request.ctx, cls, userClass, uid);
    } catch (error) {
      return done(error as Error);
    }
    if (hit === undefined) return done();
    if (hit instanceof Promise) {
      hit.then((counted) => answer(reply, counted, done), done);
      return;
    }
    answer(reply, hit, done);
  };
}

/** The user a per-user limit counts: the onBehalfOf user, or the one the path names. */
function userOf(request: FastifyRequest, param: string | undefined): string | undefined {
  const raw = param === undefined ? request.ctx.onBehalfOf : (request.params as Record<string, string | undefined>)[param];
  // No valid uid is longer; such a request fails its validation anyway.
  if (raw === undefined || raw === '' || raw.length > ID_MAX_LENGTH) return undefined;
  return param === undefined ? raw : normalizeId(raw);
}

function answer(reply: FastifyReply, hit: RateLimitHit, done: HookHandlerDoneFunction): void {
  setRateLimitHeaders(reply, hit.reportedLimit, hit.reportedRemaining, hit.reset);
  if (hit.refusedBy === 0) return done();
  reply.header('x-rate-limit-reset', hit.reset);
  done(new AppError('ERR_TOO_MANY_REQUESTS', { params: { seconds: hit.retryAfter }, retryAfter: hit.retryAfter }));
}
