import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_ENGINE } from '../helpers/db.js';
import { newDeployment, runCli, startServe, type Deployment } from '../helpers/cli.js';

let deployment: Deployment;
before(async () => {
  deployment = await newDeployment();
});
after(async () => {
  await deployment.destroy();
});

const cli = (...args: string[]) => runCli(args, deployment.env);

describe('parley apps', () => {
  it('creates an app and prints {appId, region, apiKey, authKey} with --json', async () => {
    const result = await cli('apps', 'create', '--name', 'Acme', '--json');
    assert.equal(result.code, 0, result.stderr);
    const created = JSON.parse(result.stdout);
    assert.deepEqual(Object.keys(created), ['appId', 'region', 'apiKey', 'authKey']);
    assert.match(created.appId, /^[0-9a-f]{16}$/);
    assert.equal(created.region, 'us');
    assert.match(created.apiKey, /^[0-9a-f]{40}$/);
    assert.match(created.authKey, /^[0-9a-f]{40}$/);
    assert.notEqual(created.apiKey, created.authKey);
  });

  it('takes --id and --region, and refuses a duplicate id', async () => {
    const created = await cli('apps', 'create', '--name', 'Named', '--id', 'Named-App', '--region', 'eu', '--json');
    assert.equal(created.code, 0, created.stderr);
    assert.deepEqual(
      { appId: JSON.parse(created.stdout).appId, region: JSON.parse(created.stdout).region },
      { appId: 'named-app', region: 'eu' },
    );
    const again = await cli('apps', 'create', '--name', 'Again', '--id', 'named-app', '--region', 'eu');
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already exists/);
  });

  it('prints a readable summary with a curl line without --json', async () => {
    const result = await cli('apps', 'create', '--name', 'Readable', '--id', 'readable');
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Created app "Readable"/);
    assert.match(result.stdout, /curl --cacert \S+ https:\/\/readable\.api-us\.localhost:0\/v3\/users -H 'apiKey: [0-9a-f]{40}'/);
  });

  it('lists apps', async () => {
    const result = await cli('apps', 'list', '--json');
    assert.equal(result.code, 0, result.stderr);
    const apps = JSON.parse(result.stdout) as Array<{ appId: string }>;
    assert.ok(apps.some((app) => app.appId === 'readable'));
    const text = await cli('apps', 'list');
    assert.match(text.stdout, /^readable\tus\tReadable$/m);
  });

  it('refuses a name that is missing and an unknown region', async () => {
    const noName = await cli('apps', 'create');
    assert.equal(noName.code, 2);
    assert.match(noName.stderr, /--name is required/);
    const badRegion = await cli('apps', 'create', '--name', 'x', '--region', 'mars');
    assert.equal(badRegion.code, 2);
    assert.match(badRegion.stderr, /PARLEY_REGION must be one of us, eu, in/);
  });
});

describe('parley keys', () => {
  it('creates, lists and revokes keys of an app', async () => {
    await cli('apps', 'create', '--name', 'Keys', '--id', 'keys-app');
    const created = await cli('keys', 'create', '--app', 'keys-app', '--name', 'CI key', '--scope', 'authOnly', '--json');
    assert.equal(created.code, 0, created.stderr);
    const key = JSON.parse(created.stdout);
    assert.equal(key.scope, 'authOnly');
    assert.match(key.apiKey, /^[0-9a-f]{40}$/);

    const listed = await cli('keys', 'list', '--app', 'keys-app', '--json');
    const keys = JSON.parse(listed.stdout) as Array<{ apiKey: string; name: string }>;
    assert.equal(keys.length, 3);
    const masked = keys.find((k) => k.name === 'CI key')!.apiKey;
    assert.equal(masked, `${key.apiKey.slice(0, 8)}${'*'.repeat(28)}${key.apiKey.slice(-4)}`);

    const revoked = await cli('keys', 'revoke', '--app', 'keys-app', masked);
    assert.equal(revoked.code, 0, revoked.stderr);
    const after = JSON.parse((await cli('keys', 'list', '--app', 'keys-app', '--json')).stdout) as unknown[];
    assert.equal(after.length, 2);
    const twice = await cli('keys', 'revoke', '--app', 'keys-app', key.apiKey);
    assert.equal(twice.code, 1);
    assert.match(twice.stderr, /does not exist/);
  });

  it('refuses an unknown app and an unknown scope', async () => {
    const unknown = await cli('keys', 'list', '--app', 'no-such-app');
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /No app with id no-such-app/);
    const scope = await cli('keys', 'create', '--app', 'keys-app', '--scope', 'root');
    assert.equal(scope.code, 2);
  });
});

describe('parley usage', () => {
  it('prints usage for help and refuses unknown commands and flags', async () => {
    const help = await cli('help');
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Usage: parley <command>/);
    const unknown = await cli('frobnicate');
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /Unknown command/);
    const flag = await cli('apps', 'list', '--bogus');
    assert.equal(flag.code, 2);
  });
});

describe('one process per embedded data dir', { skip: TEST_ENGINE !== 'pglite' && 'the embedded engine only' }, () => {
  it('refuses a second process on a data dir in use, with a clear message', async () => {
    const own = await newDeployment();
    const server = await startServe(own.env);
    try {
      const second = await runCli(['apps', 'list'], own.env);
      assert.equal(second.code, 1);
      assert.match(second.stderr, new RegExp(`in use by a running Parley process \\(pid ${server.child.pid}\\)`));
      assert.match(second.stderr, /PostgreSQL/);
    } finally {
      assert.equal(await server.stop(), 0);
      await own.destroy();
    }
  });
});
