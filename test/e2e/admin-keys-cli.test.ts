/**
 * `parley admin keys` and `parley webhooks` (docs/management-api.md) as processes, and the
 * management API of a running `parley serve` over TLS with the credentials they and the first
 * start print.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { newDeployment, runCli, startServe, type Deployment, type ServerProcess } from '../helpers/cli.js';

/** A management API request over TLS to 127.0.0.1, with `host` as the Host header. */
function mgmt(server: ServerProcess, ca: string, credential: { key: string; secret: string }, urlPath: string, host = 'localhost'): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const request = https.request(
      {
        host: '127.0.0.1',
        port: server.port,
        path: urlPath,
        headers: { Host: `${host}:${server.port}`, key: credential.key, secret: credential.secret },
        // The generated certificate names localhost (not apimgmt.localhost): the handshake asks for it.
        ca,
        servername: 'localhost',
      },
      (response) => {
        let text = '';
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
      },
    );
    request.on('error', reject);
    request.end();
  });
}

describe('parley admin keys and parley webhooks', () => {
  let deployment: Deployment;
  const cli = (...args: string[]) => runCli(args, deployment.env);
  let credential: { key: string; secret: string };
  let appId: string;

  before(async () => {
    deployment = await newDeployment({}, { migrated: true });
  });
  after(async () => {
    await deployment?.destroy();
  });

  it('admin keys create --json prints exactly one JSON object {"key", "secret"} and nothing else', async () => {
    const result = await cli('admin', 'keys', 'create', '--json');
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.trim().split('\n').length, 1, result.stdout);
    credential = JSON.parse(result.stdout);
    assert.deepEqual(Object.keys(credential), ['key', 'secret']);
    assert.match(credential.key, /^[0-9a-f]{32}$/);
    assert.match(credential.secret, /^[0-9a-f]{64}$/);
  });

  it('as processes: exit 2 for a usage error, 1 for a refusal, 0 and JSON for webhooks create (the rest is in test/api/management-cli.test.ts)', async () => {
    const missing = await cli('admin', 'keys', 'revoke');
    assert.equal(missing.code, 2);
    const app = await cli('apps', 'create', '--name', 'Hooks', '--json');
    assert.equal(app.code, 0, app.stderr);
    appId = JSON.parse(app.stdout).appId;
    const refused = await cli('webhooks', 'create', '--app', appId, '--id', 'local', '--url', 'http://127.0.0.1:9/in');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /webhookURL/);
    const created = await cli('webhooks', 'create', '--app', appId, '--id', 'orders', '--url', 'https://hooks.example.com/orders', '--triggers', 'message_sent', '--json');
    assert.equal(created.code, 0, created.stderr);
    assert.equal(JSON.parse(created.stdout).id, 'orders');
  });

  it('the credential works on a running server, at /mgmt on any host and at the vendor paths on apimgmt.<domain>', async () => {
    const server = await startServe(deployment.env);
    try {
      const ca = fs.readFileSync(path.join(deployment.dataDir, 'tls', 'cert.pem'), 'utf8');
      const apps = await mgmt(server, ca, credential, '/mgmt/apps');
      assert.equal(apps.status, 200, JSON.stringify(apps.body));
      assert.ok(apps.body.data.some((app: { id: string }) => app.id === appId));
      const hooks = await mgmt(server, ca, credential, `/apps/${appId}/webhooks`, 'apimgmt.localhost');
      assert.equal(hooks.status, 200, JSON.stringify(hooks.body));
      assert.ok(hooks.body.data.some((hook: { id: string }) => hook.id === 'orders'));
      const elsewhere = await mgmt(server, ca, credential, `/apps/${appId}/webhooks`);
      assert.equal(elsewhere.status, 404);
      const wrong = await mgmt(server, ca, { key: credential.key, secret: 'f'.repeat(64) }, '/mgmt/apps');
      assert.equal(wrong.status, 401);
      assert.equal(wrong.body.error.code, 'AUTH_ERR_APIKEY_NOT_FOUND');
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });
});

describe('the first start', () => {
  let deployment: Deployment;
  before(async () => {
    deployment = await newDeployment({ PARLEY_DOMAIN: 'localhost' }, { migrated: true });
  });
  after(async () => {
    await deployment?.destroy();
  });

  it('prints a management credential next to the default app, once, and it works', async () => {
    const server = await startServe(deployment.env);
    let key: string;
    try {
      const output = server.output();
      assert.match(output, /A default app was created/);
      key = /Key\s+([0-9a-f]{32})/.exec(output)?.[1] ?? '';
      const secret = /Secret\s+([0-9a-f]{64})/.exec(output)?.[1] ?? '';
      assert.ok(key && secret, output);
      assert.match(output, new RegExp(`https://localhost:${server.port}/mgmt/apps`));
      const ca = fs.readFileSync(path.join(deployment.dataDir, 'tls', 'cert.pem'), 'utf8');
      const apps = await mgmt(server, ca, { key, secret }, '/mgmt/apps');
      assert.equal(apps.status, 200, JSON.stringify(apps.body));
      assert.equal(apps.body.data.length, 1, 'the default app');
    } finally {
      assert.equal(await server.stop(), 0);
    }
    const again = await startServe(deployment.env);
    try {
      assert.doesNotMatch(again.output(), /Secret\s+[0-9a-f]{64}/, 'a second start prints no credential');
    } finally {
      const code = await again.stop();
      assert.equal(code, 0, again.output());
    }
    const listed = JSON.parse((await runCli(['admin', 'keys', 'list', '--json'], deployment.env)).stdout) as Array<{ key: string }>;
    assert.deepEqual(
      listed.map((k) => k.key),
      [key],
    );
  });
});
