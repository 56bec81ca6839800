import { DEFAULT_GATEWAY, GATEWAY_VARS, type GatewayConfig } from './config-gateway.js';

export { DEFAULT_GATEWAY, type GatewayConfig } from './config-gateway.js';
import path from 'node:path';
import { DEFAULT_RETRY_SCHEDULE, type RetrySchedule } from './domain/webhooks.js';
import { DEFAULT_AUTH_FAILURE_LIMITS, MAX_RATE_LIMIT, parseRateLimits, RateLimitsFormatError, withDefaults, type RateLimits } from './domain/rate-limits.js';

export const REGIONS = ['us', 'eu', 'in'] as const;
export type Region = (typeof REGIONS)[number];

export interface Config {
  port: number;
  /** Address to bind. */
  host: string;
  dataDir: string;
  /** PostgreSQL connection string; when absent the embedded database in dataDir is used. */
  databaseUrl: string | undefined;
  /** Connections in the PostgreSQL pool. */
  databasePoolSize: number;
  /** Connections of the event log's consumers (webhooks, notifications), apart from the pool (PARLEY_DB_CONSUMER_POOL_SIZE). */
  consumerPoolSize: number;
  region: Region;
  domain: string;
  tlsCertFile: string | undefined;
  tlsKeyFile: string | undefined;
  insecureHttp: boolean;
  /**
   * Webhooks may call http URLs and private, loopback or link-local hosts
   * (PARLEY_WEBHOOK_ALLOW_PRIVATE=1; off by default: https to public hosts only).
   */
  webhookAllowPrivate: boolean;
  logLevel: string;
  /** Largest accepted request body on the general API, in bytes. */
  bodyLimit: number;
  /** Records accepted in one data import call (PARLEY_IMPORT_MAX_RECORDS). */
  importMaxRecords: number;
  /** Largest accepted request body on the data import routes, in bytes (PARLEY_IMPORT_BODY_LIMIT). */
  importBodyLimit: number;
  /** Data import calls running at once: per server (PARLEY_IMPORT_MAX_CALLS) and per app (PARLEY_IMPORT_MAX_CALLS_PER_APP). */
  importConcurrency: { perServer: number; perApp: number };
  /** How fast an import body must arrive once past its grace (PARLEY_IMPORT_MIN_UPLOAD_RATE in KiB/s, 0 off; PARLEY_IMPORT_UPLOAD_GRACE_MS). */
  importUploadRate: { minBytesPerSecond: number; graceMs: number };
  /** Failed authentications a minute, per client address and per app (PARLEY_AUTH_FAILURES_PER_ADDRESS, PARLEY_AUTH_FAILURES_PER_APP; 0 off). */
  authFailureLimits: { perAddress: number; perApp: number };
  /** Time to receive a whole request, headers and body (PARLEY_REQUEST_TIMEOUT_MS). */
  requestTimeoutMs: number;
  /** A connection with no traffic either way for this long is closed (PARLEY_CONNECTION_TIMEOUT_MS). */
  connectionTimeoutMs: number;
  /** Database waits and runs; 0 turns one off (docs/timeouts.md). */
  dbTimeouts: DatabaseTimeouts;
  /** How long a shutdown lets requests in flight finish before it closes their connections (PARLEY_SHUTDOWN_GRACE_MS). */
  shutdownGraceMs: number;
  /** Requests a minute per class (PARLEY_RATE_LIMITS; 0 is off); apps may have their own. */
  rateLimits: RateLimits;
  /** Where the rate-limit counters are shared by several nodes (PARLEY_REDIS_URL); in memory when absent. */
  redisUrl: string | undefined;
  /** What the counters' Redis keys start with (PARLEY_REDIS_PREFIX). */
  redisKeyPrefix: string;
  /** How long the event log keeps an event (PARLEY_EVENT_RETENTION_DAYS, default 7; docs/events.md). */
  eventRetentionMs: number;
  /** Live event streams open at once: per app (PARLEY_STREAMS_PER_APP) and on this node (PARLEY_STREAMS_PER_NODE); docs/events.md. */
  eventStreams: { perApp: number; perNode: number };
  /** The WebSocket gateway and its SSE fallback (docs/realtime.md): its timings and limits (PARLEY_WS_*). */
  gateway: GatewayConfig;
  /** Webhook delivery (docs/webhooks.md): the time a receiver has to answer (PARLEY_WEBHOOK_TIMEOUT_MS, default 5 s). */
  webhookTimeoutMs: number;
  /** When failed deliveries are retried (PARLEY_WEBHOOK_RETRY_DELAYS, PARLEY_WEBHOOK_RETRY_HORIZON_HOURS). */
  webhookRetry: RetrySchedule;
  /**
   * The deployment's key for provider secrets at rest (PARLEY_SECRET_KEY, at least 32
   * characters); when absent, one is made in the data dir (docs/notifications.md).
   */
  secretKey: string | undefined;
  /** Browser pages' origins that may call the API (PARLEY_CORS_ORIGINS: origins separated by commas or spaces, or `*`; none by default; docs/client-api.md). */
  corsOrigins: string[];
  /**
   * Where the notification providers are, when not theirs (a proxy, a test's fakes):
   * PARLEY_FCM_URL, PARLEY_FCM_TOKEN_ORIGINS (origins a service account's token_uri may name,
   * comma-separated), PARLEY_APNS_URL, PARLEY_APNS_CA_FILE (a certificate to trust for it),
   * PARLEY_SENDGRID_URL, PARLEY_TWILIO_URL.
   */
  notificationEndpoints: { fcmUrl?: string; fcmTokenOrigins?: string[]; apnsUrl?: string; apnsCaFile?: string; sendGridUrl?: string; twilioUrl?: string };
  /** Where Prometheus scrapes GET /metrics, plain HTTP on `host` (PARLEY_METRICS_PORT; off when absent, 0: any free port); docs/metrics.md. */
  metricsPort: number | undefined;
  /** Series labelled by app (PARLEY_METRICS_PER_APP=1): one set per app, off by default. */
  metricsPerApp: boolean;
  /**
   * The embedded database's PostgreSQL settings over Parley's defaults (PARLEY_PGLITE_SETTINGS:
   * `name=value` pairs, comma- or space-separated, e.g. `shared_buffers=128MB`); docs/deployment.md#memory.
   */
  pgliteSettings: string[];
  /** The demo chat page at /demo/ (PARLEY_DEMO=1; off by default, and then /demo/ is 404); docs/demo.md. */
  demo: boolean;
}

export interface DatabaseTimeouts {
  /** Longest wait for a free connection (PARLEY_DB_ACQUIRE_TIMEOUT_MS). */
  acquireMs: number;
  /** PostgreSQL's statement_timeout on every connection (PARLEY_DB_STATEMENT_TIMEOUT_MS). */
  statementMs: number;
  /** PostgreSQL's idle_in_transaction_session_timeout on every connection (PARLEY_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS). */
  idleInTransactionMs: number;
}

/** The event log's retention: 7 days. */
/** A webhook's receiver has 5 s to answer. */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 5_000;
export const DEFAULT_EVENT_RETENTION_MS = 7 * 24 * 3600 * 1000;

export const DEFAULT_DB_TIMEOUTS: DatabaseTimeouts = { acquireMs: 10_000, statementMs: 30_000, idleInTransactionMs: 60_000 };
export const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;
export const DEFAULT_CONNECTION_TIMEOUT_MS = 120_000;

export const DEFAULT_IMPORT_MAX_RECORDS = 10_000;
export const DEFAULT_IMPORT_BODY_LIMIT = 64 * 1024 * 1024;
export const DEFAULT_IMPORT_CONCURRENCY = { perServer: 2, perApp: 2 };
/** 64 KiB/s after 10 s: a body that slow is a trickle, not a client on a slow line (docs/import.md). */
export const DEFAULT_IMPORT_UPLOAD_RATE = { minBytesPerSecond: 64 * 1024, graceMs: 10_000 };
/** Live event streams: 100 per app, 10,000 on a node (each holds a socket and a little memory). */
export const DEFAULT_EVENT_STREAMS = { perApp: 100, perNode: 10_000 };

const DAY_MS = 24 * 60 * 60 * 1000;

function gatewayVars(env: Env): GatewayConfig {
  const config = { ...DEFAULT_GATEWAY };
  for (const [field, [name, min, max]] of Object.entries(GATEWAY_VARS) as Array<[keyof GatewayConfig, [string, number, number]]>) config[field] = intVar(env, name, DEFAULT_GATEWAY[field], min, max);
  return config;
}

/** Connections of the event log's consumers' own pool, on PostgreSQL (docs/events.md). */
export const DEFAULT_CONSUMER_POOL_SIZE = 6;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

/** Builds the one validated Config from environment variables; `overrides` come from CLI flags. */
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const config: Config = {
    port: intVar(env, 'PARLEY_PORT', 3000, 0, 65535),
    host: env.PARLEY_HOST || '0.0.0.0',
    dataDir: path.resolve(env.PARLEY_DATA_DIR || './data'),
    databaseUrl: env.DATABASE_URL || undefined,
    databasePoolSize: intVar(env, 'PARLEY_DB_POOL_SIZE', 20, 1, 1000),
    consumerPoolSize: intVar(env, 'PARLEY_DB_CONSUMER_POOL_SIZE', DEFAULT_CONSUMER_POOL_SIZE, 1, 100),
    region: regionVar(env.PARLEY_REGION),
    domain: domainVar(env.PARLEY_DOMAIN),
    tlsCertFile: env.PARLEY_TLS_CERT || undefined,
    tlsKeyFile: env.PARLEY_TLS_KEY || undefined,
    insecureHttp: boolVar(env, 'PARLEY_INSECURE_HTTP'),
    webhookAllowPrivate: boolVar(env, 'PARLEY_WEBHOOK_ALLOW_PRIVATE'),
    logLevel: env.PARLEY_LOG_LEVEL || 'info',
    bodyLimit: intVar(env, 'PARLEY_BODY_LIMIT', 1024 * 1024, 1024, 1024 * 1024 * 1024),
    importMaxRecords: intVar(env, 'PARLEY_IMPORT_MAX_RECORDS', DEFAULT_IMPORT_MAX_RECORDS, 1, 1_000_000),
    importBodyLimit: intVar(env, 'PARLEY_IMPORT_BODY_LIMIT', DEFAULT_IMPORT_BODY_LIMIT, 1024, 1024 * 1024 * 1024),
    importConcurrency: {
      perServer: intVar(env, 'PARLEY_IMPORT_MAX_CALLS', DEFAULT_IMPORT_CONCURRENCY.perServer, 1, 1000),
      perApp: intVar(env, 'PARLEY_IMPORT_MAX_CALLS_PER_APP', DEFAULT_IMPORT_CONCURRENCY.perApp, 1, 1000),
    },
    importUploadRate: {
      minBytesPerSecond: intVar(env, 'PARLEY_IMPORT_MIN_UPLOAD_RATE', DEFAULT_IMPORT_UPLOAD_RATE.minBytesPerSecond / 1024, 0, 1024 * 1024) * 1024,
      graceMs: intVar(env, 'PARLEY_IMPORT_UPLOAD_GRACE_MS', DEFAULT_IMPORT_UPLOAD_RATE.graceMs, 0, DAY_MS),
    },
    authFailureLimits: {
      perAddress: intVar(env, 'PARLEY_AUTH_FAILURES_PER_ADDRESS', DEFAULT_AUTH_FAILURE_LIMITS.perAddress, 0, MAX_RATE_LIMIT),
      perApp: intVar(env, 'PARLEY_AUTH_FAILURES_PER_APP', DEFAULT_AUTH_FAILURE_LIMITS.perApp, 0, MAX_RATE_LIMIT),
    },
    requestTimeoutMs: intVar(env, 'PARLEY_REQUEST_TIMEOUT_MS', DEFAULT_REQUEST_TIMEOUT_MS, 1, DAY_MS),
    connectionTimeoutMs: intVar(env, 'PARLEY_CONNECTION_TIMEOUT_MS', DEFAULT_CONNECTION_TIMEOUT_MS, 1, DAY_MS),
    dbTimeouts: {
      acquireMs: intVar(env, 'PARLEY_DB_ACQUIRE_TIMEOUT_MS', DEFAULT_DB_TIMEOUTS.acquireMs, 1, DAY_MS),
      statementMs: intVar(env, 'PARLEY_DB_STATEMENT_TIMEOUT_MS', DEFAULT_DB_TIMEOUTS.statementMs, 0, DAY_MS),
      idleInTransactionMs: intVar(env, 'PARLEY_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS', DEFAULT_DB_TIMEOUTS.idleInTransactionMs, 0, DAY_MS),
    },
    shutdownGraceMs: intVar(env, 'PARLEY_SHUTDOWN_GRACE_MS', 20_000, 0, DAY_MS),
    rateLimits: rateLimitsVar(env.PARLEY_RATE_LIMITS),
    redisUrl: redisUrlVar(env.PARLEY_REDIS_URL),
    redisKeyPrefix: env.PARLEY_REDIS_PREFIX ?? 'parley:',
    eventRetentionMs: intVar(env, 'PARLEY_EVENT_RETENTION_DAYS', DEFAULT_EVENT_RETENTION_MS / DAY_MS, 1, 3650) * DAY_MS,
    eventStreams: {
      perApp: intVar(env, 'PARLEY_STREAMS_PER_APP', DEFAULT_EVENT_STREAMS.perApp, 1, 1_000_000),
      perNode: intVar(env, 'PARLEY_STREAMS_PER_NODE', DEFAULT_EVENT_STREAMS.perNode, 1, 1_000_000),
    },
    gateway: gatewayVars(env),
    webhookTimeoutMs: intVar(env, 'PARLEY_WEBHOOK_TIMEOUT_MS', DEFAULT_WEBHOOK_TIMEOUT_MS, 100, 60_000),
    webhookRetry: retryScheduleVar(env),
    secretKey: env.PARLEY_SECRET_KEY || undefined,
    corsOrigins: corsOriginsVar(env.PARLEY_CORS_ORIGINS),
    metricsPort: env.PARLEY_METRICS_PORT ? intVar(env, 'PARLEY_METRICS_PORT', 0, 0, 65535) : undefined,
    metricsPerApp: boolVar(env, 'PARLEY_METRICS_PER_APP'),
    pgliteSettings: pgliteSettingsVar(env.PARLEY_PGLITE_SETTINGS),
    demo: boolVar(env, 'PARLEY_DEMO'),
    notificationEndpoints: {
      ...(env.PARLEY_FCM_URL ? { fcmUrl: urlVar('PARLEY_FCM_URL', env.PARLEY_FCM_URL) } : {}),
      ...(env.PARLEY_FCM_TOKEN_ORIGINS ? { fcmTokenOrigins: env.PARLEY_FCM_TOKEN_ORIGINS.split(',').map((origin) => new URL(urlVar('PARLEY_FCM_TOKEN_ORIGINS', origin.trim())).origin) } : {}),
      ...(env.PARLEY_APNS_URL ? { apnsUrl: urlVar('PARLEY_APNS_URL', env.PARLEY_APNS_URL) } : {}),
      ...(env.PARLEY_APNS_CA_FILE ? { apnsCaFile: env.PARLEY_APNS_CA_FILE } : {}),
      ...(env.PARLEY_SENDGRID_URL ? { sendGridUrl: urlVar('PARLEY_SENDGRID_URL', env.PARLEY_SENDGRID_URL) } : {}),
      ...(env.PARLEY_TWILIO_URL ? { twilioUrl: urlVar('PARLEY_TWILIO_URL', env.PARLEY_TWILIO_URL) } : {}),
    },
  };
  const merged = { ...config, ...definedOnly(overrides) };
  if (overrides.region !== undefined) merged.region = regionVar(overrides.region);
  if (overrides.domain !== undefined) merged.domain = domainVar(overrides.domain);
  if (overrides.dataDir !== undefined) merged.dataDir = path.resolve(overrides.dataDir);
  if (Boolean(merged.tlsCertFile) !== Boolean(merged.tlsKeyFile)) {
    throw new ConfigError('PARLEY_TLS_CERT and PARLEY_TLS_KEY must be set together.');
  }
  return merged;
}

/** An http(s) URL, or ConfigError naming the variable. */
function urlVar(name: string, value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === 'https:' || url.protocol === 'http:') return value;
  } catch {
    // refused below
  }
  throw new ConfigError(`${name} must be an http or https URL (got ${JSON.stringify(value)}).`);
}

/** Origins (`https://chat.example.com`, no path) or `*`, or ConfigError. */
function corsOriginsVar(raw: string | undefined): string[] {
  const origins = (raw ?? '').split(/[\s,]+/).filter(Boolean);
  for (const origin of origins) {
    if (origin === '*') continue;
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      // refused below
    }
    if (parsed === undefined || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== origin.replace(/\/$/, '').toLowerCase()) {
      throw new ConfigError(`PARLEY_CORS_ORIGINS must list origins such as https://chat.example.com (scheme, host and port, no path), or *; got ${JSON.stringify(origin)}.`);
    }
  }
  return origins.map((origin) => origin.replace(/\/$/, ''));
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function intVar(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}; got "${raw}".`);
  }
  return value;
}

/**
 * PARLEY_WEBHOOK_RETRY_DELAYS: the waits before the first retries, seconds, comma-separated
 * (default 10,30: the vendor's); PARLEY_WEBHOOK_RETRY_HORIZON_HOURS: no retry later than this
 * after the first attempt (default 24). Both take fractions (0.5).
 */
function retryScheduleVar(env: Env): RetrySchedule {
  const rawDelays = env.PARLEY_WEBHOOK_RETRY_DELAYS;
  let delaysMs = DEFAULT_RETRY_SCHEDULE.delaysMs;
  if (rawDelays) {
    const seconds = rawDelays.split(',').map((part) => Number(part.trim()));
    if (seconds.length > 10 || seconds.some((value) => !Number.isFinite(value) || value <= 0 || value > 86_400)) {
      throw new ConfigError(`PARLEY_WEBHOOK_RETRY_DELAYS must be 1-10 waits in seconds, such as 10,30; got "${rawDelays}".`);
    }
    delaysMs = seconds.map((value) => Math.round(value * 1000));
  }
  let horizonMs = DEFAULT_RETRY_SCHEDULE.horizonMs;
  const rawHorizon = env.PARLEY_WEBHOOK_RETRY_HORIZON_HOURS;
  if (rawHorizon) {
    const hours = Number(rawHorizon);
    if (!Number.isFinite(hours) || hours <= 0 || hours > 24 * 30) {
      throw new ConfigError(`PARLEY_WEBHOOK_RETRY_HORIZON_HOURS must be a number of hours above 0, at most 720; got "${rawHorizon}".`);
    }
    horizonMs = Math.round(hours * 3_600_000);
  }
  // Later waits double the last one listed, up to an hour (or the longest listed, if longer).
  const maxDelayMs = Math.max(DEFAULT_RETRY_SCHEDULE.maxDelayMs, ...delaysMs);
  return { delaysMs, maxDelayMs, horizonMs };
}

function pgliteSettingsVar(raw: string | undefined): string[] {
  const settings = (raw ?? '').split(/[\s,]+/).filter(Boolean);
  const bad = settings.find((setting) => !/^[a-z_][a-z0-9_]*=[A-Za-z0-9_.-]+$/.test(setting));
  if (bad) throw new ConfigError(`PARLEY_PGLITE_SETTINGS holds name=value pairs (e.g. shared_buffers=128MB); got "${bad}".`);
  return settings;
}

function boolVar(env: Env, name: string): boolean {
  const raw = (env[name] ?? '').toLowerCase();
  if (['', '0', 'false', 'no'].includes(raw)) return false;
  if (['1', 'true', 'yes'].includes(raw)) return true;
  throw new ConfigError(`${name} must be 1 or 0; got "${env[name]}".`);
}

export function regionVar(raw: string | undefined): Region {
  const value = (raw || 'us').toLowerCase();
  if (!(REGIONS as readonly string[]).includes(value)) {
    throw new ConfigError(`PARLEY_REGION must be one of ${REGIONS.join(', ')}; got "${raw}".`);
  }
  return value as Region;
}

function domainVar(raw: string | undefined): string {
  const value = (raw || 'localhost').toLowerCase().replace(/\.$/, '');
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(value)) {
    throw new ConfigError(`PARLEY_DOMAIN must be a DNS name such as example.com; got "${raw}".`);
  }
  return value;
}

/** PARLEY_RATE_LIMITS: `core=10000,standard=20000,import=60,send_per_user=0`, any subset. */
function rateLimitsVar(raw: string | undefined): RateLimits {
  try {
    return withDefaults(parseRateLimits(raw ?? ''));
  } catch (error) {
    if (!(error instanceof RateLimitsFormatError)) throw error;
    throw new ConfigError(`PARLEY_RATE_LIMITS: ${error.message}. The format is core=10000,standard=20000,import=60,send_per_user=0 (per minute, 0 is off).`);
  }
}

function redisUrlVar(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'redis:' && url.protocol !== 'rediss:')) {
    throw new ConfigError(`PARLEY_REDIS_URL must be a redis:// or rediss:// URL, such as redis://127.0.0.1:6379; got "${raw}".`);
  }
  return raw;
}
