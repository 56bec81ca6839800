import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { destination as pinoDestination, pino, type Logger as PinoLogger } from 'pino';
import type { BuildAppOptions, ParleyApp } from './app.js';
import type { Config } from './config.js';
import { openDatabase, type Database } from './db/database.js';
import { migrate } from './db/migrate.js';
import { startControlSocket } from './control-socket.js';
import type { Logger, RequestContext } from './domain/context.js';
import type { CreatedApp } from './services/apps.service.js';
import type { CreatedManagementKey } from './services/management.service.js';
import { loadSecretKey } from './secret-key.js';
import { Metrics } from './metrics/registry.js';
import { listenForMetrics } from './metrics/server.js';
import { createSelfSignedCertificate, parleyCertificateNames } from './tls/self-signed.js';

export function createLogger(config: Pick<Config, 'logLevel'>, destination: 1 | 2 = 1): PinoLogger {
  return pino({ level: config.logLevel }, pinoDestination({ dest: destination, sync: true }));
}

/** Opens the configured database (PostgreSQL, or the embedded one in the data dir) and migrates it. */
export async function openMigratedDatabase(config: Config, log: Logger): Promise<Database> {
  const database = config.databaseUrl
    ? await openDatabase({ engine: 'postgres', url: config.databaseUrl, poolSize: config.databasePoolSize, consumerPoolSize: config.consumerPoolSize, timeouts: config.dbTimeouts, log })
    : await openDatabase({ engine: 'pglite', dataDir: config.dataDir, settings: config.pgliteSettings, timeouts: config.dbTimeouts, log });
  try {
    await migrate(database, log);
  } catch (error) {
    await database.close();
    throw error;
  }
  return database;
}

export interface TlsFiles {
  key: string;
  cert: string;
  /** Where the certificate is, for clients to trust it (`curl --cacert`). */
  certPath: string;
  selfSigned: boolean;
}

const RENEW_BEFORE_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * The configured certificate, or else a self-signed one for `*.api-<region>.<domain>`, made once
 * and kept in the data dir. It is made anew when it no longer covers the configured names or
 * is about to expire.
 */
export function loadTls(config: Config, log: Logger): TlsFiles {
  if (config.tlsCertFile && config.tlsKeyFile) {
    return {
      cert: fs.readFileSync(config.tlsCertFile, 'utf8'),
      key: fs.readFileSync(config.tlsKeyFile, 'utf8'),
      certPath: config.tlsCertFile,
      selfSigned: false,
    };
  }
  const dir = path.join(config.dataDir, 'tls');
  const certPath = path.join(dir, 'cert.pem');
  const keyPath = path.join(dir, 'key.pem');
  const names = parleyCertificateNames(config.region, config.domain);
  if (fs.existsSync(certPath) && fs.existsSync(keyPath)) {
    const cert = fs.readFileSync(certPath, 'utf8');
    const x509 = new crypto.X509Certificate(cert);
    const fresh = new Date(x509.validTo).getTime() - Date.now() > RENEW_BEFORE_MS;
    // A certificate made before the management API's host was added to the names is made anew.
    if (fresh && x509.checkHost(`app.api-${config.region}.${config.domain}`) && x509.checkHost(`apimgmt.${config.domain}`)) {
      return { cert, key: fs.readFileSync(keyPath, 'utf8'), certPath, selfSigned: true };
    }
  }
  const generated = createSelfSignedCertificate(names);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(keyPath, generated.key, { mode: 0o600 });
  fs.writeFileSync(certPath, generated.cert);
  log.info({ certPath, names }, 'generated a self-signed TLS certificate');
  return { ...generated, certPath, selfSigned: true };
}

/** How often the event log's cleanup runs. */
const EVENT_CLEANUP_INTERVAL_MS = 60_000;

/** How long closing the database may take once the grace is over (then the process exits anyway). */
const DATABASE_CLOSE_MS = 5_000;

export interface RunningServer extends ParleyApp {
  database: Database;
  port: number;
  /** https://, or http:// when PARLEY_INSECURE_HTTP is set. */
  scheme: 'https' | 'http';
  tls: TlsFiles | undefined;
  /** The app made on this first start of an empty deployment, with its keys. */
  defaultApp: CreatedApp | undefined;
  /** The management credential made with the default app (docs/management-api.md). */
  managementKey: CreatedManagementKey | undefined;
  /** Where GET /metrics answers (PARLEY_METRICS_PORT), when the metrics are on. */
  metricsPort: number | undefined;
  /** Stops accepting, finishes the requests in flight, then closes the database. */
  close(): Promise<void>;
}

export async function startServer(config: Config, log: PinoLogger = createLogger(config), options: Pick<BuildAppOptions, 'without'> = {}): Promise<RunningServer> {
  const database = await openMigratedDatabase(config, log);
  try {
    if (config.insecureHttp) {
      log.warn('PARLEY_INSECURE_HTTP is set: serving plain HTTP. Use this only behind a TLS-terminating proxy.');
    }
    const tls = config.insecureHttp ? undefined : loadTls(config, log);
    // Provider secrets at rest (docs/notifications.md): the deployment's key, or the data dir's.
    const secret = loadSecretKey({ secretKey: config.secretKey, dataDir: config.dataDir });
    if (secret.source === 'generated') log.info({ file: secret.file }, 'made a secret key for provider secrets; set PARLEY_SECRET_KEY on every node of a deployment');
    if (secret.source !== 'environment' && config.databaseUrl) {
      log.warn('PARLEY_SECRET_KEY is not set: provider secrets are sealed with this node’s own key, which other nodes do not have');
    }
    const endpoints = config.notificationEndpoints;
    // The metrics (docs/metrics.md): off unless PARLEY_METRICS_PORT is set.
    const metrics = config.metricsPort !== undefined && !options.without?.metrics ? new Metrics({ perApp: config.metricsPerApp }) : undefined;
    // Loaded here, not at the top: the CLI's database commands use this module's
    // openMigratedDatabase and createLogger, and need not load Fastify and the routes (~0.3 s of CPU).
    const { buildApp } = await import('./app.js');
    const parley = await buildApp({
      config,
      database,
      secretKey: secret.key,
      notificationEndpoints: {
        ...(endpoints.fcmUrl ? { fcmUrl: endpoints.fcmUrl } : {}),
        ...(endpoints.fcmTokenOrigins ? { fcmTokenOrigins: endpoints.fcmTokenOrigins } : {}),
        ...(endpoints.apnsUrl ? { apnsUrl: endpoints.apnsUrl } : {}),
        ...(endpoints.apnsCaFile ? { apnsCa: fs.readFileSync(endpoints.apnsCaFile, 'utf8') } : {}),
        ...(endpoints.sendGridUrl ? { sendGridUrl: endpoints.sendGridUrl } : {}),
        ...(endpoints.twilioUrl ? { twilioUrl: endpoints.twilioUrl } : {}),
      },
      logger: undefined,
      loggerInstance: log,
      https: tls && { key: tls.key, cert: tls.cert },
      ...(options.without ? { without: options.without } : {}),
      ...(metrics ? { metrics } : {}),
    });
    const defaultApp = await createDefaultApp(parley, log);
    const managementKey = defaultApp ? await createFirstManagementKey(parley, log) : undefined;
    const metricsServer = metrics ? await listenForMetrics(metrics, { port: config.metricsPort!, host: config.host, log }) : undefined;
    await parley.app.listen({ port: config.port, host: config.host }).catch(async (error: unknown) => {
      await metricsServer?.close();
      throw error;
    });
    // The event log's retention (docs/events.md).
    parley.services.eventRetention.start(EVENT_CLEANUP_INTERVAL_MS, log);
    // The event log's consumers: webhook delivery (docs/events.md, docs/webhooks.md).
    await parley.services.eventDispatcher.start(log);
    // Usage statistics, counted off the event log (docs/stats.md).
    parley.services.statsAggregator.start(log);
    // Other nodes' moderation changes (docs/moderation.md), heard on PostgreSQL.
    await parley.services.moderationLifecycle.start(log);
    // `parley backup` while the server holds the embedded database (docs/deployment.md#backups).
    const control = database.engine === 'pglite' ? await startControlSocket({ dataDir: config.dataDir, database, log }) : undefined;
    const port = (parley.app.server.address() as AddressInfo).port;
    let closing: Promise<void> | undefined;
    return {
      ...parley,
      database,
      port,
      scheme: tls ? 'https' : 'http',
      tls,
      defaultApp,
      managementKey,
      metricsPort: metricsServer?.port,
      close() {
        closing ??= (async () => {
          log.info('shutting down: finishing requests in flight');
          const deadline = Date.now() + config.shutdownGraceMs;
          try {
            // New requests on open connections answer 503 from now on (see app.ts); the
            // connections still busy after the grace are cut, their transactions roll back.
            if (!(await within(parley.app.close(), config.shutdownGraceMs))) {
              log.warn({ graceMs: config.shutdownGraceMs }, 'requests still running after the grace period: closing their connections');
              parley.app.server.closeAllConnections();
            }
            // Handlers of clients that hung up still run: let them finish before the database goes.
            if (!(await parley.drained(Math.max(0, deadline - Date.now())))) log.warn('requests still running after the grace period');
          } finally {
            await parley.services.eventRetention.stop();
            await parley.services.eventDispatcher.stop();
            await parley.services.statsAggregator.stop();
            await parley.services.moderationLifecycle.stop();
            await control?.close();
            await metricsServer?.close();
            if (!(await within(database.close(), DATABASE_CLOSE_MS))) log.warn('the database did not close in time');
          }
          log.info('stopped');
        })();
        return closing;
      },
    };
  } catch (error) {
    await database.close();
    throw error;
  }
}

/** Whether `work` settles within `ms` (it goes on either way). */
async function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([work.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** On the first start of an empty deployment, one app, so a newcomer can call the API at once. */
async function createDefaultApp({ services }: ParleyApp, log: Logger): Promise<CreatedApp | undefined> {
  if ((await services.apps.count()) > 0) return undefined;
  const ctx: RequestContext = { appId: '', requestId: 'startup', log };
  return services.apps.create(ctx, { name: 'Default app' });
}

/** With the default app, the deployment's first management credential, unless it has one. */
async function createFirstManagementKey({ services }: ParleyApp, log: Logger): Promise<CreatedManagementKey | undefined> {
  if ((await services.management.countKeys()) > 0) return undefined;
  const ctx: RequestContext = { appId: '', requestId: 'startup', log };
  return services.management.createKey(ctx, { name: 'First start' });
}
