/**
 * A webhook's share of the lanes a process sends at once (docs/webhooks.md): an endpoint not yet
 * seen to answer, or one that answers slowly or fails, holds at most `lanesPerWebhook`; one
 * whose last round was answered 2xx within `quickAnswerMs` gets `lanesPerAnsweringWebhook`.
 * Here 2 and 4. Each case's twelve conversations hold one delivery each, made before the
 * dispatcher starts, so every round could take every lane but for the share; the receiver
 * counts the posts it holds at once.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { silentLogger } from '../../src/domain/context.js';
import { DEFAULT_RETRY_SCHEDULE } from '../../src/domain/webhooks.js';
import { WebhookDeliveriesRepository } from '../../src/repositories/webhook-deliveries.repository.js';
import { WebhooksRepository } from '../../src/repositories/webhooks.repository.js';
import { DELIVERY_LIMITS, WebhookDispatcher } from '../../src/services/webhook-dispatcher.js';
import { WebhookSender } from '../../src/services/webhook-sender.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { createTestApp, managementCall, newManagementCredential, uniqueId, type ManagementCredential, type TestApp } from '../helpers/app.js';
import { newUids } from '../helpers/factories.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

let t: TestApp;
let cred: ManagementCredential;
before(async () => {
  t = await createTestApp();
  cred = await newManagementCredential(t);
});
after(async () => {
  await t?.close();
});

const CONVERSATIONS = 12;

/** Delivers twelve conversations' messages to an endpoint answering as `answer` says; the most posts it held at once, and the arrivals. */
async function deliverAll(answer: { status: number; delayMs: number }, quickAnswerMs: number, answeringForMs = DELIVERY_LIMITS.answeringForMs) {
  let holding = 0;
  let most = 0;
  const receiver = await startReceiver(() => {
    holding++;
    most = Math.max(most, holding);
    // Set before the receiver's own timer of the same delay: let go of before the answer leaves.
    setTimeout(() => holding--, answer.delayMs).unref();
    return answer;
  });
  const app: CreatedApp = await t.services.apps.create({ appId: '', requestId: 'test', log: silentLogger }, { name: uniqueId('shares') });
  const id = uniqueId('wh');
  const created = await managementCall(t, cred, `/apps/${app.appId}/webhooks`, { method: 'POST', body: { id, name: id, webhookURL: receiver.url, retryOnFailure: false } });
  assert.equal(created.statusCode, 200, created.body);
  const added = await managementCall(t, cred, `/apps/${app.appId}/webhooks/${id}/triggers`, { method: 'POST', body: { triggerIds: ['message_sent'] } });
  assert.equal(added.statusCode, 200, added.body);
  const uids = await newUids(t, app, CONVERSATIONS + 1);
  for (const other of uids.slice(1)) {
    const response = await t.call(app, '/v3/messages', { method: 'POST', onBehalfOf: uids[0], body: { receiver: other, receiverType: 'user', data: { text: 'x' } } });
    assert.equal(response.statusCode, 200, response.body);
  }
  const db = t.database.db;
  const dispatcher = new WebhookDispatcher({
    db,
    deliveries: new WebhookDeliveriesRepository(db),
    webhooks: new WebhooksRepository(db),
    feed: t.services.eventFeed,
    payloads: t.services.eventPayloads,
    sender: new WebhookSender({ timeoutMs: 10_000, allowPrivate: true, userAgent: 'test', connectionsPerHost: 64 }),
    retry: DEFAULT_RETRY_SCHEDULE,
    timeoutMs: 10_000,
    limits: { ...DELIVERY_LIMITS, lanes: 16, lanesPerWebhook: 2, lanesPerAnsweringWebhook: 4, quickAnswerMs, answeringForMs },
  });
  dispatcher.start(silentLogger);
  try {
    await receiver.waitFor((r) => r.length >= CONVERSATIONS, 20_000);
  } finally {
    await dispatcher.stop();
    await receiver.close();
  }
  return { most, received: receiver.received };
}

it('gives an endpoint that answers at once the larger share after its first round, and never more', async () => {
  // Answers held long enough (1 s, still quick beside 5 s) that the second round's four posts
  // overlap however slowly a loaded machine claims them.
  const { most, received } = await deliverAll({ status: 200, delayMs: 1_000 }, 5_000);
  assert.equal(most, 4);
  assert.equal(new Set(received.map((d) => d.headers['x-parley-delivery'])).size, CONVERSATIONS, 'each delivery once');
});

it('keeps an endpoint that answers slower than quickAnswerMs to the smaller share', async () => {
  const { most, received } = await deliverAll({ status: 200, delayMs: 150 }, 20);
  assert.equal(most, 2);
  assert.equal(received.length, CONVERSATIONS);
});

it('keeps an endpoint that fails to the smaller share', async () => {
  const { most, received } = await deliverAll({ status: 500, delayMs: 150 }, 5_000);
  assert.equal(most, 2);
  assert.equal(received.length, CONVERSATIONS, 'without retries, each failed delivery is posted once');
});

it('forgets that an endpoint answered once answeringForMs has passed since its last round', async () => {
  // With no time at all, every claim finds the last round too old: the endpoint stays unproven.
  const { most, received } = await deliverAll({ status: 200, delayMs: 150 }, 5_000, -1);
  assert.equal(most, 2);
  assert.equal(received.length, CONVERSATIONS);
});
