/**
 * Hostile input at the edge (issue 20, faults 1 and 3): text PostgreSQL cannot store (a lone
 * UTF-16 surrogate, NUL) and JSON nested without bound are refused with ERR_BAD_REQUEST naming
 * the field, wherever they come: body, path, query, header; a data import record fails alone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_JSON_DEPTH } from '../../src/domain/text.js';
import { body, createTestApp, errorCode, uniqueId, type CallOptions, type TestApp } from '../helpers/app.js';
import { newUids } from '../helpers/factories.js';

let t: TestApp;
let alice: string;
let bob: string;
let messageId: string;
before(async () => {
  t = await createTestApp();
  [alice, bob] = (await newUids(t, t.appA, 2)) as [string, string];
  const sent = await t.call(t.appA, '/v3/messages', { method: 'POST', onBehalfOf: alice, body: text(bob, 'hello') });
  assert.equal(sent.statusCode, 200, sent.body);
  messageId = body(sent).data.id;
});
after(async () => {
  await t.close();
});

const LONE = 'x\ud800';
const json = { 'content-type': 'application/json' };

function text(receiver: string, value: string) {
  return { receiver, receiverType: 'user', category: 'message', type: 'text', data: { text: value } };
}

/** A request whose answer must be 400 ERR_BAD_REQUEST with `field` in its details. */
async function refused(url: string, options: CallOptions, field: string): Promise<void> {
  const response = await t.call(t.appA, url, options);
  assert.equal(response.statusCode, 400, `${url}: ${response.body}`);
  const error = body(response).error;
  assert.equal(error.code, 'ERR_BAD_REQUEST');
  assert.ok(field in (error.details ?? {}), `${url}: details ${JSON.stringify(error.details)} do not name ${field}`);
}

function nested(depth: number, leaf: unknown = 1): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

/** `depth` levels of objects as raw JSON text (JSON.stringify itself would overflow the stack at 5,000 on some builds). */
function nestedText(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

async function messageCount(): Promise<number> {
  const row = await t.database.db
    .selectFrom('messages')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('app_id', '=', t.appA.appId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('a lone UTF-16 surrogate', () => {
  it('is refused in a created user, naming the field, as raw JSON text', async () => {
    const uid = uniqueId('s');
    await refused('/v3/users', { method: 'POST', body: `{"uid":"${uid}","name":"x\\ud800"}`, headers: json }, 'name');
    await refused('/v3/users', { method: 'POST', body: { uid, name: 'x', metadata: { [LONE]: 1 } } }, `metadata.${LONE}`);
    await refused('/v3/users', { method: 'POST', body: { uid, name: 'x', metadata: { list: ['ok', 'x\udc00'] } } }, 'metadata.list.1');
    const read = await t.call(t.appA, `/v3/users/${uid}`);
    assert.equal(errorCode(read), 'ERR_UID_NOT_FOUND');
  });

  it('is refused in a send, a thread reply and an edit, which store nothing', async () => {
    const before = await messageCount();
    await refused('/v3/messages', { method: 'POST', onBehalfOf: alice, body: text(bob, LONE) }, 'data.text');
    await refused(`/v3/messages/${messageId}/thread`, { method: 'POST', onBehalfOf: alice, body: text(bob, LONE) }, 'data.text');
    await refused(`/v3/messages/${messageId}`, { method: 'PUT', onBehalfOf: alice, body: { data: { text: LONE } } }, 'data.text');
    await refused('/v3/messages', { method: 'POST', onBehalfOf: alice, body: { ...text(bob, 'hi'), data: { text: 'hi', metadata: { k: LONE } } } }, 'data.metadata.k');
    assert.equal(await messageCount(), before);
    const read = await t.call(t.appA, `/v3/messages/${messageId}`);
    assert.equal(body(read).data.data.text, 'hello');
  });

  it('leaves search working for the whole app', async () => {
    await t.call(t.appA, `/v3/messages/${messageId}/thread`, { method: 'POST', onBehalfOf: alice, body: text(bob, LONE) });
    const search = await t.call(t.appA, '/v3/messages', { query: { searchKey: 'hello' } });
    assert.equal(search.statusCode, 200, search.body);
    assert.ok(body(search).data.some((message: any) => message.id === messageId));
  });

  it('is refused in a path, a query value and a header, naming each', async () => {
    // Percent-encoded UTF-8 of U+D800, which is no character: the router refuses the URL itself.
    const path = await t.call(t.appA, '/v3/users/%ED%A0%80');
    assert.equal(path.statusCode, 400, path.body);
    assert.equal(errorCode(path), 'ERR_BAD_REQUEST');
    await refused('/v3/users', { query: { searchKey: 'a\u0000' } }, 'searchKey');
    await refused('/v3/messages', { headers: { 'x-anything': LONE } }, 'header x-anything');
    // Over the wire a query value cannot decode to a lone surrogate: bytes that are not UTF-8 stay
    // as sent, which is text PostgreSQL can store.
    const search = await t.call(t.appA, '/v3/messages?searchKey=%ED%A0%80');
    assert.equal(search.statusCode, 200, search.body);
  });

  it('fails only its own data import record; the rest of the call is stored', async () => {
    const [good, bad] = [uniqueId('good'), uniqueId('bad')];
    const users = await t.call(t.appA, '/v3/data_import/users', {
      method: 'POST',
      body: { users: { [good]: { uid: good, name: 'Good' }, [bad]: { uid: bad, name: LONE } } },
    });
    assert.equal(users.statusCode, 200, users.body);
    const results = body(users).data;
    assert.equal(results[good].success, true, JSON.stringify(results[good]));
    assert.equal(results[bad].success, false);
    assert.equal(results[bad].error.code, 'ERR_BAD_REQUEST');
    assert.ok('name' in results[bad].error.details);
    assert.equal((await t.call(t.appA, `/v3/users/${good}`)).statusCode, 200);
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${bad}`)), 'ERR_UID_NOT_FOUND');

    const sentAt = Math.floor(Date.now() / 1000) - 60;
    const record = (muid: string, value: string) => ({ muid, sender: alice, receiverType: 'user', receiver: bob, category: 'message', type: 'text', data: { text: value }, sentAt });
    const [fine, broken] = [uniqueId('m'), uniqueId('m')];
    const messages = await t.call(t.appA, '/v3/data_import/messages', {
      method: 'POST',
      body: { messages: { [fine]: record(fine, 'fine'), [broken]: record(broken, LONE) } },
    });
    assert.equal(messages.statusCode, 200, messages.body);
    const stored = body(messages).data;
    assert.equal(stored[fine].success, true, JSON.stringify(stored[fine]));
    assert.equal(stored[broken].error.code, 'ERR_BAD_REQUEST');
    assert.ok('data.text' in stored[broken].error.details);
  });
});

describe('deep nesting', () => {
  it(`refuses a body nested 5,000 deep in metadata or customData`, async () => {
    const uid = uniqueId('deep');
    await refused('/v3/users', { method: 'POST', body: `{"uid":"${uid}","name":"d","metadata":${nestedText(5000)}}`, headers: json }, 'body');
    const custom = `{"receiver":"${bob}","receiverType":"user","category":"custom","type":"x","data":{"customData":${nestedText(5000)}}}`;
    await refused('/v3/messages', { method: 'POST', onBehalfOf: alice, body: custom, headers: json }, 'body');
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${uid}`)), 'ERR_UID_NOT_FOUND');
  });

  it(`accepts ${MAX_JSON_DEPTH} levels and refuses one more`, async () => {
    // The body is one level; metadata (nested(n) is n levels) makes up the rest.
    const fits = await t.call(t.appA, '/v3/users', { method: 'POST', body: { uid: uniqueId('fits'), name: 'f', metadata: nested(MAX_JSON_DEPTH - 1) } });
    assert.equal(fits.statusCode, 200, fits.body);
    await refused('/v3/users', { method: 'POST', body: { uid: uniqueId('over'), name: 'o', metadata: nested(MAX_JSON_DEPTH) } }, 'body');
    // Brackets inside strings are text, not nesting.
    const brackets = await t.call(t.appA, '/v3/users', { method: 'POST', body: { uid: uniqueId('br'), name: '['.repeat(90), metadata: { s: '{"\\'.repeat(100), t: '['.repeat(200) } } });
    assert.equal(brackets.statusCode, 200, brackets.body);
  });

  it('fails only its own data import record', async () => {
    const [good, deep] = [uniqueId('good'), uniqueId('deep')];
    const response = await t.call(t.appA, '/v3/data_import/users', {
      method: 'POST',
      body: { users: { [good]: { uid: good, name: 'Good' }, [deep]: { uid: deep, name: 'Deep', metadata: nested(MAX_JSON_DEPTH) } } },
    });
    assert.equal(response.statusCode, 200, response.body);
    const results = body(response).data;
    assert.equal(results[good].success, true, JSON.stringify(results[good]));
    assert.equal(results[deep].error.code, 'ERR_BAD_REQUEST');
    // Nested without bound, the whole call is refused before anything walks it.
    const hostile = `{"users":{"${deep}":{"uid":"${deep}","name":"d","metadata":${nestedText(5000)}}}}`;
    await refused('/v3/data_import/users', { method: 'POST', body: hostile, headers: json }, 'body');
  });
});
