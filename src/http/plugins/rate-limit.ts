import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestHookHandler } from 'fastify';
import type { RequestContext } from '../../domain/context.js';
import { AppError } from '../../domain/errors.js';
import { ID_MAX_LENGTH, normalizeId } from '../../domain/normalize.js';
import type { AppClass, UserClass } from '../../domain/rate-limits.js';
import type { RateLimitsService } from '../../services/rate-limits.service.js';

/** A request's count, as the service answers it (the HTTP layer reaches no repository, even for a type). */
type RateLimitHit = NonNullable<Awaited<ReturnType<RateLimitsService['hit']>>>;

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

/** The rate-limit headers of a response: both spellings the vendor's docs use (docs/rate-limits.md). */
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
      hit.then((counted) => answer(limits, reply, counted, done), done);
      return;
    }
    answer(limits, reply, hit, done);
  };
}

/** The user a per-user limit counts: the onBehalfOf user, or the one the path names. */
function userOf(request: FastifyRequest, param: string | undefined): string | undefined {
  const raw = param === undefined ? request.ctx.onBehalfOf : (request.params as Record<string, string | undefined>)[param];
  // No valid uid is longer; such a request fails its validation anyway.
  if (raw === undefined || raw === '' || raw.length > ID_MAX_LENGTH) return undefined;
  return param === undefined ? raw : normalizeId(raw);
}

function answer(limits: RateLimitsService, reply: FastifyReply, hit: RateLimitHit, done: HookHandlerDoneFunction): void {
  setRateLimitHeaders(reply, hit.reportedLimit, hit.reportedRemaining, hit.reset);
  if (hit.refusedBy === 0) {
    done();
    return;
  }
  limits.refused(hit);
  reply.header('x-rate-limit-reset', hit.reset);
  done(new AppError('ERR_TOO_MANY_REQUESTS', { params: { seconds: hit.retryAfter }, retryAfter: hit.retryAfter }));
}

/** The refusals that count as failed authentications: a wrong or missing key, app, management secret or auth token. */
const FAILED_AUTHENTICATIONS = new Set([
  'AUTH_ERR_INVALID_APPID',
  'AUTH_ERR_EMPTY_APIKEY',
  'AUTH_ERR_APIKEY_NOT_FOUND',
  'AUTH_ERR_EMPTY_AUTH_HEADER',
  'AUTH_ERR_EMPTY_AUTH_TOKEN',
  'AUTH_ERR_AUTH_TOKEN_NOT_FOUND',
]);

function tooManyFailures(seconds: number): AppError {
  return new AppError('ERR_TOO_MANY_REQUESTS', {
    message: `Too many failed authentications from this address or for this app: retry after ${seconds} seconds (Retry-After).`,
    retryAfter: seconds,
  });
}

/**
 * The limit on failed authentications (docs/rate-limits.md), for the authentication hooks:
 * `check` before a credential lookup (429 once the client address or the app has used up its
 * minute's failures, so refused credentials stop costing lookups), `refused` after a refusal
 * (counts it; the refusal that finds a limit reached answers 429 instead).
 */
export class AuthFailureGuard {
  constructor(private readonly limits: RateLimitsService) {}

  async check(request: FastifyRequest, ctx: RequestContext): Promise<void> {
    const wait = await this.limits.authFailuresBlocked(ctx, request.ip);
    if (wait > 0) throw tooManyFailures(wait);
  }

  /** Throws `error`, after counting it when it is a failed authentication (or a 429 in its place). */
  async refused(request: FastifyRequest, ctx: RequestContext, error: unknown): Promise<never> {
    if (!(error instanceof AppError) || !FAILED_AUTHENTICATIONS.has(error.code)) throw error;
    const wait = await this.limits.authFailed(ctx, request.ip, error.code !== 'AUTH_ERR_INVALID_APPID');
    throw wait > 0 ? tooManyFailures(wait) : error;
  }
}
