import assert from 'node:assert/strict';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { newDeployment, runCli, startServe, type Deployment } from '../helpers/cli.js';

let deployment: Deployment;
let app: { appId: string; apiKey: string };
before(async () => {
  // The deployment's own limits: the app's own are set on top of them.
  // Migrated already: no migrations on the first command (the fresh data dir is test/e2e/cli.test.ts's).
  deployment = await newDeployment({ PARLEY_RATE_LIMITS: 'standard=500,unread_per_user=5' }, { migrated: true });
  const created = await runCli(['apps', 'create', '--name', 'Limited', '--json'], deployment.env);
  assert.equal(created.code, 0, created.stderr);
  app = JSON.parse(created.stdout);
});
after(async () => {
  await deployment.destroy();
});

const limits = (...args: string[]) => runCli(['apps', 'limits', '--app', app.appId, ...args], deployment.env);

// The command's output and refusals are tested in process (test/api/apps-cli.test.ts); here, what
// needs processes: PARLEY_RATE_LIMITS read from the environment, exit codes, a server applying
// what the command stored.
describe('parley apps limits', () => {
  it('exits 2 for a bad --set and for a bad PARLEY_RATE_LIMITS', async () => {
    const bad = await limits('--set', 'core=-1');
    assert.equal(bad.code, 2, bad.stdout);
    assert.match(bad.stderr, /--set: core must be a whole number from 0 \(off\) to 1000000000; got "-1"/);
    const badEnv = await runCli(['apps', 'limits', '--app', app.appId], { ...deployment.env, PARLEY_RATE_LIMITS: 'standard=lots' });
    assert.equal(badEnv.code, 2);
    assert.match(badEnv.stderr, /PARLEY_RATE_LIMITS: standard must be a whole number/);
  });

  it('a server applies the limits set for the app', async () => {
    const set = await limits('--set', 'standard=2', '--json');
    assert.equal(set.code, 0, set.stderr);
    // The app's own limit on the deployment's (PARLEY_RATE_LIMITS).
    assert.deepEqual(JSON.parse(set.stdout), {
      appId: app.appId,
      limits: { core: 10_000, standard: 2, import: 60, send_per_user: 0, unread_per_user: 5 },
      overrides: { standard: 2 },
    });
    const server = await startServe(deployment.env);
    try {
      const ca = fs.readFileSync(path.join(deployment.dataDir, 'tls', 'cert.pem'), 'utf8');
      const get = () =>
        new Promise<{ status: number; headers: Record<string, unknown> }>((resolve, reject) => {
          const host = `${app.appId}.api-us.localhost`;
          const request = https.request({ host: '127.0.0.1', port: server.port, path: '/v3/users', servername: host, ca, headers: { host, apikey: app.apiKey } }, (response) => {
            response.resume();
            response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers }));
          });
          request.on('error', reject);
          request.end();
        });
      const first = await get();
      assert.equal(first.status, 200);
      assert.equal(first.headers['x-rate-limit'], '2');
      assert.equal(first.headers['x-ratelimit-limit'], '2');
      const second = await get();
      // Unless the minute turned between the two: then the count started again.
      const turned = Number(second.headers['x-ratelimit-reset']) !== Number(first.headers['x-ratelimit-reset']);
      assert.equal(second.headers['x-rate-limit-remaining'], turned ? '1' : '0');
      if (!turned) {
        const third = await get();
        if (Number(third.headers['x-ratelimit-reset']) === Number(first.headers['x-ratelimit-reset'])) {
          assert.equal(third.status, 429);
          assert.ok(Number(third.headers['retry-after']) >= 1);
        }
      }
    } finally {
      await server.stop();
    }
  });
});
