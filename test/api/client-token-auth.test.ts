/**
 * The client API (docs/client-api.md): a request with the authToken header and no apiKey acts
 * as the token's user, as onBehalfOf makes them; wrong, deleted and flushed tokens, and tokens
 * of deactivated users, are refused at once on this node; refusals count as failed
 * authentications; what a token may call, and whom it may name, is the client access table's.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../../src/domain/context.js';
import { body, createTestApp, errorCode, type TestApp } from '../helpers/app.js';
import { asClient, newToken } from '../helpers/client.js';
import { newUids } from '../helpers/factories.js';

let t: TestApp;
/** Failed authentications limited per app (12 a minute), not per address: every injected request comes from one. */
const PER_APP = 12;
before(async () => {
  t = await createTestApp({ authFailureLimits: { perAddress: 0, perApp: PER_APP } });
});
after(() => t.close());

describe('a request with an auth token', () => {
  it('acts as the token’s user, with the app from the host or the appId header', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const token = await newToken(t, t.appA, alice!);
    const sent = await asClient(t, t.appA, token, '/v3/messages', { method: 'POST', body: { receiver: bob, receiverType: 'user', category: 'message', type: 'text', data: { text: 'hi' } } });
    assert.equal(sent.statusCode, 200, sent.body);
    assert.equal(body(sent).data.sender, alice);
    const byHeader = await t.app.inject({ method: 'GET', url: '/v3/conversations', headers: { host: 'localhost', appid: t.appA.appId, authtoken: token, resource: 'web', sdk: 'javascript@4.2.0' } });
    assert.equal(byHeader.statusCode, 200, byHeader.body);
    assert.equal(body(byHeader).data.length, 1);
    assert.equal(body(byHeader).data[0].conversationWith.uid, bob);
  });

  it('answers AUTH_ERR_EMPTY_AUTH_TOKEN and AUTH_ERR_AUTH_TOKEN_NOT_FOUND (401), and a wrong app as AUTH_ERR_INVALID_APPID', async () => {
    const [alice] = await newUids(t, t.appA, 1);
    const token = await newToken(t, t.appA, alice!);
    const empty = await asClient(t, t.appA, '', '/v3/conversations');
    assert.deepEqual([empty.statusCode, errorCode(empty)], [401, 'AUTH_ERR_EMPTY_AUTH_TOKEN']);
    // Its last character changed (to one it is not: a token ending in 0 stayed itself, 1 run in 16).
    const wrong = await asClient(t, t.appA, `${token.slice(0, -1)}${token.endsWith('0') ? '1' : '0'}`, '/v3/conversations');
    assert.deepEqual([wrong.statusCode, errorCode(wrong)], [401, 'AUTH_ERR_AUTH_TOKEN_NOT_FOUND']);
    // Another app's token is no token of this app.
    const elsewhere = await asClient(t, t.appB, token, '/v3/conversations');
    assert.deepEqual([elsewhere.statusCode, errorCode(elsewhere)], [401, 'AUTH_ERR_AUTH_TOKEN_NOT_FOUND']);
    const noApp = await t.app.inject({ method: 'GET', url: '/v3/conversations', headers: { host: 'localhost', appid: 'no-such-app', authtoken: token } });
    assert.deepEqual([noApp.statusCode, errorCode(noApp)], [401, 'AUTH_ERR_INVALID_APPID']);
    // An apiKey wins over a token: the backend's request.
    const both = await t.call(t.appA, '/v3/users', { headers: { authtoken: 'whatever' } });
    assert.equal(both.statusCode, 200, both.body);
  });

  it('is refused at once after its token is deleted, its user’s tokens flushed, or its user deactivated (cached lookups forgotten)', async () => {
    const [alice, bob, carol] = await newUids(t, t.appA, 3);
    const first = await newToken(t, t.appA, alice!);
    const second = await newToken(t, t.appA, alice!);
    const bobs = await newToken(t, t.appA, bob!);
    const carols = await newToken(t, t.appA, carol!);
    // Each looked up once, so that the cache holds it.
    for (const token of [first, second, bobs, carols]) assert.equal((await asClient(t, t.appA, token, '/v3/conversations')).statusCode, 200);
    assert.equal((await t.call(t.appA, `/v3/users/${alice}/auth_tokens/${first}`, { method: 'DELETE' })).statusCode, 200);
    assert.equal(errorCode(await asClient(t, t.appA, first, '/v3/conversations')), 'AUTH_ERR_AUTH_TOKEN_NOT_FOUND');
    assert.equal((await asClient(t, t.appA, second, '/v3/conversations')).statusCode, 200);
    assert.equal((await t.call(t.appA, `/v3/users/${alice}/auth_tokens`, { method: 'DELETE' })).statusCode, 200);
    assert.equal(errorCode(await asClient(t, t.appA, second, '/v3/conversations')), 'AUTH_ERR_AUTH_TOKEN_NOT_FOUND');
    assert.equal((await t.call(t.appA, '/v3/users', { method: 'DELETE', body: { uidsToDeactivate: [bob] } })).statusCode, 200);
    assert.equal(errorCode(await asClient(t, t.appA, bobs, '/v3/conversations')), 'AUTH_ERR_AUTH_TOKEN_NOT_FOUND');
    assert.equal((await t.call(t.appA, `/v3/users/${carol}`, { method: 'DELETE', body: { permanent: true } })).statusCode, 200);
    assert.equal(errorCode(await asClient(t, t.appA, carols, '/v3/conversations')), 'AUTH_ERR_AUTH_TOKEN_NOT_FOUND');
  });

  it('may not name another user as onBehalfOf, nor call what the table leaves out', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const token = await newToken(t, t.appA, alice!);
    const other = await asClient(t, t.appA, token, '/v3/conversations', { headers: { onbehalfof: bob! } });
    assert.deepEqual([other.statusCode, errorCode(other)], [403, 'ERR_PERMISSION_DENIED']);
    const self = await asClient(t, t.appA, token, '/v3/conversations', { headers: { onbehalfof: alice!.toUpperCase() } });
    assert.equal(self.statusCode, 200, self.body);
    for (const [method, url] of [
      ['GET', '/v3/users'],
      ['POST', '/v3/apikeys'],
      ['POST', `/v3/users/${alice}/auth_tokens`],
      ['GET', '/v3/stats'],
    ] as const) {
      const response = await asClient(t, t.appA, token, url, { method, ...(method === 'POST' ? { body: {} } : {}) });
      assert.deepEqual([response.statusCode, errorCode(response)], [403, 'ERR_PERMISSION_DENIED'], `${method} ${url}: ${response.body}`);
    }
  });

  it('names only its own user where a route is about the user’s own lists, whether the other exists or not', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const token = await newToken(t, t.appA, alice!);
    const own = await asClient(t, t.appA, token, `/v3/users/${alice!.toUpperCase()}/friends`);
    assert.equal(own.statusCode, 200, own.body);
    for (const uid of [bob!, 'nobody-at-all']) {
      const response = await asClient(t, t.appA, token, `/v3/users/${uid}/blockedusers`);
      assert.deepEqual([response.statusCode, body(response).error.code, body(response).error.message.includes(uid)], [403, 'ERR_PERMISSION_DENIED', false]);
    }
    // A group created by a token is owned by its user.
    const foreign = await asClient(t, t.appA, token, '/v3/groups', { method: 'POST', body: { guid: 'g-owned-by-bob', name: 'G', type: 'public', owner: bob } });
    assert.deepEqual([foreign.statusCode, errorCode(foreign)], [403, 'ERR_PERMISSION_DENIED']);
    const mine = await asClient(t, t.appA, token, '/v3/groups', { method: 'POST', body: { guid: 'g-owned-by-alice', name: 'G', type: 'public' } });
    assert.equal(mine.statusCode, 200, mine.body);
    assert.equal(body(mine).data.owner, alice);
    // Notification preferences: the uid query names the token's user.
    assert.equal((await asClient(t, t.appA, token, '/v3/notifications/v1/preferences', { query: { uid: alice! } })).statusCode, 200);
    assert.equal(errorCode(await asClient(t, t.appA, token, '/v3/notifications/v1/preferences', { query: { uid: bob! } })), 'ERR_PERMISSION_DENIED');
  });
});

describe('failed token authentications', () => {
  it('count against the limit per app, as wrong keys do, and a token in use is not held up', async () => {
    const app = await t.services.apps.create({ appId: '', requestId: 'test', log: silentLogger }, { name: 'Flooded' });
    const [alice] = await newUids(t, app, 1);
    const token = await newToken(t, app, alice!);
    assert.equal((await asClient(t, app, token, '/v3/conversations')).statusCode, 200);
    const codes: Array<string | undefined> = [];
    for (let i = 0; i < PER_APP + 2; i++) codes.push(errorCode(await asClient(t, app, `wrong-${i}`, '/v3/conversations')));
    assert.deepEqual(codes, [...Array(PER_APP).fill('AUTH_ERR_AUTH_TOKEN_NOT_FOUND'), 'ERR_TOO_MANY_REQUESTS', 'ERR_TOO_MANY_REQUESTS']);
    // Wrong keys share the count.
    assert.equal(errorCode(await t.call(app, '/v3/users', { key: { literal: 'wrong' } })), 'ERR_TOO_MANY_REQUESTS');
    // A token found valid lately is not held up by the flood.
    assert.equal((await asClient(t, app, token, '/v3/conversations')).statusCode, 200);
  });
});
