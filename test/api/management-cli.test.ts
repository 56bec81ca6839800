/**
 * `parley admin keys` and `parley webhooks` (docs/management-api.md), run in this process against
 * the test database: their output and their errors. The commands as processes (the exact
 * `--json` line, exit codes, a running server) are in test/e2e/admin-keys-cli.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it, mock } from 'node:test';
import { adminKeysCommand, webhooksCommand, type ManagementFlags } from '../../src/cli-management.js';
import { createServices, type Services } from '../../src/container.js';
import { silentLogger } from '../../src/domain/context.js';
import { AppError } from '../../src/domain/errors.js';
import { createTestApp, TEST_REGION, type TestApp } from '../helpers/app.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t?.close();
});

class UsageError extends Error {}
const io = { context: (appId: string) => ({ appId, requestId: 'cli', log: silentLogger }), usage: (message: string) => new UsageError(message) };

/** What a command printed on stdout, and its exit code (thrown errors are thrown). */
async function run(command: () => Promise<number>): Promise<{ code: number; stdout: string }> {
  const lines: string[] = [];
  const log = mock.method(console, 'log', (...args: unknown[]) => lines.push(args.join(' ')));
  const error = mock.method(console, 'error', (...args: unknown[]) => lines.push(`stderr: ${args.join(' ')}`));
  try {
    const code = await command();
    return { code, stdout: lines.join('\n') };
  } finally {
    log.mock.restore();
    error.mock.restore();
  }
}
const admin = (sub: string | undefined, flags: ManagementFlags = {}, key?: string, services: Services = t.services) =>
  run(() => adminKeysCommand(services, io, sub, flags, key));
const webhooks = (sub: string | undefined, flags: ManagementFlags, id?: string, services: Services = t.services) =>
  run(() => webhooksCommand(services, io, sub, flags, id));

describe('parley admin keys and parley webhooks, in process', () => {
  it('admin keys create prints a readable credential; list shows keys without secrets; revoke removes one', async () => {
    const first = JSON.parse((await admin('create', { json: true })).stdout) as { key: string; secret: string };
    const text = await admin('create', { name: 'CI pipeline' });
    const key = /Key\s+([0-9a-f]{32})/.exec(text.stdout)?.[1];
    const secret = /Secret\s+([0-9a-f]{64})/.exec(text.stdout)?.[1];
    assert.ok(key && secret, text.stdout);
    assert.match(text.stdout, /not shown again/);

    const listed = await admin('list', { json: true });
    const keys = JSON.parse(listed.stdout) as Array<{ key: string; name: string; createdAt: number }>;
    assert.ok(keys.some((k) => k.key === first.key));
    assert.equal(keys.find((k) => k.key === key)!.name, 'CI pipeline');
    assert.ok(!listed.stdout.includes(secret) && !listed.stdout.includes(first.secret), 'secrets are never listed');
    assert.match((await admin('list')).stdout, new RegExp(`^${key}\\t\\S+\\tCI pipeline$`, 'm'));

    assert.equal((await admin('revoke', {}, key)).code, 0);
    const after = JSON.parse((await admin('list', { json: true })).stdout) as Array<{ key: string }>;
    assert.ok(!after.some((k) => k.key === key));
    const twice = await admin('revoke', {}, key);
    assert.equal(twice.code, 1);
    assert.match(twice.stdout, /no management credential has the key/);
    await assert.rejects(admin('revoke'), UsageError);
    await assert.rejects(admin('rotate'), UsageError);
  });

  it('webhooks create, list and delete the webhooks of an app', async () => {
    const appId = t.appA.appId;
    const created = await webhooks('create', {
      app: appId, id: 'orders', url: 'https://hooks.example.com/orders', triggers: 'message_sent,group_created', 'basic-auth': 'parley:pass:word', retry: true, json: true,
    });
    const webhook = JSON.parse(created.stdout);
    assert.equal(webhook.id, 'orders');
    assert.equal(webhook.name, 'orders');
    assert.equal(webhook.useBasicAuth, true);
    assert.equal(webhook.username, 'parley');
    assert.equal(webhook.retryOnFailure, true);
    assert.equal(webhook.enabled, true);
    assert.deepEqual(webhook.triggers, ['group_created', 'message_sent']);
    assert.match(webhook.signingSecret, /^[0-9a-f]{64}$/);

    const readable = await webhooks('create', { app: appId, id: 'audit', name: 'Audit', url: 'https://hooks.example.com/audit', disabled: true });
    assert.match(readable.stdout, /Signing secret\s+[0-9a-f]{64}/);

    const listed = await webhooks('list', { app: appId, json: true });
    const hooks = JSON.parse(listed.stdout) as Array<{ id: string; enabled: boolean; triggers: string[] }>;
    assert.deepEqual(hooks.map((h) => [h.id, h.enabled, h.triggers]), [['orders', true, ['group_created', 'message_sent']], ['audit', false, []]]);
    assert.ok(!listed.stdout.includes(webhook.signingSecret) && !listed.stdout.includes('pass:word'));
    assert.match((await webhooks('list', { app: appId })).stdout, /^orders\tenabled\thttps:\/\/hooks\.example\.com\/orders\tgroup_created,message_sent$/m);

    assert.equal((await webhooks('delete', { app: appId }, 'audit')).code, 0);
    await assert.rejects(webhooks('delete', { app: appId }, 'audit'), (error: unknown) => error instanceof AppError && /does not exist/.test(error.message));
  });

  it('webhooks create refuses private URLs unless the deployment allows them, and unknown triggers, apps and missing flags', async () => {
    const appId = t.appB.appId;
    const strict = createServices(t.database, { region: TEST_REGION }, { webhookAllowPrivate: false });
    const loopback: ManagementFlags = { app: appId, id: 'local', url: 'http://127.0.0.1:9/in' };
    await assert.rejects(webhooks('create', loopback, undefined, strict), (error: unknown) => error instanceof AppError && /webhookURL/.test(JSON.stringify(error.details ?? error.message)));
    assert.equal((await webhooks('create', loopback)).code, 0, 'allowed where the deployment allows it (as tests do)');
    await assert.rejects(
      webhooks('create', { app: appId, id: 'typo', url: 'https://example.com/x', triggers: 'message_snet' }),
      (error: unknown) => error instanceof AppError && /No such trigger: message_snet/.test(error.message),
    );
    await assert.rejects(webhooks('list', { app: 'no-such-app' }), (error: unknown) => error instanceof AppError && /app no-such-app does not exist/.test(error.message));
    await assert.rejects(webhooks('list', {}), UsageError);
  });
});
