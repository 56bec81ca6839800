import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { FcmClient, type FcmMessage } from '../../src/services/notifications/providers/fcm.js';
import { TEST_ENGINE } from '../helpers/db.js';
import { FCM_SCOPE, startFakeFcm, type FakeFcm } from '../helpers/fake-providers/fcm.js';

// The FCM HTTP v1 client against a fake token endpoint and FCM that check the protocol. No
// database: it runs in the PGlite run only.

const DEVICE = 'fcm-device-token-0123456789:abcdefghij';

describe('the FCM client', { skip: TEST_ENGINE !== 'pglite' && 'no database: runs in the PGlite run' }, () => {
  let fake: FakeFcm;
  let clock: number;
  const now = () => clock;
  const clients: FcmClient[] = [];
  const client = (timeoutMs = 5_000) => {
    const made = new FcmClient({ baseUrl: fake.baseUrl, trustedTokenOrigins: [fake.origin], now, timeoutMs });
    clients.push(made);
    return made;
  };
  const message = (token = DEVICE): FcmMessage => ({ token, notification: { title: 'Ann', body: 'Hello' }, data: { conversationId: 'ann_user_bob', sentAt: '1700000000' } });

  before(async () => {
    clock = Date.now();
    fake = await startFakeFcm({ now });
  });
  after(async () => {
    for (const made of clients) made.close();
    await fake.close();
  });
  beforeEach(() => {
    fake.problems.length = 0;
  });

  it('exchanges a signed assertion for a token and sends the v1 message with it', async () => {
    const account = fake.serviceAccount('proj-one');
    const result = await client().send(account, message());
    assert.equal(result.outcome, 'delivered', result.error ?? '');
    assert.equal(result.status, 200);
    assert.match(result.providerMessageId ?? '', /^projects\/proj-one\/messages\/0:[0-9a-f]+$/);
    const exchange = fake.exchanges.find((e) => e.claims.iss === account.client_email)!;
    assert.equal(exchange.header.alg, 'RS256');
    assert.equal(exchange.header.kid, account.private_key_id);
    assert.equal(exchange.claims.scope, FCM_SCOPE);
    assert.equal(exchange.claims.aud, fake.tokenUri);
    assert.ok((exchange.claims.exp as number) - (exchange.claims.iat as number) <= 3600);
    const sent = fake.sends.find((s) => s.bearer === exchange.issued)!;
    assert.equal(sent.projectId, 'proj-one');
    assert.deepEqual(sent.body, { message: { token: DEVICE, notification: { title: 'Ann', body: 'Hello' }, data: { conversationId: 'ann_user_bob', sentAt: '1700000000' } } });
    assert.deepEqual(fake.problems, []);
  });

  it('passes android and apns blocks through, and sends a data-only message without notification', async () => {
    const account = fake.serviceAccount();
    const result = await client().send(account, { token: DEVICE, data: { a: '1' }, android: { priority: 'high' }, apns: { headers: { 'apns-priority': '10' } } });
    assert.equal(result.outcome, 'delivered', result.error ?? '');
    assert.deepEqual(fake.sends.at(-1)!.body, { message: { token: DEVICE, data: { a: '1' }, android: { priority: 'high' }, apns: { headers: { 'apns-priority': '10' } } } });
    assert.deepEqual(fake.problems, []);
  });

  it('makes one exchange for many concurrent sends of one account, and reuses the token after', async () => {
    const account = fake.serviceAccount();
    const fcm = client();
    const results = await Promise.all(Array.from({ length: 25 }, () => fcm.send(account, message())));
    assert.deepEqual(new Set(results.map((r) => r.outcome)), new Set(['delivered']));
    await fcm.send(account, message());
    const exchanges = fake.exchanges.filter((e) => e.claims.iss === account.client_email);
    assert.equal(exchanges.length, 1);
    assert.equal(fake.sends.filter((s) => s.bearer === exchanges[0]!.issued).length, 26);
    assert.deepEqual(fake.problems, []);
  });

  it('keeps one token per service account', async () => {
    const fcm = client();
    const one = fake.serviceAccount('proj-a');
    const two = fake.serviceAccount('proj-b');
    const results = await Promise.all([one, two, one, two].map((account) => fcm.send(account, message())));
    assert.deepEqual(
      results.map((r) => r.outcome),
      ['delivered', 'delivered', 'delivered', 'delivered'],
    );
    assert.equal(fake.exchanges.filter((e) => e.claims.iss === one.client_email).length, 1);
    assert.equal(fake.exchanges.filter((e) => e.claims.iss === two.client_email).length, 1);
    assert.deepEqual(new Set(fake.sends.slice(-4).map((s) => s.projectId)), new Set(['proj-a', 'proj-b']));
  });

  it('exchanges again shortly before the token expires, not before', async () => {
    const account = fake.serviceAccount();
    const fcm = client();
    const count = () => fake.exchanges.filter((e) => e.claims.iss === account.client_email).length;
    const start = clock;
    try {
      assert.equal((await fcm.send(account, message())).outcome, 'delivered');
      clock = start + 50 * 60 * 1000; // the token (3599 s) has 10 minutes left
      assert.equal((await fcm.send(account, message())).outcome, 'delivered');
      assert.equal(count(), 1);
      clock = start + 57 * 60 * 1000; // 3 minutes left: replaced
      assert.equal((await fcm.send(account, message())).outcome, 'delivered');
      assert.equal(count(), 2);
    } finally {
      clock = start;
    }
    assert.deepEqual(fake.problems, []);
  });

  it('after a 401, exchanges once more and sends again', async () => {
    const account = fake.serviceAccount();
    const fcm = client();
    assert.equal((await fcm.send(account, message())).outcome, 'delivered');
    fake.revokeAll();
    const result = await fcm.send(account, message());
    assert.equal(result.outcome, 'delivered', result.error ?? '');
    assert.equal(fake.exchanges.filter((e) => e.claims.iss === account.client_email).length, 2);
  });

  it('gives up after a second 401: failed, with no third exchange', async () => {
    const account = fake.serviceAccount();
    const fcm = client();
    const unauthenticated = { status: 401, body: { error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' } } };
    fake.script(unauthenticated, unauthenticated);
    const result = await fcm.send(account, message());
    assert.equal(result.outcome, 'failed');
    assert.equal(result.status, 401);
    assert.match(result.error ?? '', /UNAUTHENTICATED/);
    assert.equal(fake.exchanges.filter((e) => e.claims.iss === account.client_email).length, 2);
  });

  it('maps UNREGISTERED and an invalid registration token to invalid-recipient', async () => {
    const account = fake.serviceAccount();
    const fcm = client();
    fake.unregistered.add('fcm-device-token-unregistered-000000');
    const gone = await fcm.send(account, message('fcm-device-token-unregistered-000000'));
    assert.deepEqual([gone.outcome, gone.status], ['invalid-recipient', 404]);
    assert.match(gone.error ?? '', /UNREGISTERED/);
    const malformed = await fcm.send(account, message('not a token'));
    assert.deepEqual([malformed.outcome, malformed.status], ['invalid-recipient', 400]);
    assert.match(malformed.error ?? '', /INVALID_ARGUMENT/);
    assert.deepEqual(fake.problems, []);
  });

  it('maps an INVALID_ARGUMENT about another field, and other 4xx, to failed', async () => {
    const account = fake.serviceAccount();
    const fcm = client();
    fake.script(
      {
        status: 400,
        body: {
          error: {
            code: 400,
            message: 'Invalid value at message.data',
            status: 'INVALID_ARGUMENT',
            details: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'message.data[0].value' }] }],
          },
        },
      },
      {
        status: 403,
        body: {
          error: {
            code: 403,
            message: 'SenderId mismatch',
            status: 'PERMISSION_DENIED',
            details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'SENDER_ID_MISMATCH' }],
          },
        },
      },
      { status: 404, body: { error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND' } } },
    );
    const results = [await fcm.send(account, message()), await fcm.send(account, message()), await fcm.send(account, message())];
    assert.deepEqual(
      results.map((r) => [r.outcome, r.status]),
      [
        ['failed', 400],
        ['failed', 403],
        ['failed', 404],
      ],
    );
    assert.match(results[1]!.error ?? '', /SENDER_ID_MISMATCH/);
  });

  it('maps 429, 500 and 503 to retry, honouring Retry-After', async () => {
    const account = fake.serviceAccount();
    const fcm = client();
    fake.script(
      {
        status: 429,
        headers: { 'retry-after': '7' },
        body: {
          error: { code: 429, message: 'Quota exceeded', status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'QUOTA_EXCEEDED' }] },
        },
      },
      { status: 500, body: { error: { code: 500, message: 'Internal error', status: 'INTERNAL' } } },
      { status: 503, headers: { 'retry-after': new Date(Date.now() + 120_000).toUTCString() }, body: { error: { code: 503, message: 'Unavailable', status: 'UNAVAILABLE' } } },
    );
    const limited = await fcm.send(account, message());
    assert.deepEqual([limited.outcome, limited.status, limited.retryAfterMs], ['retry', 429, 7000]);
    assert.match(limited.error ?? '', /QUOTA_EXCEEDED/);
    const internal = await fcm.send(account, message());
    assert.deepEqual([internal.outcome, internal.status, internal.retryAfterMs], ['retry', 500, undefined]);
    const unavailable = await fcm.send(account, message());
    assert.deepEqual([unavailable.outcome, unavailable.status], ['retry', 503]);
    assert.ok(unavailable.retryAfterMs! > 60_000 && unavailable.retryAfterMs! <= 120_000, String(unavailable.retryAfterMs));
  });

  it('reports a refused exchange as failed, a failing one as retry, and keeps no failure', async () => {
    const account = fake.serviceAccount();
    const fcm = client();
    const sends = fake.sends.length;
    fake.scriptExchange({ status: 400, body: { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' } }, { status: 503, headers: { 'retry-after': '3' } });
    const refused = await fcm.send(account, message());
    assert.deepEqual([refused.outcome, refused.status], ['failed', 400]);
    assert.match(refused.error ?? '', /invalid_grant \(Invalid JWT Signature\.\)/);
    const unavailable = await fcm.send(account, message());
    assert.deepEqual([unavailable.outcome, unavailable.status, unavailable.retryAfterMs], ['retry', 503, 3000]);
    assert.equal(fake.sends.length, sends, 'nothing sent without a token');
    assert.equal((await fcm.send(account, message())).outcome, 'delivered');
  });

  it('refuses a token_uri of an untrusted origin without calling it', async () => {
    const account = { ...fake.serviceAccount(), token_uri: 'http://169.254.169.254/token' };
    const result = await client().send(account, message());
    assert.deepEqual([result.outcome, result.status], ['failed', null]);
    assert.match(result.error ?? '', /not a trusted token endpoint/);
    assert.equal(fake.exchanges.filter((e) => e.claims.iss === account.client_email).length, 0);
    const defaults = new FcmClient({ baseUrl: fake.baseUrl, now });
    clients.push(defaults);
    assert.equal((await defaults.send(fake.serviceAccount(), message())).outcome, 'failed', "only Google's token endpoint by default");
  });

  it('is refused by the token endpoint when the assertion is signed by another key (the fake checks the signature)', async () => {
    const account = { ...fake.serviceAccount(), private_key: fake.serviceAccount().private_key };
    const result = await client().send(account, message());
    assert.deepEqual([result.outcome, result.status], ['failed', 400]);
    assert.deepEqual(fake.problems, ['token endpoint: the signature does not verify']);
  });

  it('reports a private key that cannot sign as failed', async () => {
    const result = await client().send({ ...fake.serviceAccount(), private_key: '-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n' }, message());
    assert.deepEqual([result.outcome, result.status], ['failed', null]);
    assert.match(result.error ?? '', /private_key cannot sign/);
  });

  it('gives up on an exchange or a send that gets no answer: retry', async () => {
    const account = fake.serviceAccount();
    const fcm = client(300);
    fake.hangExchanges = true;
    try {
      const exchange = await fcm.send(account, message());
      assert.deepEqual([exchange.outcome, exchange.status], ['retry', null]);
      assert.match(exchange.error ?? '', /token exchange: no answer within 300 ms/);
    } finally {
      fake.hangExchanges = false;
    }
    assert.equal((await fcm.send(account, message())).outcome, 'delivered');
    fake.script({ status: 200, hang: true });
    const send = await fcm.send(account, message());
    assert.deepEqual([send.outcome, send.status], ['retry', null]);
    assert.match(send.error ?? '', /no answer within 300 ms/);
  });

  it('reports a provider it cannot reach as retry', async () => {
    const unreachable = new FcmClient({ baseUrl: 'http://127.0.0.1:1', trustedTokenOrigins: [fake.origin], now });
    clients.push(unreachable);
    const result = await unreachable.send(fake.serviceAccount(), message());
    assert.deepEqual([result.outcome, result.status], ['retry', null]);
    assert.match(result.error ?? '', /ECONNREFUSED/);
  });
});
