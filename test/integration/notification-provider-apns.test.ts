import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createSelfSignedCertificate } from '../../src/tls/self-signed.js';
import { ApnsClient, type ApnsCredentials, type ApnsNotification } from '../../src/services/notifications/providers/apns.js';
import { TEST_ENGINE } from '../helpers/db.js';
import { startFakeApns, type FakeApns } from '../helpers/fake-providers/apns.js';

// The APNs client (HTTP/2, ES256 provider tokens) against a fake APNs over TLS that checks the
// protocol. No database: it runs in the PGlite run only.

const device = () => crypto.randomBytes(32).toString('hex');
const MINUTE = 60_000;

describe('the APNs client', { skip: TEST_ENGINE !== 'pglite' && 'no database: runs in the PGlite run' }, () => {
  let production: FakeApns;
  let sandbox: FakeApns;
  let clock: number;
  const now = () => clock;
  const clients: ApnsClient[] = [];
  const client = (timeoutMs = 5_000) => {
    const made = new ApnsClient({ productionUrl: production.url, sandboxUrl: sandbox.url, ca: production.ca, now, timeoutMs });
    clients.push(made);
    return made;
  };
  const alert = (deviceToken = device()): ApnsNotification => ({ deviceToken, pushType: 'alert', alert: { title: 'Ann', body: 'Hello' }, sound: 'default' });

  before(async () => {
    clock = Date.now();
    const tls = createSelfSignedCertificate(['localhost', '127.0.0.1']);
    production = await startFakeApns({ now, tls });
    sandbox = await startFakeApns({ now, tls });
  });
  after(async () => {
    for (const made of clients) made.close();
    await production.close();
    await sandbox.close();
  });
  beforeEach(() => {
    production.problems.length = 0;
    sandbox.problems.length = 0;
  });

  it('sends an alert with the apns-* headers, the aps payload and a verified ES256 token', async () => {
    const credentials = production.credentials('chat.parley.one');
    const token = device();
    const apnsId = crypto.randomUUID();
    const result = await client().send(credentials, {
      ...alert(token),
      mutableContent: true,
      threadId: 'ann_user_bob',
      collapseId: 'ann_user_bob',
      apnsId,
      expiration: 1_900_000_000,
      custom: { conversationId: 'ann_user_bob', aps: { ignored: true } },
    });
    assert.deepEqual(result, { outcome: 'delivered', status: 200, error: null, providerMessageId: apnsId });
    const sent = production.delivered.at(-1)!;
    assert.equal(sent.path, `/3/device/${token}`);
    assert.equal(sent.headers['apns-topic'], 'chat.parley.one');
    assert.equal(sent.headers['apns-push-type'], 'alert');
    assert.equal(sent.headers['apns-priority'], '10');
    assert.equal(sent.headers['apns-expiration'], '1900000000');
    assert.equal(sent.headers['apns-collapse-id'], 'ann_user_bob');
    assert.deepEqual(sent.body, { conversationId: 'ann_user_bob', aps: { alert: { title: 'Ann', body: 'Hello' }, sound: 'default', 'thread-id': 'ann_user_bob', 'mutable-content': 1 } });
    const [head, claims] = sent.jwt
      .split('.')
      .slice(0, 2)
      .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')));
    assert.deepEqual(head, { alg: 'ES256', kid: credentials.keyId });
    assert.deepEqual(Object.keys(claims).sort(), ['iat', 'iss']);
    assert.equal(claims.iss, credentials.teamId);
    assert.deepEqual(production.problems, []);
  });

  it('sends background pushes with priority 5 and content-available only, and VoIP pushes to the .voip topic', async () => {
    const credentials = production.credentials('chat.parley.two');
    const apns = client();
    const background = await apns.send(credentials, { deviceToken: device(), pushType: 'background', alert: { body: 'not shown' }, sound: 'x', custom: { id: '1' } });
    assert.equal(background.outcome, 'delivered', background.error ?? '');
    const quiet = production.delivered.at(-1)!;
    assert.equal(quiet.headers['apns-priority'], '5');
    assert.equal(quiet.headers['apns-push-type'], 'background');
    assert.deepEqual(quiet.body, { id: '1', aps: { 'content-available': 1 } });
    const voip = await apns.send(credentials, { deviceToken: device(), pushType: 'voip', alert: { title: 'Ann', body: 'Calling' }, custom: { call: 'x'.repeat(4500) } });
    assert.equal(voip.outcome, 'delivered', voip.error ?? '');
    const call = production.delivered.at(-1)!;
    assert.equal(call.headers['apns-topic'], 'chat.parley.two.voip');
    assert.equal(call.headers['apns-expiration'], '0');
    assert.deepEqual(production.problems, []);
  });

  it('sends to the sandbox or production endpoint as the provider says', async () => {
    const apns = client();
    const inSandbox = production.credentials('chat.parley.sandbox', false);
    // The sandbox fake knows the key too: the same credentials, registered there.
    const sandboxCredentials = { ...sandbox.credentials('chat.parley.sandbox', false) };
    const before = production.delivered.length;
    assert.equal((await apns.send(sandboxCredentials, alert())).outcome, 'delivered');
    assert.equal(sandbox.delivered.length, 1);
    assert.equal(production.delivered.length, before);
    const refused = await apns.send(inSandbox, alert());
    assert.equal(refused.outcome, 'failed', 'a key the sandbox does not know is refused there (with a new token too)');
    assert.equal(sandbox.problems.length, 2);
    sandbox.problems.length = 0;
    assert.equal((await apns.send({ ...inSandbox, production: true }, alert())).outcome, 'delivered');
    assert.equal(production.delivered.length, before + 1);
  });

  it('reuses one provider token for 50 minutes and one connection throughout', async () => {
    const credentials = production.credentials();
    const apns = client();
    const start = clock;
    const seen = production.jwts.length;
    const sessions = production.sessions;
    try {
      for (const minutes of [0, 10, 30, 49]) {
        clock = start + minutes * MINUTE;
        assert.equal((await apns.send(credentials, alert())).outcome, 'delivered');
      }
      assert.equal(production.jwts.length, seen + 1);
      clock = start + 51 * MINUTE;
      assert.equal((await apns.send(credentials, alert())).outcome, 'delivered');
      assert.equal(production.jwts.length, seen + 2);
      await Promise.all(Array.from({ length: 10 }, () => apns.send(credentials, alert())));
      assert.equal(production.jwts.length, seen + 2);
    } finally {
      clock = start;
    }
    assert.equal(production.sessions, sessions + 1);
    assert.deepEqual(production.problems, [], 'no TooManyProviderTokenUpdates, no expired token');
  });

  it('makes a new token and sends again, once, when APNs says the token expired or is invalid', async () => {
    const credentials = production.credentials();
    const apns = client();
    const start = clock;
    try {
      assert.equal((await apns.send(credentials, alert())).outcome, 'delivered');
      const first = production.jwts.at(-1);
      clock = start + 25 * MINUTE;
      production.expireTokensIssuedBefore = Math.floor(clock / 1000) - 60;
      const renewed = await apns.send(credentials, alert());
      assert.equal(renewed.outcome, 'delivered', renewed.error ?? '');
      assert.notEqual(production.jwts.at(-1), first);
      assert.equal(production.delivered.at(-1)!.jwt, production.jwts.at(-1));
    } finally {
      clock = start;
      production.expireTokensIssuedBefore = 0;
    }
    const invalid = { status: 403, body: { reason: 'InvalidProviderToken' } };
    production.script(invalid);
    const other = production.credentials();
    assert.equal((await apns.send(other, alert())).outcome, 'delivered');
    production.script(invalid, invalid);
    const refused = await apns.send(other, alert());
    assert.deepEqual([refused.outcome, refused.status, refused.error], ['failed', 403, 'APNs answered 403 InvalidProviderToken']);
    assert.deepEqual(production.problems, []);
  });

  it('maps Unregistered, BadDeviceToken and DeviceTokenNotForTopic to invalid-recipient', async () => {
    const credentials = production.credentials();
    const apns = client();
    const gone = device();
    production.unregistered.add(gone);
    const unregistered = await apns.send(credentials, alert(gone));
    assert.deepEqual([unregistered.outcome, unregistered.status, unregistered.error], ['invalid-recipient', 410, 'APNs answered 410 Unregistered']);
    const short = await apns.send(credentials, alert('ab'.repeat(16)));
    assert.deepEqual([short.outcome, short.status, short.error], ['invalid-recipient', 400, 'APNs answered 400 BadDeviceToken']);
    const foreign = device();
    production.otherTopic.add(foreign);
    const notForTopic = await apns.send(credentials, alert(foreign));
    assert.deepEqual([notForTopic.outcome, notForTopic.status], ['invalid-recipient', 400]);
    const requests = production.jwts.length + production.delivered.length;
    const malformed = await apns.send(credentials, alert('../../3/device/x'));
    assert.deepEqual([malformed.outcome, malformed.status], ['invalid-recipient', null]);
    assert.equal(production.jwts.length + production.delivered.length, requests, 'not sent');
    assert.deepEqual(production.problems, []);
  });

  it('maps 429, 500 and 503 to retry and other refusals to failed', async () => {
    const credentials = production.credentials();
    const apns = client();
    production.script(
      { status: 429, body: { reason: 'TooManyRequests' }, headers: { 'retry-after': '30' } },
      { status: 500, body: { reason: 'InternalServerError' } },
      { status: 503, body: { reason: 'ServiceUnavailable' } },
      { status: 400, body: { reason: 'BadTopic' } },
      { status: 413, body: { reason: 'PayloadTooLarge' } },
    );
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await apns.send(credentials, alert()));
    assert.deepEqual(
      results.map((r) => [r.outcome, r.status]),
      [
        ['retry', 429],
        ['retry', 500],
        ['retry', 503],
        ['failed', 400],
        ['failed', 413],
      ],
    );
    assert.equal(results[0]!.retryAfterMs, 30_000);
    assert.equal(results[3]!.error, 'APNs answered 400 BadTopic');
  });

  it('refuses a payload over 4096 bytes, and a collapse id over 64 bytes, before sending', async () => {
    const credentials = production.credentials();
    const apns = client();
    const seen = production.jwts.length;
    const big = await apns.send(credentials, { ...alert(), custom: { text: 'x'.repeat(4096) } });
    assert.deepEqual([big.outcome, big.status], ['failed', null]);
    assert.match(big.error ?? '', /^the payload is \d+ bytes, more than APNs takes \(4096\)$/);
    const collapse = await apns.send(credentials, { ...alert(), collapseId: 'é'.repeat(33) });
    assert.deepEqual([collapse.outcome, collapse.status], ['failed', null]);
    assert.equal(production.jwts.length, seen, 'nothing reached APNs');
    const fits = await apns.send(credentials, { ...alert(), custom: { text: 'x'.repeat(3900) } });
    assert.equal(fits.outcome, 'delivered', fits.error ?? '');
  });

  it('opens a new connection after APNs sends GOAWAY', async () => {
    const credentials = production.credentials();
    const apns = client();
    assert.equal((await apns.send(credentials, alert())).outcome, 'delivered');
    const sessions = production.sessions;
    production.goawayAfterNext = true;
    assert.equal((await apns.send(credentials, alert())).outcome, 'delivered');
    const next = await apns.send(credentials, alert());
    assert.equal(next.outcome, 'delivered', next.error ?? '');
    assert.equal(production.sessions, sessions + 1);
    assert.notEqual(production.delivered.at(-1)!.session, production.delivered.at(-2)!.session);
  });

  it('sends again on a new connection a request the kept one refused unprocessed (REFUSED_STREAM)', async () => {
    const credentials = production.credentials();
    const apns = client();
    assert.equal((await apns.send(credentials, alert())).outcome, 'delivered');
    const sessions = production.sessions;
    const delivered = production.delivered.length;
    production.refuseNext = true;
    const result = await apns.send(credentials, alert());
    assert.equal(result.outcome, 'delivered', result.error ?? '');
    assert.equal(production.refused, 1);
    assert.equal(production.delivered.length, delivered + 1, 'delivered once');
    assert.equal(production.sessions, sessions + 1);
  });

  it('gives up on a request that gets no answer (retry), and recovers', async () => {
    const credentials = production.credentials();
    const apns = client(300);
    production.script({ status: 200, hang: true });
    const result = await apns.send(credentials, alert());
    assert.deepEqual([result.outcome, result.status, result.error], ['retry', null, 'no answer within 300 ms']);
    assert.equal((await apns.send(credentials, alert())).outcome, 'delivered');
  });

  it('reports an endpoint it cannot reach, or a certificate it does not trust, as retry; a bad .p8 key as failed', async () => {
    const credentials = production.credentials();
    const unreachable = new ApnsClient({ productionUrl: 'https://127.0.0.1:1', now });
    const untrusted = new ApnsClient({ productionUrl: production.url, now });
    clients.push(unreachable, untrusted);
    const refused = await unreachable.send(credentials, alert());
    assert.deepEqual([refused.outcome, refused.status], ['retry', null]);
    assert.match(refused.error ?? '', /ECONNREFUSED/);
    const tls = await untrusted.send(credentials, alert());
    assert.deepEqual([tls.outcome, tls.status], ['retry', null]);
    assert.match(tls.error ?? '', /certificate/i);
    const badKey: ApnsCredentials = { ...credentials, privateKey: 'not a key' };
    const bad = await client().send(badKey, alert());
    assert.deepEqual([bad.outcome, bad.status], ['failed', null]);
    assert.match(bad.error ?? '', /the \.p8 key cannot sign/);
  });

  it('is refused when the token is signed by another key (the fake verifies the signature)', async () => {
    const credentials = production.credentials();
    const result = await client().send({ ...credentials, privateKey: production.credentials().privateKey }, alert());
    assert.deepEqual([result.outcome, result.status], ['failed', 403]);
    assert.deepEqual(production.problems, ['the signature does not verify (InvalidProviderToken)', 'the signature does not verify (InvalidProviderToken)']);
  });

  it('sends nothing once closed', async () => {
    const apns = client();
    const credentials = production.credentials();
    assert.equal((await apns.send(credentials, alert())).outcome, 'delivered');
    apns.close();
    const result = await apns.send(credentials, alert());
    assert.deepEqual([result.outcome, result.error], ['failed', 'the APNs client is closed']);
  });
});
