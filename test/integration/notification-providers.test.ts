import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { verifySignature } from '../../src/domain/webhook-signature.js';
import { CustomProviderClient, type CustomPushData } from '../../src/services/notifications/providers/custom.js';
import { SendGridClient, type SendGridCredentials } from '../../src/services/notifications/providers/sendgrid.js';
import { TwilioClient, type TwilioCredentials } from '../../src/services/notifications/providers/twilio.js';
import { retryAfterMs } from '../../src/services/notifications/providers/types.js';
import { TEST_ENGINE } from '../helpers/db.js';
import { startFakeSendGrid, type FakeSendGrid } from '../helpers/fake-providers/sendgrid.js';
import { startFakeTwilio, type FakeTwilio } from '../helpers/fake-providers/twilio.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

// The SendGrid, Twilio and custom-provider clients against local fakes that check the protocols
// (FCM and APNs: notification-provider-fcm/-apns.test.ts). No database: the PGlite run only.
const skip = TEST_ENGINE !== 'pglite' && 'no database: runs in the PGlite run';

describe('Retry-After', { skip }, () => {
  it('reads seconds and HTTP dates, and ignores what it does not understand', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    assert.equal(retryAfterMs('120', now), 120_000);
    assert.equal(retryAfterMs(['5', '9'], now), 5_000);
    assert.equal(retryAfterMs('Wed, 01 Jan 2025 00:01:00 GMT', now), 60_000);
    assert.equal(retryAfterMs('Tue, 31 Dec 2024 00:00:00 GMT', now), 0);
    assert.equal(retryAfterMs('99999999', now), 24 * 60 * 60 * 1000);
    assert.equal(retryAfterMs('soon', now), undefined);
    assert.equal(retryAfterMs('-3', now), undefined);
    assert.equal(retryAfterMs(undefined, now), undefined);
  });
});

describe('the SendGrid client', { skip }, () => {
  let fake: FakeSendGrid;
  let sendgrid: SendGridClient;
  let credentials: SendGridCredentials;
  before(async () => {
    fake = await startFakeSendGrid();
    sendgrid = new SendGridClient({ baseUrl: fake.baseUrl, timeoutMs: 300 });
    credentials = { apiKey: fake.apiKey, fromEmail: 'notify@parley.test', fromName: 'Parley' };
  });
  after(async () => {
    sendgrid.close();
    await fake.close();
  });
  beforeEach(() => {
    fake.problems.length = 0;
  });

  it('posts the v3 mail body with the API key and returns the X-Message-Id', async () => {
    const result = await sendgrid.send(credentials, { to: 'bob@example.com', toName: 'Bob', subject: 'New messages', text: 'Ann: Hello', html: '<p>Ann: Hello</p>' });
    assert.equal(result.outcome, 'delivered', result.error ?? '');
    assert.equal(result.status, 202);
    const mail = fake.mails.at(-1)!;
    assert.equal(result.providerMessageId, mail.messageId);
    assert.deepEqual(mail.body, {
      personalizations: [{ to: [{ email: 'bob@example.com', name: 'Bob' }] }],
      from: { email: 'notify@parley.test', name: 'Parley' },
      subject: 'New messages',
      content: [
        { type: 'text/plain', value: 'Ann: Hello' },
        { type: 'text/html', value: '<p>Ann: Hello</p>' },
      ],
    });
    const plain = await sendgrid.send({ apiKey: fake.apiKey, fromEmail: 'notify@parley.test' }, { to: 'carol@example.com', subject: 'Hi', text: 'Plain only' });
    assert.equal(plain.outcome, 'delivered');
    assert.deepEqual(fake.mails.at(-1)!.body.content, [{ type: 'text/plain', value: 'Plain only' }]);
    assert.deepEqual(fake.mails.at(-1)!.body.from, { email: 'notify@parley.test' });
    assert.deepEqual(fake.problems, []);
  });

  it('sends through a dynamic template with its data, the unsubscribe group and Reply-To', async () => {
    const templated = { ...credentials, templateId: `d-${'0123456789abcdef'.repeat(2)}`, unsubscribeGroupId: '4242', replyToEmail: 'replies@parley.test' };
    const messages = [{ sender: { uid: 'ann', name: 'Ann' }, message: 'Hello' }];
    const result = await sendgrid.send(templated, { to: 'bob@example.com', subject: 'New messages from Ann', templateData: { messages, subject: 'replaced' } });
    assert.equal(result.outcome, 'delivered', result.error ?? '');
    assert.deepEqual(fake.mails.at(-1)!.body, {
      personalizations: [{ to: [{ email: 'bob@example.com' }], dynamic_template_data: { messages, subject: 'New messages from Ann' } }],
      from: { email: 'notify@parley.test', name: 'Parley' },
      subject: 'New messages from Ann',
      template_id: templated.templateId,
      reply_to: { email: 'replies@parley.test' },
      asm: { group_id: 4242 },
    });
    const noText = await sendgrid.send(credentials, { to: 'bob@example.com', subject: 'S' });
    assert.deepEqual([noText.outcome, noText.status], ['failed', null]);
    assert.deepEqual(fake.problems, []);
  });

  it('maps a refused key (401), 403 and a bad request to failed, and a refused address to invalid-recipient', async () => {
    const wrongKey = await sendgrid.send({ ...credentials, apiKey: 'SG.wrong' }, { to: 'bob@example.com', subject: 'S', text: 'T' });
    assert.deepEqual([wrongKey.outcome, wrongKey.status], ['failed', 401]);
    assert.match(wrongKey.error ?? '', /authorization grant is invalid/);
    fake.script(
      { status: 403, body: { errors: [{ message: 'The from address does not match a verified Sender Identity.', field: 'from' }] } },
      { status: 400, body: { errors: [{ message: 'The subject is required.', field: 'subject' }] } },
    );
    const forbidden = await sendgrid.send(credentials, { to: 'bob@example.com', subject: 'S', text: 'T' });
    assert.deepEqual([forbidden.outcome, forbidden.status, forbidden.error], ['failed', 403, 'SendGrid answered 403: from: The from address does not match a verified Sender Identity.']);
    const bad = await sendgrid.send(credentials, { to: 'bob@example.com', subject: 'S', text: 'T' });
    assert.deepEqual([bad.outcome, bad.status], ['failed', 400]);
    fake.refusedAddresses.add('nobody@example.com');
    const refused = await sendgrid.send(credentials, { to: 'nobody@example.com', subject: 'S', text: 'T' });
    assert.deepEqual([refused.outcome, refused.status], ['invalid-recipient', 400]);
    assert.match(refused.error ?? '', /personalizations\.0\.to\.0\.email: Does not contain a valid address/);
    assert.deepEqual(fake.problems, []);
  });

  it('maps 429 and 5xx to retry with Retry-After, and no answer to retry', async () => {
    fake.script({ status: 429, headers: { 'retry-after': '60' }, body: { errors: [{ message: 'too many requests' }] } }, { status: 502 }, { status: 200, hang: true });
    const limited = await sendgrid.send(credentials, { to: 'bob@example.com', subject: 'S', text: 'T' });
    assert.deepEqual([limited.outcome, limited.status, limited.retryAfterMs], ['retry', 429, 60_000]);
    const gateway = await sendgrid.send(credentials, { to: 'bob@example.com', subject: 'S', text: 'T' });
    assert.deepEqual([gateway.outcome, gateway.status], ['retry', 502]);
    const silent = await sendgrid.send(credentials, { to: 'bob@example.com', subject: 'S', text: 'T' });
    assert.deepEqual([silent.outcome, silent.status, silent.error], ['retry', null, 'no answer within 300 ms']);
  });

  it('is refused by the fake for a body SendGrid would refuse (the fake checks the format)', async () => {
    const result = await sendgrid.send(credentials, { to: 'bob@example.com', subject: '', text: 'T' });
    assert.deepEqual([result.outcome, result.status], ['failed', 400]);
    assert.deepEqual(fake.problems, ['subject: The subject is required.']);
  });
});

describe('the Twilio client', { skip }, () => {
  let fake: FakeTwilio;
  let twilio: TwilioClient;
  let credentials: TwilioCredentials;
  before(async () => {
    fake = await startFakeTwilio();
    twilio = new TwilioClient({ baseUrl: fake.baseUrl, timeoutMs: 300 });
    credentials = { accountSid: fake.accountSid, authToken: fake.authToken, from: '+15005550006' };
  });
  after(async () => {
    twilio.close();
    await fake.close();
  });
  beforeEach(() => {
    fake.problems.length = 0;
  });

  it('posts To, From and Body with Basic auth and returns the message sid', async () => {
    const result = await twilio.send(credentials, { to: '+14155550100', body: 'Ann: Hello & bye' });
    assert.equal(result.outcome, 'delivered', result.error ?? '');
    assert.equal(result.status, 201);
    const sent = fake.messages.at(-1)!;
    assert.equal(result.providerMessageId, sent.sid);
    assert.deepEqual(sent.form, { To: '+14155550100', From: '+15005550006', Body: 'Ann: Hello & bye' });
    const service = `MG${'a'.repeat(32)}`;
    const viaService = await twilio.send({ accountSid: fake.accountSid, authToken: fake.authToken, messagingServiceSid: service, from: '+15005550006' }, { to: '+14155550100', body: 'Hi' });
    assert.equal(viaService.outcome, 'delivered', viaService.error ?? '');
    assert.deepEqual(fake.messages.at(-1)!.form, { To: '+14155550100', MessagingServiceSid: service, Body: 'Hi' });
    assert.deepEqual(fake.problems, []);
  });

  it('maps the invalid-number error codes to invalid-recipient', async () => {
    fake.landlines.add('+14155550111');
    fake.unsubscribed.add('+14155550122');
    const invalid = await twilio.send(credentials, { to: '555-0100', body: 'Hi' });
    assert.deepEqual([invalid.outcome, invalid.status], ['invalid-recipient', 400]);
    assert.match(invalid.error ?? '', /^Twilio answered 400 21211: /);
    const landline = await twilio.send(credentials, { to: '+14155550111', body: 'Hi' });
    assert.deepEqual([landline.outcome, landline.error], ['invalid-recipient', "Twilio answered 400 21614: 'To' number +14155550111 is not a valid mobile number"]);
    const stopped = await twilio.send(credentials, { to: '+14155550122', body: 'Hi' });
    assert.deepEqual([stopped.outcome, stopped.status], ['invalid-recipient', 400]);
    assert.deepEqual(fake.problems, []);
  });

  it('maps refused credentials and other errors to failed, 429 and 5xx to retry', async () => {
    const wrong = await twilio.send({ ...credentials, authToken: 'wrong' }, { to: '+14155550100', body: 'Hi' });
    assert.deepEqual([wrong.outcome, wrong.status, wrong.error], ['failed', 401, 'Twilio answered 401 20003: Authenticate']);
    const noSender = await twilio.send({ accountSid: fake.accountSid, authToken: fake.authToken }, { to: '+14155550100', body: 'Hi' });
    assert.deepEqual([noSender.outcome, noSender.status], ['failed', null]);
    fake.script(
      { status: 400, body: { code: 21408, message: 'Permission to send an SMS has not been enabled for the region', status: 400 } },
      { status: 429, headers: { 'retry-after': '2' }, body: { code: 20429, message: 'Too Many Requests', status: 429 } },
      { status: 503, body: { code: 20503, message: 'Service unavailable', status: 503 } },
      { status: 201, hang: true },
    );
    const region = await twilio.send(credentials, { to: '+14155550100', body: 'Hi' });
    assert.deepEqual([region.outcome, region.status], ['failed', 400]);
    const limited = await twilio.send(credentials, { to: '+14155550100', body: 'Hi' });
    assert.deepEqual([limited.outcome, limited.status, limited.retryAfterMs], ['retry', 429, 2000]);
    const down = await twilio.send(credentials, { to: '+14155550100', body: 'Hi' });
    assert.deepEqual([down.outcome, down.status], ['retry', 503]);
    const silent = await twilio.send(credentials, { to: '+14155550100', body: 'Hi' });
    assert.deepEqual([silent.outcome, silent.status, silent.error], ['retry', null, 'no answer within 300 ms']);
  });

  it('is refused by the fake for a body Twilio would refuse (the fake checks the format)', async () => {
    const result = await twilio.send(credentials, { to: '+14155550100', body: '' });
    assert.deepEqual([result.outcome, result.status], ['failed', 400]);
    assert.deepEqual(fake.problems, ['21602: Message body is required.']);
  });
});

const push: CustomPushData = {
  to: { uid: 'bob' },
  notificationDetails: {
    title: 'Ann',
    body: 'Hello',
    sender: 'ann',
    senderName: 'Ann',
    receiver: 'bob',
    receiverName: 'Bob',
    receiverType: 'user',
    tag: 'ann_user_bob',
    conversationId: 'ann_user_bob',
    type: 'chat',
    sentAt: 1_700_000_000,
  },
};

describe('the custom provider client', { skip }, () => {
  let receiver: Receiver;
  let custom: CustomProviderClient;
  before(async () => {
    receiver = await startReceiver();
    custom = new CustomProviderClient({ allowPrivate: true, timeoutMs: 300 });
  });
  after(async () => {
    custom.close();
    await receiver.close();
  });
  beforeEach(() => {
    receiver.respond = () => ({ status: 200 });
  });

  it('posts the push payload, signed as webhooks are, with Basic auth and the delivery headers', async () => {
    const target = { url: receiver.url, basicAuth: { username: 'parley', password: 's3cret:x' }, signingSecrets: ['whsec_one'] };
    const result = await custom.send(target, 'push', push, { id: 'notification-1', attempt: 2 });
    assert.deepEqual(result, { outcome: 'delivered', status: 200, error: null });
    const got = receiver.received.at(-1)!;
    assert.deepEqual(got.body, { trigger: 'push-notification-payload-generated', data: push });
    assert.equal(got.headers.authorization, `Basic ${Buffer.from('parley:s3cret:x').toString('base64')}`);
    assert.equal(got.headers['content-type'], 'application/json');
    assert.equal(got.headers['x-parley-delivery'], 'notification-1');
    assert.equal(got.headers['x-parley-attempt'], '2');
    const now = Math.floor(Date.now() / 1000);
    assert.equal(verifySignature(String(got.headers['x-parley-signature']), 'whsec_one', got.raw, now), true);
    assert.equal(verifySignature(String(got.headers['x-parley-signature']), 'whsec_other', got.raw, now), false);
    assert.equal(verifySignature(String(got.headers['x-parley-signature']), 'whsec_one', got.raw.replace('Hello', 'Hallo'), now), false);
  });

  it('posts the SMS and e-mail payloads under their triggers; signs with each secret of a rotation; sends unsigned without one', async () => {
    const sms = {
      to: { uid: 'bob', phno: '+14155550100', name: 'Bob' },
      messages: [{ sender: { uid: 'ann', name: 'Ann' }, message: 'Hello' }],
      senderDetails: { uid: 'ann', name: 'Ann' },
      smsContent: 'New message from Ann',
    };
    const email = {
      to: { uid: 'bob', email: 'bob@example.com', name: 'Bob' },
      messages: [{ sender: { uid: 'ann', name: 'Ann' }, message: 'Hello' }],
      groupDetails: { guid: 'hikers', name: 'Hikers' },
      subject: 'New messages in Hikers',
    };
    assert.equal((await custom.send({ url: receiver.url, signingSecrets: ['new', 'old'] }, 'sms', sms, { id: 'n2', attempt: 1 })).outcome, 'delivered');
    const smsGot = receiver.received.at(-1)!;
    assert.deepEqual(smsGot.body, { trigger: 'sms-notification-payload-generated', data: sms });
    const now = Math.floor(Date.now() / 1000);
    for (const secret of ['new', 'old']) assert.equal(verifySignature(String(smsGot.headers['x-parley-signature']), secret, smsGot.raw, now), true);
    assert.equal((await custom.send({ url: receiver.url }, 'email', email, { id: 'n3', attempt: 1 })).outcome, 'delivered');
    const emailGot = receiver.received.at(-1)!;
    assert.deepEqual(emailGot.body, { trigger: 'email-notification-payload-generated', data: email });
    assert.equal(emailGot.headers['x-parley-signature'], undefined);
    assert.equal(emailGot.headers.authorization, undefined);
  });

  it('maps 429 and 5xx to retry, other statuses (redirects too) to failed, no answer to retry', async () => {
    const statuses = [429, 500, 503, 400, 401, 404, 301];
    const results = [];
    for (const status of statuses) {
      receiver.respond = () => ({ status });
      results.push(await custom.send({ url: receiver.url }, 'push', push, { id: `s${status}`, attempt: 1 }));
    }
    assert.deepEqual(
      results.map((r) => [r.outcome, r.status]),
      [
        ['retry', 429],
        ['retry', 500],
        ['retry', 503],
        ['failed', 400],
        ['failed', 401],
        ['failed', 404],
        ['failed', 301],
      ],
    );
    receiver.respond = () => ({ status: 200, delayMs: 5_000 });
    const silent = await custom.send({ url: receiver.url }, 'push', push, { id: 'slow', attempt: 1 });
    assert.deepEqual([silent.outcome, silent.status, silent.error], ['retry', null, 'no answer within 300 ms']);
  });

  it('refuses a private address unless the deployment allows it, as webhooks do: failed, nothing sent', async () => {
    const strict = new CustomProviderClient({ allowPrivate: false });
    try {
      const before = receiver.received.length;
      const http = await strict.send({ url: receiver.url }, 'push', push, { id: 'p1', attempt: 1 });
      assert.deepEqual([http.outcome, http.status], ['failed', null]);
      assert.match(http.error ?? '', /http URLs are refused/);
      const loopback = await strict.send({ url: receiver.url.replace('http:', 'https:') }, 'push', push, { id: 'p2', attempt: 1 });
      assert.deepEqual([loopback.outcome, loopback.status], ['failed', null]);
      assert.match(loopback.error ?? '', /^refused: 127\.0\.0\.1 is not a public address/);
      assert.equal(receiver.received.length, before);
    } finally {
      strict.close();
    }
    const down = await custom.send({ url: 'http://127.0.0.1:1/hook' }, 'push', push, { id: 'p3', attempt: 1 });
    assert.deepEqual([down.outcome, down.status], ['retry', null]);
  });
});
