import crypto from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { DEFAULT_IMPORT_BODY_LIMIT, type Config } from './config.js';
import { createServices, openRateLimitCounters, type Services } from './container.js';
import type { Database } from './db/database.js';
import { withDefaults, type RateLimits } from './domain/rate-limits.js';
import { frameworkErrorHandler, installErrorHandling } from './http/plugins/error-handler.js';
import { assertNoNulInJson, assertNoNulInRequest } from './http/plugins/nul-guard.js';
import { trackInFlight } from './http/plugins/in-flight.js';
import { installOpenApi } from './http/plugins/openapi.js';
import { dataImportRoutes } from './http/routes/data-import/index.js';
import { v3Routes } from './http/routes/v3/index.js';
import { validatorCompiler } from './schemas/validator.js';
import { PARLEY_VERSION } from './version.js';

export interface BuildAppOptions {
  config: Pick<Config, 'region' | 'domain' | 'bodyLimit'> & Partial<Pick<Config, 'importMaxRecords' | 'importBodyLimit'>> & RateLimitConfig;
  database: Database;
  /** The clock of the rate-limit windows, in ms (tests); Date.now by default. */
  clock?: () => number;
  /** A Fastify logger option; silent when neither this nor loggerInstance is given. */
  logger?: FastifyServerOptions['logger'];
  /** A pino logger to use as the request logger. */
  loggerInstance?: FastifyBaseLogger;
  /** Fastify's https options, or undefined for plain HTTP. */
  https?: { key: string | Buffer; cert: string | Buffer };
}

/** Rate limits: production's for the classes not given (PARLEY_RATE_LIMITS); counted in memory without a Redis URL. */
type RateLimitConfig = Partial<Pick<Config, 'redisUrl' | 'redisKeyPrefix'>> & { rateLimits?: Partial<RateLimits> };

export interface ParleyApp {
  app: FastifyInstance;
  services: Services;
  /** Resolves true once no request handler is running (see trackInFlight), false on timeout. */
  drained(timeoutMs: number): Promise<boolean>;
}

/** Builds the server without listening, so tests can inject requests. */
export async function buildApp(options: BuildAppOptions): Promise<ParleyApp> {
  const tenancy = { region: options.config.region, domain: options.config.domain };
  const fastifyOptions: FastifyServerOptions = {
    ...(options.loggerInstance ? { loggerInstance: options.loggerInstance } : { logger: options.logger ?? false }),
    bodyLimit: options.config.bodyLimit,
    genReqId: () => crypto.randomUUID(),
    // Answer 503 to requests arriving during shutdown, finish those in flight.
    return503OnClosing: true,
    // A conversation id is two uids of up to 100 characters and `_user_`; longer path values
    // are refused by the routes' schemas, and beyond this by frameworkErrorHandler.
    routerOptions: { maxParamLength: 512 },
    frameworkErrors: frameworkErrorHandler,
  };
  // The https and http overloads of Fastify() return differently typed instances; the routes
  // don't care which server carries them.
  const app = Fastify(
    (options.https ? { ...fastifyOptions, https: options.https } : fastifyOptions) as FastifyServerOptions,
  ) as unknown as FastifyInstance;
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  const counters = await openRateLimitCounters({ redisUrl: options.config.redisUrl, keyPrefix: options.config.redisKeyPrefix, log: app.log });
  app.addHook('onClose', () => counters.close());
  const rateLimits = { limits: withDefaults(options.config.rateLimits), counters, now: options.clock };
  const services = createServices(options.database, tenancy, { importMaxRecords: options.config.importMaxRecords, rateLimits });

  // An empty body with a JSON content type (common on DELETE) is read as no body.
  const jsonParser = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (text === '') return done(null, undefined);
    jsonParser(request, text, (error, parsed) => {
      if (error) return done(error, undefined);
      try {
        assertNoNulInJson(text, parsed);
        done(null, parsed);
      } catch (refused) {
        done(refused as Error, undefined);
      }
    });
  });

  app.setValidatorCompiler(validatorCompiler);
  // A route with an optional body sees `{}` when none was sent; required fields still fail.
  app.addHook('preValidation', (request, _reply, done) => {
    try {
      assertNoNulInRequest(request);
    } catch (error) {
      return done(error as Error);
    }
    if (request.body === undefined && request.routeOptions.schema?.body) request.body = {};
    done();
  });
  const inFlight = trackInFlight(app);
  installErrorHandling(app, { bodyLimit: options.config.bodyLimit });
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    done(null, payload);
  });
  await installOpenApi(app, tenancy, PARLEY_VERSION);

  typed.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  await typed.register(v3Routes, { prefix: '/v3', services, tenancy });
  // The data import API at both base paths; the OpenAPI document lists the /v3 one.
  const importBodyLimit = options.config.importBodyLimit ?? DEFAULT_IMPORT_BODY_LIMIT;
  for (const [prefix, hidden] of [['/v3/data_import', false], ['/v3.0/data_import', true]] as const) {
    await typed.register(dataImportRoutes, { prefix, services, tenancy, bodyLimit: importBodyLimit, hidden });
  }
  await app.ready();
  return { app, services, drained: inFlight.drained };
}
