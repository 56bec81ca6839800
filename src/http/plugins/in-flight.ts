import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../domain/errors.js';

const COUNTED = Symbol('countedInFlight');
const RELEASE = Symbol('releaseInFlight');
type Counted = FastifyRequest & { [COUNTED]?: boolean };

/**
 * A request whose reply was hijacked (the event stream) gets no onSend: it stops counting when
 * its response closes (the client went, or the shutdown ended it), told by this.
 */
export function hijackedReplyClosed(request: FastifyRequest): void {
  (request.server as unknown as { [RELEASE]?: (request: Counted) => void })[RELEASE]?.(request);
}

/**
 * Counts the requests whose handlers are still running. Closing the server waits for open
 * sockets only: a client that hangs up mid-request leaves its handler running with no socket,
 * and the database must stay open until that handler is done. A request counts from its first
 * hook until its reply is sent (onSend runs even when the client has gone).
 *
 * Once the server is closing, a request that still arrives on an open connection is answered
 * 503 ERR_MISSION_FAILED in the vendor's shape (with Retry-After, and the connection closed), so
 * the client retries elsewhere; Fastify's own 503 has another shape. Both in one onRequest hook:
 * it runs on every request.
 */
export function trackInFlight(app: FastifyInstance): { drained(timeoutMs: number): Promise<boolean> } {
  let running = 0;
  let closing = false;
  let idle: Array<() => void> = [];
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  // Callback hooks, not async ones: they run on every request, and a promise each costs more than the work.
  app.addHook('onRequest', (request: Counted, reply, done) => {
    request[COUNTED] = true;
    running++;
    if (!closing) return done();
    void reply.header('connection', 'close');
    done(new AppError('ERR_MISSION_FAILED', { message: 'The server is shutting down. Retry the request.', retryAfter: 1 }));
  });
  const release = (request: Counted) => {
    if (!request[COUNTED]) return;
    request[COUNTED] = false;
    if (--running === 0) {
      const waiting = idle;
      idle = [];
      for (const resolve of waiting) resolve();
    }
  };
  app.decorate(RELEASE, release);
  app.addHook('onSend', (request: Counted, _reply, payload, done) => {
    release(request);
    done(null, payload);
  });
  return {
    /** Resolves true once no handler runs, or false after `timeoutMs`. */
    drained(timeoutMs) {
      if (running === 0) return Promise.resolve(true);
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), timeoutMs);
        idle.push(() => {
          clearTimeout(timer);
          resolve(true);
        });
      });
    },
  };
}
