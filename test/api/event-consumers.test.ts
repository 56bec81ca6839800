// The event log's consumer module (docs/events.md, "Consumers"): what it adds to the webhooks'
// delivery beside their own tests: the attempt log, claims tied to their holder's session, and
// connections of the consumers' own.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { silentLogger } from '../../src/domain/context.js';
import { DeliveryLogRepository } from '../../src/repositories/events/delivery-log.repository.js';
import { WEBHOOKS_QUEUE } from '../../src/repositories/events/webhook-queue.js';
import { WebhookDeliveriesRepository } from '../../src/repositories/webhook-deliveries.repository.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, managementCall, newManagementCredential, uniqueId, type ManagementCredential, type TestApp } from '../helpers/app.js';
import { TEST_ENGINE } from '../helpers/db.js';
import { newUids } from '../helpers/factories.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

let t: TestApp;
let cred: ManagementCredential;
before(async () => {
  // A pool of 4 for requests (the consumers have their own).
  t = await createTestApp({ webhookTimeoutMs: 1_000, webhookRetry: { delaysMs: [50, 100], maxDelayMs: 200, horizonMs: 60_000 } }, { poolSize: 4 });
  cred = await newManagementCredential(t);
  await t.services.eventDispatcher.start(silentLogger);
});
after(async () => {
  await t?.close();
});

async function hook(app: CreatedApp, receiver: Receiver): Promise<string> {
  const id = uniqueId('wh');
  const created = await managementCall(t, cred, `/apps/${app.appId}/webhooks`, { method: 'POST', body: { id, name: id, webhookURL: receiver.url, retryOnFailure: true } });
  assert.equal(created.statusCode, 200, created.body);
  const added = await managementCall(t, cred, `/apps/${app.appId}/webhooks/${id}/triggers`, { method: 'POST', body: { triggerIds: ['message_sent'] } });
  assert.equal(added.statusCode, 200, added.body);
  return id;
}

async function send(app: CreatedApp, sender: string, receiver: string, text: string): Promise<string> {
  const response = await t.call(app, '/v3/messages', { method: 'POST', onBehalfOf: sender, body: { receiver, receiverType: 'user', category: 'message', type: 'text', data: { text } } });
  assert.equal(response.statusCode, 200, response.body);
  return String((body(response).data as { id: string }).id);
}

describe('event consumers', () => {
  it('keeps every attempt of a delivery in the attempt log, with its status and error', async () => {
    const receiver = await startReceiver((_request, n) => ({ status: n < 2 ? 503 : 200 }));
    try {
      const webhookId = await hook(t.appA, receiver);
      const [alice, bob] = await newUids(t, t.appA, 2);
      await send(t.appA, alice!, bob!, 'attempts');
      const got = await receiver.waitFor((r) => r.length >= 3);
      const deliveryId = String(got[0]!.headers['x-parley-delivery']);
      const log = new DeliveryLogRepository(t.database.db, WEBHOOKS_QUEUE);
      let attempts: Awaited<ReturnType<DeliveryLogRepository['attempts']>> = [];
      for (let n = 0; n < 100 && attempts.length < 3; n++) {
        attempts = await log.attempts(t.appA.appId, deliveryId);
        if (attempts.length < 3) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.deepEqual(
        attempts.map((a) => a.status),
        [503, 503, 200],
      );
      assert.ok(attempts.every((a) => a.duration_ms >= 0));
      assert.ok(attempts[0]!.at <= attempts[1]!.at && attempts[1]!.at <= attempts[2]!.at);
      // Another app's view of the delivery has no attempts.
      assert.deepEqual(await log.attempts(t.appB.appId, deliveryId), []);
      const delivery = await log.get(t.appA.appId, webhookId, deliveryId);
      assert.equal(delivery?.status, 'delivered');
      assert.equal(delivery?.attempts, 3);
      // The dispatcher's counters saw them.
      const counts = t.services.eventDispatcher.stats().consumers.webhooks!;
      assert.ok(counts.retried >= 2 && counts.delivered >= 1 && counts.fannedOut >= 1, JSON.stringify(counts));
    } finally {
      await receiver.close();
    }
  });

  it('gives back at once a lane claimed by a process that is gone, and keeps one whose claimant lives', async () => {
    const db = t.database.db;
    const queue = new WebhookDeliveriesRepository(db);
    const app = t.appB.appId;
    const live = 4_242_424_242n;
    await sql`select pg_advisory_lock(${live.toString()}::bigint)`.execute(db);
    try {
      await sql`
        insert into event_lanes (app_id, consumer, target, lane, next_attempt_at, claim) values
          (${app}, 'webhooks', 'gone-hook', 'l1', now() + interval '1 hour', 1234567),
          (${app}, 'webhooks', 'live-hook', 'l1', now() + interval '1 hour', ${live.toString()}::bigint)`.execute(db);
      assert.ok((await queue.releaseClaimsOfGone()) >= 1);
      const lanes = await db.selectFrom('event_lanes').select(['target', 'claim', 'next_attempt_at']).where('app_id', '=', app).orderBy('target').execute();
      const gone = lanes.find((lane) => lane.target === 'gone-hook')!;
      const kept = lanes.find((lane) => lane.target === 'live-hook')!;
      assert.equal(gone.claim, null);
      assert.ok(gone.next_attempt_at!.getTime() <= Date.now() + 1_000);
      assert.equal(String(kept.claim), live.toString());
      assert.ok(kept.next_attempt_at!.getTime() > Date.now() + 30 * 60_000);
    } finally {
      await sql`delete from event_lanes where app_id = ${app} and target in ('gone-hook', 'live-hook')`.execute(db);
      await sql`select pg_advisory_unlock(${live.toString()}::bigint)`.execute(db);
    }
  });

  it('delivers while requests hold every connection of the main pool', { skip: TEST_ENGINE !== 'postgres' && 'PostgreSQL only: the embedded database has one connection' }, async () => {
    const receiver = await startReceiver();
    try {
      await hook(t.appA, receiver);
      const [alice, bob] = await newUids(t, t.appA, 2);
      const ids: string[] = [];
      for (let n = 0; n < 5; n++) ids.push(await send(t.appA, alice!, bob!, `busy ${n}`));
      // Every connection of the main pool (4) busy for 4 s, as a burst of requests would hold them.
      let held = true;
      const busy = Promise.all(Array.from({ length: 4 }, () => sql`select pg_sleep(4)`.execute(t.database.db))).finally(() => (held = false));
      const got = await receiver.waitFor((r) => ids.every((id) => r.some((d) => String(d.body.data.message.id) === id)), 20_000);
      const deliveredWhileHeld = held;
      await busy;
      assert.ok(got.length >= ids.length);
      assert.equal(deliveredWhileHeld, true, 'the deliveries waited for the main pool');
    } finally {
      await receiver.close();
    }
  });
});
