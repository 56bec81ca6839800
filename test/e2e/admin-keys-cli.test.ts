/**
 * `parley admin keys` and `parley webhooks` (docs/management-api.md), and the management API of a
 * running `parley serve` over TLS with the credentials they and the first start print.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { newDeployment, runCli, startServe, type Deployment, type ServerProcess } from '../helpers/cli.js';
import { seedPgliteDataDir, TEST_ENGINE } from '../helpers/db.js';

/** A deployment whose embedded database starts migrated (no initdb on its first use). */
async function deploymentReady(extra: NodeJS.ProcessEnv = {}): Promise<Deployment> {
  const deployment = await newDeployment(extra);
  if (TEST_ENGINE === 'pglite') await seedPgliteDataDir(deployment.dataDir);
  return deployment;
}

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
    deployment = await deploymentReady();
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

  it('admin keys create prints a readable credential; list shows keys without secrets; revoke removes one', async () => {
    const text = await cli('admin', 'keys', 'create', '--name', 'CI pipeline');
    assert.equal(text.code, 0, text.stderr);
    const key = /Key\s+([0-9a-f]{32})/.exec(text.stdout)?.[1];
    const secret = /Secret\s+([0-9a-f]{64})/.exec(text.stdout)?.[1];
    assert.ok(key && secret, text.stdout);
    assert.match(text.stdout, /not shown again/);

    const listed = await cli('admin', 'keys', 'list', '--json');
    assert.equal(listed.code, 0, listed.stderr);
    const keys = JSON.parse(listed.stdout) as Array<{ key: string; name: string; createdAt: number }>;
    assert.deepEqual(keys.map((k) => k.key).sort(), [credential.key, key].sort());
    assert.equal(keys.find((k) => k.key === key)!.name, 'CI pipeline');
    assert.ok(!listed.stdout.includes(secret) && !listed.stdout.includes(credential.secret), 'secrets are never listed');
    const plain = await cli('admin', 'keys', 'list');
    assert.match(plain.stdout, new RegExp(`^${key}\\t\\S+\\tCI pipeline$`, 'm'));

    const revoked = await cli('admin', 'keys', 'revoke', key);
    assert.equal(revoked.code, 0, revoked.stderr);
    const after = JSON.parse((await cli('admin', 'keys', 'list', '--json')).stdout) as Array<{ key: string }>;
    assert.deepEqual(after.map((k) => k.key), [credential.key]);
    const twice = await cli('admin', 'keys', 'revoke', key);
    assert.equal(twice.code, 1);
    assert.match(twice.stderr, /no management credential has the key/);
    const missing = await cli('admin', 'keys', 'revoke');
    assert.equal(missing.code, 2);
    const unknown = await cli('admin', 'keys', 'rotate');
    assert.equal(unknown.code, 2);
  });

  it('webhooks create, list and delete the webhooks of an app', async () => {
    const app = await cli('apps', 'create', '--name', 'Hooks', '--json');
    assert.equal(app.code, 0, app.stderr);
    appId = JSON.parse(app.stdout).appId;
    const created = await cli(
      'webhooks', 'create', '--app', appId, '--id', 'orders', '--url', 'https://hooks.example.com/orders',
      '--triggers', 'message_sent,group_created', '--basic-auth', 'parley:pass:word', '--retry', '--json',
    );
    assert.equal(created.code, 0, created.stderr);
    const webhook = JSON.parse(created.stdout);
    assert.equal(webhook.id, 'orders');
    assert.equal(webhook.name, 'orders');
    assert.equal(webhook.useBasicAuth, true);
    assert.equal(webhook.username, 'parley');
    assert.equal(webhook.retryOnFailure, true);
    assert.equal(webhook.enabled, true);
    assert.deepEqual(webhook.triggers, ['group_created', 'message_sent']);
    assert.match(webhook.signingSecret, /^[0-9a-f]{64}$/);

    const readable = await cli('webhooks', 'create', '--app', appId, '--id', 'audit', '--name', 'Audit', '--url', 'https://hooks.example.com/audit', '--disabled');
    assert.equal(readable.code, 0, readable.stderr);
    assert.match(readable.stdout, /Signing secret\s+[0-9a-f]{64}/);

    const listed = await cli('webhooks', 'list', '--app', appId, '--json');
    assert.equal(listed.code, 0, listed.stderr);
    const hooks = JSON.parse(listed.stdout) as Array<{ id: string; enabled: boolean; triggers: string[] }>;
    assert.deepEqual(hooks.map((h) => [h.id, h.enabled, h.triggers]), [['orders', true, ['group_created', 'message_sent']], ['audit', false, []]]);
    assert.ok(!listed.stdout.includes(webhook.signingSecret) && !listed.stdout.includes('pass:word'));
    const text = await cli('webhooks', 'list', '--app', appId);
    assert.match(text.stdout, /^orders\tenabled\thttps:\/\/hooks\.example\.com\/orders\tgroup_created,message_sent$/m);

    const deleted = await cli('webhooks', 'delete', '--app', appId, 'audit');
    assert.equal(deleted.code, 0, deleted.stderr);
    const again = await cli('webhooks', 'delete', '--app', appId, 'audit');
    assert.equal(again.code, 1);
    assert.match(again.stderr, /does not exist/);
  });

  it('webhooks create refuses private URLs unless the deployment allows them, and unknown triggers', async () => {
    const loopback = ['webhooks', 'create', '--app', appId, '--id', 'local', '--url', 'http://127.0.0.1:9/in'];
    const refused = await cli(...loopback);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /webhookURL/);
    const allowed = await runCli(loopback, { ...deployment.env, PARLEY_WEBHOOK_ALLOW_PRIVATE: '1' });
    assert.equal(allowed.code, 0, allowed.stderr);
    const trigger = await cli('webhooks', 'create', '--app', appId, '--id', 'typo', '--url', 'https://example.com/x', '--triggers', 'message_snet');
    assert.equal(trigger.code, 1);
    assert.match(trigger.stderr, /No such trigger: message_snet/);
    const unknownApp = await cli('webhooks', 'list', '--app', 'no-such-app');
    assert.equal(unknownApp.code, 1);
    assert.match(unknownApp.stderr, /app no-such-app does not exist/);
    const noApp = await cli('webhooks', 'list');
    assert.equal(noApp.code, 2);
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
    deployment = await deploymentReady({ PARLEY_DOMAIN: 'localhost' });
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
    assert.deepEqual(listed.map((k) => k.key), [key]);
  });
});
