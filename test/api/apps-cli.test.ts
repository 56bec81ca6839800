/**
 * `parley apps create|list|limits` and `parley keys create|list|revoke`, run in this process
 * against the test database with the services and configuration `parley` would give them: their
 * output and their errors. The commands as processes (a fresh data dir, flags read into the
 * configuration, exit codes, a server applying the limits) are in test/e2e/cli.test.ts and
 * test/e2e/rate-limits-cli.test.ts.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { appsCreate, appsLimits, appsList, keysCreate, keysList, keysRevoke, type AppsFlags } from '../../src/cli-apps.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createServices, type Services } from '../../src/container.js';
import { AppError } from '../../src/domain/errors.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliIo, isUsage, run } from '../helpers/cli-io.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t?.close();
});

const io = cliIo;

/** The configuration `parley` reads from this environment (as test/helpers/cli.ts's deployments set it). */
function cliConfig(env: NodeJS.ProcessEnv = {}, overrides: Partial<Config> = {}): Config {
  return loadConfig({ PARLEY_PORT: '0', PARLEY_DATA_DIR: '/srv/parley-data', ...env }, overrides);
}

/** The services `parley` makes for a command (cli.ts, withServices) with this configuration. */
function cliServices(config: Config): Services {
  return createServices(t.database, config, { rateLimits: { limits: config.rateLimits }, webhookAllowPrivate: config.webhookAllowPrivate });
}

describe('parley apps, in process', () => {
  const config = cliConfig();
  const create = (flags: AppsFlags, services = t.services, appsConfig: Config = config) => run(() => appsCreate(services, io, appsConfig, flags));

  it('creates an app and prints {appId, region, apiKey, authKey} with --json', async () => {
    const result = await create({ name: 'Acme', json: true });
    assert.equal(result.code, 0);
    assert.equal(result.stdout.split('\n').length, 1, result.stdout);
    const created = JSON.parse(result.stdout);
    assert.deepEqual(Object.keys(created), ['appId', 'region', 'apiKey', 'authKey']);
    assert.match(created.appId, /^[0-9a-f]{16}$/);
    assert.equal(created.region, 'us');
    assert.match(created.apiKey, /^[0-9a-f]{40}$/);
    assert.match(created.authKey, /^[0-9a-f]{40}$/);
    assert.notEqual(created.apiKey, created.authKey);
  });

  it("takes --id (lower-cased) and the deployment's region, and refuses a duplicate id", async () => {
    const eu = cliServices(cliConfig({}, { region: 'eu' }));
    const created = await create({ name: 'Named', id: 'Named-App', json: true }, eu);
    assert.deepEqual({ appId: JSON.parse(created.stdout).appId, region: JSON.parse(created.stdout).region }, { appId: 'named-app', region: 'eu' });
    await assert.rejects(create({ name: 'Again', id: 'named-app' }, eu), (error: unknown) => error instanceof AppError && /already exists/.test(error.message));
  });

  it('prints a readable summary with a curl line without --json', async () => {
    const result = await create({ name: 'Readable', id: 'readable' });
    assert.equal(result.code, 0);
    assert.match(result.stdout, /^Created app "Readable"\. Keep these keys: they are not shown again\.$/m);
    assert.match(result.stdout, /^ {2}App ID {4}readable$/m);
    assert.match(result.stdout, /^ {2}REST key {2}[0-9a-f]{40} {3}\(fullAccess\)$/m);
    assert.match(result.stdout, /^ {2}Auth key {2}[0-9a-f]{40} {3}\(authOnly\)$/m);
    assert.match(result.stdout, /^ {2}Base URL {2}https:\/\/readable\.api-us\.localhost:0\/v3$/m);
    // The self-signed certificate of the data dir (outside the working directory: its full path).
    assert.match(result.stdout, /^ {2}curl --cacert \/srv\/parley-data\/tls\/cert\.pem https:\/\/readable\.api-us\.localhost:0\/v3\/users -H 'apiKey: [0-9a-f]{40}'$/m);
  });

  it('names the certificate relative to the working directory, and none with its own certificate or plain HTTP', async () => {
    const below = await create({ name: 'Below', id: 'cert-below' }, t.services, cliConfig({ PARLEY_DATA_DIR: './data' }));
    assert.match(below.stdout, new RegExp(`curl --cacert ${path.join('data', 'tls', 'cert.pem').replaceAll('.', '\\.')} https://cert-below\\.`));
    const own = await create({ name: 'Own', id: 'cert-own' }, t.services, cliConfig({ PARLEY_TLS_CERT: '/etc/tls/cert.pem', PARLEY_TLS_KEY: '/etc/tls/key.pem' }));
    assert.match(own.stdout, /^ {2}curl https:\/\/cert-own\.api-us\.localhost:0\/v3\/users /m);
    const plain = await create({ name: 'Plain', id: 'cert-plain' }, t.services, cliConfig({ PARLEY_INSECURE_HTTP: '1', PARLEY_DOMAIN: 'chat.example.com', PARLEY_PORT: '8080' }));
    assert.match(plain.stdout, /^ {2}curl http:\/\/cert-plain\.api-us\.chat\.example\.com:8080\/v3\/users /m);
  });

  it('lists apps', async () => {
    const result = await run(() => appsList(t.services, { json: true }));
    assert.equal(result.code, 0);
    const apps = JSON.parse(result.stdout) as Array<{ appId: string }>;
    assert.ok(apps.some((app) => app.appId === 'readable'));
    assert.ok(apps.some((app) => app.appId === t.appA.appId));
    const text = await run(() => appsList(t.services, {}));
    assert.match(text.stdout, /^readable\tus\tReadable$/m);
  });

  it('refuses a name that is missing', async () => {
    await assert.rejects(create({}), isUsage(/^--name is required\.$/));
  });
});

describe('parley keys, in process', () => {
  const keys = (command: typeof keysCreate | typeof keysList, flags: AppsFlags) => run(() => command(t.services, io, flags));

  it('creates, lists and revokes keys of an app', async () => {
    await run(() => appsCreate(t.services, io, cliConfig(), { name: 'Keys', id: 'keys-app' }));
    const created = await keys(keysCreate, { app: 'keys-app', name: 'CI key', scope: 'authOnly', json: true });
    assert.equal(created.code, 0);
    const key = JSON.parse(created.stdout);
    assert.equal(key.scope, 'authOnly');
    assert.equal(key.name, 'CI key');
    assert.match(key.apiKey, /^[0-9a-f]{40}$/);
    const readable = await keys(keysCreate, { app: 'KEYS-APP' });
    assert.match(readable.stdout, /^[0-9a-f]{40}\tfullAccess\tfullAccess key\n\(Keep this key: it is not shown again\.\)$/);

    const listed = await keys(keysList, { app: 'keys-app', json: true });
    const all = JSON.parse(listed.stdout) as Array<{ apiKey: string; name: string }>;
    assert.equal(all.length, 4, "the app's two keys, and the two made here");
    const masked = all.find((k) => k.name === 'CI key')!.apiKey;
    assert.equal(masked, `${key.apiKey.slice(0, 8)}${'*'.repeat(28)}${key.apiKey.slice(-4)}`);
    assert.ok(!listed.stdout.includes(key.apiKey), 'keys are listed masked');
    assert.match((await keys(keysList, { app: 'keys-app' })).stdout, new RegExp(`^${masked.replaceAll('*', '\\*')}\\tauthOnly\\tCI key$`, 'm'));

    const revoked = await run(() => keysRevoke(t.services, io, { app: 'keys-app' }, masked));
    assert.equal(revoked.code, 0);
    assert.match(revoked.stdout, /has been deleted successfully/);
    const after = JSON.parse((await keys(keysList, { app: 'keys-app', json: true })).stdout) as unknown[];
    assert.equal(after.length, 3);
    await assert.rejects(
      run(() => keysRevoke(t.services, io, { app: 'keys-app' }, key.apiKey)),
      (error: unknown) => error instanceof AppError && /does not exist/.test(error.message),
    );
    await assert.rejects(
      run(() => keysRevoke(t.services, io, { app: 'keys-app' }, undefined)),
      isUsage(/--KEY \(a positional argument\) is required/),
    );
  });

  it('refuses an unknown app, a missing --app and an unknown scope', async () => {
    await assert.rejects(keys(keysList, { app: 'no-such-app' }), isUsage(/^No app with id no-such-app\.$/));
    await assert.rejects(keys(keysList, {}), isUsage(/^--app is required\.$/));
    await assert.rejects(keys(keysCreate, { app: t.appA.appId, scope: 'root' }), isUsage(/^--scope must be fullAccess or authOnly\.$/));
  });
});

describe('parley apps limits, in process', () => {
  // The deployment's own limits (PARLEY_RATE_LIMITS): the app's own are set on top of them.
  const deployment = () => cliServices(cliConfig({ PARLEY_RATE_LIMITS: 'standard=500,unread_per_user=5' }));
  const DEPLOYMENT_LIMITS = { core: 10_000, standard: 500, import: 60, send_per_user: 0, unread_per_user: 5 };
  let services: Services;
  let appId: string;
  before(async () => {
    services = deployment();
    appId = JSON.parse((await run(() => appsCreate(services, io, cliConfig(), { name: 'Limited', json: true }))).stdout).appId;
  });
  const limits = (flags: Omit<AppsFlags, 'app'> = {}) => run(() => appsLimits(services, io, { app: appId, ...flags }));

  it("prints the app's limits: the deployment's (PARLEY_RATE_LIMITS) while it has none of its own", async () => {
    const json = await limits({ json: true });
    assert.equal(json.code, 0);
    assert.deepEqual(JSON.parse(json.stdout), { appId, limits: DEPLOYMENT_LIMITS, overrides: {} });
    const text = await limits();
    assert.equal(text.code, 0);
    assert.match(text.stdout, new RegExp(`^Rate limits of app ${appId}, per minute:$`, 'm'));
    assert.match(text.stdout, /^ {2}standard +500 +deployment$/m);
    assert.match(text.stdout, /^ {2}send_per_user +off +deployment$/m);
    assert.doesNotMatch(text.stdout, /within 5 seconds/, 'nothing changed');
  });

  it('--set gives the app its own limits, class by class; --reset drops them', async () => {
    const set = await limits({ set: 'core=5,send_per_user=30', json: true });
    assert.equal(set.code, 0);
    assert.deepEqual(JSON.parse(set.stdout).overrides, { core: 5, send_per_user: 30 });
    const more = await limits({ set: 'standard=0' });
    assert.equal(more.code, 0);
    assert.match(more.stdout, /^ {2}core +5 +this app's$/m);
    assert.match(more.stdout, /^ {2}standard +off +this app's$/m);
    assert.match(more.stdout, /^ {2}import +60 +deployment$/m);
    assert.match(more.stdout, /^Running servers apply the change within 5 seconds\.$/m);
    // Another process (a new command) sees what this one stored.
    assert.deepEqual(JSON.parse((await run(() => appsLimits(deployment(), io, { app: appId, json: true }))).stdout).overrides, { core: 5, standard: 0, send_per_user: 30 });
    const reset = await limits({ reset: true, json: true });
    assert.equal(reset.code, 0);
    assert.deepEqual(JSON.parse(reset.stdout), { appId, limits: DEPLOYMENT_LIMITS, overrides: {} });
    assert.match((await limits({ reset: true })).stdout, /within 5 seconds/);
  });

  it('--reset --set keeps only the limits set', async () => {
    await limits({ set: 'core=7' });
    const both = await limits({ reset: true, set: 'standard=100', json: true });
    assert.deepEqual(JSON.parse(both.stdout).overrides, { standard: 100 });
    await limits({ reset: true });
  });

  it('refuses bad input with the format, and unknown apps', async () => {
    for (const [value, message] of [
      ['core=-1', /^--set: core must be a whole number from 0 \(off\) to 1000000000; got "-1"\.$/],
      ['burst=5', /^--set: unknown class "burst"/],
      ['', /^--set needs class=number pairs/],
    ] as const) {
      await assert.rejects(limits({ set: value }), isUsage(message), value);
    }
    assert.deepEqual(JSON.parse((await limits({ json: true })).stdout).overrides, {}, 'a refused --set changes nothing');
    await assert.rejects(
      run(() => appsLimits(services, io, { app: 'no-such-app' })),
      isUsage(/^No app with id no-such-app\.$/),
    );
    await assert.rejects(
      run(() => appsLimits(services, io, {})),
      isUsage(/^--app is required\.$/),
    );
  });
});
