// Push notifications delivered from the event log (docs/notifications.md): a message sent through
// the REST API reaches the receiver's devices through the app's FCM provider (a local fake that
// checks the OAuth2 exchange and the v1 message), once, with the recipients, preferences, mutes,
// token removal, retries and the log as the vendor describes them.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { silentLogger } from '../../src/domain/context.js';
import { verifySignature } from '../../src/domain/webhook-signature.js';
import { EventsRepository } from '../../src/repositories/events.repository.js';
import { NotificationSendsRepository } from '../../src/repositories/notifications/notification-sends.repository.js';
import { EventRetention } from '../../src/services/event-retention.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, uniqueId, type TestApp } from '../helpers/app.js';
import { newGroup, newUids } from '../helpers/factories.js';
import { startFakeApns, type FakeApns } from '../helpers/fake-providers/apns.js';
import { startFakeFcm, type FakeFcm } from '../helpers/fake-providers/fcm.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

let t: TestApp;
let fcm: FakeFcm;
let apns: FakeApns;
const BUNDLE = 'com.example.parley';
before(async () => {
  fcm = await startFakeFcm();
  apns = await startFakeApns();
  t = await createTestApp({
    notificationEndpoints: { fcmUrl: fcm.baseUrl, fcmTokenOrigins: [fcm.origin], apnsUrl: apns.url, apnsCa: apns.ca },
    webhookRetry: { delaysMs: [50, 100], maxDelayMs: 200, horizonMs: 60_000 },
  });
  await t.services.eventDispatcher.start(silentLogger);
  for (const app of [t.appA, t.appB]) {
    const added = await t.call(app, '/v3/notifications/push/v1/providers/fcm', { method: 'POST', body: { providerId: 'fcm-main', serviceAccountCreds: fcm.serviceAccount(`proj-${app.appId}`) } });
    assert.equal(added.statusCode, 200, added.body);
  }
  const key = apns.credentials(BUNDLE, false);
  const apnsAdded = await t.call(t.appA, '/v3/notifications/push/v1/providers/apns', {
    method: 'POST',
    body: { providerId: 'apns-main', keyId: key.keyId, teamId: key.teamId, bundleId: key.bundleId, p8Key: key.privateKey, productionMode: false, includeMutableContent: true },
  });
  assert.equal(apnsAdded.statusCode, 200, apnsAdded.body);
});
after(async () => {
  await t?.close();
  await fcm?.close();
  await apns?.close();
});
beforeEach(() => {
  assert.deepEqual(fcm.problems, [], 'a request broke the FCM protocol');
  assert.deepEqual(apns.problems, [], 'a request broke the APNs protocol');
});

/** A device of a new user (or of `uid`): its FCM token. */
async function device(app: CreatedApp, uid: string): Promise<string> {
  const session = await t.call(app, `/v3/users/${uid}/auth_tokens`, { method: 'POST', body: {} });
  assert.equal(session.statusCode, 200, session.body);
  const token = uniqueId('fcm-device');
  const registered = await t.call(app, '/v3/notifications/push/v1/tokens', { method: 'POST', body: { authToken: body(session).data.authToken, platform: 'fcm_android', fcmToken: token } });
  assert.equal(registered.statusCode, 200, registered.body);
  return token;
}

async function send(app: CreatedApp, sender: string, receiver: string, text: string, receiverType: 'user' | 'group' = 'user'): Promise<string> {
  const response = await t.call(app, '/v3/messages', { method: 'POST', onBehalfOf: sender, body: { receiver, receiverType, category: 'message', type: 'text', data: { text } } });
  assert.equal(response.statusCode, 200, response.body);
  return String(body(response).data.id);
}

const sendsTo = (token: string) => fcm.sends.filter((s) => s.body?.message?.token === token);

async function until(predicate: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function logOf(app: CreatedApp, messageId: string): Promise<Array<Record<string, any>>> {
  const response = await t.call(app, '/v3/notifications/v1/logs', { query: { messageId } });
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
}

describe('push notifications', () => {
  it("sends a 1:1 message to the receiver's device through FCM, with the sender as title and the text as body, and logs it", async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const token = await device(t.appA, bob!);
    const aliceToken = await device(t.appA, alice!);
    const id = await send(t.appA, alice!, bob!, 'hello bob');
    await until(() => sendsTo(token).length === 1, 'the push');
    const [push] = sendsTo(token);
    assert.equal(push!.projectId, `proj-${t.appA.appId}`);
    assert.equal(push!.body.message.data.body, 'hello bob');
    assert.equal(push!.body.message.data.sender, alice);
    assert.equal(push!.body.message.data.messageId, id);
    assert.equal(push!.body.message.data.receiverType, 'user');
    assert.ok(push!.body.message.data.title.length > 0);
    await until(async () => (await logOf(t.appA, id)).length === 1, 'the log entry');
    const [entry] = await logOf(t.appA, id);
    assert.equal(entry!.notificationTriggered, true);
    assert.equal(entry!.channel, 'push');
    assert.equal(entry!.provider, 'fcm');
    assert.equal(entry!.pushToken, token);
    assert.equal(entry!.trigger, 'after_message');
    // The sender is not notified of their own message; the other app sees nothing of it.
    assert.equal(sendsTo(aliceToken).length, 0);
    assert.deepEqual(await logOf(t.appB, id), []);
  });

  it('notifies every group member but the sender, each once', async () => {
    const [alice, bob, carol] = await newUids(t, t.appA, 3);
    const group = await newGroup(t, t.appA, { owner: alice! });
    const joined = await t.call(t.appA, `/v3/groups/${group.guid}/members`, { method: 'POST', body: { participants: [bob, carol] } });
    assert.equal(joined.statusCode, 200, joined.body);
    const tokens = { alice: await device(t.appA, alice!), bob: await device(t.appA, bob!), carol: await device(t.appA, carol!) };
    const id = await send(t.appA, alice!, String(group.guid), 'hello group', 'group');
    await until(() => sendsTo(tokens.bob).length === 1 && sendsTo(tokens.carol).length === 1, 'the pushes');
    await until(async () => (await logOf(t.appA, id)).length === 2, 'the log');
    assert.equal(sendsTo(tokens.alice).length, 0);
    assert.equal(sendsTo(tokens.bob)[0]!.body.message.data.receiverType, 'group');
    assert.deepEqual((await logOf(t.appA, id)).map((e) => e.member).sort(), [bob, carol].sort());
  });

  it('sends nothing to a user who muted the conversation, and logs why', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const token = await device(t.appA, bob!);
    const muted = await t.call(t.appA, '/v3/notifications/v1/preferences/mute', { method: 'PUT', query: { uid: bob! }, body: { conversations: [{ id: alice, type: 'oneOnOne' }] } });
    assert.equal(muted.statusCode, 200, muted.body);
    const id = await send(t.appA, alice!, bob!, 'you muted me');
    await until(async () => (await logOf(t.appA, id)).length === 1, 'the log entry');
    const [entry] = await logOf(t.appA, id);
    assert.equal(entry!.notificationTriggered, false);
    assert.equal(entry!.reason, 'MUTE_PREFERENCE');
    assert.equal(sendsTo(token).length, 0);
  });

  it("sends to an iPhone through APNs over HTTP/2, with the app's bundle id as topic", async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const session = await t.call(t.appA, `/v3/users/${bob}/auth_tokens`, { method: 'POST', body: {} });
    const deviceToken = 'ab'.repeat(32);
    const registered = await t.call(t.appA, '/v3/notifications/push/v1/tokens', { method: 'POST', body: { authToken: body(session).data.authToken, platform: 'apns_ios_device', deviceToken } });
    assert.equal(registered.statusCode, 200, registered.body);
    const id = await send(t.appA, alice!, bob!, 'hello iphone');
    await until(() => apns.delivered.some((r) => r.deviceToken === deviceToken), 'the APNs push');
    const push = apns.delivered.find((r) => r.deviceToken === deviceToken)!;
    assert.equal(push.headers['apns-topic'], BUNDLE);
    assert.equal(push.headers['apns-push-type'], 'alert');
    assert.equal(push.body.aps.alert.body, 'hello iphone');
    assert.equal(push.body.aps['mutable-content'], 1);
    assert.equal(push.body.notificationDetails.sender, alice);
    await until(async () => (await logOf(t.appA, id)).some((e) => e.provider === 'apns' && e.success === true), 'the log entry');
  });

  it("keeps quiet on a day the recipient's schedule silences, in their time zone", async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const token = await device(t.appA, bob!);
    const zone = 'Pacific/Kiritimati';
    const day = (offsetDays: number) => new Intl.DateTimeFormat('en-US', { timeZone: zone, weekday: 'long' }).format(new Date(Date.now() + offsetDays * 86_400_000)).toLowerCase();
    const tz = await t.call(t.appA, '/v3/notifications/v1/preferences/timezone', { method: 'PATCH', query: { uid: bob! }, body: { timezone: zone } });
    assert.equal(tz.statusCode, 200, tz.body);
    // Today and tomorrow there (the test may run across its midnight).
    const prefs = await t.call(t.appA, '/v3/notifications/v1/preferences', {
      method: 'PATCH',
      query: { uid: bob! },
      body: { mutePreferences: { schedule: { [day(0)]: { dnd: true }, [day(1)]: { dnd: true } } } },
    });
    assert.equal(prefs.statusCode, 200, prefs.body);
    const id = await send(t.appA, alice!, bob!, 'at night');
    await until(async () => (await logOf(t.appA, id)).length === 1, 'the log entry');
    const [entry] = await logOf(t.appA, id);
    assert.equal(entry!.notificationTriggered, false);
    assert.equal(entry!.reason, 'SCHEDULE_PREFERENCE');
    assert.equal(sendsTo(token).length, 0);
  });

  it('removes a token FCM says is unregistered', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const token = await device(t.appA, bob!);
    fcm.unregistered.add(token);
    const id = await send(t.appA, alice!, bob!, 'to a gone device');
    await until(async () => (await logOf(t.appA, id)).length === 1, 'the log entry');
    const [entry] = await logOf(t.appA, id);
    assert.equal(entry!.notificationTriggered, true);
    assert.equal(entry!.success, false);
    await until(async () => {
      const rows = await t.database.db.selectFrom('notification_push_tokens').select('token').where('app_id', '=', t.appA.appId).where('token', '=', token).execute();
      return rows.length === 0;
    }, 'the token removed');
  });

  it('retries a send FCM answered 503, and the device gets the notification once', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const token = await device(t.appA, bob!);
    fcm.script({ status: 503, body: { error: { status: 'UNAVAILABLE' } } });
    const id = await send(t.appA, alice!, bob!, 'after a retry');
    await until(async () => (await logOf(t.appA, id)).some((e) => e.success === true), 'the delivered entry');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const entries = await logOf(t.appA, id);
    assert.deepEqual(entries.map((e) => e.success).sort(), [false, true], 'the refused send, then the retry');
    // The fake records the sends it took: the device got it once.
    assert.equal(sendsTo(token).filter((s) => s.body.message.data.messageId === id).length, 1);
  });

  it("posts the vendor's custom push payload to the app's custom provider, once per recipient", async () => {
    const receiver = await startReceiver();
    try {
      const app = await t.services.apps.create({ appId: '', requestId: 'test', log: silentLogger }, { name: uniqueId('custom') });
      const saved = await t.call(app, '/v3/notifications/push/v1/providers/custom', { method: 'POST', body: { webhookURL: receiver.url, isEnabled: true } });
      assert.equal(saved.statusCode, 200, saved.body);
      const [alice, bob] = await newUids(t, app, 2);
      const id = await send(app, alice!, bob!, 'to the custom provider');
      const [got] = await receiver.waitFor((r) => r.length >= 1);
      assert.equal(got!.body.trigger, 'push-notification-payload-generated');
      assert.deepEqual(got!.body.data.to, { uid: bob });
      assert.equal(got!.body.data.notificationDetails.body, 'to the custom provider');
      assert.equal(got!.body.data.notificationDetails.sender, alice);
      assert.equal(String(got!.body.data.notificationDetails.message.message.id), id);
      // Signed as webhooks are, with the secret the save answered.
      const secret: string = body(saved).data.pushProviders[0].signingSecret;
      assert.ok(verifySignature(String(got!.headers['x-parley-signature']), secret, got!.raw, Math.floor(Date.now() / 1000)), 'the signature verifies');
      assert.ok(!verifySignature(String(got!.headers['x-parley-signature']), 'f'.repeat(64), got!.raw, Math.floor(Date.now() / 1000)));
    } finally {
      await receiver.close();
    }
  });

  it('claims each send once: in a batch of many apps, a key named twice is claimed by its first naming', async () => {
    const sends = new NotificationSendsRepository(t.database.db);
    const [a, b] = [t.appA.appId, t.appB.appId];
    const event = String(900_000_000 + Math.floor(Math.random() * 1_000_000));
    assert.deepEqual(await sends.claimMany([]), []);
    assert.deepEqual(
      await sends.claimMany([
        { appId: a, eventId: event, key: 'k1' },
        { appId: b, eventId: event, key: 'k1' },
        { appId: a, eventId: event, key: 'k1' },
        { appId: a, eventId: event, key: 'k2' },
      ]),
      [true, true, false, true],
    );
    assert.deepEqual(
      await sends.claimMany([
        { appId: a, eventId: event, key: 'k2' },
        { appId: b, eventId: event, key: 'k2' },
      ]),
      [false, true],
    );
    await sends.release(a, event, 'k1');
    assert.deepEqual(
      await sends.claimMany([
        { appId: a, eventId: event, key: 'k1' },
        { appId: b, eventId: event, key: 'k1' },
      ]),
      [true, false],
    );
  });

  it('drops what a channel still owes when its last provider goes: adding one back sends no old notification', async () => {
    let failing = true;
    // The second refusal asks for a minute (Retry-After): no third attempt can be under way when
    // the provider goes (an attempt that began before the delete may still arrive after it).
    const receiver = await startReceiver((_request, n) => (failing ? { status: 503, ...(n === 1 ? { headers: { 'retry-after': '60' } } : {}) } : { status: 200 }));
    try {
      const app = await t.services.apps.create({ appId: '', requestId: 'test', log: silentLogger }, { name: uniqueId('dropped') });
      const url = '/v3/notifications/push/v1/providers/custom';
      assert.equal((await t.call(app, url, { method: 'POST', body: { webhookURL: receiver.url } })).statusCode, 200);
      const [alice, bob] = await newUids(t, app, 2);
      const old = await send(app, alice!, bob!, 'while the provider fails');
      const db = t.database.db;
      const pending = async () =>
        Number(
          (
            await db
              .selectFrom('event_deliveries')
              .select(db.fn.countAll().as('n'))
              .where('app_id', '=', app.appId)
              .where('consumer', '=', 'notifications')
              .where('status', '=', 'pending')
              .executeTakeFirstOrThrow()
          ).n,
        );
      const lanes = async () => (await db.selectFrom('event_lanes').select('lane').where('app_id', '=', app.appId).where('consumer', '=', 'notifications').execute()).length;
      await receiver.waitFor((r) => r.length >= 2);
      assert.equal(await pending(), 1, 'retried, still pending');
      assert.equal((await t.call(app, url, { method: 'DELETE' })).statusCode, 200);
      assert.deepEqual([await pending(), await lanes()], [0, 0], 'the pending notification and its lane are gone with the provider');
      failing = false;
      const seen = receiver.received.length;
      assert.equal((await t.call(app, url, { method: 'POST', body: { webhookURL: receiver.url } })).statusCode, 200);
      const fresh = await send(app, alice!, bob!, 'after the provider is back');
      await receiver.waitFor((r) => r.slice(seen).some((got) => String(got.body.data.notificationDetails.message.message.id) === fresh));
      const ids = receiver.received.slice(seen).map((got) => String(got.body.data.notificationDetails.message.message.id));
      assert.ok(!ids.includes(old), 'the old notification is not sent when the provider comes back');
    } finally {
      await receiver.close();
    }
  });

  it("keeps the notifications' deliveries, sends and log only as long as the events", async () => {
    const db = t.database.db;
    const count = async (table: 'notification_logs' | 'notification_sends') =>
      Number((await db.selectFrom(table).select(db.fn.countAll().as('n')).where('app_id', '=', t.appA.appId).executeTakeFirstOrThrow()).n);
    const settled = async () =>
      Number(
        (
          await db
            .selectFrom('event_deliveries')
            .select(db.fn.countAll().as('n'))
            .where('app_id', '=', t.appA.appId)
            .where('consumer', '=', 'notifications')
            .where('status', '<>', 'pending')
            .executeTakeFirstOrThrow()
        ).n,
      );
    assert.ok((await count('notification_logs')) > 0 && (await count('notification_sends')) > 0 && (await settled()) > 0);
    // The service's own job, with a clock a retention ahead (7 days).
    const retention = new EventRetention({
      events: new EventsRepository(db),
      logs: t.services.notificationRetained,
      retentionMs: 1,
      now: () => Date.now() + 1_000,
    });
    await retention.sweep();
    assert.equal(await count('notification_logs'), 0);
    assert.equal(await count('notification_sends'), 0);
    assert.equal(await settled(), 0);
  });
});
