import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import {
  DEFAULT_CONNECTION_TIMEOUT_MS,
  DEFAULT_EVENT_RETENTION_MS,
  DEFAULT_EVENT_STREAMS,
  DEFAULT_GATEWAY,
  DEFAULT_IMPORT_BODY_LIMIT,
  DEFAULT_IMPORT_CONCURRENCY,
  DEFAULT_IMPORT_UPLOAD_RATE,
  DEFAULT_REQUEST_TIMEOUT_MS,
  type Config,
} from './config.js';
import { createServices, type Services } from './container.js';
import { openRateLimitCounters } from './container-shared.js';
import type { NotificationEndpoints } from './container-notifications.js';
import type { Database } from './db/database.js';
import { withDefaults, type RateLimits } from './domain/rate-limits.js';
import { frameworkErrorHandler, installErrorHandling } from './http/plugins/error-handler.js';
import { ImportCallLimiter } from './http/plugins/import-limits.js';
import { trackInFlight } from './http/plugins/in-flight.js';
import { installOpenApi } from './http/plugins/openapi.js';
import { installCors } from './http/plugins/cors.js';
import { installTextGuard, textProblemOf } from './http/plugins/text-guard.js';
import { installRequestMetrics } from './http/plugins/metrics.js';
import { requestIdOf } from './http/plugins/request-id.js';
import { databaseReadiness } from './db/readiness.js';
import type { Metrics } from './metrics/registry.js';
import { badRequest } from './domain/errors.js';
import { dataImportRoutes } from './http/routes/data-import/index.js';
import { managementRoutes } from './http/routes/mgmt/index.js';
import { setEventStreamLimits } from './http/routes/v3/events.routes.js';
import { v3Routes } from './http/routes/v3/index.js';
import { gatewayRoutes } from './http/gateway/index.js';
import { demoRoutes } from './http/demo/demo.routes.js';
import { createGateway } from './container-gateway.js';
import type { Gateway } from './services/gateway/gateway.js';
import { serializerCompiler } from './schemas/serializer.js';
import { validatorCompiler } from './schemas/validator.js';
import { PARLEY_VERSION } from './version.js';

export interface BuildAppOptions {
  config: Pick<Config, 'region' | 'domain' | 'bodyLimit'> &
    Partial<
      Pick<
        Config,
        | 'webhookAllowPrivate'
        | 'importMaxRecords'
        | 'importBodyLimit'
        | 'importConcurrency'
        | 'importUploadRate'
        | 'authFailureLimits'
        | 'requestTimeoutMs'
        | 'connectionTimeoutMs'
        | 'eventRetentionMs'
        | 'eventStreams'
        | 'gateway'
        | 'webhookTimeoutMs'
        | 'webhookRetry'
        | 'corsOrigins'
        | 'demo'
      >
    > &
    RateLimitConfig;
  database: Database;
  /** The clock of the rate-limit windows, in ms (tests); Date.now by default. */
  clock?: () => number;
  /** A Fastify logger option; silent when neither this nor loggerInstance is given. */
  logger?: FastifyServerOptions['logger'];
  /** A pino logger to use as the request logger. */
  loggerInstance?: FastifyBaseLogger;
  /** Fastify's https options, or undefined for plain HTTP. */
  https?: { key: string | Buffer; cert: string | Buffer };
  /**
   * Parts left out, for the bench's A/B of what they cost (bench/hardening-ab.ts) and nothing
   * else: no configuration reaches this. `edgeChecks`: the text and depth checks of bodies,
   * params, query and headers; `rateLimits`: the rate-limit hooks and headers; `metrics`: the
   * metrics even when PARLEY_METRICS_PORT is set (read by startServer, bench/metrics-ab.ts).
   */
  without?: { edgeChecks?: true; rateLimits?: true; metrics?: true };
  /** The process's metrics (docs/metrics.md): requests counted and the parts' stats registered; none when absent. */
  metrics?: Metrics;
  /** The event feed's polling (tests of its wake-ups; see createServices). */
  eventFeedPace?: { pollMs: number; idlePollMs: number };
  /** The key provider secrets are sealed with (see loadSecretKey); a new one per process when absent. */
  secretKey?: Buffer;
  /** Where the notification providers are (tests' local fakes; see createServices). */
  notificationEndpoints?: NotificationEndpoints;
}

/** Rate limits: production's for the classes not given (PARLEY_RATE_LIMITS); counted in memory without a Redis URL. */
type RateLimitConfig = Partial<Pick<Config, 'redisUrl' | 'redisKeyPrefix'>> & { rateLimits?: Partial<RateLimits> };

export interface ParleyApp {
  app: FastifyInstance;
  services: Services;
  /** The WebSocket gateway (docs/realtime.md). */
  gateway: Gateway;
  /** Resolves true once no request handler is running (see trackInFlight), false on timeout. */
  drained(timeoutMs: number): Promise<boolean>;
}

/** The methods of requests that change something. */
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Builds the server without listening, so tests can inject requests. */
export async function buildApp(options: BuildAppOptions): Promise<ParleyApp> {
  const tenancy = { region: options.config.region, domain: options.config.domain };
  const fastifyOptions: FastifyServerOptions = {
    ...(options.loggerInstance ? { loggerInstance: options.loggerInstance } : { logger: options.logger ?? false }),
    bodyLimit: options.config.bodyLimit,
    // The caller's X-Request-Id when acceptable, else a new UUID (see requestIdOf).
    genReqId: requestIdOf,
    // Every log line of a request carries its id under the name its error bodies give it.
    logController: new LogController({ requestIdLogLabel: 'requestId' }),
    // A client has this long to send a whole request; a connection silent both ways this long is
    // closed (docs/timeouts.md). Handlers are bounded by the database's timeouts.
    requestTimeout: options.config.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    connectionTimeout: options.config.connectionTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUT_MS,
    // Requests arriving during shutdown are answered by trackInFlight, in the vendor's shape.
    return503OnClosing: false,
    // A conversation id is two uids of up to 100 characters and `_user_`; longer path values
    // are refused by the routes' schemas, and beyond this by frameworkErrorHandler.
    routerOptions: { maxParamLength: 512 },
    frameworkErrors: frameworkErrorHandler,
  };
  // The https and http overloads of Fastify() return differently typed instances; the routes
  // don't care which server carries them.
  const app = Fastify((options.https ? { ...fastifyOptions, https: options.https } : fastifyOptions) as FastifyServerOptions) as unknown as FastifyInstance;
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  const counters = await openRateLimitCounters({ redisUrl: options.config.redisUrl, keyPrefix: options.config.redisKeyPrefix, log: app.log });
  app.addHook('onClose', () => counters.close());
  const rateLimits = { limits: withDefaults(options.config.rateLimits), counters, now: options.clock, authFailures: options.config.authFailureLimits };
  const services = createServices(options.database, tenancy, {
    importMaxRecords: options.config.importMaxRecords,
    webhookAllowPrivate: options.config.webhookAllowPrivate,
    rateLimits,
    eventRetentionMs: options.config.eventRetentionMs,
    webhookTimeoutMs: options.config.webhookTimeoutMs,
    webhookRetry: options.config.webhookRetry,
    ...(options.eventFeedPace ? { eventFeedPace: options.eventFeedPace } : {}),
    ...(options.secretKey ? { secretKey: options.secretKey } : {}),
    ...(options.notificationEndpoints ? { notificationEndpoints: options.notificationEndpoints } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
  // The WebSocket gateway and its SSE fallback (docs/realtime.md): see container-gateway.ts.
  const gateway = createGateway(options.database, {
    config: options.config.gateway ?? DEFAULT_GATEWAY,
    feed: services.eventFeed,
    payloads: services.eventPayloads,
    authTokens: services.authTokens,
    apps: services.apps,
    revocations: services.revocations,
    retentionMs: options.config.eventRetentionMs ?? DEFAULT_EVENT_RETENTION_MS,
    retention: services.eventRetention,
    committed: () => services.eventSignals.committed(app.log),
    log: app.log,
  });
  app.addHook('onClose', async () => {
    await gateway.stop();
    await services.eventDispatcher.stop();
    await services.statsAggregator.stop();
    await services.eventFeed.stop();
  });

  const inFlight = trackInFlight(app);
  // Browser pages on the origins configured (docs/client-api.md): preflights answered before any other hook.
  installCors(app, options.config.corsOrigins ?? []);
  // Every route's answers counted by template and status (docs/metrics.md): before any route.
  if (options.metrics) installRequestMetrics(app, options.metrics.requests);
  // JSON bodies: nesting and text checked as they are parsed (see text-guard.ts).
  const edgeChecks = options.without?.edgeChecks !== true;
  if (edgeChecks) installTextGuard(app);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // One hook before validation, on every request: the edge's text check of the path
  // parameters, query and headers; then a route with an optional body sees `{}` when none was
  // sent (required fields still fail).
  app.addHook('preValidation', (request, _reply, done) => {
    const problem = edgeChecks ? textProblemOf(request) : undefined;
    if (problem) return done(badRequest(problem));
    if (request.body === undefined && request.routeOptions.schema?.body) request.body = {};
    done();
  });
  installErrorHandling(app, { bodyLimit: options.config.bodyLimit });
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    done(null, payload);
  });
  // A write answered without an error has committed, and may have recorded events: the event
  // feeds look at the log now instead of at their next poll (see EventSignals).
  app.addHook('onResponse', (request, reply, done) => {
    if (WRITES.has(request.method) && reply.statusCode < 400) services.eventSignals.committed(request.log);
    done();
  });
  await installOpenApi(app, tenancy, PARLEY_VERSION);

  // Liveness: the process answers. Readiness: the database answers and is migrated; while the
  // server drains at shutdown, trackInFlight answers every request (this one too) 503.
  typed.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  const notReady = databaseReadiness(options.database);
  typed.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const reason = await notReady();
    return reason === undefined ? { status: 'ready' } : reply.status(503).send({ status: 'unavailable', reason });
  });
  const rateLimited = options.without?.rateLimits !== true;
  // The caps of the live event streams (docs/events.md), read by its route.
  setEventStreamLimits(app, options.config.eventStreams ?? DEFAULT_EVENT_STREAMS);
  await typed.register(v3Routes, { prefix: '/v3', services, tenancy, rateLimited });
  // The same general API under /v3.0, where the vendor's client SDKs call it (docs/client-api.md); hidden from the OpenAPI document.
  await typed.register(v3Routes, { prefix: '/v3.0', services, tenancy, rateLimited, hidden: true });
  // The gateway (docs/realtime.md): GET /v3/ws and GET /v3/me/events, on users' auth tokens, outside the apiKey hook.
  await app.register(gatewayRoutes, { gateway, config: options.config.gateway ?? DEFAULT_GATEWAY, tenancy });
  // The demo chat page (docs/demo.md): only when PARLEY_DEMO=1, else /demo/ is the API's 404.
  if (options.config.demo) await app.register(demoRoutes);
  // The management API (docs/management-api.md): the vendor's paths on the host apimgmt.<domain>,
  // and the same operations under /mgmt on any host.
  await typed.register(managementRoutes, { services, tenancy, vendorHost: true });
  await typed.register(managementRoutes, { prefix: '/mgmt', services, tenancy, vendorHost: false });
  // The data import API at both base paths; the OpenAPI document lists the /v3 one.
  const importBodyLimit = options.config.importBodyLimit ?? DEFAULT_IMPORT_BODY_LIMIT;
  // One bound on the import calls in flight for both prefixes.
  const importCalls = new ImportCallLimiter(options.config.importConcurrency ?? DEFAULT_IMPORT_CONCURRENCY, options.config.importUploadRate ?? DEFAULT_IMPORT_UPLOAD_RATE);
  for (const [prefix, hidden] of [
    ['/v3/data_import', false],
    ['/v3.0/data_import', true],
  ] as const) {
    await typed.register(dataImportRoutes, { prefix, services, tenancy, bodyLimit: importBodyLimit, hidden, importCalls, rateLimited });
  }
  await app.ready();
  return { app, services, gateway, drained: inFlight.drained };
}
