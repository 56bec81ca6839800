import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { body, createTestApp, errorCode, uniqueId, type TestApp } from '../helpers/app.js';
import { newUser } from '../helpers/factories.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

async function issue(uid: string, app = t.appA, key: 'full' | 'auth' = 'full') {
  const response = await t.call(app, `/v3/users/${uid}/auth_tokens`, { method: 'POST', key, body: {} });
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data as { uid: string; authToken: string; createdAt: number };
}

function masked(token: string, uid: string): string {
  const keep = uid.length + 1 + 10 + 4;
  return token.slice(0, keep) + '*'.repeat(token.length - keep - 4) + token.slice(-4);
}

describe('create-authtoken', () => {
  it('issues a token in the vendor format, with either key scope', async () => {
    const user = await newUser(t, t.appA);
    const token = await issue(user.uid);
    assert.equal(token.uid, user.uid);
    assert.match(token.authToken, new RegExp(`^${user.uid}_\\d{10}[0-9a-f]{40}$`));
    const viaAuthKey = await issue(user.uid.toUpperCase(), t.appA, 'auth');
    assert.notEqual(viaAuthKey.authToken, token.authToken);
  });

  it('issues a new token on every call, force or not, and accepts no body', async () => {
    const user = await newUser(t, t.appA);
    const first = await issue(user.uid);
    const forced = body(await t.call(t.appA, `/v3/users/${user.uid}/auth_tokens`, { method: 'POST', body: { force: true } })).data;
    const bare = await t.call(t.appA, `/v3/users/${user.uid}/auth_tokens`, { method: 'POST' });
    assert.equal(bare.statusCode, 200, bare.body);
    assert.equal(new Set([first.authToken, forced.authToken, body(bare).data.authToken]).size, 3);
  });

  it('stores only a hash of the token', async () => {
    const user = await newUser(t, t.appA);
    const token = await issue(user.uid);
    const rows = await t.database.db.selectFrom('auth_tokens').selectAll().where('app_id', '=', t.appA.appId).where('uid', '=', user.uid).execute();
    assert.equal(rows.length, 1);
    assert.ok(!JSON.stringify(rows).includes(token.authToken));
  });

  it('keeps the 100 newest tokens of a user', async () => {
    const user = await newUser(t, t.appA);
    for (let i = 0; i < 102; i++) await issue(user.uid);
    const listed = body(await t.call(t.appA, `/v3/users/${user.uid}/auth_tokens`, { query: { perPage: '1000' } }));
    assert.equal(listed.meta.pagination.total, 100);
  });

  it('answers ERR_UID_NOT_FOUND for unknown, deactivated and other apps’ users', async () => {
    const response = await t.call(t.appA, `/v3/users/${uniqueId()}/auth_tokens`, { method: 'POST', body: {} });
    assert.equal(response.statusCode, 404);
    assert.equal(errorCode(response), 'ERR_UID_NOT_FOUND');
    const other = await newUser(t, t.appB);
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${other.uid}/auth_tokens`, { method: 'POST', body: {} })), 'ERR_UID_NOT_FOUND');
    const gone = await newUser(t, t.appA);
    await t.call(t.appA, `/v3/users/${gone.uid}`, { method: 'DELETE' });
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${gone.uid}/auth_tokens`, { method: 'POST', body: {} })), 'ERR_UID_NOT_FOUND');
  });

  it('refuses a force flag that is not a boolean', async () => {
    const user = await newUser(t, t.appA);
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${user.uid}/auth_tokens`, { method: 'POST', body: { force: 'yes' } })), 'ERR_BAD_REQUEST');
  });
});

describe('list-authtokens', () => {
  it("lists a user's tokens newest first, masked, with pagination", async () => {
    const user = await newUser(t, t.appA);
    const tokens = [await issue(user.uid), await issue(user.uid), await issue(user.uid)];
    const page1 = body(await t.call(t.appA, `/v3/users/${user.uid}/auth_tokens`, { query: { perPage: '2' } }));
    const page2 = body(await t.call(t.appA, `/v3/users/${user.uid}/auth_tokens`, { query: { perPage: '2', page: '2' } }));
    assert.deepEqual(page1.meta.pagination, { total: 3, count: 2, per_page: 2, current_page: 1, total_pages: 2 });
    const listed = [...page1.data, ...page2.data].map((x: any) => x.authToken);
    assert.deepEqual(new Set(listed), new Set(tokens.map((x) => masked(x.authToken, user.uid))));
    assert.ok(listed.every((x: string) => x.includes('*')));
  });

  it('answers ERR_UID_NOT_FOUND for an unknown user and for another app', async () => {
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${uniqueId()}/auth_tokens`)), 'ERR_UID_NOT_FOUND');
    const user = await newUser(t, t.appA);
    await issue(user.uid);
    assert.equal(errorCode(await t.call(t.appB, `/v3/users/${user.uid}/auth_tokens`)), 'ERR_UID_NOT_FOUND');
  });

  it('refuses perPage over 1000 and an authOnly key', async () => {
    const user = await newUser(t, t.appA);
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${user.uid}/auth_tokens`, { query: { perPage: '5000' } })), 'ERR_BAD_REQUEST');
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${user.uid}/auth_tokens`, { key: 'auth' })), 'AUTH_ERR_NO_ACCESS');
  });
});

describe('get-authtoken', () => {
  it('gets a token by its value or its masked form', async () => {
    const user = await newUser(t, t.appA);
    const token = await issue(user.uid);
    for (const ref of [token.authToken, masked(token.authToken, user.uid)]) {
      const response = await t.call(t.appA, `/v3/users/${user.uid}/auth_tokens/${encodeURIComponent(ref)}`);
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual(body(response).data, { uid: user.uid, authToken: masked(token.authToken, user.uid), createdAt: token.createdAt });
    }
  });

  it("answers ERR_AUTH_TOKEN_NOT_FOUND for an unknown token and another user's token", async () => {
    const user = await newUser(t, t.appA);
    const other = await newUser(t, t.appA);
    const token = await issue(other.uid);
    const unknown = await t.call(t.appA, `/v3/users/${user.uid}/auth_tokens/${user.uid}_1700000000${'a'.repeat(40)}`);
    assert.equal(unknown.statusCode, 404);
    assert.equal(errorCode(unknown), 'ERR_AUTH_TOKEN_NOT_FOUND');
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${user.uid}/auth_tokens/${token.authToken}`)), 'ERR_AUTH_TOKEN_NOT_FOUND');
  });

  it("answers ERR_UID_NOT_FOUND in another app, even with the token's value", async () => {
    const user = await newUser(t, t.appA);
    const token = await issue(user.uid);
    assert.equal(errorCode(await t.call(t.appB, `/v3/users/${user.uid}/auth_tokens/${token.authToken}`)), 'ERR_UID_NOT_FOUND');
    await newUser(t, t.appB, { uid: user.uid });
    assert.equal(errorCode(await t.call(t.appB, `/v3/users/${user.uid}/auth_tokens/${token.authToken}`)), 'ERR_AUTH_TOKEN_NOT_FOUND');
  });
});

describe('update-authtoken', () => {
  it('records platform, user agent and app info', async () => {
    const user = await newUser(t, t.appA);
    const token = await issue(user.uid);
    const response = await t.call(t.appA, `/v3/users/${user.uid}/auth_tokens/${token.authToken}`, {
      method: 'PUT',
      body: { platform: 'ios', userAgent: 'Parley/1.0', appInfo: { version: '1.2.3', build: 7 } },
    });
    assert.equal(response.statusCode, 200, response.body);
    const updated = body(response).data;
    assert.equal(updated.platform, 'ios');
    assert.equal(updated.userAgent, 'Parley/1.0');
    assert.deepEqual(updated.appInfo, { version: '1.2.3', build: 7 });
    assert.equal(typeof updated.updatedAt, 'number');
    const fetched = body(await t.call(t.appA, `/v3/users/${user.uid}/auth_tokens/${token.authToken}`)).data;
    assert.deepEqual(fetched, updated);
  });

  it('refuses appInfo that is not an object, and a platform that is not a string', async () => {
    const user = await newUser(t, t.appA);
    const token = await issue(user.uid);
    for (const payload of [{ appInfo: 'x' }, { platform: 5 }]) {
      const response = await t.call(t.appA, `/v3/users/${user.uid}/auth_tokens/${token.authToken}`, { method: 'PUT', body: payload });
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
    }
  });

  it('answers ERR_AUTH_TOKEN_NOT_FOUND and ERR_UID_NOT_FOUND', async () => {
    const user = await newUser(t, t.appA);
    const token = await issue(user.uid);
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${user.uid}/auth_tokens/nope`, { method: 'PUT', body: { platform: 'x' } })), 'ERR_AUTH_TOKEN_NOT_FOUND');
    assert.equal(errorCode(await t.call(t.appB, `/v3/users/${user.uid}/auth_tokens/${token.authToken}`, { method: 'PUT', body: { platform: 'x' } })), 'ERR_UID_NOT_FOUND');
  });
});

describe('delete-authtoken and flush-authtokens', () => {
  it('deletes one token', async () => {
    const user = await newUser(t, t.appA);
    const keep = await issue(user.uid);
    const drop = await issue(user.uid);
    const response = await t.call(t.appA, `/v3/users/${user.uid}/auth_tokens/${drop.authToken}`, { method: 'DELETE' });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(body(response).data.success, true);
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${user.uid}/auth_tokens/${drop.authToken}`)), 'ERR_AUTH_TOKEN_NOT_FOUND');
    assert.equal((await t.call(t.appA, `/v3/users/${user.uid}/auth_tokens/${keep.authToken}`)).statusCode, 200);
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${user.uid}/auth_tokens/${drop.authToken}`, { method: 'DELETE' })), 'ERR_AUTH_TOKEN_NOT_FOUND');
  });

  it("cannot delete another app's token", async () => {
    const user = await newUser(t, t.appA);
    const token = await issue(user.uid);
    await newUser(t, t.appB, { uid: user.uid });
    assert.equal(errorCode(await t.call(t.appB, `/v3/users/${user.uid}/auth_tokens/${token.authToken}`, { method: 'DELETE' })), 'ERR_AUTH_TOKEN_NOT_FOUND');
    assert.equal((await t.call(t.appA, `/v3/users/${user.uid}/auth_tokens/${token.authToken}`)).statusCode, 200);
  });

  it("flushes all of a user's tokens, and only theirs", async () => {
    const user = await newUser(t, t.appA);
    const other = await newUser(t, t.appA);
    await issue(user.uid);
    await issue(user.uid);
    const kept = await issue(other.uid);
    const response = await t.call(t.appA, `/v3/users/${user.uid}/auth_tokens`, { method: 'DELETE' });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(body(response).data, { success: true, message: `Cleared Auth Tokens successfully for uid ${user.uid}.` });
    assert.equal(body(await t.call(t.appA, `/v3/users/${user.uid}/auth_tokens`)).data.length, 0);
    assert.equal((await t.call(t.appA, `/v3/users/${other.uid}/auth_tokens/${kept.authToken}`)).statusCode, 200);
  });

  it('answers ERR_UID_NOT_FOUND when flushing an unknown user or another app’s', async () => {
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${uniqueId()}/auth_tokens`, { method: 'DELETE' })), 'ERR_UID_NOT_FOUND');
    const user = await newUser(t, t.appA);
    const token = await issue(user.uid);
    assert.equal(errorCode(await t.call(t.appB, `/v3/users/${user.uid}/auth_tokens`, { method: 'DELETE' })), 'ERR_UID_NOT_FOUND');
    assert.equal((await t.call(t.appA, `/v3/users/${user.uid}/auth_tokens/${token.authToken}`)).statusCode, 200);
  });
});
