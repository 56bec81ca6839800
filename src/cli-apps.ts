/**
 * The `parley apps create|list|limits` and `parley keys create|list|revoke` commands, run by
 * cli.ts against the database, as `admin keys` and `webhooks` are (cli-management.ts).
 */
import path from 'node:path';
import type { CommandIo } from './cli-management.js';
import type { Config } from './config.js';
import type { Services } from './container.js';
import type { ApiKeyScope, RequestContext } from './domain/context.js';
import { parseRateLimits, RATE_LIMIT_CLASSES, RateLimitsFormatError, type RateLimits } from './domain/rate-limits.js';
import type { AppRateLimits } from './services/apps.service.js';

export interface AppsFlags {
  json?: boolean;
  name?: string;
  id?: string;
  app?: string;
  scope?: string;
  set?: string;
  reset?: boolean;
}

/** What `apps create` prints besides the keys: the app's base URL and a curl line. */
export type AppsConfig = Pick<Config, 'insecureHttp' | 'domain' | 'port' | 'tlsCertFile' | 'dataDir'>;

function required(io: Pick<CommandIo, 'usage'>, value: string | undefined, flag: string): string {
  if (!value) throw io.usage(`--${flag} is required.`);
  return value;
}

/** A path relative to the working directory when it lies below it, else absolute. */
export function displayPath(file: string): string {
  const relative = path.relative(process.cwd(), file);
  return relative && !relative.startsWith('..') ? relative : file;
}

/** The usage errors of `apps create`, which need no database: cli.ts checks them before opening it. */
export function appsCreateName(io: Pick<CommandIo, 'usage'>, flags: AppsFlags): string {
  return required(io, flags.name, 'name');
}

/** `parley apps create --name NAME [--id APPID] [--json]` (the region is the deployment's). */
export async function appsCreate(services: Services, io: CommandIo, config: AppsConfig, flags: AppsFlags): Promise<number> {
  const app = await services.apps.create(io.context(''), { name: appsCreateName(io, flags), appId: flags.id });
  if (flags.json) {
    console.log(JSON.stringify({ appId: app.appId, region: app.region, apiKey: app.apiKey, authKey: app.authKey }));
    return 0;
  }
  const scheme = config.insecureHttp ? 'http' : 'https';
  const base = `${scheme}://${app.appId}.api-${app.region}.${config.domain}:${config.port}/v3`;
  console.log(
    [
      `Created app "${app.name}". Keep these keys: they are not shown again.`,
      `  App ID    ${app.appId}`,
      `  Region    ${app.region}`,
      `  REST key  ${app.apiKey}   (fullAccess)`,
      `  Auth key  ${app.authKey}   (authOnly)`,
      `  Base URL  ${base}`,
      '',
      `  curl ${scheme === 'https' && !config.tlsCertFile ? `--cacert ${displayPath(path.join(config.dataDir, 'tls', 'cert.pem'))} ` : ''}${base}/users -H 'apiKey: ${app.apiKey}'`,
    ].join('\n'),
  );
  return 0;
}

/** `parley apps list [--json]`. */
export async function appsList(services: Services, flags: AppsFlags): Promise<number> {
  const apps = await services.apps.list();
  if (flags.json) console.log(JSON.stringify(apps));
  else if (!apps.length) console.log('No apps yet. Create one with: parley apps create --name NAME');
  else for (const app of apps) console.log(`${app.appId}\t${app.region}\t${app.name}`);
  return 0;
}

/** `parley apps limits --app APPID [--set core=N,...] [--reset] [--json]`. */
export async function appsLimits(services: Services, io: CommandIo, flags: AppsFlags): Promise<number> {
  const ctx = await requireApp(services, io, flags);
  let changes: Partial<RateLimits> | undefined;
  if (flags.set !== undefined) {
    try {
      changes = parseRateLimits(flags.set);
    } catch (error) {
      if (error instanceof RateLimitsFormatError) throw io.usage(`--set: ${error.message}.`);
      throw error;
    }
    if (!Object.keys(changes).length) throw io.usage('--set needs class=number pairs, e.g. --set core=5000,standard=10000');
  }
  // --reset first: `--reset --set standard=100` leaves the app with that one limit of its own.
  let result: AppRateLimits | undefined = flags.reset ? await services.apps.resetRateLimits(ctx) : undefined;
  if (changes) result = await services.apps.setRateLimits(ctx, changes);
  result ??= await services.apps.rateLimits(ctx);
  if (flags.json) {
    console.log(JSON.stringify(result));
    return 0;
  }
  const lines = RATE_LIMIT_CLASSES.map((cls) => {
    const limit = result.limits[cls];
    return `  ${cls.padEnd(16)} ${(limit === 0 ? 'off' : String(limit)).padStart(10)}   ${cls in result.overrides ? "this app's" : 'deployment'}`;
  });
  console.log([`Rate limits of app ${result.appId}, per minute:`, ...lines].join('\n'));
  if (flags.set !== undefined || flags.reset) console.log('Running servers apply the change within 5 seconds.');
  return 0;
}

async function requireApp(services: Services, io: CommandIo, flags: AppsFlags): Promise<RequestContext> {
  const appId = required(io, flags.app, 'app').toLowerCase();
  if (!(await services.apps.list()).some((app) => app.appId === appId)) throw io.usage(`No app with id ${appId}.`);
  return io.context(appId);
}

/** `parley keys create --app APPID [--name NAME] [--scope fullAccess|authOnly] [--json]`. */
export async function keysCreate(services: Services, io: CommandIo, flags: AppsFlags): Promise<number> {
  const ctx = await requireApp(services, io, flags);
  const scope = (flags.scope ?? 'fullAccess') as ApiKeyScope;
  if (scope !== 'fullAccess' && scope !== 'authOnly') throw io.usage('--scope must be fullAccess or authOnly.');
  const key = await services.apiKeys.create(ctx, { name: flags.name ?? `${scope} key`, scope });
  if (flags.json) console.log(JSON.stringify(key));
  else console.log(`${key.apiKey}\t${key.scope}\t${key.name}\n(Keep this key: it is not shown again.)`);
  return 0;
}

/** `parley keys list --app APPID [--json]`: the keys masked. */
export async function keysList(services: Services, io: CommandIo, flags: AppsFlags): Promise<number> {
  const ctx = await requireApp(services, io, flags);
  const { data } = await services.apiKeys.list(ctx, {});
  if (flags.json) console.log(JSON.stringify(data));
  else for (const key of data) console.log(`${key.apiKey}\t${key.scope}\t${key.name}`);
  return 0;
}

/** `parley keys revoke --app APPID KEY`: KEY is the key, or its masked form from `keys list`. */
export async function keysRevoke(services: Services, io: CommandIo, flags: AppsFlags, key: string | undefined): Promise<number> {
  const ctx = await requireApp(services, io, flags);
  const result = await services.apiKeys.delete(ctx, required(io, key, 'KEY (a positional argument)'));
  console.log(result.message);
  return 0;
}
