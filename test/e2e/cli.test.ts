import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { seedPgliteDataDir, TEST_ENGINE } from '../helpers/db.js';
import { newDeployment, runCli, startServe, type Deployment } from '../helpers/cli.js';

let deployment: Deployment;
before(async () => {
  deployment = await newDeployment();
});
after(async () => {
  await deployment.destroy();
});

const cli = (...args: string[]) => runCli(args, deployment.env);

// The commands' output and errors are tested in process (test/api/apps-cli.test.ts); here, what
// needs a process: a fresh data dir, flags read into the configuration, exit codes.
describe('parley apps and keys as processes', () => {
  let appId: string;

  it('apps create on a fresh data dir: --json prints one JSON object, --id and --region reach the app; a duplicate id exits 1', async () => {
    const created = await cli('apps', 'create', '--name', 'Named', '--id', 'Named-App', '--region', 'eu', '--json');
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.stdout.trim().split('\n').length, 1, created.stdout);
    const app = JSON.parse(created.stdout);
    assert.deepEqual(Object.keys(app), ['appId', 'region', 'apiKey', 'authKey']);
    assert.deepEqual({ appId: app.appId, region: app.region }, { appId: 'named-app', region: 'eu' });
    appId = app.appId;
    const again = await cli('apps', 'create', '--name', 'Again', '--id', 'named-app', '--region', 'eu');
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already exists/);
  });

  it('keys create --json prints the new key of an app made by an earlier process', async () => {
    const created = await cli('keys', 'create', '--app', appId, '--name', 'CI key', '--scope', 'authOnly', '--json');
    assert.equal(created.code, 0, created.stderr);
    const key = JSON.parse(created.stdout);
    assert.equal(key.scope, 'authOnly');
    assert.match(key.apiKey, /^[0-9a-f]{40}$/);
  });

  it('exits 2 for a missing --name (with the usage) and an unknown region', async () => {
    const noName = await cli('apps', 'create');
    assert.equal(noName.code, 2);
    assert.match(noName.stderr, /--name is required/);
    assert.match(noName.stderr, /Usage: parley <command>/);
    const badRegion = await cli('apps', 'create', '--name', 'x', '--region', 'mars');
    assert.equal(badRegion.code, 2);
    assert.match(badRegion.stderr, /PARLEY_REGION must be one of us, eu, in/);
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
    await seedPgliteDataDir(own.dataDir);
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
