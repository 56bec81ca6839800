import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { silentLogger, type RequestContext } from '../../src/domain/context.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, errorCode, uniqueId, type TestApp } from '../helpers/app.js';
import { newUser } from '../helpers/factories.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

const TOKENS = '/v3/notifications/push/v1/tokens';
const ctxOf = (app: CreatedApp): RequestContext => ({ appId: app.appId, requestId: 'test', log: silentLogger });

/** A new user of `app` and an auth token of theirs. */
async function newSession(app = t.appA, uid?: string): Promise<{ uid: string; authToken: string }> {
  const user = uid ?? (await newUser(t, app)).uid;
  const response = await t.call(app, `/v3/users/${user}/auth_tokens`, { method: 'POST', body: {} });
  assert.equal(response.statusCode, 200, response.body);
  return { uid: user, authToken: body(response).data.authToken };
}

const register = (payload: Record<string, unknown>, app = t.appA) => t.call(app, TOKENS, { method: 'POST', body: payload });

async function registered(authToken: string, fields: Record<string, unknown> = {}, app = t.appA): Promise<string> {
  const token = (fields.fcmToken ?? fields.deviceToken ?? fields.voipToken ?? uniqueId('fcm')) as string;
  const platform = fields.platform ?? 'fcm_android';
  const payload = { authToken, platform, ...(fields.deviceToken || fields.voipToken ? {} : { fcmToken: token }), ...fields };
  const response = await register(payload, app);
  assert.equal(response.statusCode, 200, response.body);
  assert.deepEqual(body(response), { data: { success: true } });
  return token;
}

async function list(authToken: string, all?: boolean, app = t.appA): Promise<any[]> {
  const response = await t.call(app, TOKENS, { query: { authToken, ...(all === undefined ? {} : { all: String(all) }) } });
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data.pushTokens;
}

const expectError = (response: { statusCode: number; body: string }, status: number, code: string, field?: string) => {
  assert.equal(response.statusCode, status, response.body);
  assert.equal(errorCode(response as never), code, response.body);
  if (field) assert.ok(field in (JSON.parse(response.body).error.details ?? {}), response.body);
};

/** The rows of the table for these tokens, read directly. */
const rowsOf = (app: CreatedApp, tokens: string[]) => t.database.db.selectFrom('notification_push_tokens').selectAll().where('app_id', '=', app.appId).where('token', 'in', tokens).execute();

describe('notifications-push-register-token', () => {
  it("registers a token for the auth token's user; the listing shows it in the vendor's shape", async () => {
    const session = await newSession();
    const token = await registered(session.authToken, { providerId: 'fcm-provider-2', timezone: 'Asia/Kolkata' });
    const [entry, ...rest] = await list(session.authToken);
    assert.equal(rest.length, 0);
    assert.deepEqual(Object.keys(entry).sort(), ['authToken', 'createdAt', 'platform', 'providerId', 'pushToken', 'pushTokenType', 'timezone', 'uid', 'updatedAt']);
    assert.equal(entry.authToken, session.authToken, 'the auth token the request sent, as it sent it');
    assert.equal(entry.pushToken, token);
    assert.equal(entry.platform, 'fcm_android');
    assert.equal(entry.pushTokenType, 'chat');
    assert.equal(entry.providerId, 'fcm-provider-2');
    assert.equal(entry.uid, session.uid);
    assert.equal(entry.timezone, 'Asia/Kolkata');
    assert.match(entry.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.ok(Math.abs(Date.parse(entry.createdAt) - Date.now()) < 60_000);
    assert.equal(entry.updatedAt, entry.createdAt);
  });

  it('takes APNs device tokens in deviceToken and VoIP tokens in voipToken; no providerId means the default provider', async () => {
    const session = await newSession();
    const device = await registered(session.authToken, { platform: 'apns_ios_device', deviceToken: 'a1'.repeat(32) });
    const voip = await registered(session.authToken, { platform: 'apns_flutter_voip', voipToken: 'b2'.repeat(32) });
    const web = await registered(session.authToken, { platform: 'fcm_web' });
    const byToken = new Map((await list(session.authToken)).map((entry) => [entry.pushToken, entry]));
    assert.equal(byToken.get(device).pushTokenType, 'chat');
    assert.equal(byToken.get(voip).pushTokenType, 'voip');
    assert.equal(byToken.get(voip).platform, 'apns_flutter_voip');
    assert.equal(byToken.get(web).platform, 'fcm_web');
    for (const entry of byToken.values()) {
      assert.equal(entry.providerId, undefined);
      assert.equal(entry.timezone, undefined);
    }
  });

  it('refuses bad input with ERR_BAD_REQUEST naming the field, and stores nothing', async () => {
    const session = await newSession();
    const base = { authToken: session.authToken, platform: 'fcm_android', fcmToken: uniqueId('fcm') };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ platform: 'fcm_android', fcmToken: 'x' }, 'authToken'],
      [{ ...base, authToken: '' }, 'authToken'],
      [{ ...base, platform: 'gcm_android' }, 'platform'],
      [{ authToken: session.authToken, fcmToken: 'x' }, 'platform'],
      [{ authToken: session.authToken, platform: 'fcm_android' }, 'fcmToken'],
      [{ authToken: session.authToken, platform: 'apns_ios_device', fcmToken: 'x' }, 'fcmToken'],
      [{ authToken: session.authToken, platform: 'apns_ios_voip', deviceToken: 'x' }, 'deviceToken'],
      [{ ...base, voipToken: 'y' }, 'voipToken'],
      [{ ...base, fcmToken: 'x'.repeat(513) }, 'fcmToken'],
      [{ ...base, fcmToken: 'with space' }, 'fcmToken'],
      [{ ...base, fcmToken: 'tökén' }, 'fcmToken'],
      [{ ...base, fcmToken: 42 }, 'fcmToken'],
      [{ ...base, fcmToken: '' }, 'fcmToken'],
      [{ ...base, timezone: 'Mars/Olympus_Mons' }, 'timezone'],
      [{ ...base, timezone: 'x'.repeat(65) }, 'timezone'],
      [{ ...base, providerId: '' }, 'providerId'],
      [{ ...base, providerId: 'p'.repeat(101) }, 'providerId'],
    ];
    for (const [payload, field] of cases) expectError(await register(payload), 400, 'ERR_BAD_REQUEST', field);
    expectError(await register({ ...base, fcmToken: 'bad\u0000token' }), 400, 'ERR_BAD_REQUEST');
    const raw = await t.app.inject({
      method: 'POST',
      url: TOKENS,
      headers: { host: `${t.appA.appId}.api-us.parley.test`, apikey: t.appA.apiKey, 'content-type': 'application/json' },
      payload: '{"authToken":',
    });
    expectError(raw, 400, 'ERR_BAD_REQUEST');
    assert.deepEqual(await list(session.authToken), []);
  });

  it('takes a token of 512 printable ASCII characters, and a time zone in any case', async () => {
    const session = await newSession();
    const long = `${uniqueId('t')}:${'~!#$%&*+/=?^_`{|}'.repeat(40)}`.slice(0, 512);
    await registered(session.authToken, { fcmToken: long, timezone: 'america/new_york' });
    const [entry] = await list(session.authToken);
    assert.equal(entry.pushToken, long);
    assert.equal(entry.timezone, 'america/new_york');
  });

  it('answers ERR_AUTH_TOKEN_NOT_FOUND for an unknown auth token, its masked form and another app’s', async () => {
    const session = await newSession();
    expectError(await register({ authToken: `${session.uid}_17000000000000000000000000000000000000000000000000`, platform: 'fcm_android', fcmToken: 'x' }), 404, 'ERR_AUTH_TOKEN_NOT_FOUND');
    const listed = body(await t.call(t.appA, `/v3/users/${session.uid}/auth_tokens`)).data[0].authToken as string;
    assert.ok(listed.includes('*'));
    expectError(await register({ authToken: listed, platform: 'fcm_android', fcmToken: 'x' }), 404, 'ERR_AUTH_TOKEN_NOT_FOUND');
    const other = await newSession(t.appB);
    expectError(await register({ authToken: other.authToken, platform: 'fcm_android', fcmToken: 'x' }), 404, 'ERR_AUTH_TOKEN_NOT_FOUND');
  });

  it("answers ERR_UID_NOT_FOUND when the auth token's user is deactivated, and takes the token again once reactivated", async () => {
    const session = await newSession();
    assert.equal((await t.call(t.appA, '/v3/users', { method: 'DELETE', body: { uidsToDeactivate: [session.uid] } })).statusCode, 200);
    const token = uniqueId('fcm');
    expectError(await register({ authToken: session.authToken, platform: 'fcm_android', fcmToken: token }), 404, 'ERR_UID_NOT_FOUND');
    assert.equal((await rowsOf(t.appA, [token])).length, 0);
    assert.equal((await t.call(t.appA, '/v3/users', { method: 'PUT', body: { uidsToActivate: [session.uid] } })).statusCode, 200);
    await registered(session.authToken, { fcmToken: token });
  });

  it('needs a fullAccess key', async () => {
    const session = await newSession();
    expectError(await t.call(t.appA, TOKENS, { method: 'POST', key: 'auth', body: { authToken: session.authToken, platform: 'fcm_android', fcmToken: 'x' } }), 403, 'AUTH_ERR_NO_ACCESS');
  });

  it('moves a token registered again to the new user and auth token: one row per token', async () => {
    const first = await newSession();
    const second = await newSession();
    const token = await registered(first.authToken);
    const [before] = await list(first.authToken);
    await registered(second.authToken, { fcmToken: token, platform: 'fcm_ios', providerId: 'other' });
    assert.deepEqual(await list(first.authToken, true), []);
    const [moved] = await list(second.authToken);
    assert.equal(moved.uid, second.uid);
    assert.equal(moved.platform, 'fcm_ios');
    assert.equal(moved.providerId, 'other');
    assert.ok(moved.createdAt >= before.createdAt, 'registered anew for its new user');
    const rows = await rowsOf(t.appA, [token]);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.uid, second.uid);
  });

  it('keeps createdAt when the same user registers a token again, and moves updatedAt; a new auth token of theirs takes it', async () => {
    const first = await newSession();
    const token = await registered(first.authToken);
    const [before] = await list(first.authToken);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const again = await newSession(t.appA, first.uid);
    await registered(again.authToken, { fcmToken: token, timezone: 'Europe/Paris' });
    assert.deepEqual(await list(first.authToken), [], 'no longer registered with the first auth token');
    const [after] = await list(again.authToken);
    assert.equal(after.createdAt, before.createdAt);
    assert.ok(after.updatedAt > before.updatedAt, `${after.updatedAt} > ${before.updatedAt}`);
    assert.equal(after.timezone, 'Europe/Paris');
  });

  it('ends concurrent registrations of one token with one row, held by one of them', async () => {
    const sessions = await Promise.all(Array.from({ length: 8 }, () => newSession()));
    const token = uniqueId('race');
    const answers = await Promise.all(sessions.map((session, n) => register({ authToken: session.authToken, platform: n % 2 ? 'fcm_android' : 'fcm_ios', fcmToken: token })));
    for (const answer of answers) assert.equal(answer.statusCode, 200, answer.body);
    const rows = await rowsOf(t.appA, [token]);
    assert.equal(rows.length, 1);
    const holders = await Promise.all(sessions.map(async (session) => (await list(session.authToken)).length));
    assert.equal(
      holders.reduce((a, b) => a + b, 0),
      1,
      'listed by exactly one user',
    );
    // And one auth token racing itself.
    const one = sessions[0]!;
    const same = uniqueId('race');
    const twice = await Promise.all(Array.from({ length: 6 }, () => register({ authToken: one.authToken, platform: 'fcm_android', fcmToken: same })));
    for (const answer of twice) assert.equal(answer.statusCode, 200, answer.body);
    assert.equal((await rowsOf(t.appA, [same])).length, 1);
  });

  it("keeps a user's 100 most recently registered tokens: one more drops the least recent", async () => {
    const session = await newSession();
    const tokens: string[] = [];
    for (let n = 0; n < 102; n++) tokens.push(await registered(session.authToken, { fcmToken: `limit-${session.uid}-${String(n).padStart(3, '0')}` }));
    // The first one registered again is recent now: the second and third go.
    await registered(session.authToken, { fcmToken: tokens[0] });
    const listed = new Set((await list(session.authToken, true)).map((entry) => entry.pushToken));
    assert.equal(listed.size, 100);
    assert.ok(listed.has(tokens[0]!));
    assert.ok(!listed.has(tokens[1]!) && !listed.has(tokens[2]!));
    assert.ok(listed.has(tokens[101]!));
  });
});

describe('notifications-push-list-tokens', () => {
  it("lists the auth token's tokens, or with all=true its user's, most recent first, other auth tokens masked", async () => {
    const first = await newSession();
    const second = await newSession(t.appA, first.uid);
    const a = await registered(first.authToken);
    await new Promise((resolve) => setTimeout(resolve, 2));
    const b = await registered(second.authToken, { platform: 'apns_ios_voip', voipToken: uniqueId('voip') });
    assert.deepEqual(
      (await list(first.authToken)).map((e) => e.pushToken),
      [a],
    );
    assert.deepEqual(
      (await list(first.authToken, false)).map((e) => e.pushToken),
      [a],
    );
    const all = await list(first.authToken, true);
    assert.deepEqual(
      all.map((e) => e.pushToken),
      [b, a],
    );
    assert.equal(all[1].authToken, first.authToken);
    assert.ok(all[0].authToken.includes('*') && all[0].authToken !== second.authToken, 'the other auth token, masked');
    assert.ok(all[0].authToken.startsWith(`${first.uid}_`));
    const fromSecond = await list(second.authToken, true);
    assert.equal(fromSecond[0].authToken, second.authToken);
  });

  it('refuses a missing or bad authToken or all, and an unknown auth token', async () => {
    expectError(await t.call(t.appA, TOKENS), 400, 'ERR_BAD_REQUEST', 'authToken');
    const session = await newSession();
    expectError(await t.call(t.appA, TOKENS, { query: { authToken: session.authToken, all: 'maybe' } }), 400, 'ERR_BAD_REQUEST', 'all');
    expectError(await t.call(t.appA, TOKENS, { query: { authToken: 'x'.repeat(401) } }), 400, 'ERR_BAD_REQUEST', 'authToken');
    expectError(await t.call(t.appA, TOKENS, { query: { authToken: 'nobody_1' } }), 404, 'ERR_AUTH_TOKEN_NOT_FOUND');
    expectError(await t.call(t.appA, TOKENS, { query: { authToken: session.authToken }, key: 'auth' }), 403, 'AUTH_ERR_NO_ACCESS');
  });
});

describe('notifications-push-unregister-tokens', () => {
  it("deletes the auth token's tokens (all=false), then the user's (all=true), answering those it deleted", async () => {
    const first = await newSession();
    const second = await newSession(t.appA, first.uid);
    const bystander = await newSession();
    const a1 = await registered(first.authToken);
    const a2 = await registered(first.authToken, { platform: 'apns_ios_device', deviceToken: uniqueId('dev') });
    const b1 = await registered(second.authToken);
    const other = await registered(bystander.authToken);
    const unregister = (authToken: string, all?: boolean) => t.call(t.appA, TOKENS, { method: 'DELETE', body: { authToken }, ...(all === undefined ? {} : { query: { all: String(all) } }) });
    const firstAnswer = await unregister(first.authToken);
    assert.equal(firstAnswer.statusCode, 200, firstAnswer.body);
    assert.deepEqual(
      body(firstAnswer)
        .data.pushTokens.map((e: any) => e.pushToken)
        .sort(),
      [a1, a2].sort(),
    );
    assert.deepEqual(
      (await list(second.authToken, true)).map((e) => e.pushToken),
      [b1],
    );
    const again = await unregister(first.authToken, false);
    assert.deepEqual(body(again).data.pushTokens, [], 'nothing left to delete');
    await registered(first.authToken, { fcmToken: a1 });
    const everything = body(await unregister(second.authToken, true)).data.pushTokens;
    assert.deepEqual(everything.map((e: any) => e.pushToken).sort(), [a1, b1].sort());
    assert.deepEqual(await list(first.authToken, true), []);
    assert.deepEqual(
      (await list(bystander.authToken)).map((e) => e.pushToken),
      [other],
      "another user's tokens stay",
    );
  });

  it('refuses a missing authToken, a bad all and an unknown auth token', async () => {
    expectError(await t.call(t.appA, TOKENS, { method: 'DELETE' }), 400, 'ERR_BAD_REQUEST');
    expectError(await t.call(t.appA, TOKENS, { method: 'DELETE', body: {} }), 400, 'ERR_BAD_REQUEST', 'authToken');
    const session = await newSession();
    expectError(await t.call(t.appA, TOKENS, { method: 'DELETE', body: { authToken: session.authToken }, query: { all: 'yes' } }), 400, 'ERR_BAD_REQUEST', 'all');
    expectError(await t.call(t.appA, TOKENS, { method: 'DELETE', body: { authToken: 'nobody_1' } }), 404, 'ERR_AUTH_TOKEN_NOT_FOUND');
  });
});

describe('notifications-push-delete-token', () => {
  const deleteToken = (token: string, authToken: string, app = t.appA) => t.call(app, `${TOKENS}/${encodeURIComponent(token)}`, { method: 'DELETE', body: { authToken } });

  it("deletes one of the user's tokens, registered with any of their auth tokens, and answers it", async () => {
    const first = await newSession();
    const second = await newSession(t.appA, first.uid);
    const token = await registered(second.authToken, { fcmToken: `${uniqueId('del')}:APA91b/x+y=` });
    const kept = await registered(first.authToken);
    const response = await deleteToken(token, first.authToken);
    assert.equal(response.statusCode, 200, response.body);
    const [deleted, ...rest] = body(response).data.pushTokens;
    assert.equal(rest.length, 0);
    assert.equal(deleted.pushToken, token);
    assert.ok(deleted.authToken.includes('*'), 'registered with the other auth token: masked');
    assert.deepEqual(
      (await list(first.authToken, true)).map((e) => e.pushToken),
      [kept],
    );
    assert.deepEqual(body(await deleteToken(token, first.authToken)).data.pushTokens, [], 'gone already: nothing to delete');
  });

  it("leaves another user's token alone", async () => {
    const owner = await newSession();
    const stranger = await newSession();
    const token = await registered(owner.authToken);
    const response = await deleteToken(token, stranger.authToken);
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(body(response).data.pushTokens, []);
    assert.equal((await list(owner.authToken)).length, 1);
  });

  it('refuses a missing or unknown auth token, and a token that is too long or not printable ASCII', async () => {
    const session = await newSession();
    expectError(await t.call(t.appA, `${TOKENS}/abc`, { method: 'DELETE', body: {} }), 400, 'ERR_BAD_REQUEST', 'authToken');
    expectError(await deleteToken('abc', 'nobody_1'), 404, 'ERR_AUTH_TOKEN_NOT_FOUND');
    expectError(await deleteToken('x'.repeat(513), session.authToken), 400, 'ERR_BAD_REQUEST');
    expectError(await deleteToken('with space', session.authToken), 400, 'ERR_BAD_REQUEST', 'pushToken');
    expectError(await deleteToken('\u00e9t\u00e9', session.authToken), 400, 'ERR_BAD_REQUEST', 'pushToken');
  });
});

describe('push tokens go with their auth token', () => {
  it('when the auth token is deleted, when its user flushes their auth tokens, and when the user is deleted', async () => {
    const first = await newSession();
    const second = await newSession(t.appA, first.uid);
    const a = await registered(first.authToken);
    const b = await registered(second.authToken);
    const deleted = await t.call(t.appA, `/v3/users/${first.uid}/auth_tokens/${first.authToken}`, { method: 'DELETE' });
    assert.equal(deleted.statusCode, 200, deleted.body);
    assert.deepEqual(
      (await rowsOf(t.appA, [a, b])).map((row) => row.token),
      [b],
    );
    const flushed = await t.call(t.appA, `/v3/users/${first.uid}/auth_tokens`, { method: 'DELETE' });
    assert.equal(flushed.statusCode, 200, flushed.body);
    assert.deepEqual(await rowsOf(t.appA, [a, b]), []);
    const third = await newSession();
    const c = await registered(third.authToken);
    const gone = await t.call(t.appA, `/v3/users/${third.uid}`, { method: 'DELETE', body: { permanent: true } });
    assert.equal(gone.statusCode, 200, gone.body);
    assert.deepEqual(await rowsOf(t.appA, [c]), []);
  });

  it('stores the auth token only as the hash it is known by', async () => {
    const session = await newSession();
    const token = await registered(session.authToken);
    const rows = await rowsOf(t.appA, [token]);
    assert.equal(rows.length, 1);
    assert.ok(!JSON.stringify(rows).includes(session.authToken));
  });
});

describe('push tokens are per app', () => {
  it("lets another app register the same device token as its own, and reach none of A's", async () => {
    const a = await newSession();
    const token = await registered(a.authToken);
    const b = await newSession(t.appB);
    await registered(b.authToken, { fcmToken: token }, t.appB);
    assert.equal((await list(a.authToken)).length, 1, "A's registration stays");
    expectError(await t.call(t.appB, TOKENS, { query: { authToken: a.authToken } }), 404, 'ERR_AUTH_TOKEN_NOT_FOUND');
    expectError(await t.call(t.appB, TOKENS, { method: 'DELETE', body: { authToken: a.authToken }, query: { all: 'true' } }), 404, 'ERR_AUTH_TOKEN_NOT_FOUND');
    expectError(await t.call(t.appB, `${TOKENS}/${token}`, { method: 'DELETE', body: { authToken: a.authToken } }), 404, 'ERR_AUTH_TOKEN_NOT_FOUND');
    assert.equal(body(await t.call(t.appB, `${TOKENS}/${token}`, { method: 'DELETE', body: { authToken: b.authToken } })).data.pushTokens.length, 1);
    assert.equal((await list(a.authToken)).length, 1, "B's delete took its own row only");
    assert.equal((await rowsOf(t.appA, [token])).length, 1);
  });
});

describe('the delivery engine’s reads: tokensOf and removeInvalid', () => {
  it("reads many users' tokens at once, with platform, kind and provider, leaving out deactivated users", async () => {
    const [u1, u2, u3] = [await newSession(), await newSession(), await newSession()];
    const fcm = await registered(u1.authToken, { providerId: 'fcm-2' });
    const voip = await registered(u1.authToken, { platform: 'apns_ios_voip', voipToken: uniqueId('voip') });
    const device = await registered(u2.authToken, { platform: 'apns_react_native_device', deviceToken: uniqueId('dev') });
    const inactive = await newSession();
    await registered(inactive.authToken);
    assert.equal((await t.call(t.appA, '/v3/users', { method: 'DELETE', body: { uidsToDeactivate: [inactive.uid] } })).statusCode, 200);
    const targets = await t.services.pushTokens.tokensOf(ctxOf(t.appA), [u1.uid, u2.uid, u3.uid, inactive.uid, u1.uid, 'nobody']);
    assert.deepEqual([...targets.keys()].sort(), [u1.uid, u2.uid].sort());
    const mine = targets.get(u1.uid)!;
    assert.deepEqual(
      mine.map((x) => x.token),
      [voip, fcm],
      'most recently registered first',
    );
    assert.deepEqual(
      mine.map(({ platform, kind, tokenType, providerId }) => ({ platform, kind, tokenType, providerId })),
      [
        { platform: 'apns_ios_voip', kind: 'apns', tokenType: 'voip', providerId: null },
        { platform: 'fcm_android', kind: 'fcm', tokenType: 'chat', providerId: 'fcm-2' },
      ],
    );
    assert.ok(mine.every((x) => x.updatedAt instanceof Date));
    assert.deepEqual(
      targets.get(u2.uid)!.map((x) => [x.token, x.kind, x.tokenType]),
      [[device, 'apns', 'chat']],
    );
    assert.equal((await t.services.pushTokens.tokensOf(ctxOf(t.appB), [u1.uid, u2.uid])).size, 0, 'another app’s users have none');
    assert.equal((await t.services.pushTokens.tokensOf(ctxOf(t.appA), [])).size, 0);
  });

  it('removes a token a provider refused, unless it was registered again since; in its app only', async () => {
    const a = await newSession();
    const token = await registered(a.authToken);
    const [target] = (await t.services.pushTokens.tokensOf(ctxOf(t.appA), [a.uid])).get(a.uid)!;
    const b = await newSession(t.appB);
    await registered(b.authToken, { fcmToken: token }, t.appB);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await registered(a.authToken, { fcmToken: token });
    assert.equal(await t.services.pushTokens.removeInvalid(ctxOf(t.appA), token, target!.updatedAt), false, 'registered again after the send read it');
    const [fresh] = (await t.services.pushTokens.tokensOf(ctxOf(t.appA), [a.uid])).get(a.uid)!;
    assert.equal(await t.services.pushTokens.removeInvalid(ctxOf(t.appA), token, fresh!.updatedAt), true);
    assert.equal((await rowsOf(t.appA, [token])).length, 0);
    assert.equal((await rowsOf(t.appB, [token])).length, 1, "B's token of the same value stays");
    assert.equal(await t.services.pushTokens.removeInvalid(ctxOf(t.appB), token), true);
    assert.equal(await t.services.pushTokens.removeInvalid(ctxOf(t.appB), token), false);
  });
});
