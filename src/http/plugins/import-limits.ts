import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../domain/errors.js';

/** At most this many data import calls run at once: per server, and per app. */
export interface ImportConcurrency {
  perServer: number;
  perApp: number;
}

/** Seconds a refused import call is told to wait: one call of the batch ahead takes about that. */
const RETRY_AFTER_SECONDS = 1;

const HOLDS = Symbol('holdsImportPlace');
type Holding = FastifyRequest & { [HOLDS]?: string };

/**
 * Bounds the data import calls in flight. A call holds tens to hundreds of MB while it runs (its
 * body, its records, its answer), so without a bound a few clients can exhaust the process for
 * every app. A call beyond the bound is answered 429 ERR_TOO_MANY_REQUESTS with Retry-After
 * before its body is read, having done nothing; the import client retries it.
 *
 * One limiter serves both prefixes of the import routes; `install` adds its hooks to a scope
 * whose authentication hook runs first (the app is known).
 */
export class ImportCallLimiter {
  private running = 0;
  private readonly perApp = new Map<string, number>();

  constructor(private readonly limits: ImportConcurrency) {}

  install(scope: FastifyInstance): void {
    scope.addHook('onRequest', (request: Holding, _reply, done) => {
      const appId = request.ctx.appId;
      const ofApp = this.perApp.get(appId) ?? 0;
      if (this.running >= this.limits.perServer || ofApp >= this.limits.perApp) {
        const scope = ofApp >= this.limits.perApp ? `${this.limits.perApp} per app` : `${this.limits.perServer} on this server`;
        return done(
          new AppError('ERR_TOO_MANY_REQUESTS', {
            message: `Too many data import calls at once (at most ${scope}). Retry after the specified time.`,
            retryAfter: RETRY_AFTER_SECONDS,
          }),
        );
      }
      this.running++;
      this.perApp.set(appId, ofApp + 1);
      request[HOLDS] = appId;
      done();
    });
    // onSend runs once the handler is done, even when the client has gone (see in-flight.ts).
    scope.addHook('onSend', (request: Holding, _reply, payload, done) => {
      const appId = request[HOLDS];
      if (appId !== undefined) {
        request[HOLDS] = undefined;
        this.running--;
        const left = (this.perApp.get(appId) ?? 1) - 1;
        if (left > 0) this.perApp.set(appId, left);
        else this.perApp.delete(appId);
      }
      done(null, payload);
    });
  }
}
