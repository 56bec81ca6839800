/**
 * The app's SMS and e-mail providers (Twilio, SendGrid) and custom providers (docs/notifications.md):
 * save (POST: create or replace whole), get, update (PUT: the fields given), delete; secrets sealed
 * at rest and answered masked; forms refused with the field named; custom providers' URLs under the
 * webhooks' rule; each app's providers its own; and forDelivery, which opens them for delivery.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { silentLogger } from '../../src/domain/context.js';
import { extended } from '../../src/domain/objects.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, errorCode, type CallOptions, type TestApp } from '../helpers/app.js';

let t: TestApp;
/** A deployment that does not allow private addresses (PARLEY_WEBHOOK_ALLOW_PRIVATE unset). */
let strict: TestApp;
before(async () => {
  [t, strict] = await Promise.all([createTestApp(), createTestApp({ webhookAllowPrivate: false })]);
});
after(async () => {
  await Promise.all([t?.close(), strict?.close()]);
});

/** A signing secret as answers show it after the save that made it: its first and last 4 characters. */
const maskedSecret = (secret: string) => `${secret.slice(0, 4)}${'*'.repeat(secret.length - 8)}${secret.slice(-4)}`;
const hex = (bytes: number) => crypto.randomBytes(bytes).toString('hex');
const ctxOf = (app: CreatedApp) => ({ appId: app.appId, requestId: 'test', log: silentLogger });
const freshApp = (on = t) => on.services.apps.create({ appId: '', requestId: 'test', log: silentLogger }, { name: 'Providers app' });
const TWILIO = '/v3/notifications/sms/v1/providers/twilio';
const SENDGRID = '/v3/notifications/email/v1/providers/sendgrid';
const custom = (channel: string) => `/v3/notifications/${channel}/v1/providers/custom`;
const send = (app: CreatedApp, url: string, method: CallOptions['method'] = 'GET', payload?: unknown, on = t) => on.call(app, url, { method, ...(payload !== undefined ? { body: payload } : {}) });
const ok = async (app: CreatedApp, url: string, method: CallOptions['method'] = 'GET', payload?: unknown, on = t) => {
  const response = await send(app, url, method, payload, on);
  assert.equal(response.statusCode, 200, `${method} ${url}: ${response.body}`);
  return body(response).data;
};
const expectError = (response: { statusCode: number; body: string }, status: number, code: string, field?: string) => {
  assert.equal(response.statusCode, status, response.body);
  assert.equal(errorCode(response as never), code, response.body);
  if (field) assert.ok(body(response as never).error.details?.[field], `names ${field}: ${response.body}`);
};
const notFound = (response: { statusCode: number; body: string }) => expectError(response, 404, 'ERR_NOTIFICATION_PROVIDER_NOT_FOUND');

const twilioBody = () => ({ twilioAccountSID: `AC${hex(16)}`, twilioAuthToken: hex(16), twilioSenderPhoneNumber: '+13611364718' });
const sendGridBody = () => ({
  sendGridApiKey: `SG.${crypto.randomBytes(16).toString('base64url')}.${crypto.randomBytes(32).toString('base64url')}`,
  sendGridTemplateID: `d-${hex(16)}`,
  sendGridUnsubscribeGroupID: '33832',
  senderName: 'Emailer',
  senderEmail: 'noreply@em123.example.com',
  allowEmailReplies: true,
  senderEmailForReplies: 'reply@em123.example.com',
});
const customBody = () => ({ isEnabled: true, webhookURL: 'https://trigger.example.com/cometchat', useBasicAuth: true, basicAuthUsername: 'user123', basicAuthPassword: `pw-${hex(8)}` });

/** Every stored row of the app's providers, as JSON text. */
async function storedRows(on: TestApp, app: CreatedApp): Promise<string> {
  const { rows } = await sql<{ r: string }>`
    select row_to_json(x)::text as r from notification_twilio_providers x where app_id = ${app.appId}
    union all select row_to_json(x)::text from notification_sendgrid_providers x where app_id = ${app.appId}
    union all select row_to_json(x)::text from notification_custom_providers x where app_id = ${app.appId}`.execute(on.database.db);
  return rows.map((row) => row.r).join('\n');
}

describe('Twilio (notifications-sms-*-twilio-details)', () => {
  it('saves, gets, updates and deletes the account; the auth token sealed and masked', async () => {
    const app = await freshApp();
    const given = twilioBody();
    const saved = await ok(app, TWILIO, 'POST', given);
    const masked = `${given.twilioAuthToken.slice(0, 4)}${'*'.repeat(24)}${given.twilioAuthToken.slice(-4)}`;
    assert.deepEqual(saved, { twilioAccountSID: given.twilioAccountSID, twilioAuthToken: masked, twilioSenderPhoneNumber: '+13611364718', isEnabled: true });
    assert.deepEqual(await ok(app, TWILIO), saved);
    const rows = await storedRows(t, app);
    assert.ok(rows.includes(given.twilioAccountSID) && !rows.includes(given.twilioAuthToken), rows);
    // PUT: the fields given, the rest kept; a messaging service as sender.
    const service = `MG${hex(16)}`;
    const updated = await ok(app, TWILIO, 'PUT', { twilioSenderPhoneNumber: service, isEnabled: false });
    assert.deepEqual(updated, { ...saved, twilioSenderPhoneNumber: service, isEnabled: false });
    // The masked token sent back keeps the stored one; a new token replaces it.
    assert.deepEqual(await ok(app, TWILIO, 'PUT', { ...given, twilioAuthToken: masked, isEnabled: false }), { ...updated, twilioSenderPhoneNumber: given.twilioSenderPhoneNumber });
    const delivery = await t.services.channelProviders.forDelivery(ctxOf(app));
    assert.equal(delivery.sms.twilio, undefined, 'a disabled account is not for delivery');
    const token = hex(16);
    assert.equal((await ok(app, TWILIO, 'PUT', { twilioAuthToken: token, isEnabled: true })).twilioAuthToken.slice(-4), token.slice(-4));
    assert.equal((await t.services.channelProviders.forDelivery(ctxOf(app))).sms.twilio?.authToken, token);
    // POST again replaces it whole: fields not given take their defaults.
    const other = twilioBody();
    assert.deepEqual(await ok(app, TWILIO, 'POST', other), { ...other, twilioAuthToken: body(await send(app, TWILIO)).data.twilioAuthToken, isEnabled: true });
    assert.ok(!(await storedRows(t, app)).includes(other.twilioAuthToken));
    assert.deepEqual(await ok(app, TWILIO, 'DELETE'), { success: true });
    notFound(await send(app, TWILIO));
    notFound(await send(app, TWILIO, 'PUT', { isEnabled: true }));
    notFound(await send(app, TWILIO, 'DELETE'));
    assert.equal(await storedRows(t, app), '');
  });

  it('refuses bad input with the field named, and writes nothing', async () => {
    const app = await freshApp();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ twilioAuthToken: hex(16), twilioSenderPhoneNumber: '+13611364718' }, 'twilioAccountSID'],
      [{ ...twilioBody(), twilioAccountSID: `AB${hex(16)}` }, 'twilioAccountSID'],
      [{ ...twilioBody(), twilioAccountSID: `AC${hex(15)}` }, 'twilioAccountSID'],
      [{ ...twilioBody(), twilioSenderPhoneNumber: '13611364718' }, 'twilioSenderPhoneNumber'],
      [{ ...twilioBody(), twilioSenderPhoneNumber: '+0123' }, 'twilioSenderPhoneNumber'],
      [{ ...twilioBody(), twilioSenderPhoneNumber: '+1361136471812345' }, 'twilioSenderPhoneNumber'],
      [{ ...twilioBody(), twilioAuthToken: 'short' }, 'twilioAuthToken'],
      [{ ...twilioBody(), twilioAuthToken: `${hex(16)} ` }, 'twilioAuthToken'],
      [{ ...twilioBody(), twilioAuthToken: '1234****5678abcdefgh' }, 'twilioAuthToken'],
      [{ ...twilioBody(), twilioAuthToken: 'x'.repeat(100_000) }, 'twilioAuthToken'],
      [{ ...twilioBody(), isEnabled: 'yes' }, 'isEnabled'],
      [{ ...twilioBody(), twilioAccountSID: 5 }, 'twilioAccountSID'],
    ];
    for (const [payload, field] of cases) expectError(await send(app, TWILIO, 'POST', payload), 400, 'ERR_BAD_REQUEST', field);
    expectError(await send(app, TWILIO, 'POST', [twilioBody()]), 400, 'ERR_BAD_REQUEST');
    notFound(await send(app, TWILIO));
    await ok(app, TWILIO, 'POST', twilioBody());
    expectError(await send(app, TWILIO, 'PUT', { twilioAccountSID: 'AC' }), 400, 'ERR_BAD_REQUEST', 'twilioAccountSID');
    expectError(await send(app, TWILIO, 'PUT', { twilioAuthToken: '1234****5678abcdefgh' }), 400, 'ERR_BAD_REQUEST', 'twilioAuthToken');
    expectError(await send(app, TWILIO, 'PUT', { twilioSenderPhoneNumber: null }), 400, 'ERR_BAD_REQUEST');
  });
});

describe("the vendor's examples", () => {
  it('are accepted as they are', async () => {
    const app = await freshApp();
    const twilio = { twilioAccountSID: 'AC91e67951ff7e5e7be8122184e76ae0e6', twilioAuthToken: '71c2301435733997e83db7a3445bc57', twilioSenderPhoneNumber: '+13611364718', isEnabled: true };
    assert.equal((await ok(app, TWILIO, 'POST', twilio)).twilioAuthToken, `71c2${'*'.repeat(23)}bc57`);
    const sendGrid = {
      sendGridApiKey: 'SG.9ipFP4b17yT-Fff2GGrH8FF0GqdkBohXAEI4GnTSj9Q=',
      sendGridTemplateID: 'd-8284bb9646a040499d5cfa28d272a094',
      sendGridUnsubscribeGroupID: '33832',
      senderName: 'Emailer',
      senderEmail: 'noreply@em123.example.com',
      allowEmailReplies: true,
      senderEmailForReplies: 'reply@em123.example.com',
      isEnabled: true,
    };
    assert.equal((await ok(app, SENDGRID, 'POST', sendGrid)).sendGridApiKey, `SG.9ip${'*'.repeat(37)}j9Q=`);
    const basic = { basicAuthUsername: 'user123', basicAuthPassword: 'pass123', useBasicAuth: true, isEnabled: true };
    await ok(app, custom('push'), 'POST', { ...basic, webhookURL: 'https://trigger-push.example.com/cometchat' });
    await ok(app, custom('sms'), 'POST', { ...basic, useStoredPhNo: false, webhookURL: 'https://trigger-sms.example.com/cometchat' });
    await ok(app, custom('email'), 'POST', { ...basic, useStoredEmailID: false, webhookURL: 'https://trigger-email.example.com/cometchat' });
  });
});

describe('SendGrid (notifications-email-*-sendgrid-details)', () => {
  it('saves, gets, updates and deletes the account; the API key sealed and masked', async () => {
    const app = await freshApp();
    const given = sendGridBody();
    const saved = await ok(app, SENDGRID, 'POST', given);
    const masked = `${given.sendGridApiKey.slice(0, 6)}${'*'.repeat(given.sendGridApiKey.length - 10)}${given.sendGridApiKey.slice(-4)}`;
    assert.deepEqual(saved, { ...given, sendGridApiKey: masked, isEnabled: true });
    assert.deepEqual(await ok(app, SENDGRID), saved);
    assert.ok(!(await storedRows(t, app)).includes(given.sendGridApiKey));
    // PUT: null (or '') removes the reply address; the rest is kept.
    const updated = await ok(app, SENDGRID, 'PUT', { senderEmailForReplies: null, allowEmailReplies: false, senderName: 'Parley Mailer' });
    assert.deepEqual(updated, { ...saved, senderEmailForReplies: null, allowEmailReplies: false, senderName: 'Parley Mailer' });
    assert.deepEqual(await ok(app, SENDGRID, 'PUT', { sendGridApiKey: masked }), updated, 'the masked key keeps the stored one');
    const delivery = (await t.services.channelProviders.forDelivery(ctxOf(app))).email.sendgrid;
    assert.deepEqual(delivery, {
      apiKey: given.sendGridApiKey,
      templateId: given.sendGridTemplateID,
      unsubscribeGroupId: '33832',
      senderName: 'Parley Mailer',
      senderEmail: given.senderEmail,
      allowEmailReplies: false,
      replyToEmail: undefined,
    });
    // A save without the optional fields takes their defaults.
    const { allowEmailReplies: _a, senderEmailForReplies: _r, ...required } = sendGridBody();
    const replaced = await ok(app, SENDGRID, 'POST', { ...required, isEnabled: false });
    assert.deepEqual([replaced.allowEmailReplies, replaced.senderEmailForReplies, replaced.isEnabled], [false, null, false]);
    assert.equal((await t.services.channelProviders.forDelivery(ctxOf(app))).email.sendgrid, undefined);
    assert.deepEqual(await ok(app, SENDGRID, 'DELETE'), { success: true });
    notFound(await send(app, SENDGRID));
    notFound(await send(app, SENDGRID, 'PUT', {}));
    notFound(await send(app, SENDGRID, 'DELETE'));
  });

  it('refuses bad input with the field named', async () => {
    const app = await freshApp();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...sendGridBody(), sendGridApiKey: undefined }, 'sendGridApiKey'],
      [{ ...sendGridBody(), sendGridApiKey: 'AB.abcdefghijklmnopqrstuvwxyz' }, 'sendGridApiKey'],
      [{ ...sendGridBody(), sendGridApiKey: 'SG.short' }, 'sendGridApiKey'],
      [{ ...sendGridBody(), sendGridApiKey: 'SG.abc def ghi jkl mno pqr' }, 'sendGridApiKey'],
      [{ ...sendGridBody(), sendGridTemplateID: '' }, 'sendGridTemplateID'],
      [{ ...sendGridBody(), sendGridTemplateID: 'd-1 2' }, 'sendGridTemplateID'],
      [{ ...sendGridBody(), sendGridUnsubscribeGroupID: 'abc' }, 'sendGridUnsubscribeGroupID'],
      [{ ...sendGridBody(), sendGridUnsubscribeGroupID: 33832 }, 'sendGridUnsubscribeGroupID'],
      [{ ...sendGridBody(), senderName: '   ' }, 'senderName'],
      [{ ...sendGridBody(), senderName: 'Mailer\r\nBcc: victim@example.com' }, 'senderName'],
      [{ ...sendGridBody(), senderEmail: 'noreply' }, 'senderEmail'],
      [{ ...sendGridBody(), senderEmail: 'no reply@example.com' }, 'senderEmail'],
      [{ ...sendGridBody(), senderEmail: 'noreply@localhost' }, 'senderEmail'],
      [{ ...sendGridBody(), senderEmail: 'a@b.example.com\nBcc: c@d.com' }, 'senderEmail'],
      [{ ...sendGridBody(), senderEmail: `${'a'.repeat(65)}@example.com` }, 'senderEmail'],
      [{ ...sendGridBody(), senderEmailForReplies: 'reply@' }, 'senderEmailForReplies'],
      [{ ...sendGridBody(), allowEmailReplies: 'true' }, 'allowEmailReplies'],
    ];
    for (const [payload, field] of cases) expectError(await send(app, SENDGRID, 'POST', payload), 400, 'ERR_BAD_REQUEST', field);
    notFound(await send(app, SENDGRID));
  });
});

describe('custom providers (notifications-*-custom-provider), one per channel', () => {
  it('saves, gets, updates and deletes each channel’s provider; the password sealed and masked', async () => {
    const app = await freshApp();
    assert.deepEqual(await ok(app, custom('push')), { pushProviders: [] }, 'push lists none');
    notFound(await send(app, custom('sms')));
    notFound(await send(app, custom('email')));
    const given = { push: customBody(), sms: { ...customBody(), useStoredPhNo: true }, email: { ...customBody(), useStoredEmailID: false } };
    // The signing secret: whole in the answer of the save that made it (64 hex digits), masked after.
    const secrets: Record<string, string> = {};
    const made = (answer: Record<string, any>, channel: string) => {
      assert.match(answer.signingSecret, /^[0-9a-f]{64}$/);
      secrets[channel] = answer.signingSecret;
    };
    const expected = (channel: 'push' | 'sms' | 'email') => extended(given[channel], { basicAuthPassword: '********', signingSecret: maskedSecret(secrets[channel]!) });
    const pushSaved = await ok(app, custom('push'), 'POST', given.push);
    assert.equal(pushSaved.pushProviders.length, 1);
    made(pushSaved.pushProviders[0], 'push');
    made(await ok(app, custom('sms'), 'POST', given.sms), 'sms');
    made(await ok(app, custom('email'), 'POST', given.email), 'email');
    assert.notEqual(secrets.sms, secrets.email, 'each provider its own secret');
    assert.deepEqual(await ok(app, custom('push')), { pushProviders: [expected('push')] });
    assert.deepEqual(await ok(app, custom('sms')), expected('sms'));
    const rows = await storedRows(t, app);
    for (const channel of ['push', 'sms', 'email'] as const) {
      assert.ok(!rows.includes(given[channel].basicAuthPassword), rows);
      assert.ok(!rows.includes(secrets[channel]!), 'a signing secret in plain text');
    }
    // forDelivery: the passwords and signing secrets opened, each channel's option.
    const delivery = await t.services.channelProviders.forDelivery(ctxOf(app));
    assert.deepEqual(delivery.sms.custom, {
      channel: 'sms',
      url: given.sms.webhookURL,
      basicAuth: { username: 'user123', password: given.sms.basicAuthPassword },
      onlyStoredContact: true,
      signingSecrets: [secrets.sms],
    });
    assert.equal(delivery.push.custom?.basicAuth?.password, given.push.basicAuthPassword);
    assert.equal(delivery.email.custom?.onlyStoredContact, false);
    // PUT: the fields given; the masked password keeps the stored one; basic auth off, then the password removed.
    const sms = await ok(app, custom('sms'), 'PUT', { webhookURL: 'https://sms.example.com/hook?x=1', basicAuthPassword: '********', useStoredPhNo: false });
    assert.deepEqual(sms, { ...expected('sms'), webhookURL: 'https://sms.example.com/hook?x=1', useStoredPhNo: false });
    expectError(await send(app, custom('sms'), 'PUT', { basicAuthPassword: '' }), 400, 'ERR_BAD_REQUEST', 'basicAuthPassword');
    const open = await ok(app, custom('sms'), 'PUT', { useBasicAuth: false, basicAuthPassword: '', basicAuthUsername: '' });
    assert.deepEqual([open.useBasicAuth, open.basicAuthUsername, open.basicAuthPassword], [false, '', '']);
    assert.equal((await t.services.channelProviders.forDelivery(ctxOf(app))).sms.custom?.basicAuth, undefined);
    expectError(await send(app, custom('sms'), 'PUT', { useBasicAuth: true }), 400, 'ERR_BAD_REQUEST', 'basicAuthPassword');
    expectError(await send(app, custom('sms'), 'PUT', { useBasicAuth: true, basicAuthUsername: 'u', basicAuthPassword: '********' }), 400, 'ERR_BAD_REQUEST', 'basicAuthPassword');
    // POST replaces whole: the defaults (enabled, no basic auth, option off).
    // The signing secret is the provider's: a save that replaces it keeps it.
    assert.deepEqual(await ok(app, custom('email'), 'POST', { webhookURL: 'https://mail.example.com/hook' }), {
      isEnabled: true,
      webhookURL: 'https://mail.example.com/hook',
      useBasicAuth: false,
      basicAuthUsername: '',
      basicAuthPassword: '',
      useStoredEmailID: false,
      signingSecret: maskedSecret(secrets.email!),
    });
    assert.deepEqual((await t.services.channelProviders.forDelivery(ctxOf(app))).email.custom?.signingSecrets, [secrets.email]);
    await ok(app, custom('push'), 'PUT', { isEnabled: false });
    assert.equal((await t.services.channelProviders.forDelivery(ctxOf(app))).push.custom, undefined, 'a disabled provider is not for delivery');
    for (const channel of ['push', 'sms', 'email']) {
      assert.deepEqual(await ok(app, custom(channel), 'DELETE'), { success: true });
      notFound(await send(app, custom(channel), 'DELETE'));
      notFound(await send(app, custom(channel), 'PUT', { isEnabled: true }));
    }
    assert.deepEqual(await ok(app, custom('push')), { pushProviders: [] });
    assert.equal(await storedRows(t, app), '');
  });

  it('refuses bad fields with the field named', async () => {
    const app = await freshApp();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ isEnabled: true }, 'webhookURL'],
      [{ webhookURL: 'not a url' }, 'webhookURL'],
      [{ webhookURL: 'ftp://example.com/hook' }, 'webhookURL'],
      [{ webhookURL: ' https://example.com/hook' }, 'webhookURL'],
      [{ webhookURL: 'https://exa\tmple.com/hook' }, 'webhookURL'],
      [{ webhookURL: 'https://user:pw@example.com/hook' }, 'webhookURL'],
      [{ webhookURL: `https://example.com/${'a'.repeat(300)}` }, 'webhookURL'],
      [{ ...customBody(), basicAuthPassword: undefined }, 'basicAuthPassword'],
      [{ ...customBody(), basicAuthUsername: '' }, 'basicAuthUsername'],
      [{ ...customBody(), basicAuthUsername: 'a:b' }, 'basicAuthUsername'],
      [{ ...customBody(), basicAuthPassword: 'p'.repeat(101) }, 'basicAuthPassword'],
      [{ ...customBody(), basicAuthPassword: '********' }, 'basicAuthPassword'],
      [{ ...customBody(), useBasicAuth: 'true' }, 'useBasicAuth'],
      [{ ...customBody(), useStoredPhNo: 1 }, 'useStoredPhNo'],
    ];
    for (const [payload, field] of cases) expectError(await send(app, custom('sms'), 'POST', payload), 400, 'ERR_BAD_REQUEST', field);
    notFound(await send(app, custom('sms')));
  });

  it('refuses http and private or loopback hosts unless the deployment allows them', async () => {
    const app = await freshApp(strict);
    for (const url of [
      'http://hooks.example.com/x',
      'https://127.0.0.1/x',
      'https://10.1.2.3/x',
      'https://192.168.0.10/x',
      'https://169.254.169.254/x',
      'https://[::1]/x',
      'https://[::ffff:127.0.0.1]/x',
      'https://localhost/x',
      'https://intranet/x',
      'https://2130706433/x',
    ]) {
      expectError(await send(app, custom('push'), 'POST', { webhookURL: url }, strict), 400, 'ERR_BAD_REQUEST', 'webhookURL');
    }
    assert.deepEqual(await ok(app, custom('push'), undefined, undefined, strict), { pushProviders: [] });
    await ok(app, custom('email'), 'POST', { webhookURL: 'https://hooks.example.com/x' }, strict);
    expectError(await send(app, custom('email'), 'PUT', { webhookURL: 'https://127.0.0.1/x' }, strict), 400, 'ERR_BAD_REQUEST', 'webhookURL');
    assert.equal((await ok(app, custom('email'), undefined, undefined, strict)).webhookURL, 'https://hooks.example.com/x');
    // PARLEY_WEBHOOK_ALLOW_PRIVATE=1: http and loopback are allowed.
    const open = await freshApp();
    assert.equal((await ok(open, custom('sms'), 'POST', { webhookURL: 'http://127.0.0.1:8080/x' })).webhookURL, 'http://127.0.0.1:8080/x');
  });
});

describe("each app's providers are its own", () => {
  it("another app sees, changes and deletes none of A's providers, and gets none of them for delivery", async () => {
    const [a, b] = [t.appA, t.appB];
    const twilio = twilioBody();
    await ok(a, TWILIO, 'POST', twilio);
    await ok(a, SENDGRID, 'POST', sendGridBody());
    for (const channel of ['push', 'sms', 'email']) await ok(a, custom(channel), 'POST', customBody());
    const before = await storedRows(t, a);
    for (const url of [TWILIO, SENDGRID, custom('sms'), custom('email')]) {
      notFound(await send(b, url));
      notFound(await send(b, url, 'PUT', { isEnabled: false }));
      notFound(await send(b, url, 'DELETE'));
    }
    assert.deepEqual(await ok(b, custom('push')), { pushProviders: [] });
    notFound(await send(b, custom('push'), 'DELETE'));
    assert.deepEqual(await t.services.channelProviders.forDelivery(ctxOf(b)), { push: {}, sms: {}, email: {} });
    // B's own providers change nothing of A's.
    await ok(b, TWILIO, 'POST', twilioBody());
    await ok(b, custom('push'), 'POST', { webhookURL: 'https://b.example.com/hook' });
    await ok(b, TWILIO, 'DELETE');
    assert.equal(await storedRows(t, a), before);
    assert.equal((await ok(a, TWILIO)).twilioAccountSID, twilio.twilioAccountSID);
  });

  it('a sealed secret copied into another app’s row does not open: the provider is left out of delivery', async () => {
    const [a, b] = await Promise.all([freshApp(), freshApp()]);
    await ok(a, TWILIO, 'POST', twilioBody());
    await ok(a, custom('sms'), 'POST', customBody());
    await sql`insert into notification_twilio_providers (app_id, enabled, account_sid, sender, auth_token_sealed, auth_token_hint)
              select ${b.appId}, enabled, account_sid, sender, auth_token_sealed, auth_token_hint from notification_twilio_providers where app_id = ${a.appId}`.execute(t.database.db);
    await sql`insert into notification_custom_providers (app_id, channel, enabled, url, use_basic_auth, username, password_sealed)
              select ${b.appId}, 'sms', enabled, url, use_basic_auth, username, password_sealed from notification_custom_providers where app_id = ${a.appId}`.execute(t.database.db);
    const warnings: unknown[] = [];
    const log = { ...silentLogger, warn: (obj: unknown) => void warnings.push(obj) };
    assert.deepEqual(await t.services.channelProviders.forDelivery({ appId: b.appId, requestId: 'test', log }), { push: {}, sms: {}, email: {} });
    assert.equal(warnings.length, 2);
    const forA = await t.services.channelProviders.forDelivery(ctxOf(a));
    assert.ok(forA.sms.twilio && forA.sms.custom?.basicAuth, 'A’s own open');
  });

  it('takes only a fullAccess key', async () => {
    const app = await freshApp();
    for (const url of [TWILIO, SENDGRID, custom('push')]) expectError(await t.call(app, url, { key: 'auth' }), 403, 'AUTH_ERR_NO_ACCESS');
  });
});

describe('concurrent writes', () => {
  it('concurrent saves and updates leave one provider, one of the values sent, and no error', async () => {
    const app = await freshApp();
    const bodies = Array.from({ length: 6 }, () => twilioBody());
    const responses = await Promise.all(bodies.map((payload) => send(app, TWILIO, 'POST', payload)));
    assert.deepEqual(
      responses.map((r) => r.statusCode),
      bodies.map(() => 200),
    );
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from notification_twilio_providers where app_id = ${app.appId}`.execute(t.database.db);
    assert.equal(rows[0]!.n, 1);
    const stored = await ok(app, TWILIO);
    const winner = bodies.find((b) => b.twilioAccountSID === stored.twilioAccountSID);
    assert.ok(winner, 'one of the saves');
    assert.equal((await t.services.channelProviders.forDelivery(ctxOf(app))).sms.twilio?.authToken, winner.twilioAuthToken, 'its token with its SID');
    const mixed = await Promise.all([
      send(app, custom('sms'), 'POST', customBody()),
      send(app, custom('sms'), 'PUT', { isEnabled: false }),
      send(app, custom('sms'), 'DELETE'),
      send(app, custom('sms'), 'POST', customBody()),
    ]);
    for (const response of mixed) assert.ok([200, 404].includes(response.statusCode), response.body);
  });
});
