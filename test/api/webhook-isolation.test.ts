/**
 * A slow endpoint never delays other webhooks (docs/webhooks.md): a webhook holds at most its
 * share of the posts a process makes at once. Here a process may make 4 at once, 2 per webhook;
 * one app's webhook calls a receiver that never answers (its posts wait out a 30 s timeout), and
 * another app's webhook must still get every delivery meanwhile.
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
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

let t: TestApp;
let cred: ManagementCredential;
let dispatcher: WebhookDispatcher;
before(async () => {
  t = await createTestApp();
  cred = await newManagementCredential(t);
  const db = t.database.db;
  dispatcher = new WebhookDispatcher({
    db,
    deliveries: new WebhookDeliveriesRepository(db),
    webhooks: new WebhooksRepository(db),
    feed: t.services.eventFeed,
    payloads: t.services.eventPayloads,
    sender: new WebhookSender({ timeoutMs: 30_000, allowPrivate: true, userAgent: 'test', connectionsPerHost: 64 }),
    retry: DEFAULT_RETRY_SCHEDULE,
    timeoutMs: 30_000,
    limits: { ...DELIVERY_LIMITS, lanes: 4, lanesPerWebhook: 2 },
  });
  dispatcher.start(silentLogger);
});
after(async () => {
  await dispatcher?.stop();
  await t?.close();
});

async function hook(app: CreatedApp, receiver: Receiver) {
  const id = uniqueId('wh');
  const created = await managementCall(t, cred, `/apps/${app.appId}/webhooks`, { method: 'POST', body: { id, name: id, webhookURL: receiver.url } });
  assert.equal(created.statusCode, 200, created.body);
  const added = await managementCall(t, cred, `/apps/${app.appId}/webhooks/${id}/triggers`, { method: 'POST', body: { triggerIds: ['message_sent'] } });
  assert.equal(added.statusCode, 200, added.body);
}

async function sendMany(app: CreatedApp, conversations: number) {
  const uids = await newUids(t, app, conversations + 1);
  for (const receiver of uids.slice(1)) {
    const response = await t.call(app, '/v3/messages', { method: 'POST', onBehalfOf: uids[0], body: { receiver, receiverType: 'user', data: { text: 'x' } } });
    assert.equal(response.statusCode, 200, response.body);
  }
}

it("gives a webhook whose endpoint never answers only its share of the posts in flight: another app's webhook gets every delivery meanwhile", async () => {
  const silent = await startReceiver(() => ({ status: 200, delayMs: 60_000 }));
  const fast = await startReceiver();
  try {
    await hook(t.appA, silent);
    await hook(t.appB, fast);
    // Ten conversations for the silent endpoint: it could take every post in flight but for its share.
    await sendMany(t.appA, 10);
    await silent.waitFor((r) => r.length >= 2);
    await sendMany(t.appB, 10);
    // Within the silent endpoint's 30 s timeout: nothing of app A's can have freed a place.
    await fast.waitFor((r) => r.length >= 10, 15_000);
    assert.equal(silent.received.length, 2, 'the silent endpoint holds two posts, its share');
    assert.deepEqual(
      fast.received.map((d) => d.body.trigger),
      Array(10).fill('message_sent'),
    );
  } finally {
    // Closing the silent receiver ends its posts, so the dispatcher stops at once.
    await silent.close();
    await fast.close();
  }
});
