import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { silentLogger } from '../../src/domain/context.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, errorCode, uniqueId, type TestApp } from '../helpers/app.js';
import { newUids, newUser } from '../helpers/factories.js';

// The windows are minutes of an injected clock: each test starts 10.5 s into a minute of its own.
let now = Date.UTC(2031, 0, 1, 0, 0, 10, 500);
const clock = () => now;
/** Moves the clock to 10.5 s into the next minute; answers that minute's end in unix seconds. */
function nextWindow(): number {
  now = (Math.floor(now / 60_000) + 1) * 60_000 + 10_500;
  return windowEnd();
}
const windowEnd = () => (Math.floor(now / 60_000) + 1) * 60;

/** Production's limits. */
let t: TestApp;
/** Small limits, per-user ones on. */
let small: TestApp;
before(async () => {
  t = await createTestApp({ clock });
  small = await createTestApp({ clock, rateLimits: { core: 3, standard: 8, import: 2, send_per_user: 2, unread_per_user: 1 } });
});
after(async () => {
  await t?.close();
  await small?.close();
});

const ctxOf = (app: CreatedApp) => ({ appId: app.appId, requestId: 'test', log: silentLogger });

/** The rate-limit headers of a response, as numbers (undefined when absent). */
function limits(response: LightMyRequestResponse) {
  const number = (name: string) => (response.headers[name] === undefined ? undefined : Number(response.headers[name]));
  return {
    limit: number('x-rate-limit'),
    remaining: number('x-rate-limit-remaining'),
    aliasLimit: number('x-ratelimit-limit'),
    aliasRemaining: number('x-ratelimit-remaining'),
    reset: number('x-ratelimit-reset'),
    vendorReset: number('x-rate-limit-reset'),
    retryAfter: number('retry-after'),
  };
}

/** Asserts the headers of an answer that was counted and let through. */
function assertCounted(response: LightMyRequestResponse, limit: number, remaining: number) {
  assert.deepEqual(limits(response), {
    limit,
    remaining,
    aliasLimit: limit,
    aliasRemaining: remaining,
    reset: windowEnd(),
    vendorReset: undefined,
    retryAfter: undefined,
  });
}

function assertRefused(response: LightMyRequestResponse, limit: number) {
  assert.equal(response.statusCode, 429, response.body);
  const error = body(response).error;
  assert.equal(error.code, 'ERR_TOO_MANY_REQUESTS');
  assert.match(error.message, /rate limit/);
  assert.equal(typeof error.devMessage, 'string');
  assert.deepEqual(limits(response), {
    limit,
    remaining: 0,
    aliasLimit: limit,
    aliasRemaining: 0,
    reset: windowEnd(),
    vendorReset: windowEnd(),
    retryAfter: 50, // 10.5 s into the minute: 49.5 s to wait, rounded up
  });
}

const text = (receiver: string, words = 'hi') => ({ receiver, receiverType: 'user', category: 'message', type: 'text', data: { text: words } });

describe('rate-limit headers', () => {
  it('core operations: X-Rate-Limit, X-Rate-Limit-Remaining and the X-RateLimit-* aliases, on 2xx and 4xx', async () => {
    nextWindow();
    const uid = uniqueId('rl');
    const created = await t.call(t.appA, '/v3/users', { method: 'POST', body: { uid, name: 'A' } });
    assert.equal(created.statusCode, 200, created.body);
    assertCounted(created, 10_000, 9_999);
    const duplicate = await t.call(t.appA, '/v3/users', { method: 'POST', body: { uid, name: 'A' } });
    assert.equal(errorCode(duplicate), 'ERR_UID_ALREADY_EXISTS');
    assertCounted(duplicate, 10_000, 9_998);
    const invalid = await t.call(t.appA, '/v3/users', { method: 'POST', body: { uid: 'no spaces allowed', name: 'A' } });
    assert.equal(invalid.statusCode, 400);
    assertCounted(invalid, 10_000, 9_997);
    // Each core operation counts as core.
    const bob = uniqueId('rl');
    assertCounted(await t.call(t.appA, '/v3/users', { method: 'POST', body: { uid: bob, name: 'B' } }), 10_000, 9_996);
    const guid = uniqueId('g');
    const group = await t.call(t.appA, '/v3/groups', { method: 'POST', body: { guid, name: 'G', type: 'public' }, onBehalfOf: uid });
    assert.equal(group.statusCode, 200, group.body);
    assertCounted(group, 10_000, 9_995);
    const joined = await t.call(t.appA, `/v3/groups/${guid}/members`, { method: 'POST', body: { participants: [bob] }, onBehalfOf: bob });
    assert.equal(joined.statusCode, 200, joined.body);
    assertCounted(joined, 10_000, 9_994);
    const left = await t.call(t.appA, `/v3/groups/${guid}/members/${bob}`, { method: 'DELETE', onBehalfOf: bob });
    assert.equal(left.statusCode, 200, left.body);
    assertCounted(left, 10_000, 9_993);
    const token = await t.call(t.appA, `/v3/users/${uid}/auth_tokens`, { method: 'POST', body: {}, key: 'auth' });
    assert.equal(token.statusCode, 200, token.body);
    assertCounted(token, 10_000, 9_992);
    const deleted = await t.call(t.appA, `/v3/users/${uid}`, { method: 'DELETE', body: { permanent: true } });
    assert.equal(deleted.statusCode, 200, deleted.body);
    assertCounted(deleted, 10_000, 9_991);
    // Updating a user is not core.
    assertCounted(await t.call(t.appA, `/v3/users/${bob}`, { method: 'PUT', body: { name: 'Bob' } }), 20_000, 19_999);
  });

  it('standard operations: their own count, on 2xx and 4xx', async () => {
    nextWindow();
    const user = await newUser(t, t.appA); // core
    const found = await t.call(t.appA, `/v3/users/${user.uid}`);
    assert.equal(found.statusCode, 200);
    assertCounted(found, 20_000, 19_999);
    const missing = await t.call(t.appA, '/v3/users/nobody-here');
    assert.equal(errorCode(missing), 'ERR_UID_NOT_FOUND');
    assertCounted(missing, 20_000, 19_998);
    const badQuery = await t.call(t.appA, '/v3/users', { query: { perPage: '0' } });
    assert.equal(badQuery.statusCode, 400);
    assertCounted(badQuery, 20_000, 19_997);
    const unread = await t.call(t.appA, `/v3/users/${user.uid}/conversation/read`, { method: 'DELETE', onBehalfOf: 'someone-else' });
    assertCounted(unread, 20_000, 19_996);
  });

  it('data import: 60 a minute, shared by /v3/data_import and /v3.0/data_import', async () => {
    nextWindow();
    const uid = uniqueId('imp');
    const imported = await t.call(t.appA, '/v3.0/data_import/users', { method: 'POST', body: { users: { [uid]: { uid, name: 'I', createdAt: 1_600_000_000 } } } });
    assert.equal(imported.statusCode, 200, imported.body);
    assertCounted(imported, 60, 59);
    const malformed = await t.call(t.appA, '/v3/data_import/users', { method: 'POST', body: { users: [] } });
    assert.equal(malformed.statusCode, 400, malformed.body);
    assertCounted(malformed, 60, 58);
  });

  it('not on answers refused by authentication, which count nothing', async () => {
    nextWindow();
    const refused = await t.call(t.appA, '/v3/users', { key: { literal: 'wrong' } });
    assert.equal(errorCode(refused), 'AUTH_ERR_APIKEY_NOT_FOUND');
    assert.equal(refused.headers['x-rate-limit'], undefined);
    assertCounted(await t.call(t.appA, '/v3/users'), 20_000, 19_999);
  });
});

describe('429 Too Many Requests', () => {
  it('refuses the request after the limit, with Retry-After and the reset in unix seconds; the next minute starts afresh', async () => {
    nextWindow();
    for (let n = 1; n <= 8; n++) assertCounted(await small.call(small.appA, '/v3/users'), 8, 8 - n);
    assertRefused(await small.call(small.appA, '/v3/users'), 8);
    assertRefused(await small.call(small.appA, '/v3/groups'), 8);
    // Another class is counted apart.
    assertCounted(await small.call(small.appA, '/v3/users', { method: 'POST', body: { uid: uniqueId('c'), name: 'C' } }), 3, 2);
    // In the last millisecond of the minute, the wait is 1 s, never 0.
    now = windowEnd() * 1000 - 1;
    assert.equal(limits(await small.call(small.appA, '/v3/users')).retryAfter, 1);
    // Refused requests are not counted: the new minute starts from zero.
    nextWindow();
    assertCounted(await small.call(small.appA, '/v3/users'), 8, 7);
  });

  it('a refused request does nothing: the user is not created, the body is not even read', async () => {
    nextWindow();
    await newUids(small, small.appA, 3);
    const uid = uniqueId('late');
    assertRefused(await small.call(small.appA, '/v3/users', { method: 'POST', body: { uid, name: 'Late' } }), 3);
    const notJson = await small.call(small.appA, '/v3/users', { method: 'POST', body: '{not json', headers: { 'content-type': 'application/json' } });
    assertRefused(notJson, 3);
    nextWindow();
    assert.equal(errorCode(await small.call(small.appA, `/v3/users/${uid}`)), 'ERR_UID_NOT_FOUND');
  });

  it("another app's traffic does not consume this app's limit", async () => {
    nextWindow();
    for (let n = 0; n < 8; n++) await small.call(small.appA, '/v3/users');
    assertRefused(await small.call(small.appA, '/v3/users'), 8);
    const other = await small.call(small.appB, '/v3/users');
    assert.equal(other.statusCode, 200);
    assertCounted(other, 8, 7);
  });
});

describe('per-user limits', () => {
  it('are off by default: one user sends more than the vendor’s 30 a minute', async () => {
    nextWindow();
    const [alice, bob] = await newUids(t, t.appA, 2);
    for (let n = 0; n < 31; n++) {
      const sent = await t.call(t.appA, '/v3/messages', { method: 'POST', body: text(bob!), onBehalfOf: alice });
      assert.equal(sent.statusCode, 200, sent.body);
      assertCounted(sent, 20_000, 19_999 - n);
    }
  });

  it('send_per_user counts sends, bot sends and thread replies per sender; a refusal shows the per-user numbers', async () => {
    nextWindow();
    const [alice, bob] = await newUids(small, small.appA, 2);
    const first = await small.call(small.appA, '/v3/messages', { method: 'POST', body: text(bob!), onBehalfOf: alice });
    assert.equal(first.statusCode, 200, first.body);
    // The headers report the route's class while it is let through.
    assertCounted(first, 8, 7);
    const reply = await small.call(small.appA, `/v3/messages/${body(first).data.id}/thread`, {
      method: 'POST',
      body: { category: 'message', type: 'text', data: { text: 're' } },
      onBehalfOf: alice!.toUpperCase(),
    });
    assert.equal(reply.statusCode, 200, reply.body);
    assertRefused(await small.call(small.appA, '/v3/messages', { method: 'POST', body: text(bob!, 'refused'), onBehalfOf: alice }), 2);
    assertRefused(await small.call(small.appA, `/v3/bots/${alice!.toUpperCase()}/messages`, { method: 'POST', body: text(bob!, 'refused') }), 2);
    // Bob's own count is untouched; as a bot he counts too.
    const fromBob = await small.call(small.appA, `/v3/bots/${bob}/messages`, { method: 'POST', body: text(alice!) });
    assert.equal(fromBob.statusCode, 200, fromBob.body);
    assertCounted(fromBob, 8, 5);
    // The refused sends counted in neither class.
    const usage = body(await small.call(small.appA, '/v3/rate_limits', { onBehalfOf: alice })).data;
    assert.deepEqual(usage.standard, { limit: 8, remaining: 5, reset: windowEnd() });
    assert.deepEqual(usage.send_per_user, { limit: 2, remaining: 0, reset: windowEnd() });
    assert.deepEqual(body(await small.call(small.appA, '/v3/rate_limits', { onBehalfOf: bob })).data.send_per_user, { limit: 2, remaining: 1, reset: windowEnd() });
    // The refused sends stored nothing.
    const messages = body(await small.call(small.appA, `/v3/users/${bob}/messages`, { onBehalfOf: alice })).data as Array<{ data: { text?: string } }>;
    assert.ok(messages.length >= 2);
    assert.ok(!messages.some((message) => message.data.text === 'refused'));
  });

  it('unread_per_user counts mark-as-unread per onBehalfOf user', async () => {
    nextWindow();
    const [alice, bob] = await newUids(small, small.appA, 2);
    assert.equal((await small.call(small.appA, '/v3/messages', { method: 'POST', body: text(bob!), onBehalfOf: alice })).statusCode, 200);
    const marked = await small.call(small.appA, `/v3/users/${alice}/conversation/read`, { method: 'DELETE', onBehalfOf: bob });
    assert.equal(marked.statusCode, 200, marked.body);
    assertRefused(await small.call(small.appA, `/v3/users/${alice}/conversation/read`, { method: 'DELETE', onBehalfOf: bob }), 1);
    // Marking read is not limited per user.
    assert.equal((await small.call(small.appA, `/v3/users/${alice}/conversation/read`, { method: 'POST', onBehalfOf: bob })).statusCode, 200);
    assert.equal((await small.call(small.appA, `/v3/users/${alice}/conversation/read`, { method: 'POST', onBehalfOf: bob })).statusCode, 200);
  });
});

describe("an app's own limits", () => {
  it('apply on the next request, are read back, and reset to the deployment’s', async () => {
    nextWindow();
    assertCounted(await t.call(t.appA, '/v3/users'), 20_000, 19_999);
    const set = await t.services.apps.setRateLimits(ctxOf(t.appA), { standard: 2, import: 0 });
    assert.deepEqual(set, {
      appId: t.appA.appId,
      limits: { core: 10_000, standard: 2, import: 0, send_per_user: 0, unread_per_user: 0 },
      overrides: { standard: 2, import: 0 },
    });
    // At once on this node, although the app's key is cached.
    assertCounted(await t.call(t.appA, '/v3/users'), 2, 0);
    assertRefused(await t.call(t.appA, '/v3/users'), 2);
    // A class set to 0 is off: not counted, no headers.
    const uid = uniqueId('imp');
    const imported = await t.call(t.appA, '/v3/data_import/users', { method: 'POST', body: { users: { [uid]: { uid, name: 'I', createdAt: 1_600_000_000 } } } });
    assert.equal(imported.statusCode, 200, imported.body);
    assert.equal(imported.headers['x-rate-limit'], undefined);
    assert.equal(imported.headers['x-ratelimit-reset'], undefined);
    // The other app keeps the deployment's.
    assertCounted(await t.call(t.appB, '/v3/users'), 20_000, 19_999);
    assert.deepEqual((await t.services.apps.setRateLimits(ctxOf(t.appA), { core: 7 })).overrides, { core: 7, standard: 2, import: 0 });
    assert.deepEqual(await t.services.apps.rateLimits(ctxOf(t.appA)), {
      appId: t.appA.appId,
      limits: { core: 7, standard: 2, import: 0, send_per_user: 0, unread_per_user: 0 },
      overrides: { core: 7, standard: 2, import: 0 },
    });
    const reset = await t.services.apps.resetRateLimits(ctxOf(t.appA));
    assert.deepEqual(reset.overrides, {});
    assertCounted(await t.call(t.appA, '/v3/users'), 20_000, 20_000 - 3);
  });

  it('refuses bad values and unknown apps', async () => {
    const bad = await t.services.apps.setRateLimits(ctxOf(t.appA), { core: -1 }).catch((error: unknown) => error);
    assert.equal((bad as { code?: string }).code, 'ERR_BAD_REQUEST');
    const fraction = await t.services.apps.setRateLimits(ctxOf(t.appA), { standard: 1.5 }).catch((error: unknown) => error);
    assert.equal((fraction as { code?: string }).code, 'ERR_BAD_REQUEST');
    const unknown = await t.services.apps.setRateLimits(ctxOf(t.appA), { burst: 1 } as never).catch((error: unknown) => error);
    assert.equal((unknown as { code?: string }).code, 'ERR_BAD_REQUEST');
    const missing = await t.services.apps.rateLimits({ appId: 'no-such-app', requestId: 'test', log: silentLogger }).catch((error: unknown) => error);
    assert.equal((missing as { code?: string }).code, 'AUTH_ERR_INVALID_APPID');
  });
});

describe('GET /v3/rate_limits', () => {
  it("answers each class's limit, remaining and reset for the calling app, counting nothing", async () => {
    // onBehalfOf names a user, as on every operation (created before the window counted here).
    const alice = (await newUser(t, t.appA)).uid as string;
    nextWindow();
    await t.call(t.appA, '/v3/users');
    await t.call(t.appA, '/v3/users');
    const first = await t.call(t.appA, '/v3/rate_limits');
    assert.equal(first.statusCode, 200, first.body);
    const reset = windowEnd();
    assert.deepEqual(body(first), {
      data: {
        core: { limit: 10_000, remaining: 10_000, reset },
        standard: { limit: 20_000, remaining: 19_998, reset },
        import: { limit: 60, remaining: 60, reset },
      },
    });
    // Its headers: the standard class's, read, not counted.
    assertCounted(first, 20_000, 19_998);
    assert.deepEqual(body(await t.call(t.appA, '/v3/rate_limits')), body(first));
    // The per-user classes are off here: not listed even with onBehalfOf.
    assert.deepEqual(Object.keys(body(await t.call(t.appA, '/v3/rate_limits', { onBehalfOf: alice })).data), ['core', 'standard', 'import']);
    // An onBehalfOf that names no user is refused, as on every operation.
    assert.equal(errorCode(await t.call(t.appA, '/v3/rate_limits', { onBehalfOf: uniqueId('nobody') })), 'ERR_UID_NOT_FOUND');
    // The other app's count is its own.
    assert.equal(body(await t.call(t.appB, '/v3/rate_limits')).data.standard.remaining, 20_000);
  });

  it('still answers when the app is at its limit', async () => {
    const alice = (await newUser(small, small.appA)).uid as string;
    nextWindow();
    for (let n = 0; n < 8; n++) await small.call(small.appA, '/v3/users');
    assertRefused(await small.call(small.appA, '/v3/users'), 8);
    const usage = await small.call(small.appA, '/v3/rate_limits', { onBehalfOf: alice.toUpperCase() });
    assert.equal(usage.statusCode, 200);
    const reset = windowEnd();
    assert.deepEqual(body(usage).data, {
      core: { limit: 3, remaining: 3, reset },
      standard: { limit: 8, remaining: 0, reset },
      import: { limit: 2, remaining: 2, reset },
      send_per_user: { limit: 2, remaining: 2, reset },
      unread_per_user: { limit: 1, remaining: 1, reset },
    });
  });

  it('needs a fullAccess key', async () => {
    const response = await t.call(t.appA, '/v3/rate_limits', { key: 'auth' });
    assert.equal(errorCode(response), 'AUTH_ERR_NO_ACCESS');
  });
});
