// E-mail and SMS notifications (docs/notifications.md, "E-mail and SMS"): a recipient's unread
// messages of a conversation gathered into one digest after the app's interval, sent through
// SendGrid and Twilio (local fakes that check their protocols) and the custom providers (a local
// receiver), with the recipients, read messages, mutes, caps, missing addresses, retries, the
// at-most-once rule and the log.
//
// A digest waits `intervalInSeconds` (60 at least) for more messages. The tests check that its
// lane is due that long after the first message and that nothing went out, then make the lane
// due now (as the interval's end would): the send that follows is the one the interval's end makes.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { silentLogger } from '../../src/domain/context.js';
import { verifySignature } from '../../src/domain/webhook-signature.js';
import { EventQueueRepository } from '../../src/repositories/events/event-queue.repository.js';
import { NOTIFICATIONS_QUEUE } from '../../src/repositories/events/notification-queue.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, uniqueId, type TestApp } from '../helpers/app.js';
import { newGroup, newUids } from '../helpers/factories.js';
import { startFakeSendGrid, type FakeSendGrid } from '../helpers/fake-providers/sendgrid.js';
import { startFakeTwilio, type FakeTwilio } from '../helpers/fake-providers/twilio.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

let t: TestApp;
let sendGrid: FakeSendGrid;
let twilio: FakeTwilio;
const TEMPLATE = `d-${'0123456789abcdef'.repeat(2)}`;
const FROM_NUMBER = '+13611364718';
before(async () => {
  [sendGrid, twilio] = await Promise.all([startFakeSendGrid(), startFakeTwilio()]);
  t = await createTestApp({
    notificationEndpoints: { sendGridUrl: sendGrid.baseUrl, twilioUrl: twilio.baseUrl },
    webhookRetry: { delaysMs: [50, 100], maxDelayMs: 200, horizonMs: 60_000 },
  });
  await t.services.eventDispatcher.start(silentLogger);
});
after(async () => {
  await t?.close();
  await Promise.all([sendGrid?.close(), twilio?.close()]);
});
afterEach(() => {
  assert.deepEqual(sendGrid.problems, [], 'a request broke the SendGrid protocol');
  assert.deepEqual(twilio.problems, [], 'a request broke the Twilio protocol');
});

type Channel = 'email' | 'sms';
const freshApp = () => t.services.apps.create({ appId: '', requestId: 'test', log: silentLogger }, { name: uniqueId('digests') });

async function ok(app: CreatedApp, url: string, method: 'POST' | 'PATCH' | 'PUT' | 'DELETE', payload: unknown, query?: Record<string, string>): Promise<any> {
  const response = await t.call(app, url, { method, body: payload, ...(query ? { query } : {}) });
  assert.equal(response.statusCode, 200, `${method} ${url}: ${response.body}`);
  return body(response).data;
}
const withSendGrid = (app: CreatedApp) =>
  ok(app, '/v3/notifications/email/v1/providers/sendgrid', 'POST', {
    sendGridApiKey: sendGrid.apiKey,
    sendGridTemplateID: TEMPLATE,
    sendGridUnsubscribeGroupID: '33832',
    senderName: 'Parley Mail',
    senderEmail: 'noreply@mail.example.com',
    allowEmailReplies: true,
    senderEmailForReplies: 'reply@mail.example.com',
  });
const withTwilio = (app: CreatedApp) =>
  ok(app, '/v3/notifications/sms/v1/providers/twilio', 'POST', { twilioAccountSID: twilio.accountSid, twilioAuthToken: twilio.authToken, twilioSenderPhoneNumber: FROM_NUMBER });
const withCustom = (app: CreatedApp, channel: Channel, receiver: Receiver, options: Record<string, unknown> = {}) =>
  ok(app, `/v3/notifications/${channel}/v1/providers/custom`, 'POST', Object.assign({ webhookURL: receiver.url, isEnabled: true }, options));
const settings = (app: CreatedApp, channel: Channel, values: Record<string, unknown>) => ok(app, '/v3/notifications/v1/settings', 'PATCH', { preferences: { [channel]: values } });
const contact = (app: CreatedApp, uid: string, details: { email?: string; phno?: string }) => ok(app, '/v3/notifications/v1/contact-details', 'PATCH', details, { uid });
const emailOf = (uid: string) => `${uid}@example.com`;

async function send(app: CreatedApp, sender: string, receiver: string, text: string, receiverType: 'user' | 'group' = 'user'): Promise<string> {
  const response = await t.call(app, '/v3/messages', { method: 'POST', onBehalfOf: sender, body: { receiver, receiverType, category: 'message', type: 'text', data: { text } } });
  assert.equal(response.statusCode, 200, response.body);
  return String(body(response).data.id);
}

async function until(predicate: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The app's deliveries of a channel, by status. */
async function deliveries(app: CreatedApp, channel: Channel): Promise<Array<{ item: string; lane: string; status: string; event_id: string }>> {
  const { rows } = await sql<{ item: string; lane: string; status: string; event_id: string }>`
    select item, lane, status, event_id::text from event_deliveries
    where app_id = ${app.appId} and consumer = 'notifications' and target = ${channel} order by event_id, item`.execute(t.database.db);
  return rows;
}

/**
 * Waits for `count` pending deliveries of the channel, checks that each of their lanes is due at
 * least `waitS` seconds after the lane's first message (and no sooner), then makes them due now.
 */
async function intervalEnds(app: CreatedApp, channel: Channel, count: number, waitS: number): Promise<void> {
  await until(async () => (await deliveries(app, channel)).filter((d) => d.status === 'pending').length === count, `${count} pending ${channel} deliveries`);
  const { rows } = await sql<{ lane: string; wait_s: number; claim: string | null }>`
    select l.lane, extract(epoch from l.next_attempt_at - min(e.created_at))::float8 as wait_s, l.claim::text as claim
    from event_lanes l
    join event_deliveries d on d.app_id = l.app_id and d.consumer = l.consumer and d.target = l.target and d.lane = l.lane and d.status = 'pending'
    join events e on e.app_id = d.app_id and e.id = d.event_id
    where l.app_id = ${app.appId} and l.consumer = 'notifications' and l.target = ${channel}
    group by l.lane, l.next_attempt_at, l.claim`.execute(t.database.db);
  assert.ok(rows.length > 0);
  for (const row of rows) {
    assert.equal(row.claim, null, 'nobody took the lane before its time');
    assert.ok(row.wait_s >= waitS - 1 && row.wait_s <= waitS + 30, `the lane ${row.lane} waits ${row.wait_s} s, not ${waitS}`);
  }
  await sql`update event_lanes set next_attempt_at = now()
            where app_id = ${app.appId} and consumer = 'notifications' and target = ${channel} and claim is null`.execute(t.database.db);
}

const settled = async (app: CreatedApp, channel: Channel) => {
  await until(async () => (await deliveries(app, channel)).every((d) => d.status !== 'pending'), `the ${channel} deliveries settled`);
};

async function logOf(app: CreatedApp, filter: Record<string, string>): Promise<Array<Record<string, any>>> {
  const response = await t.call(app, '/v3/notifications/v1/logs', { query: filter });
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
}

const mailsTo = (address: string) => sendGrid.mails.filter((m) => m.body.personalizations[0].to[0].email === address);
const smsTo = (phone: string) => twilio.messages.filter((m) => m.form.To === phone);

describe('e-mail digests through SendGrid', () => {
  it("gathers a conversation's messages into one mail after the interval, to the stored address only, and logs it", async () => {
    const app = await freshApp();
    await withSendGrid(app);
    await settings(app, 'email', { intervalInSeconds: 60 });
    const [alice, bob] = await newUids(t, app, 2);
    await contact(app, bob!, { email: emailOf(bob!) });
    await contact(app, alice!, { email: emailOf(alice!) });
    const ids = [await send(app, alice!, bob!, 'hello bob'), await send(app, alice!, bob!, 'are you there?'), await send(app, alice!, bob!, 'call me')];
    await intervalEnds(app, 'email', 3, 60);
    assert.equal(mailsTo(emailOf(bob!)).length, 0, 'nothing before the interval ends');
    await until(() => mailsTo(emailOf(bob!)).length === 1, 'the mail');
    await settled(app, 'email');
    const [mail] = mailsTo(emailOf(bob!));
    assert.equal(mail!.headers.authorization, `Bearer ${sendGrid.apiKey}`);
    assert.equal(mail!.body.subject, `New messages from User ${alice}`);
    assert.deepEqual(mail!.body.from, { email: 'noreply@mail.example.com', name: 'Parley Mail' });
    assert.deepEqual(mail!.body.reply_to, { email: 'reply@mail.example.com' });
    assert.deepEqual(mail!.body.asm, { group_id: 33832 });
    assert.equal(mail!.body.template_id, TEMPLATE);
    assert.deepEqual(mail!.body.personalizations[0].to, [{ email: emailOf(bob!), name: `User ${bob}` }]);
    assert.deepEqual(mail!.body.content, [{ type: 'text/plain', value: [`User ${alice}: hello bob`, `User ${alice}: are you there?`, `User ${alice}: call me`].join('\n') }]);
    const data = mail!.body.personalizations[0].dynamic_template_data;
    assert.equal(data.subject, mail!.body.subject);
    assert.deepEqual(
      data.messages.map((m: any) => [m.sender.uid, m.message, String(m.messageObject.id)]),
      ids.map((id, n) => [alice, ['hello bob', 'are you there?', 'call me'][n], id]),
    );
    assert.equal(data.senderDetails.uid, alice);
    // The sender is not mailed; one log entry for the digest, named by its first message.
    assert.equal(mailsTo(emailOf(alice!)).length, 0);
    const entries = await logOf(app, { channel: 'email' });
    assert.equal(entries.length, 1);
    assert.equal(entries[0]!.provider, 'sendgrid');
    assert.equal(entries[0]!.notificationTriggered, true);
    assert.equal(entries[0]!.success, true);
    assert.equal(entries[0]!.trigger, 'after_message');
    assert.equal(String(entries[0]!.messageId), ids[0]);
    assert.equal(entries[0]!.receiver, bob);
    assert.deepEqual(entries[0]!.payload.messageIds, ids);
    assert.equal(entries[0]!.payload.subject, mail!.body.subject);
  });

  it('waits the default interval (two hours) when the app set none', async () => {
    const app = await freshApp();
    await withSendGrid(app);
    const [alice, bob] = await newUids(t, app, 2);
    await contact(app, bob!, { email: emailOf(bob!) });
    await send(app, alice!, bob!, 'later');
    await intervalEnds(app, 'email', 1, 7200);
    await until(() => mailsTo(emailOf(bob!)).length === 1, 'the mail');
  });

  it('leaves out the messages the recipient has read, and sends nothing when all are', async () => {
    const app = await freshApp();
    await withSendGrid(app);
    await settings(app, 'email', { intervalInSeconds: 60 });
    const [alice, bob, carol] = await newUids(t, app, 3);
    await contact(app, bob!, { email: emailOf(bob!) });
    await send(app, alice!, bob!, 'first');
    const second = await send(app, alice!, bob!, 'second');
    await send(app, alice!, bob!, 'third');
    const read = await t.call(app, `/v3/users/${alice}/conversation/read`, { method: 'POST', onBehalfOf: bob!, body: { messageId: Number(second) } });
    assert.equal(read.statusCode, 200, read.body);
    const all = await send(app, carol!, bob!, 'read at once');
    const readAll = await t.call(app, `/v3/users/${carol}/conversation/read`, { method: 'POST', onBehalfOf: bob!, body: { messageId: Number(all) } });
    assert.equal(readAll.statusCode, 200, readAll.body);
    await intervalEnds(app, 'email', 4, 60);
    await settled(app, 'email');
    const mails = mailsTo(emailOf(bob!));
    assert.equal(mails.length, 1, 'no mail of the conversation read whole');
    assert.equal(mails[0]!.body.content[0].value, `User ${alice}: third`);
  });

  it('sends nothing to a user who muted the conversation, and logs why', async () => {
    const app = await freshApp();
    await withSendGrid(app);
    await settings(app, 'email', { intervalInSeconds: 60 });
    const [alice, bob] = await newUids(t, app, 2);
    await contact(app, bob!, { email: emailOf(bob!) });
    await ok(app, '/v3/notifications/v1/preferences/mute', 'PUT', { conversations: [{ id: alice, type: 'oneOnOne' }] }, { uid: bob! });
    const id = await send(app, alice!, bob!, 'you muted me');
    await intervalEnds(app, 'email', 1, 60);
    await settled(app, 'email');
    const [entry] = await logOf(app, { messageId: id });
    assert.equal(entry!.notificationTriggered, false);
    assert.equal(entry!.reason, 'MUTE_PREFERENCE');
    assert.equal(mailsTo(emailOf(bob!)).length, 0);
  });

  it('keeps to maxPerDayPerConversation and maxPerDay, logging QUOTA_PREFERENCE past them', async () => {
    const app = await freshApp();
    await withSendGrid(app);
    await settings(app, 'email', { intervalInSeconds: 60, maxPerDay: 2, maxPerDayPerConversation: 1 });
    const [alice, bob, carol, dave] = await newUids(t, app, 4);
    await contact(app, bob!, { email: emailOf(bob!) });
    const round = async (sender: string, text: string) => {
      const id = await send(app, sender, bob!, text);
      await intervalEnds(app, 'email', 1, 60);
      await settled(app, 'email');
      const [entry] = await logOf(app, { messageId: id });
      return entry!;
    };
    assert.equal((await round(alice!, 'one')).success, true);
    assert.equal((await round(alice!, 'two')).reason, 'QUOTA_PREFERENCE', 'one a day from this conversation');
    assert.equal((await round(carol!, 'three')).success, true, 'another conversation');
    assert.equal((await round(dave!, 'four')).reason, 'QUOTA_PREFERENCE', 'two a day in all');
    assert.deepEqual(
      mailsTo(emailOf(bob!)).map((m) => m.body.content[0].value),
      [`User ${alice}: one`, `User ${carol}: three`],
    );
  });

  it('retries a mail SendGrid answered 503, and the recipient gets it once', async () => {
    const app = await freshApp();
    await withSendGrid(app);
    await settings(app, 'email', { intervalInSeconds: 60 });
    const [alice, bob] = await newUids(t, app, 2);
    await contact(app, bob!, { email: emailOf(bob!) });
    const id = await send(app, alice!, bob!, 'after a retry');
    sendGrid.script({ status: 503, body: { errors: [{ message: 'busy', field: null }] } });
    await intervalEnds(app, 'email', 1, 60);
    await until(async () => (await logOf(app, { messageId: id })).some((e) => e.success === true), 'the delivered entry');
    await settled(app, 'email');
    assert.deepEqual(
      (await logOf(app, { messageId: id })).map((e) => e.success),
      [false, true],
      'the refused send, then the retry',
    );
    assert.equal(mailsTo(emailOf(bob!)).length, 1);
    // Delivered again (as after a process died between the send and its record): not mailed twice.
    await sql`update event_deliveries set status = 'pending' where app_id = ${app.appId} and consumer = 'notifications' and target = 'email'`.execute(t.database.db);
    await sql`update event_lanes set next_attempt_at = now() where app_id = ${app.appId} and consumer = 'notifications' and target = 'email'`.execute(t.database.db);
    await settled(app, 'email');
    assert.equal(mailsTo(emailOf(bob!)).length, 1);
    assert.equal((await logOf(app, { messageId: id })).length, 2);
  });
});

describe('a send that got no answer', () => {
  it('is not repeated: SendGrid may have taken it (the provider has 10 s to answer)', async () => {
    const app = await freshApp();
    await withSendGrid(app);
    await settings(app, 'email', { intervalInSeconds: 60 });
    const [alice, bob] = await newUids(t, app, 2);
    await contact(app, bob!, { email: emailOf(bob!) });
    const id = await send(app, alice!, bob!, 'into the void');
    sendGrid.hangAll = true;
    try {
      await intervalEnds(app, 'email', 1, 60);
      await until(async () => (await logOf(app, { messageId: id })).length === 1, 'the failed entry', 30_000);
    } finally {
      sendGrid.hangAll = false;
    }
    await settled(app, 'email');
    const [entry] = await logOf(app, { messageId: id });
    assert.equal(entry!.success, false);
    assert.match(String(entry!.error), /no answer/);
    assert.deepEqual(
      (await deliveries(app, 'email')).map((d) => d.status),
      ['delivered'],
      'settled, not retried',
    );
    assert.equal(mailsTo(emailOf(bob!)).length, 0);
  });
});

describe('SMS digests through Twilio', () => {
  it('texts the group members with a stored number, not the sender, nobody in a block with the sender', async () => {
    const app = await freshApp();
    await withTwilio(app);
    await settings(app, 'sms', { intervalInSeconds: 60 });
    const [alice, bob, carol, dave] = await newUids(t, app, 4);
    const group = await newGroup(t, app, { owner: alice!, name: 'Climbers' });
    await ok(app, `/v3/groups/${group.guid}/members`, 'POST', { participants: [bob, carol, dave] });
    const phones = { alice: '+14155550100', bob: '+14155550101', dave: '+14155550103' };
    await contact(app, alice!, { phno: phones.alice });
    await contact(app, bob!, { phno: phones.bob });
    await contact(app, dave!, { phno: phones.dave });
    await ok(app, `/v3/users/${dave}/blockedusers`, 'POST', { blockedUids: [alice] });
    await send(app, alice!, String(group.guid), 'rope?', 'group');
    await send(app, alice!, String(group.guid), 'anyone?', 'group');
    await intervalEnds(app, 'sms', 2, 60);
    // Bob only: Carol has no number, Dave blocked Alice, Alice sent them.
    assert.deepEqual([...new Set((await deliveries(app, 'sms')).map((d) => d.item))], [bob]);
    await until(() => smsTo(phones.bob).length === 1, 'the SMS');
    await settled(app, 'sms');
    const [sms] = smsTo(phones.bob);
    assert.equal(sms!.form.From, FROM_NUMBER);
    assert.equal(sms!.form.Body, "You've received 2 message(s) in Climbers! Read them at https://your-website.com.");
    assert.equal(smsTo(phones.alice).length + smsTo(phones.dave).length, 0);
    const [entry] = await logOf(app, { channel: 'sms' });
    assert.equal(entry!.provider, 'twilio');
    assert.equal(entry!.member, bob);
    assert.equal(entry!.receiverType, 'group');
    assert.equal(entry!.payload.body, sms!.form.Body);
  });

  it('logs MISSING_PHNO when the number was removed before the digest went out', async () => {
    const app = await freshApp();
    await withTwilio(app);
    await settings(app, 'sms', { intervalInSeconds: 60 });
    const [alice, bob] = await newUids(t, app, 2);
    await contact(app, bob!, { phno: '+14155550131' });
    const id = await send(app, alice!, bob!, 'to a removed number');
    await until(async () => (await deliveries(app, 'sms')).length === 1, 'the delivery');
    await ok(app, '/v3/notifications/v1/contact-details', 'DELETE', undefined, { uid: bob! });
    await intervalEnds(app, 'sms', 1, 60);
    await settled(app, 'sms');
    const [entry] = await logOf(app, { messageId: id });
    assert.equal(entry!.notificationTriggered, false);
    assert.equal(entry!.reason, 'MISSING_PHNO');
    assert.equal(entry!.provider, 'twilio');
    assert.equal(smsTo('+14155550131').length, 0);
  });

  it("uses the privacy template when the recipient's preferences ask for it", async () => {
    const app = await freshApp();
    await withTwilio(app);
    await ok(app, '/v3/notifications/v1/settings', 'PATCH', {
      preferences: { sms: { intervalInSeconds: 60 } },
      templates: { usePrivacyTemplate: 2, smsContentTemplatePrivacy: { bodyOneOnOne: '{{messages.length}} new', bodyGroup: '{{messages.length}} new in a group' } },
    });
    const [alice, bob] = await newUids(t, app, 2);
    await contact(app, bob!, { phno: '+14155550111' });
    await send(app, alice!, bob!, 'secret');
    await intervalEnds(app, 'sms', 1, 60);
    await until(() => smsTo('+14155550111').length === 1, 'the SMS');
    assert.equal(smsTo('+14155550111')[0]!.form.Body, '1 new');
  });
});

describe('custom e-mail and SMS providers', () => {
  it("posts the vendor's e-mail payload, signed and with Basic auth, to users with or without a stored address; SendGrid logs MISSING_EMAIL", async () => {
    const hook = await startReceiver();
    try {
      const app = await freshApp();
      await withSendGrid(app);
      const saved = await withCustom(app, 'email', hook, { useBasicAuth: true, basicAuthUsername: 'parley', basicAuthPassword: 'pw-123456' });
      await settings(app, 'email', { intervalInSeconds: 60 });
      const [alice, bob] = await newUids(t, app, 2);
      const id = await send(app, alice!, bob!, 'to the hook');
      await intervalEnds(app, 'email', 1, 60);
      const [got] = await hook.waitFor((r) => r.length >= 1);
      await settled(app, 'email');
      assert.equal(got!.body.trigger, 'email-notification-payload-generated');
      assert.deepEqual(got!.body.data.to, { uid: bob, name: `User ${bob}` });
      assert.equal(got!.body.data.subject, `New messages from User ${alice}`);
      assert.deepEqual(
        got!.body.data.messages.map((m: any) => [m.sender.uid, m.message]),
        [[alice, 'to the hook']],
      );
      assert.equal(got!.body.data.senderDetails.uid, alice);
      assert.equal(got!.headers.authorization, `Basic ${Buffer.from('parley:pw-123456').toString('base64')}`);
      assert.ok(verifySignature(String(got!.headers['x-parley-signature']), saved.signingSecret, got!.raw, Math.floor(Date.now() / 1000)), 'the signature verifies');
      const entries = await logOf(app, { messageId: id });
      assert.deepEqual(entries.map((e) => [e.provider, e.notificationTriggered, e.reason ?? e.success]).sort(), [
        ['custom', true, true],
        ['sendgrid', false, 'MISSING_EMAIL'],
      ]);
    } finally {
      await hook.close();
    }
  });

  it("posts the vendor's SMS payload only to users with a stored number when useStoredPhNo", async () => {
    const hook = await startReceiver();
    try {
      const app = await freshApp();
      await withCustom(app, 'sms', hook, { useStoredPhNo: true });
      await settings(app, 'sms', { intervalInSeconds: 60 });
      const [alice, bob, carol] = await newUids(t, app, 3);
      await contact(app, bob!, { phno: '+14155550121' });
      await send(app, alice!, carol!, 'to nobody');
      await send(app, alice!, bob!, 'sms one');
      // (Bob's delivery is made with or after the fan-out of the message to Carol.)
      await intervalEnds(app, 'sms', 1, 60);
      assert.deepEqual(
        (await deliveries(app, 'sms')).map((d) => d.item),
        [bob],
        'Carol has no number',
      );
      const [got] = await hook.waitFor((r) => r.length >= 1);
      await settled(app, 'sms');
      assert.equal(got!.body.trigger, 'sms-notification-payload-generated');
      assert.deepEqual(got!.body.data.to, { uid: bob, phno: '+14155550121', name: `User ${bob}` });
      assert.equal(got!.body.data.smsContent, `You've received 1 message(s) from User ${alice}! Read them at https://your-website.com.`);
      assert.equal(got!.body.data.messages[0].message, 'sms one');
      assert.equal(hook.received.length, 1);
    } finally {
      await hook.close();
    }
  });
});

describe('digests and the event queue', () => {
  it('makes a message that arrives while its lane is in a round wait its own interval', async () => {
    const app = await freshApp();
    await withSendGrid(app);
    await settings(app, 'email', { intervalInSeconds: 60 });
    const [alice, bob] = await newUids(t, app, 2);
    await contact(app, bob!, { email: emailOf(bob!) });
    await send(app, alice!, bob!, 'in the round');
    await until(async () => (await deliveries(app, 'email')).length === 1, 'the delivery');
    const [first] = await sql<{ id: string; event_id: string; lane: string }>`
      select id::text, event_id::text, lane from event_deliveries where app_id = ${app.appId} and consumer = 'notifications' and target = 'email'`
      .execute(t.database.db)
      .then((r) => r.rows);
    const lane = first!.lane;
    // This test takes the lane as a round would (a claim under a lock it holds); a message arrives; the round ends.
    const lock = await t.database.holdLock(BigInt(Date.now()) * 1000n + 7n, silentLogger);
    try {
      await sql`update event_lanes set claim = ${lock.key.toString()}::bigint, next_attempt_at = now() + interval '1 minute'
                where app_id = ${app.appId} and consumer = 'notifications' and target = 'email' and lane = ${lane}`.execute(t.database.db);
      await send(app, alice!, bob!, 'after the round began');
      await until(async () => (await deliveries(app, 'email')).length === 2, 'the second delivery');
      const queue = new EventQueueRepository(t.database.db, NOTIFICATIONS_QUEUE);
      const outcome = { id: first!.id, status: 'delivered' as const, attempted: false, at: new Date(), durationMs: 0, httpStatus: null, error: null };
      await t.database.db.transaction().execute((tx) => queue.finishRound(app.appId, 'email', [lane], lock.key, [outcome], new Map(), new Map([[lane, first!.event_id]]), tx));
      const { rows } = await sql<{ wait_s: number; claim: string | null }>`
        select extract(epoch from next_attempt_at - now())::float8 as wait_s, claim::text as claim from event_lanes
        where app_id = ${app.appId} and consumer = 'notifications' and target = 'email' and lane = ${lane}`.execute(t.database.db);
      assert.equal(rows[0]!.claim, null);
      assert.ok(rows[0]!.wait_s > 50, `due in ${rows[0]!.wait_s} s, not at once`);
    } finally {
      await lock.release();
    }
    assert.equal(mailsTo(emailOf(bob!)).length, 0);
  });

  it("keeps each app's digests to its own users, settings and log", async () => {
    const [one, two] = await Promise.all([freshApp(), freshApp()]);
    for (const app of [one, two]) {
      await withSendGrid(app);
      await settings(app, 'email', { intervalInSeconds: 60 });
    }
    const uids = ['iso-alice', 'iso-bob'];
    for (const app of [one, two]) for (const uid of uids) await ok(app, '/v3/users', 'POST', { uid, name: `${uid} of ${app.appId}` });
    await contact(one, 'iso-bob', { email: `bob-one-${one.appId}@example.com` });
    await contact(two, 'iso-bob', { email: `bob-two-${two.appId}@example.com` });
    const id = await send(one, 'iso-alice', 'iso-bob', 'only in one');
    await intervalEnds(one, 'email', 1, 60);
    await until(() => mailsTo(`bob-one-${one.appId}@example.com`).length === 1, 'the mail');
    await settled(one, 'email');
    assert.equal(mailsTo(`bob-two-${two.appId}@example.com`).length, 0);
    assert.equal(mailsTo(`bob-one-${one.appId}@example.com`)[0]!.body.subject, `New messages from iso-alice of ${one.appId}`);
    assert.deepEqual(await deliveries(two, 'email'), []);
    assert.deepEqual(await logOf(two, { messageId: id }), []);
    assert.equal((await logOf(one, { messageId: id })).length, 1);
  });
});
