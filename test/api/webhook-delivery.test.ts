/**
 * Webhook delivery (docs/webhooks.md) to a real HTTP receiver on loopback: the vendor's
 * envelope, Basic auth, the signature a receiver verifies, the delivery headers, retries, order
 * within a conversation, redelivery, and what is never delivered.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../../src/domain/context.js';
import { MODERATION_TRIGGERS, TRIGGERS as ALL_TRIGGERS } from '../../src/domain/events.js';
import { verifySignature } from '../../src/domain/webhook-signature.js';
import { EventsRepository } from '../../src/repositories/events.repository.js';
import { WebhookDeliveriesRepository } from '../../src/repositories/webhook-deliveries.repository.js';
import { EventRetention } from '../../src/services/event-retention.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, managementCall, newManagementCredential, TEST_REGION, uniqueId, type ManagementCredential, type TestApp } from '../helpers/app.js';
import { ADMIN_URL, TEST_ENGINE } from '../helpers/db.js';
import { newUids } from '../helpers/factories.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

let t: TestApp;
let cred: ManagementCredential;
before(async () => {
  // Retries after 50 ms and 100 ms (the vendor's 10 s and 30 s would make a slow test).
  t = await createTestApp({ webhookTimeoutMs: 1_000, webhookRetry: { delaysMs: [50, 100], maxDelayMs: 200, horizonMs: 60_000 } });
  cred = await newManagementCredential(t);
  t.services.webhookDispatcher.start(silentLogger);
});
after(async () => {
  await t?.close();
});

const mgmt = (path: string, options: Parameters<typeof managementCall>[3] = {}) => managementCall(t, cred, path, options);

async function createWebhook(app: CreatedApp, receiver: Receiver, triggers: string[], extra: Record<string, unknown> = {}) {
  const id = uniqueId('wh');
  const created = await mgmt(`/apps/${app.appId}/webhooks`, { method: 'POST', body: { id, name: id, webhookURL: receiver.url, ...extra } });
  assert.equal(created.statusCode, 200, created.body);
  const added = await mgmt(`/apps/${app.appId}/webhooks/${id}/triggers`, { method: 'POST', body: { triggerIds: triggers } });
  assert.equal(added.statusCode, 200, added.body);
  return body(created).data as { id: string; signingSecret: string };
}

async function send(app: CreatedApp, sender: string, receiver: string, text: string) {
  const response = await t.call(app, '/v3/messages', { method: 'POST', onBehalfOf: sender, body: { receiver, receiverType: 'user', category: 'message', type: 'text', data: { text } } });
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data as { id: string; conversationId: string };
}

describe('webhook delivery', () => {
  it("posts message_sent in the vendor's envelope, with Basic auth, a verifiable signature and the delivery headers", async () => {
    const receiver = await startReceiver();
    try {
      const webhook = await createWebhook(t.appA, receiver, ['message_sent'], { useBasicAuth: true, username: 'hooks', password: 'p4ss' });
      const [alice, bob] = await newUids(t, t.appA, 2);
      const message = await send(t.appA, alice!, bob!, 'hello hook');
      const [got] = await receiver.waitFor((r) => r.length >= 1);
      assert.deepEqual(Object.keys(got!.body), ['trigger', 'data', 'appId', 'region', 'webhook']);
      assert.equal(got!.body.trigger, 'message_sent');
      assert.equal(got!.body.appId, t.appA.appId);
      assert.equal(got!.body.region, TEST_REGION);
      assert.equal(got!.body.webhook, webhook.id);
      assert.equal(got!.body.data.message.id, message.id);
      assert.equal(got!.body.data.message.data.text, 'hello hook');
      assert.equal(got!.headers['content-type'], 'application/json');
      assert.equal(got!.headers.authorization, `Basic ${Buffer.from('hooks:p4ss').toString('base64')}`);
      assert.match(String(got!.headers['x-parley-delivery']), /^[0-9]+$/);
      assert.equal(got!.headers['x-parley-attempt'], '1');
      const signature = String(got!.headers['x-parley-signature']);
      assert.match(signature, /^t=[0-9]+,v1=[0-9a-f]{64}$/);
      const now = Math.floor(Date.now() / 1000);
      assert.ok(verifySignature(signature, webhook.signingSecret, got!.raw, now));
      assert.ok(!verifySignature(signature, webhook.signingSecret, got!.raw.replace('hello', 'jello'), now), 'a changed body fails');
      assert.ok(!verifySignature(signature, 'f'.repeat(64), got!.raw, now), 'another secret fails');
      assert.ok(!verifySignature(signature, webhook.signingSecret, got!.raw, now + 3600), 'an old signature fails');
    } finally {
      await receiver.close();
    }
  });

  it("delivers every trigger in the vendor's data shape to a webhook subscribed to all of them", async () => {
    // Moderation's triggers need an app that moderates: test/api/moderation-events.test.ts.
    // Connection status changes come from the gateway's presence (test/gateway), moderation's from its own tests.
    const TRIGGERS = ALL_TRIGGERS.filter((trigger) => !(MODERATION_TRIGGERS as readonly string[]).includes(trigger) && trigger !== 'user_connection_status_changed');
    const receiver = await startReceiver();
    try {
      const webhook = await createWebhook(t.appB, receiver, [...TRIGGERS]);
      const app = t.appB;
      const ok = async (url: string, options: Parameters<TestApp['call']>[2] = {}) => {
        const response = await t.call(app, url, options);
        assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
        return body(response).data;
      };
      const [alice, bob, carol, dave] = await newUids(t, app, 4);
      const message = await ok('/v3/messages', { method: 'POST', onBehalfOf: alice, body: { receiver: bob, receiverType: 'user', data: { text: `hi <@uid:${bob}>` } } });
      await ok(`/v3/messages/${message.id}`, { method: 'PUT', onBehalfOf: alice, body: { data: { text: 'edited' } } });
      await ok(`/v3/users/${alice}/conversation/delivered`, { method: 'POST', onBehalfOf: bob, body: {} });
      await ok(`/v3/users/${alice}/conversation/read`, { method: 'POST', onBehalfOf: bob, body: { messageId: message.id } });
      const reaction = `/v3/messages/${message.id}/reactions/${encodeURIComponent('👍')}`;
      await ok(reaction, { method: 'POST', onBehalfOf: bob });
      await ok(reaction, { method: 'DELETE', onBehalfOf: bob });
      await ok(`/v3/messages/${message.id}`, { method: 'DELETE', onBehalfOf: alice });
      await ok(`/v3/users/${alice}/blockedusers`, { method: 'POST', body: { blockedUids: [dave] } });
      await ok(`/v3/users/${alice}/blockedusers`, { method: 'DELETE', body: { blockedUids: [dave] } });
      const guid = uniqueId('g');
      await ok('/v3/groups', { method: 'POST', onBehalfOf: alice, body: { guid, name: 'G', type: 'public' } });
      await ok(`/v3/groups/${guid}/members`, { method: 'POST', onBehalfOf: bob, body: { participants: [bob] } });
      await ok(`/v3/groups/${guid}/members`, { method: 'POST', onBehalfOf: alice, body: { participants: [carol, dave] } });
      await ok(`/v3/groups/${guid}/members/${carol}`, { method: 'PUT', onBehalfOf: alice, body: { scope: 'moderator' } });
      await ok(`/v3/groups/${guid}/members/${dave}`, { method: 'DELETE', onBehalfOf: alice });
      await ok(`/v3/groups/${guid}/members/${bob}`, { method: 'DELETE', onBehalfOf: bob });
      await ok(`/v3/groups/${guid}/bannedusers/${dave}`, { method: 'POST', onBehalfOf: alice });
      await ok(`/v3/groups/${guid}/bannedusers/${dave}`, { method: 'DELETE', onBehalfOf: alice });
      await ok(`/v3/groups/${guid}`, { method: 'PUT', onBehalfOf: alice, body: { name: 'Renamed', owner: carol } });
      await ok(`/v3/groups/${guid}`, { method: 'DELETE' });
      const got = await receiver.waitFor((r) => new Set(r.map((d) => d.body.trigger)).size >= TRIGGERS.length);
      const byTrigger = new Map(got.map((d) => [d.body.trigger as string, d.body]));
      assert.deepEqual([...byTrigger.keys()].sort(), [...TRIGGERS].sort());
      for (const payload of byTrigger.values()) {
        assert.deepEqual(Object.keys(payload), ['trigger', 'data', 'appId', 'region', 'webhook']);
        assert.equal(payload.appId, app.appId);
        assert.equal(payload.webhook, webhook.id);
      }
      const data = (trigger: string) => byTrigger.get(trigger)!.data;
      assert.equal(data('message_sent').message.id, message.id);
      assert.equal(data('user_mentioned').message.id, message.id);
      for (const [trigger, action] of [
        ['message_edited', 'edited'],
        ['message_deleted', 'deleted'],
      ] as const) {
        const action_ = data(trigger).message;
        assert.deepEqual([action_.category, action_.type, action_.data.action], ['action', 'message', action]);
        assert.equal(action_.data.entities.on.entity.id, message.id);
        assert.equal(action_.data.entities.by.entity.uid, alice);
      }
      assert.deepEqual([data('message_delivery_receipt').type, data('message_delivery_receipt').body.action], ['receipts', 'delivered']);
      assert.deepEqual([data('message_read_receipt').body.action, data('message_read_receipt').body.messageId], ['read', message.id]);
      for (const trigger of ['message_reaction_added', 'message_reaction_removed']) assert.equal(data(trigger).reaction.messageId, message.id);
      for (const trigger of ['user_blocked', 'user_unblocked']) {
        assert.deepEqual(Object.keys(data(trigger).users), [dave]);
        assert.equal(data(trigger).by.uid, alice);
      }
      for (const trigger of TRIGGERS.filter((name) => name.startsWith('group_'))) assert.equal(data(trigger).group.guid, guid, trigger);
      assert.deepEqual(Object.keys(data('group_member_added').members).sort(), [carol, dave].sort());
      assert.equal(data('group_member_scope_changed').members[carol!].scope, 'moderator');
      assert.equal(data('group_owner_transferred').oldOwner, alice);
    } finally {
      await receiver.close();
    }
  });

  it('is not held back by a transaction running in another database of the same PostgreSQL server', { skip: TEST_ENGINE !== 'postgres' && 'PostgreSQL only' }, async () => {
    const receiver = await startReceiver();
    const other = new pg.Client({ connectionString: ADMIN_URL });
    await other.connect();
    try {
      await createWebhook(t.appA, receiver, ['message_sent']);
      // A write transaction in another database (it has a transaction id), open until the delivery arrives.
      await other.query('begin');
      await other.query('create temp table held (n int)');
      await other.query('insert into held values (1)');
      const [alice, bob] = await newUids(t, t.appA, 2);
      const message = await send(t.appA, alice!, bob!, 'not held');
      const [got] = await receiver.waitFor((r) => r.length >= 1);
      assert.equal(got!.body.data.message.id, message.id);
    } finally {
      await other.query('rollback').catch(() => undefined);
      await other.end();
      await receiver.close();
    }
  });

  it('signs with the new and the old secret while a rotation overlaps, and with the new one only after', async () => {
    const receiver = await startReceiver();
    try {
      const webhook = await createWebhook(t.appA, receiver, ['message_sent']);
      const rotated = await mgmt(`/apps/${t.appA.appId}/webhooks/${webhook.id}/signing-secret`, { method: 'POST', body: { overlapSeconds: 3600 } });
      assert.equal(rotated.statusCode, 200, rotated.body);
      const { signingSecret, previousSecretExpiresAt } = body(rotated).data;
      assert.match(signingSecret, /^[0-9a-f]{64}$/);
      assert.notEqual(signingSecret, webhook.signingSecret);
      assert.ok(previousSecretExpiresAt > Date.now() / 1000 + 3500);
      const [alice, bob] = await newUids(t, t.appA, 2);
      await send(t.appA, alice!, bob!, 'rotating');
      const [during] = await receiver.waitFor((r) => r.length >= 1);
      const now = Math.floor(Date.now() / 1000);
      assert.match(String(during!.headers['x-parley-signature']), /^t=[0-9]+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
      assert.ok(verifySignature(String(during!.headers['x-parley-signature']), signingSecret, during!.raw, now));
      assert.ok(verifySignature(String(during!.headers['x-parley-signature']), webhook.signingSecret, during!.raw, now));
      const ended = await mgmt(`/apps/${t.appA.appId}/webhooks/${webhook.id}/signing-secret`, { method: 'POST', body: { overlapSeconds: 0 } });
      const newest = body(ended).data.signingSecret;
      await send(t.appA, alice!, bob!, 'rotated');
      const [, after] = await receiver.waitFor((r) => r.length >= 2);
      assert.match(String(after!.headers['x-parley-signature']), /^t=[0-9]+,v1=[0-9a-f]{64}$/);
      assert.ok(verifySignature(String(after!.headers['x-parley-signature']), newest, after!.raw, now));
      // Another app's webhook is not found.
      const foreign = await mgmt(`/apps/${t.appB.appId}/webhooks/${webhook.id}/signing-secret`, { method: 'POST', body: {} });
      assert.equal(foreign.statusCode, 404);
      // An overlap beyond a week, or negative, is refused; the secret stays.
      for (const overlapSeconds of [-1, 7 * 86_400 + 1, 'soon']) {
        const refused = await mgmt(`/apps/${t.appA.appId}/webhooks/${webhook.id}/signing-secret`, { method: 'POST', body: { overlapSeconds } });
        assert.equal(refused.statusCode, 400, String(overlapSeconds));
        assert.equal(body(refused).error.code, 'ERR_BAD_REQUEST');
      }
      const stored = await t.database.db.selectFrom('webhooks').select('signing_secret').where('app_id', '=', t.appA.appId).where('id', '=', webhook.id).executeTakeFirstOrThrow();
      assert.equal(stored.signing_secret, newest);
    } finally {
      await receiver.close();
    }
  });

  it('retries a failing endpoint (10 s, 30 s, then longer: shortened here) with the same delivery id until it answers 2xx', async () => {
    const receiver = await startReceiver((_request, n) => ({ status: n < 2 ? 500 : 200 }));
    try {
      const webhook = await createWebhook(t.appA, receiver, ['message_sent'], { retryOnFailure: true });
      const [alice, bob] = await newUids(t, t.appA, 2);
      await send(t.appA, alice!, bob!, 'try again');
      const got = await receiver.waitFor((r) => r.length >= 3);
      assert.deepEqual(
        got.map((r) => r.headers['x-parley-attempt']),
        ['1', '2', '3'],
      );
      assert.equal(new Set(got.map((r) => r.headers['x-parley-delivery'])).size, 1);
      assert.ok(got[1]!.at - got[0]!.at >= 45, 'the first retry waits');
      const log = await waitForLog(t.appA, webhook.id, (rows) => rows[0]?.status === 'delivered');
      assert.equal(log[0]!.attempts, 3);
      assert.equal(log[0]!.lastResponseCode, 200);
    } finally {
      await receiver.close();
    }
  });

  it('fails a delivery at once without retryOnFailure, and redelivers it on request', async () => {
    let answer = 503;
    const receiver = await startReceiver(() => ({ status: answer }));
    try {
      const webhook = await createWebhook(t.appA, receiver, ['message_sent']);
      const [alice, bob] = await newUids(t, t.appA, 2);
      await send(t.appA, alice!, bob!, 'once');
      const failed = await waitForLog(t.appA, webhook.id, (rows) => rows[0]?.status === 'failed');
      assert.equal(failed[0]!.attempts, 1);
      assert.equal(failed[0]!.lastResponseCode, 503);
      answer = 200;
      const again = await mgmt(`/apps/${t.appA.appId}/webhooks/${webhook.id}/deliveries/${failed[0]!.id}/redeliver`, { method: 'POST' });
      assert.equal(again.statusCode, 200, again.body);
      const delivered = await waitForLog(t.appA, webhook.id, (rows) => rows[0]?.status === 'delivered');
      assert.equal(delivered[0]!.id, failed[0]!.id);
      assert.equal(receiver.received.length, 2);
      assert.equal(receiver.received[1]!.headers['x-parley-delivery'], failed[0]!.id);
    } finally {
      await receiver.close();
    }
  });

  it('lists deliveries newest first a page at a time, redelivers every failed one since a time, and answers 4xx for what is not there', async () => {
    let answer = 500;
    const receiver = await startReceiver(() => ({ status: answer }));
    try {
      const webhook = await createWebhook(t.appA, receiver, ['message_sent']);
      const [alice, bob] = await newUids(t, t.appA, 2);
      const since = Math.floor(Date.now() / 1000) - 1;
      for (let n = 0; n < 3; n++) await send(t.appA, alice!, bob!, `f${n}`);
      const failed = await waitForLog(t.appA, webhook.id, (rows) => rows.length === 3 && rows.every((row) => row.status === 'failed'));
      assert.deepEqual(
        failed.map((row) => Number(row.id)),
        failed.map((row) => Number(row.id)).sort((a, b) => b - a),
        'newest first',
      );
      const base = `/apps/${t.appA.appId}/webhooks/${webhook.id}/deliveries`;
      const first = body(await mgmt(base, { query: { limit: '2' } }));
      assert.deepEqual(
        first.data.map((row: any) => row.id),
        failed.slice(0, 2).map((row) => row.id),
      );
      assert.equal(first.meta.next.before, failed[1]!.id);
      const second = body(await mgmt(base, { query: { limit: '2', before: first.meta.next.before } }));
      assert.deepEqual(
        second.data.map((row: any) => row.id),
        [failed[2]!.id],
      );
      assert.equal(second.meta.next, undefined);
      assert.deepEqual(body(await mgmt(base, { query: { status: 'delivered' } })).data, []);
      answer = 200;
      const again = await mgmt(`${base}/redeliver`, { method: 'POST', body: { since } });
      assert.equal(again.statusCode, 200, again.body);
      assert.equal(body(again).data.count, 3);
      await waitForLog(t.appA, webhook.id, (rows) => rows.every((row) => row.status === 'delivered' && row.attempts === 1));
      // The same three ids, each delivered once more, in order.
      assert.deepEqual(
        receiver.received.slice(3).map((d) => d.headers['x-parley-delivery']),
        [...failed].reverse().map((row) => row.id),
      );
      assert.equal(body(await mgmt(`${base}/redeliver`, { method: 'POST', body: { since } })).data.count, 0, 'nothing failed now');
      // Errors: another app's webhook, an unknown delivery, a malformed id, a bad status.
      assert.equal((await mgmt(`/apps/${t.appB.appId}/webhooks/${webhook.id}/deliveries`)).statusCode, 404);
      const unknown = await mgmt(`${base}/999999999/redeliver`, { method: 'POST' });
      assert.equal(unknown.statusCode, 404);
      assert.equal(body(unknown).error.code, 'ERR_DELIVERY_NOT_FOUND');
      assert.equal((await mgmt(`${base}/12ab/redeliver`, { method: 'POST' })).statusCode, 400);
      assert.equal((await mgmt(base, { query: { status: 'lost' } })).statusCode, 400);
      assert.equal((await mgmt(base, { query: { before: '1e3' } })).statusCode, 400);
      assert.equal((await mgmt(base, { query: { limit: '0' } })).statusCode, 400);
      assert.equal((await mgmt(`${base}/redeliver`, { method: 'POST', body: {} })).statusCode, 400);
    } finally {
      await receiver.close();
    }
  });

  it("keeps each conversation's order when a delivery is retried", async () => {
    let first = true;
    const receiver = await startReceiver((request) => {
      // The third message's first attempt fails: the ones after it must wait for it.
      if (first && request.body?.data?.message?.data?.text === 'm2') {
        first = false;
        return { status: 500 };
      }
      return { status: 200 };
    });
    try {
      await createWebhook(t.appA, receiver, ['message_sent'], { retryOnFailure: true });
      const [alice, bob] = await newUids(t, t.appA, 2);
      for (let n = 0; n < 8; n++) await send(t.appA, alice!, bob!, `m${n}`);
      const text = (d: { body: { data: { message: { data: { text: string } } } } }) => d.body.data.message.data.text;
      const got = await receiver.waitFor((r) => r.length >= 9 && r.some((d) => text(d) === 'm7'));
      assert.ok(got.filter((d) => text(d) === 'm2').length >= 2, 'm2 was tried again');
      // Delivery is at least once: an attempt that outlived the timeout on a loaded machine is
      // tried again too. Each retry comes right after its message's earlier attempt, before any
      // later message: with repeats in a row taken as one, the messages arrive in order.
      const order = got.map(text).filter((message, n, all) => n === 0 || all[n - 1] !== message);
      assert.deepEqual(order, ['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7']);
    } finally {
      await receiver.close();
    }
  });

  it("delivers only the triggers subscribed, of the webhook's own app, and nothing to a disabled webhook", async () => {
    const receiver = await startReceiver();
    const other = await startReceiver();
    const disabled = await startReceiver();
    try {
      await createWebhook(t.appA, receiver, ['group_created']);
      await createWebhook(t.appB, other, ['message_sent']);
      await createWebhook(t.appA, disabled, ['message_sent', 'group_created'], { enabled: false });
      const [alice, bob] = await newUids(t, t.appA, 2);
      await send(t.appA, alice!, bob!, 'not for the group hook');
      const guid = uniqueId('g');
      const created = await t.call(t.appA, '/v3/groups', { method: 'POST', body: { guid, name: 'G', type: 'public', owner: alice } });
      assert.equal(created.statusCode, 200, created.body);
      const [got] = await receiver.waitFor((r) => r.length >= 1);
      assert.equal(got!.body.trigger, 'group_created');
      assert.equal(got!.body.data.group.guid, guid);
      // The group event came after the message: had either been delivered wrongly, it would be there by now.
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(receiver.received.length, 1);
      assert.equal(other.received.length, 0);
      assert.equal(disabled.received.length, 0);
    } finally {
      await Promise.all([receiver.close(), other.close(), disabled.close()]);
    }
  });

  it('the retention deletes settled deliveries and idle lanes with the old events; delivery goes on afterwards', async () => {
    const receiver = await startReceiver();
    try {
      await createWebhook(t.appB, receiver, ['message_sent']);
      const [alice, bob] = await newUids(t, t.appB, 2);
      await send(t.appB, alice!, bob!, 'before the sweep');
      await receiver.waitFor((r) => r.length >= 1);
      const db = t.database.db;
      // (App A's earlier webhooks still retry deliveries to receivers that are gone: their lanes are not idle.)
      const lanesOfB = () => db.selectFrom('webhook_lanes').select(['lane', 'next_attempt_at']).where('app_id', '=', t.appB.appId).execute();
      await waitFor(async () => (await lanesOfB()).every((lane) => lane.next_attempt_at === null));
      assert.ok((await db.selectFrom('webhook_deliveries').select('id').execute()).length > 0);
      // (App A's retrying deliveries may settle at any moment, after the sweep too: the ones
      // settled before it are those it must delete.)
      const settled = (await db.selectFrom('webhook_deliveries').select('id').where('status', '<>', 'pending').execute()).map((row) => row.id);
      assert.ok(settled.length > 0);
      // As if the retention had passed for everything so far.
      const retention = new EventRetention({ events: new EventsRepository(db), deliveries: new WebhookDeliveriesRepository(db), retentionMs: 1, now: () => Date.now() + 1_000 });
      assert.ok((await retention.sweep()) > 0);
      assert.deepEqual(await db.selectFrom('webhook_deliveries').select('id').where('id', 'in', settled).execute(), []);
      assert.deepEqual(await lanesOfB(), []);
      await send(t.appB, alice!, bob!, 'after the sweep');
      const got = await receiver.waitFor((r) => r.length >= 2);
      assert.equal(got[1]!.body.data.message.data.text, 'after the sweep');
    } finally {
      await receiver.close();
    }
  });
});

async function waitFor(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail('the condition did not hold within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function waitForLog(app: CreatedApp, webhookId: string, done: (rows: any[]) => boolean): Promise<any[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const response = await mgmt(`/apps/${app.appId}/webhooks/${webhookId}/deliveries`);
    assert.equal(response.statusCode, 200, response.body);
    const rows = body(response).data as any[];
    if (done(rows)) return rows;
    if (Date.now() > deadline) assert.fail(`the delivery log did not reach the state: ${JSON.stringify(rows)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
