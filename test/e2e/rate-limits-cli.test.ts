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
  deployment = await newDeployment({ PARLEY_RATE_LIMITS: 'standard=500,unread_per_user=5' });
  const created = await runCli(['apps', 'create', '--name', 'Limited', '--json'], deployment.env);
  assert.equal(created.code, 0, created.stderr);
  app = JSON.parse(created.stdout);
});
after(async () => {
  await deployment.destroy();
});

const limits = (...args: string[]) => runCli(['apps', 'limits', '--app', app.appId, ...args], deployment.env);

describe('parley apps limits', () => {
  it("prints the app's limits: the deployment's (PARLEY_RATE_LIMITS) while it has none of its own", async () => {
    const json = await limits('--json');
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout), {
      appId: app.appId,
      limits: { core: 10_000, standard: 500, import: 60, send_per_user: 0, unread_per_user: 5 },
      overrides: {},
    });
    const text = await limits();
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, new RegExp(`^Rate limits of app ${app.appId}, per minute:$`, 'm'));
    assert.match(text.stdout, /^ {2}standard +500 +deployment$/m);
    assert.match(text.stdout, /^ {2}send_per_user +off +deployment$/m);
  });

  it('--set gives the app its own limits, class by class; --reset drops them', async () => {
    const set = await limits('--set', 'core=5,send_per_user=30', '--json');
    assert.equal(set.code, 0, set.stderr);
    assert.deepEqual(JSON.parse(set.stdout).overrides, { core: 5, send_per_user: 30 });
    const more = await limits('--set', 'standard=0');
    assert.equal(more.code, 0, more.stderr);
    assert.match(more.stdout, /^ {2}core +5 +this app's$/m);
    assert.match(more.stdout, /^ {2}standard +off +this app's$/m);
    assert.match(more.stdout, /^ {2}import +60 +deployment$/m);
    assert.match(more.stdout, /within 5 seconds/);
    const reset = await limits('--reset', '--json');
    assert.equal(reset.code, 0, reset.stderr);
    assert.deepEqual(JSON.parse(reset.stdout), {
      appId: app.appId,
      limits: { core: 10_000, standard: 500, import: 60, send_per_user: 0, unread_per_user: 5 },
      overrides: {},
    });
  });

  it('refuses bad input with the format, and unknown apps', async () => {
    for (const [value, message] of [
      ['core=-1', /--set: core must be a whole number from 0 \(off\) to 1000000000; got "-1"/],
      ['burst=5', /--set: unknown class "burst"/],
      ['', /--set needs class=number pairs/],
    ] as const) {
      const result = await limits('--set', value);
      assert.equal(result.code, 2, result.stdout);
      assert.match(result.stderr, message);
    }
    const unknown = await runCli(['apps', 'limits', '--app', 'no-such-app'], deployment.env);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /No app with id no-such-app/);
    const badEnv = await runCli(['apps', 'limits', '--app', app.appId], { ...deployment.env, PARLEY_RATE_LIMITS: 'standard=lots' });
    assert.equal(badEnv.code, 2);
    assert.match(badEnv.stderr, /PARLEY_RATE_LIMITS: standard must be a whole number/);
  });

  it('a server applies the limits set for the app', async () => {
    assert.equal((await limits('--set', 'standard=2')).code, 0);
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
