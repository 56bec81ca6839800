import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import type { Services } from '../../src/container.js';
import type { NotificationEndpoints } from '../../src/container-notifications.js';
import type { Database } from '../../src/db/database.js';
import { silentLogger } from '../../src/domain/context.js';
import type { RateLimits } from '../../src/domain/rate-limits.js';
import type { Gateway } from '../../src/services/gateway/gateway.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { createTestDatabase, type TestDatabaseOptions } from './db.js';

export const TEST_REGION = 'us';
export const TEST_DOMAIN = 'parley.test';

export interface CallOptions {
  method?: InjectOptions['method'];
  body?: unknown;
  query?: Record<string, string | string[]>;
  headers?: Record<string, string>;
  /** Which key: the app's fullAccess key (default), its authOnly key, a literal key, or none. */
  key?: 'full' | 'auth' | 'none' | { literal: string };
  onBehalfOf?: string;
}

export interface TestApp {
  app: FastifyInstance;
  services: Services;
  /** The WebSocket gateway (docs/realtime.md). */
  gateway: Gateway;
  database: Database;
  /** The database's connection string, on PostgreSQL. */
  url: string | undefined;
  /** Two tenants, so every test can check that the other sees nothing. */
  appA: CreatedApp;
  appB: CreatedApp;
  /** A request to `app`'s host with its key. */
  call(app: CreatedApp, url: string, options?: CallOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export function hostOf(app: { appId: string }, region = TEST_REGION): string {
  return `${app.appId}.api-${region}.${TEST_DOMAIN}`;
}

/**
 * Config a test may change, e.g. a small data import maximum, or rate limits (production's by
 * default) with the clock of their windows, or the domain (`localhost`: a real client reaches
 * `<appId>.api-us.localhost` on a listening app; `call` then needs an `appId` header).
 */
export type TestConfig = Partial<
  Pick<
    Config,
    | 'domain'
    | 'webhookAllowPrivate'
    | 'webhookTimeoutMs'
    | 'webhookRetry'
    | 'corsOrigins'
    | 'bodyLimit'
    | 'importMaxRecords'
    | 'importBodyLimit'
    | 'importConcurrency'
    | 'importUploadRate'
    | 'authFailureLimits'
    | 'eventStreams'
    | 'gateway'
    | 'redisUrl'
    | 'redisKeyPrefix'
  >
> & {
  rateLimits?: Partial<RateLimits>;
  clock?: () => number;
  /** The event feed's polling (see createServices). */
  eventFeedPace?: { pollMs: number; idlePollMs: number };
  /** Where the notification providers are: local fakes (see createServices). */
  notificationEndpoints?: NotificationEndpoints;
};

export async function createTestApp(options: TestConfig = {}, databaseOptions: TestDatabaseOptions = {}): Promise<TestApp> {
  const testDb = await createTestDatabase(databaseOptions);
  const { clock, eventFeedPace, notificationEndpoints, ...config } = options;
  const { app, services, gateway } = await buildApp({
    // Webhooks may call loopback receivers in tests (PARLEY_WEBHOOK_ALLOW_PRIVATE=1) unless a test says
    // otherwise; failed authentications are not limited (every injected request comes from one
    // address, and many tests send wrong keys on purpose) unless a test sets authFailureLimits.
    config: { region: TEST_REGION, domain: TEST_DOMAIN, bodyLimit: 1024 * 1024, webhookAllowPrivate: true, authFailureLimits: { perAddress: 0, perApp: 0 }, ...config },
    database: testDb.database,
    clock,
    ...(eventFeedPace ? { eventFeedPace } : {}),
    ...(notificationEndpoints ? { notificationEndpoints } : {}),
    logger: process.env.PARLEY_TEST_LOG ? { level: process.env.PARLEY_TEST_LOG } : false,
  });
  const newApp = (name: string) => services.apps.create({ appId: '', requestId: 'test', log: silentLogger }, { name });
  const appA = await newApp('Test app A');
  const appB = await newApp('Test app B');
  return {
    app,
    services,
    gateway,
    database: testDb.database,
    url: testDb.url,
    appA,
    appB,
    call(target, url, options = {}) {
      const headers: Record<string, string> = { host: hostOf(target), ...options.headers };
      const key = options.key ?? 'full';
      if (key === 'full') headers.apikey = target.apiKey;
      else if (key === 'auth') headers.apikey = target.authKey;
      else if (key !== 'none') headers.apikey = key.literal;
      if (options.onBehalfOf !== undefined) headers.onbehalfof = options.onBehalfOf;
      return app.inject({
        method: options.method ?? 'GET',
        url,
        headers,
        ...(options.query ? { query: options.query } : {}),
        ...(options.body !== undefined ? { payload: options.body as InjectOptions['payload'] } : {}),
      });
    },
    async close() {
      await app.close();
      await testDb.drop();
    },
  };
}

/** A unique id for a test object. */
export function uniqueId(prefix = 'u'): string {
  return `${prefix}-${crypto.randomBytes(5).toString('hex')}`;
}

/** The parsed body of a response. */
export function body<T = any>(response: LightMyRequestResponse): T {
  return response.json() as T;
}

/** The `data` of a call as `onBehalfOf` (if any) that must succeed (2xx). */
export async function okData(t: TestApp, app: CreatedApp, method: string, url: string, onBehalfOf: string | undefined, payload?: unknown): Promise<any> {
  const response = await t.call(app, url, { method: method as 'GET', ...(onBehalfOf ? { onBehalfOf } : {}), ...(payload ? { body: payload } : {}) });
  assert.ok(response.statusCode < 300, `${method} ${url}: ${response.body}`);
  return body(response).data;
}

/** The error code of a response. */
export function errorCode(response: LightMyRequestResponse): string | undefined {
  return (response.json() as { error?: { code?: string } }).error?.code;
}

/** A management credential of the test deployment (docs/management-api.md). */
export interface ManagementCredential {
  key: string;
  secret: string;
}

export async function newManagementCredential(t: TestApp): Promise<ManagementCredential> {
  const created = await t.services.management.createKey({ appId: '', requestId: 'test', log: silentLogger });
  return { key: created.key, secret: created.secret };
}

/**
 * A management API request: `/mgmt<path>` on any host, or with `vendorHost` the vendor's path on
 * apimgmt.<domain>. `credential` false sends no key or secret.
 */
export function managementCall(
  t: TestApp,
  credential: ManagementCredential | false,
  path: string,
  options: { method?: InjectOptions['method']; body?: unknown; query?: Record<string, string>; headers?: Record<string, string>; vendorHost?: boolean } = {},
): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { host: options.vendorHost ? `apimgmt.${TEST_DOMAIN}` : 'localhost', ...options.headers };
  if (credential) {
    headers.key = credential.key;
    headers.secret = credential.secret;
  }
  return t.app.inject({
    method: options.method ?? 'GET',
    url: options.vendorHost ? path : `/mgmt${path}`,
    headers,
    ...(options.query ? { query: options.query } : {}),
    ...(options.body !== undefined ? { payload: options.body as InjectOptions['payload'] } : {}),
  });
}
