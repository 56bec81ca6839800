import type { FastifyInstance } from 'fastify';

/** The request headers a browser page may send across origins: the API's own, and the body's type. */
const ALLOWED_HEADERS = 'appId, authToken, apiKey, onBehalfOf, resource, sdk, Content-Type, X-Request-Id, Last-Event-ID';
/** The answer headers a page may read: the request id and the rate limits' (docs/rate-limits.md). */
const EXPOSED_HEADERS = 'X-Request-Id, Retry-After, X-Rate-Limit, X-Rate-Limit-Remaining, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset';
const METHODS = 'GET, POST, PUT, PATCH, DELETE';
/** How long a browser may keep a preflight's answer, seconds. */
const MAX_AGE_SECONDS = 600;

/**
 * Cross-origin requests from browser pages (docs/client-api.md, "Browsers on another origin"):
 * for an `Origin` in `origins` (or any, with `*`), every answer says so and a preflight
 * (`OPTIONS` with `Access-Control-Request-Method`) is answered 204 before any other hook, so it
 * needs no credential. Another origin gets no CORS headers: its browser refuses the answer. No
 * cookies are used, so no credentials are allowed (`Access-Control-Allow-Credentials` is never sent).
 */
export function installCors(app: FastifyInstance, origins: readonly string[]): void {
  if (origins.length === 0) return;
  const any = origins.includes('*');
  const allowed = new Set(origins.map((origin) => origin.toLowerCase()));
  app.addHook('onRequest', (request, reply, done) => {
    const origin = request.headers.origin;
    if (origin === undefined) return done();
    reply.header('vary', 'Origin');
    if (!any && !allowed.has(origin.toLowerCase())) return done();
    reply.header('access-control-allow-origin', any ? '*' : origin);
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
      reply.header('access-control-allow-methods', METHODS).header('access-control-allow-headers', ALLOWED_HEADERS).header('access-control-max-age', String(MAX_AGE_SECONDS)).code(204).send();
      return;
    }
    reply.header('access-control-expose-headers', EXPOSED_HEADERS);
    done();
  });
}
