#!/usr/bin/env node
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { appsCreate, appsCreateName, appsLimits, appsList, displayPath, keysCreate, keysList, keysRevoke } from './cli-apps.js';
import { importCommand } from './cli-import.js';
import { adminKeysCommand, adminKeysUsage, MANAGEMENT_USAGE, managementKeyLines, webhooksCommand } from './cli-management.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import type { createServices } from './container.js';
import { DataDirLockedError } from './db/data-dir-lock.js';
import type { Logger, RequestContext } from './domain/context.js';
import { AppError } from './domain/errors.js';
import type { RunningServer } from './server.js';
import { EVENTS_USAGE, eventsCommand } from './cli-events.js';
import { MESSAGES_USAGE, messagesCommand } from './cli-messages.js';
import { BACKUP_USAGE, backupCommand } from './cli-backup.js';
import type { CreatedApp } from './services/apps.service.js';

const USAGE = `Usage: parley <command> [options]

Commands:
  serve                          Start the server (configured by environment variables)
      [--port N] [--data-dir DIR] [--region us|eu|in] [--domain NAME] [--insecure-http]
  apps create --name NAME [--id APPID] [--region R] [--json]
                                 Create an app with a fullAccess and an authOnly key
  apps list [--json]             List the apps of this deployment
  apps limits --app APPID [--set core=N,standard=N,...] [--reset] [--json]
                                 Print the app's rate limits (per minute, 0 is off); --set
                                 gives it its own for those classes, --reset drops its own
  keys create --app APPID [--name NAME] [--scope fullAccess|authOnly] [--json]
  keys list --app APPID [--json]
  keys revoke --app APPID KEY    KEY: the key, or its masked form from 'keys list'
${EVENTS_USAGE}
${MESSAGES_USAGE}
${BACKUP_USAGE}
${MANAGEMENT_USAGE}
  import FILE.jsonl --url URL --api-key KEY [--batch 5000] [--concurrency 2]
      [--report FILE] [--ca PEM] [--retries 8]
                                 Stream a JSON-lines file to a running server's data import
                                 API (users, groups, members, then messages); see docs/import.md.
                                 URL: https://<app>.api-<region>.<domain>[:port]

Environment: PARLEY_PORT (3000), PARLEY_DATA_DIR (./data), DATABASE_URL (PostgreSQL instead
of the embedded database), PARLEY_REGION (us), PARLEY_DOMAIN (localhost), PARLEY_TLS_CERT and
PARLEY_TLS_KEY (PEM files), PARLEY_INSECURE_HTTP=1 (plain HTTP behind a TLS proxy),
PARLEY_RATE_LIMITS (core=10000,standard=20000,import=60,send_per_user=0,unread_per_user=0),
PARLEY_REDIS_URL (rate-limit counters shared by several nodes), PARLEY_LOG_LEVEL (info),
PARLEY_WEBHOOK_ALLOW_PRIVATE=1 (webhooks may call http URLs and private or loopback hosts).`;

const OPTIONS = {
  port: { type: 'string' },
  'data-dir': { type: 'string' },
  region: { type: 'string' },
  domain: { type: 'string' },
  'insecure-http': { type: 'boolean' },
  name: { type: 'string' },
  id: { type: 'string' },
  app: { type: 'string' },
  scope: { type: 'string' },
  json: { type: 'boolean' },
  set: { type: 'string' },
  reset: { type: 'boolean' },
  url: { type: 'string' },
  'api-key': { type: 'string' },
  batch: { type: 'string' },
  concurrency: { type: 'string' },
  report: { type: 'string' },
  ca: { type: 'string' },
  retries: { type: 'string' },
  force: { type: 'boolean' },
  triggers: { type: 'string' },
  after: { type: 'string' },
  'basic-auth': { type: 'string' },
  retry: { type: 'boolean' },
  disabled: { type: 'boolean' },
  status: { type: 'string' },
  limit: { type: 'string' },
  since: { type: 'string' },
  overlap: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} satisfies ParseArgsConfig['options'];

type Flags = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

class UsageError extends Error {}

/** CLI flags mirror the environment variables and win over them. */
function configFrom(flags: Flags): Config {
  const env = { ...process.env };
  if (flags.port !== undefined) env.PARLEY_PORT = flags.port;
  if (flags['insecure-http']) env.PARLEY_INSECURE_HTTP = '1';
  return loadConfig(env, { dataDir: flags['data-dir'], region: flags.region as Config['region'], domain: flags.domain });
}

export async function main(argv: string[]): Promise<number> {
  const { values: flags, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  const [command, sub, ...rest] = positionals;
  if (flags.help || !command || command === 'help') {
    console.log(USAGE);
    return command || flags.help ? 0 : 2;
  }
  // A client of a running server: no server configuration involved.
  if (command === 'import') return importCommand(cliIo, flags, sub, rest);
  const config = configFrom(flags);
  switch (command) {
    case 'serve':
      return serve(config);
    case 'apps':
      if (sub === 'create') {
        // Usage errors before the database: opening it takes seconds on the embedded engine.
        appsCreateName(cliIo, flags);
        return withServices(config, (services) => appsCreate(services, cliIo, config, flags));
      }
      if (sub === 'list') return withServices(config, (services) => appsList(services, flags));
      if (sub === 'limits') return withServices(config, (services) => appsLimits(services, cliIo, flags));
      break;
    case 'keys':
      if (sub === 'create') return withServices(config, (services) => keysCreate(services, cliIo, flags));
      if (sub === 'list') return withServices(config, (services) => keysList(services, cliIo, flags));
      if (sub === 'revoke') return withServices(config, (services) => keysRevoke(services, cliIo, flags, rest[0]));
      break;
    case 'admin':
      if (sub === 'keys') {
        adminKeysUsage(cliIo, rest[0], rest[1]);
        return withServices(config, (services) => adminKeysCommand(services, cliIo, rest[0], flags, rest[1]));
      }
      break;
    case 'webhooks':
      return withServices(config, (services) => webhooksCommand(services, cliIo, sub, flags, rest[0], rest[1]));
  }
  if (command === 'events') return withServices(config, (services) => eventsCommand(services, cliIo, sub, flags));
  if (command === 'messages') return withServices(config, (services) => messagesCommand(services, cliIo, sub, flags));
  if ((command === 'backup' || command === 'restore') && rest.length === 0) return backupCommand(command, config, cliIo, sub, flags.force === true);
  throw new UsageError(`Unknown command: ${positionals.join(' ')}`);
}

// --- serve ----------------------------------------------------------------------------------

// The server's modules are loaded by the commands that use them: `--help` and `import` start in
// a fraction of the time (loading them all took ~1 s).

async function serve(config: Config): Promise<number> {
  const { createLogger, startServer } = await import('./server.js');
  const log = createLogger(config);
  const server = await startServer(config, log);
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const origin = `${server.scheme}://${host}:${server.port}`;
  if (server.defaultApp) console.log(firstRunBanner(server, config, server.defaultApp));
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting at once');
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'signal received');
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // The last line of a start: tooling waits for it, then may signal at once (so the handlers come first).
  log.info({ url: origin, engine: server.database.engine, region: config.region }, 'Parley is listening');
  return new Promise<number>(() => {}); // runs until a signal
}

function firstRunBanner(server: RunningServer, config: Config, app: CreatedApp): string {
  const base = `${server.scheme}://${app.appId}.api-${app.region}.${config.domain}:${server.port}`;
  const cacert = server.tls?.selfSigned ? `--cacert ${displayPath(server.tls.certPath)} ` : '';
  return [
    '',
    `Parley is running (${server.database.engine === 'pglite' ? `embedded database in ${config.dataDir}` : 'PostgreSQL'}).`,
    'A default app was created. Keep these keys: they are not shown again.',
    '',
    `  App ID    ${app.appId}`,
    `  Region    ${app.region}`,
    `  REST key  ${app.apiKey}   (fullAccess)`,
    `  Auth key  ${app.authKey}   (authOnly: creates users and auth tokens)`,
    `  Base URL  ${base}/v3`,
    `  API docs  ${server.scheme}://localhost:${server.port}/docs`,
    '',
    'Try it:',
    `  curl ${cacert}${base}/v3/users \\`,
    `    -H 'apiKey: ${app.apiKey}' -H 'content-type: application/json' \\`,
    `    -d '{"uid":"alice","name":"Alice"}'`,
    '',
    ...(server.managementKey ? [...managementKeyLines(server.managementKey), `  Base URL  ${server.scheme}://localhost:${server.port}/mgmt/apps   (or /apps on apimgmt.${config.domain})`, ''] : []),
  ].join('\n');
}

// --- commands on the database (cli-apps.ts, cli-management.ts, cli-events.ts) -------------------

type Services = ReturnType<typeof createServices>;

async function withServices(config: Config, run: (services: Services) => Promise<number>): Promise<number> {
  const [{ createServices }, { createLogger, openMigratedDatabase }] = await Promise.all([import('./container.js'), import('./server.js')]);
  const log = createLogger({ logLevel: process.env.PARLEY_LOG_LEVEL ?? 'warn' }, 2);
  cliLog = createLogger({ logLevel: 'warn' }, 2);
  const database = await openMigratedDatabase(config, log);
  try {
    return await run(createServices(database, config, { rateLimits: { limits: config.rateLimits }, webhookAllowPrivate: config.webhookAllowPrivate }));
  } finally {
    await database.close();
  }
}

/** The database commands' logger (warnings, to stderr): made by withServices. */
let cliLog: Logger | undefined;

function cliContext(appId: string): RequestContext {
  if (!cliLog) throw new Error('cliContext is for commands run by withServices');
  return { appId, requestId: 'cli', log: cliLog };
}

const cliIo = { context: cliContext, usage: (message: string) => new UsageError(message) };

// --- entry point ----------------------------------------------------------------------------

// Run when executed (also through the npm bin symlink), not when imported by tests.
const isEntryPoint = process.argv[1] !== undefined && import.meta.url === pathToFileURL(fs.realpathSync(process.argv[1])).href;
if (isEntryPoint) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
        console.error(`parley: ${(error as Error).message}\n\n${USAGE}`);
        process.exit(2);
      }
      if (error instanceof ConfigError || error instanceof DataDirLockedError || error instanceof AppError) {
        console.error(`parley: ${error.message}`);
        process.exit(error instanceof ConfigError ? 2 : 1);
      }
      console.error('parley: failed:', error);
      process.exit(1);
    },
  );
}
