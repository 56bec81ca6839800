/**
 * `parley admin keys` and `parley webhooks` (docs/management-api.md, docs/webhooks.md), run in
 * this process against the test database: their output and their errors, and for the delivery
 * log, redelivery and secret rotation, real deliveries to a receiver on loopback. The commands as
 * processes (the exact `--json` line, exit codes, a running server) are in
 * test/e2e/admin-keys-cli.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminKeysCommand, webhooksCommand, type ManagementFlags } from '../../src/cli-management.js';
import { createServices, type Services } from '../../src/container.js';
import { silentLogger } from '../../src/domain/context.js';
import { AppError } from '../../src/domain/errors.js';
import { verifySignature } from '../../src/domain/webhook-signature.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { createTestApp, TEST_REGION, type TestApp } from '../helpers/app.js';
import { newUids } from '../helpers/factories.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import { cliIo, isUsage, run, UsageError } from '../helpers/cli-io.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t?.close();
});

const io = cliIo;

const admin = (sub: string | undefined, flags: ManagementFlags = {}, key?: string, services: Services = t.services) => run(() => adminKeysCommand(services, io, sub, flags, key));
const webhooks = (sub: string | undefined, flags: ManagementFlags, id?: string, services: Services = t.services) => run(() => webhooksCommand(services, io, sub, flags, id));
/** `parley webhooks redeliver ... ID DELIVERY_ID` (two positionals). */
const redeliver = (flags: ManagementFlags, id?: string, deliveryId?: string) => run(() => webhooksCommand(t.services, io, 'redeliver', flags, id, deliveryId));
const notFound = (code: string) => (error: unknown) => error instanceof AppError && error.code === code;

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
      app: appId,
      id: 'orders',
      url: 'https://hooks.example.com/orders',
      triggers: 'message_sent,group_created',
      'basic-auth': 'parley:pass:word',
      retry: true,
      json: true,
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
    assert.deepEqual(
      hooks.map((h) => [h.id, h.enabled, h.triggers]),
      [
        ['orders', true, ['group_created', 'message_sent']],
        ['audit', false, []],
      ],
    );
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

  describe('the delivery log, redelivery and secret rotation', () => {
    // An app of their own: the webhooks above (on hooks.example.com) get none of these events.
    let app: CreatedApp;
    let receiver: Receiver;
    let answer = 503;
    before(async () => {
      app = await t.services.apps.create(io.context(''), { name: 'Deliveries' });
      receiver = await startReceiver(() => ({ status: answer }));
      t.services.webhookDispatcher.start(silentLogger);
    });
    after(async () => {
      await receiver?.close();
    });

    async function send(sender: string, to: string, text: string): Promise<void> {
      const response = await t.call(app, '/v3/messages', { method: 'POST', onBehalfOf: sender, body: { receiver: to, receiverType: 'user', category: 'message', type: 'text', data: { text } } });
      assert.equal(response.statusCode, 200, response.body);
    }
    // Generous waits: a delivery takes ~100 ms, but on a PostgreSQL server shared with other work
    // a write transaction in any of its databases holds the event feed back until it ends.
    const WAIT_MS = 30_000;
    /** The webhook's deliveries as `deliveries --json` prints them, once `done` holds. */
    async function deliveriesWhen(id: string, done: (rows: any[]) => boolean): Promise<any[]> {
      const deadline = Date.now() + WAIT_MS;
      for (;;) {
        const rows = JSON.parse((await webhooks('deliveries', { app: app.appId, json: true }, id)).stdout) as any[];
        if (done(rows)) return rows;
        if (Date.now() > deadline) assert.fail(`the delivery log did not reach the state: ${JSON.stringify(rows)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }

    it('webhooks deliveries lists them newest first; redeliver sends one again, or every failed one since a time', async () => {
      await webhooks('create', { app: app.appId, id: 'log', url: receiver.url, triggers: 'message_sent' });
      assert.match((await webhooks('deliveries', { app: app.appId }, 'log')).stdout, /^No deliveries for the webhook log of app /);
      const [alice, bob] = await newUids(t, app, 2);
      await send(alice!, bob!, 'first');
      await send(alice!, bob!, 'second');
      // Without retryOnFailure, one attempt each.
      const failed = await deliveriesWhen('log', (rows) => rows.length === 2 && rows.every((row) => row.status === 'failed'));
      assert.deepEqual(Object.keys(failed[0]!), ['id', 'eventId', 'trigger', 'status', 'attempts', 'lastResponseCode', 'lastAttemptAt', 'lastError', 'createdAt']);
      assert.ok(BigInt(failed[0]!.id) > BigInt(failed[1]!.id), 'newest first');
      const [newer, older] = failed as [any, any];
      assert.deepEqual([older.trigger, older.attempts, older.lastResponseCode, older.lastError], ['message_sent', 1, 503, 'answered HTTP 503']);
      assert.equal(receiver.received[0]!.headers['x-parley-delivery'], older.id);

      const text = await webhooks('deliveries', { app: app.appId }, 'log');
      assert.match(text.stdout, new RegExp(`^${older.id}\\tfailed\\tmessage_sent\\t1\\t503\\t\\d{4}-\\d\\d-\\d\\dT[^\\t]+Z\\tanswered HTTP 503$`, 'm'));
      assert.deepEqual(
        text.stdout.split('\n').map((line) => line.split('\t')[0]),
        [newer.id, older.id],
      );
      const one = await webhooks('deliveries', { app: app.appId, limit: '1' }, 'log');
      assert.match(one.stdout, new RegExp(`^${newer.id}\\t.*\\n\\(the newest 1; --limit shows up to 1000\\)$`));
      assert.deepEqual(
        JSON.parse((await webhooks('deliveries', { app: app.appId, limit: '1', json: true }, 'log')).stdout).map((row: any) => row.id),
        [newer.id],
      );
      assert.equal((await webhooks('deliveries', { app: app.appId, status: 'delivered' }, 'log')).stdout, `No delivered deliveries for the webhook log of app ${app.appId}.`);

      answer = 200;
      const again = await redeliver({ app: app.appId }, 'log', older.id);
      assert.deepEqual(again, { code: 0, stdout: `The delivery ${older.id} will be delivered again.` });
      await deliveriesWhen('log', (rows) => rows.find((row) => row.id === older.id)?.status === 'delivered');
      const redelivered = receiver.received.filter((got) => got.headers['x-parley-delivery'] === older.id);
      assert.deepEqual(
        redelivered.map((got) => got.headers['x-parley-attempt']),
        ['1', '1'],
        'the same id, a new run of attempts',
      );

      const since = await redeliver({ app: app.appId, since: String(older.createdAt), json: true }, 'log');
      assert.deepEqual(JSON.parse(since.stdout), { success: true, message: '1 failed deliveries will be delivered again.', count: 1 });
      const delivered = await deliveriesWhen('log', (rows) => rows.every((row) => row.status === 'delivered'));
      assert.deepEqual(
        delivered.map((row) => [row.attempts, row.lastResponseCode, row.lastError]),
        [
          [1, 200, null],
          [1, 200, null],
        ],
      );
      assert.equal((await redeliver({ app: app.appId, since: '0' }, 'log')).stdout, '0 failed deliveries will be delivered again.');
      assert.equal(JSON.parse((await webhooks('deliveries', { app: app.appId, status: 'delivered', json: true }, 'log')).stdout).length, 2);
    });

    it("webhooks deliveries and redeliver refuse unknown webhooks and deliveries, another app's webhook, and bad flags", async () => {
      const [newest] = await deliveriesWhen('log', (rows) => rows.length > 0);
      await assert.rejects(webhooks('deliveries', { app: app.appId }, 'nope'), notFound('ERR_WEBHOOK_NOT_FOUND'));
      await assert.rejects(redeliver({ app: app.appId }, 'nope', newest.id), notFound('ERR_WEBHOOK_NOT_FOUND'));
      await assert.rejects(redeliver({ app: app.appId }, 'log', '999999999999'), notFound('ERR_DELIVERY_NOT_FOUND'));
      // Another app's webhook (and so its deliveries) is not found, with the same answer.
      await webhooks('create', { app: t.appA.appId, id: 'log', url: receiver.url });
      assert.equal((await webhooks('deliveries', { app: t.appA.appId }, 'log')).stdout, `No deliveries for the webhook log of app ${t.appA.appId}.`);
      await assert.rejects(redeliver({ app: t.appA.appId }, 'log', newest.id), notFound('ERR_DELIVERY_NOT_FOUND'));
      await assert.rejects(webhooks('deliveries', { app: t.appB.appId }, 'log'), notFound('ERR_WEBHOOK_NOT_FOUND'));
      await assert.rejects(redeliver({ app: t.appB.appId, since: '0' }, 'log'), notFound('ERR_WEBHOOK_NOT_FOUND'));
      await assert.rejects(webhooks('deliveries', { app: 'no-such-app' }, 'log'), notFound('ERR_APP_NOT_FOUND'));

      const usage = (command: Promise<unknown>, message: RegExp) => assert.rejects(command, isUsage(message));
      await usage(webhooks('deliveries', { app: app.appId }), /needs the webhook id/);
      await usage(webhooks('deliveries', { app: app.appId, status: 'lost' }, 'log'), /--status must be pending, delivered, failed/);
      for (const limit of ['0', '1001', 'ten', '1.5']) await usage(webhooks('deliveries', { app: app.appId, limit }, 'log'), /--limit must be an integer from 1 to 1000/);
      await usage(redeliver({ app: app.appId }), /needs the webhook id/);
      await usage(redeliver({ app: app.appId }, 'log'), /a delivery id or --since/);
      await usage(redeliver({ app: app.appId, since: '0' }, 'log', newest.id), /a delivery id or --since \(not both\)/);
      await usage(redeliver({ app: app.appId }, 'log', 'abc'), /abc is not a delivery id/);
      await usage(redeliver({ app: app.appId, since: 'yesterday' }, 'log'), /--since must be an integer/);
      await usage(redeliver({ app: app.appId, since: '-5' }, 'log'), /--since must be an integer/);
      await usage(webhooks('redeliver', {}, 'log'), /--app is required/);
    });

    it('webhooks rotate-secret prints a new secret once; both sign while the old one overlaps, then the new alone', async () => {
      const created = JSON.parse((await webhooks('create', { app: app.appId, id: 'signed', url: receiver.url, triggers: 'message_sent', json: true })).stdout);
      const [alice, bob] = await newUids(t, app, 2);
      const rotated = await webhooks('rotate-secret', { app: app.appId, json: true }, 'signed');
      const first = JSON.parse(rotated.stdout) as { signingSecret: string; previousSecretExpiresAt: number };
      assert.deepEqual(Object.keys(first), ['signingSecret', 'previousSecretExpiresAt']);
      assert.match(first.signingSecret, /^[0-9a-f]{64}$/);
      assert.notEqual(first.signingSecret, created.signingSecret);
      const now = Math.floor(Date.now() / 1000);
      assert.ok(Math.abs(first.previousSecretExpiresAt - (now + 86_400)) <= 5, 'a day of overlap by default');

      const signatureOf = async (text: string) => {
        const seen = receiver.received.length;
        await send(alice!, bob!, text);
        const got = await receiver.waitFor((received) => received.slice(seen).some((r) => r.body?.webhook === 'signed' && r.body.data.message.data.text === text), WAIT_MS);
        const delivery = got.slice(seen).find((r) => r.body?.webhook === 'signed' && r.body.data.message.data.text === text)!;
        return { header: String(delivery.headers['x-parley-signature']), raw: delivery.raw };
      };
      const overlapping = await signatureOf('signed twice');
      assert.match(overlapping.header, /^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
      for (const secret of [first.signingSecret, created.signingSecret]) assert.ok(verifySignature(overlapping.header, secret, overlapping.raw, Math.floor(Date.now() / 1000)));

      const text = await webhooks('rotate-secret', { app: app.appId, overlap: '0' }, 'signed');
      const second = /Signing secret\s+([0-9a-f]{64})/.exec(text.stdout)?.[1];
      assert.ok(second, text.stdout);
      assert.match(text.stdout, /not shown again/);
      assert.match(text.stdout, /The previous secret no longer signs deliveries\./);
      const alone = await signatureOf('signed once');
      assert.match(alone.header, /^t=\d+,v1=[0-9a-f]{64}$/);
      assert.ok(verifySignature(alone.header, second, alone.raw, Math.floor(Date.now() / 1000)));
      assert.ok(!verifySignature(alone.header, first.signingSecret, alone.raw, Math.floor(Date.now() / 1000)));

      const week = await webhooks('rotate-secret', { app: app.appId, overlap: '604800' }, 'signed');
      assert.match(week.stdout, /The previous secret also signs deliveries until \d{4}-\d\d-\d\dT/);
      assert.ok(!week.stdout.includes(second!), 'a rotation shows only the new secret');
      assert.ok(!(await webhooks('list', { app: app.appId })).stdout.match(/[0-9a-f]{64}/), 'list shows no secret');

      await assert.rejects(webhooks('rotate-secret', { app: t.appB.appId }, 'signed'), notFound('ERR_WEBHOOK_NOT_FOUND'));
      await assert.rejects(webhooks('rotate-secret', { app: app.appId }, 'nope'), notFound('ERR_WEBHOOK_NOT_FOUND'));
      await assert.rejects(webhooks('rotate-secret', { app: app.appId }), UsageError);
      for (const overlap of ['-1', '604801', 'a day']) {
        await assert.rejects(webhooks('rotate-secret', { app: app.appId, overlap }, 'signed'), isUsage(/--overlap must be an integer from 0 to 604800/));
      }
    });
  });
});
