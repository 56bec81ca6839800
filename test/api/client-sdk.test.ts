/**
 * The REST half of the vendor's client SDK, in the request shapes docs/client-api.md describes
 * (the SDK itself is proprietary: not a dependency, nothing copied): the login (PUT /v3/me), the
 * settings, the session's start, the API under /v3.0, the query aliases, the history's
 * meta.cursor, and paging through a second holding many messages with both cursors given.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { PARLEY_VERSION } from '../../src/version.js';
import { body, createTestApp, hostOf, type TestApp } from '../helpers/app.js';
import { asClient, newToken } from '../helpers/client.js';
import { newUids } from '../helpers/factories.js';

const SDK_HEADERS = { resource: 'web', sdk: 'javascript@4.2.0', 'user-agent': 'Mozilla/5.0 (test)' };

let t: TestApp;
let alice: string;
let bob: string;
let token: string;
before(async () => {
  t = await createTestApp();
  [alice, bob] = (await newUids(t, t.appA, 2)) as [string, string];
  token = await newToken(t, t.appA, alice);
});
after(() => t.close());

async function send(from: string, to: string, text: string): Promise<string> {
  const response = await t.call(t.appA, '/v3/messages', { method: 'POST', onBehalfOf: from, body: { receiver: to, receiverType: 'user', category: 'message', type: 'text', data: { text } } });
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data.id;
}

describe('the login', () => {
  it('PUT /v3/me answers the user with the settings and no jwt, and stores what the device says on its token', async () => {
    const response = await asClient(t, t.appA, token, '/v3/me', { method: 'PUT', headers: SDK_HEADERS, body: { platform: 'javascript', deviceId: 'device-1', appInfo: { version: '1.2.3' } } });
    assert.equal(response.statusCode, 200, response.body);
    const me = body(response).data;
    assert.equal(me.uid, alice);
    assert.equal(me.jwt, undefined);
    assert.deepEqual(me.settings, {
      appId: t.appA.appId,
      region: 'us',
      parley: { version: PARLEY_VERSION },
      hosts: { api: hostOf(t.appA), websocket: hostOf(t.appA) },
      apiPath: '/v3',
      websocket: { path: '/v3/ws', subprotocol: 'parley.v1' },
      events: { path: '/v3/me/events' },
    });
    const tokens = body(await t.call(t.appA, `/v3/users/${alice}/auth_tokens`)).data as Array<Record<string, unknown>>;
    const described = tokens.find((each) => each.platform === 'javascript');
    assert.deepEqual([described?.userAgent, described?.appInfo], ['Mozilla/5.0 (test)', { version: '1.2.3' }]);
    const settings = await asClient(t, t.appA, token, '/v3/settings', { headers: SDK_HEADERS });
    assert.deepEqual(body(settings).data, me.settings);
  });

  it('refuses a bad body with a 400, and takes an apiKey with onBehalfOf (required)', async () => {
    const bad = await asClient(t, t.appA, token, '/v3/me', { method: 'PUT', body: { platform: 'x'.repeat(101) } });
    assert.equal(bad.statusCode, 400, bad.body);
    const noUser = await t.call(t.appA, '/v3/me', { method: 'PUT', body: {} });
    assert.deepEqual([noUser.statusCode, body(noUser).error.details.onBehalfOf], [400, 'is required with an apiKey: it names the user (or send the authToken header instead)']);
    const asBackend = await t.call(t.appA, '/v3/me', { method: 'PUT', body: {}, onBehalfOf: bob });
    assert.equal(body(asBackend).data.uid, bob);
  });

  it('POST /v3/user_sessions is accepted', async () => {
    const response = await asClient(t, t.appA, token, '/v3/user_sessions', { method: 'POST', headers: SDK_HEADERS, body: { platform: 'javascript' } });
    assert.deepEqual([response.statusCode, body(response).data], [200, { uid: alice, success: true }]);
  });
});

describe('the API under /v3.0', () => {
  it('serves every /v3 route there too, hidden from the OpenAPI document', async () => {
    const doc = body(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
    const v3 = Object.entries<Record<string, unknown>>(doc.paths).filter(([path]) => path.startsWith('/v3/'));
    let operations = 0;
    for (const [path, methods] of v3) {
      for (const method of Object.keys(methods)) {
        const url = path.replace(/^\/v3\//, '/v3.0/').replace(/\{(\w+)\}/g, ':$1');
        assert.ok(t.app.hasRoute({ method: method.toUpperCase() as 'GET', url }), `${method} ${url} is routed`);
        operations++;
      }
    }
    assert.ok(operations > 100, `only ${operations} operations`);
    assert.ok(!Object.keys(doc.paths).some((path) => path.startsWith('/v3.0/') && !path.startsWith('/v3.0/data_import')), 'no /v3.0 path documented');
    const me = await asClient(t, t.appA, token, '/v3.0/me', { method: 'PUT', body: {} });
    assert.equal(body(me).data.uid, alice);
  });
});

describe('the SDK’s query parameters', () => {
  it('per_page is perPage (or limit), and withThreadSubscribed and affix are accepted on history and conversation lists', async () => {
    const [carol, dave] = (await newUids(t, t.appA, 2)) as [string, string];
    const carols = await newToken(t, t.appA, carol);
    for (let i = 0; i < 3; i++) await send(dave, carol, `m${i}`);
    await send(alice, carol, 'from alice');
    const conversations = await asClient(t, t.appA, carols, '/v3/conversations', { query: { per_page: '1', affix: 'prepend', withThreadSubscribed: 'true' } });
    assert.equal(conversations.statusCode, 200, conversations.body);
    assert.deepEqual([body(conversations).data.length, body(conversations).meta.pagination.per_page], [1, 1]);
    const history = await asClient(t, t.appA, carols, `/v3/users/${dave}/messages`, { query: { per_page: '2', affix: 'prepend', withThreadSubscribed: 'false' } });
    assert.equal(history.statusCode, 200, history.body);
    assert.equal(body(history).data.length, 2);
    const all = await asClient(t, t.appA, carols, '/v3/messages', { query: { per_page: '3' } });
    assert.deepEqual([body(all).data.length, body(all).meta.current.limit], [3, 3]);
    // The canonical name wins over its alias.
    const both = await asClient(t, t.appA, carols, `/v3/users/${dave}/messages`, { query: { per_page: '1', limit: '3' } });
    assert.equal(body(both).data.length, 3);
    const badAlias = await asClient(t, t.appA, carols, '/v3/conversations', { query: { per_page: '0' } });
    assert.equal(badAlias.statusCode, 400, badAlias.body);
  });

  it('history answers carry meta.cursor: previous for prepend, next for append', async () => {
    const [erin] = (await newUids(t, t.appA, 1)) as [string];
    const ids = [await send(alice, erin, 'one'), await send(erin, alice, 'two'), await send(alice, erin, 'three')];
    const newest = body(await asClient(t, t.appA, token, `/v3/users/${erin}/messages`, { query: { limit: '2' } })).meta;
    assert.deepEqual(newest.cursor, newest.previous);
    assert.deepEqual([newest.cursor.affix, newest.cursor.id], ['prepend', ids[1]]);
    const older = body(await asClient(t, t.appA, token, `/v3/users/${erin}/messages`, { query: { affix: 'append', id: ids[0]! } })).meta;
    assert.deepEqual(older.cursor, older.next);
    assert.deepEqual([older.cursor.affix, older.cursor.id], ['append', ids[2]]);
    const empty = body(await asClient(t, t.appA, token, `/v3/users/${erin}/messages`, { query: { affix: 'append', id: ids[2]! } })).meta;
    assert.equal(empty.cursor, undefined);
  });
});

describe('paging with both cursors (id and sentAt)', () => {
  it('misses no message of a second holding many, in either direction', async () => {
    const [frank] = (await newUids(t, t.appA, 1)) as [string];
    const sent: string[] = [];
    for (let i = 0; i < 23; i++) sent.push(await send(i % 2 ? alice : frank, i % 2 ? frank : alice, `same second ${i}`));
    // Every message of the conversation in one second, as a busy conversation has them.
    await sql`update messages set sent_at = date_trunc('second', now()) where app_id = ${t.appA.appId} and id = any(${sent.map(Number)}::bigint[])`.execute(t.database.db);
    const page = async (query: Record<string, string>) => body(await asClient(t, t.appA, token, `/v3/users/${frank}/messages`, { query: { limit: '4', ...query } }));
    // Backwards from the newest, sending back the cursor with its id, sentAt and affix.
    const backwards: string[] = [];
    let answer = await page({});
    for (let pages = 0; answer.data.length > 0 && pages < 20; pages++) {
      backwards.unshift(...answer.data.map((message: { id: string }) => message.id));
      const { id, sentAt, affix } = answer.meta.cursor;
      answer = await page({ id, sentAt: String(sentAt), affix });
    }
    assert.deepEqual(backwards, sent);
    // Forwards from before the first.
    const forwards: string[] = [];
    answer = await page({ affix: 'append', id: String(Number(sent[0]) - 1), sentAt: String(Math.floor(Date.now() / 1000) - 3600) });
    for (let pages = 0; answer.data.length > 0 && pages < 20; pages++) {
      forwards.push(...answer.data.map((message: { id: string }) => message.id));
      const { id, sentAt, affix } = answer.meta.cursor;
      answer = await page({ id, sentAt: String(sentAt), affix });
    }
    assert.deepEqual(forwards, sent);
  });
});
