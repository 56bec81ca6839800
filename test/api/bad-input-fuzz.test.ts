/**
 * Bad input never answers 500. Every operation of the generated OpenAPI document is called with
 * seeded random path values, query values, bodies and onBehalfOf users, valid and not: each
 * answer must be below 500, and an error must come in the vendor's shape. A failure prints the
 * seed and the request, so it can be replayed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { body, createTestApp, type TestApp } from '../helpers/app.js';
import { newGroup, newUids } from '../helpers/factories.js';

const SEED = Number(process.env.PARLEY_FUZZ_SEED ?? 20261123);
const REQUESTS_PER_OPERATION = 8;

let t: TestApp;
let doc: { paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string }>; requestBody?: any }>> };
const known: Record<string, string[]> = {};

before(async () => {
  t = await createTestApp();
  const [alice, bob] = await newUids(t, t.appA, 2);
  const group = await newGroup(t, t.appA, {}, alice);
  const sent = await t.call(t.appA, '/v3/messages', {
    method: 'POST',
    onBehalfOf: alice!,
    body: { receiver: bob, receiverType: 'user', category: 'message', type: 'text', data: { text: 'hi' } },
  });
  assert.equal(sent.statusCode, 200, sent.body);
  const messageId = body(sent).data.id as string;
  Object.assign(known, {
    uid: [alice!, bob!],
    guid: [group.guid as string],
    id: [messageId],
    role: ['default'],
    scope: ['admin', 'participant'],
    reaction: ['👍'],
    permission: ['createGroup'],
    conversationId: [body(sent).data.conversationId as string, `group_${group.guid}`],
    apiKey: [t.appA.apiKey],
    authToken: ['x'],
  });
  doc = body(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
});
after(async () => {
  await t.close();
});

/** A small seeded generator (mulberry32), so a failing run can be replayed. */
function random(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  return { next, pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]! };
}

const JUNK_STRINGS = ['', ' ', 'x', 'UPPER-Case_id', '-1', '0', '99999999999999999999999', '1e309', 'true', 'null', '../..', '%', 'ü漢字🚀', 'a'.repeat(300), 'a,b,,c'];
const JUNK_VALUES: unknown[] = [null, true, false, 0, -1, 1.5, 2 ** 53, '', 'x', 'a'.repeat(5000), [], ['x'], [1, 2], {}, { a: { b: { c: [] } } }];

function junkBody(r: ReturnType<typeof random>, schema: any): unknown {
  const kind = r.next();
  if (kind < 0.1) return r.pick(JUNK_VALUES);
  const properties = Object.keys(schema?.properties ?? {});
  const result: Record<string, unknown> = {};
  for (const name of properties) {
    const roll = r.next();
    if (roll < 0.35) continue;
    if (roll < 0.55) result[name] = r.pick(JUNK_VALUES);
    else if (roll < 0.75) result[name] = r.pick([...(known.uid ?? []), ...(known.guid ?? [])]);
    else if (roll < 0.9) result[name] = r.pick([[...(known.uid ?? [])], { uids: known.uid, guids: known.guid }, { text: 'hi' }]);
    else result[name] = r.pick(JUNK_STRINGS);
  }
  if (r.next() < 0.2) result[r.pick(JUNK_STRINGS) || 'extra'] = r.pick(JUNK_VALUES);
  return result;
}

describe('bad input never answers 500', () => {
  it('calls every operation with seeded random input', async () => {
    const r = random(SEED);
    let calls = 0;
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
        for (let i = 0; i < REQUESTS_PER_OPERATION; i++) {
          const url = path.replace(/\{(\w+)\}/g, (_, name: string) =>
            encodeURIComponent(r.next() < 0.6 && known[name] ? r.pick(known[name]!) : r.pick(JUNK_STRINGS.filter(Boolean))),
          );
          const query: Record<string, string> = {};
          for (const parameter of operation.parameters ?? []) {
            if (parameter.in === 'query' && r.next() < 0.4) query[parameter.name] = r.pick(JUNK_STRINGS);
          }
          const schema = operation.requestBody?.content?.['application/json']?.schema;
          const payload = method === 'get' ? undefined : junkBody(r, schema);
          const onBehalfOf = r.pick([undefined, undefined, ...(known.uid ?? []), 'nobody-here']);
          const response = await t.call(t.appA, url, {
            method: method.toUpperCase() as 'GET',
            query,
            ...(payload !== undefined ? { body: payload } : {}),
            ...(onBehalfOf !== undefined ? { onBehalfOf } : {}),
          });
          calls++;
          const replay = `seed ${SEED}: ${method.toUpperCase()} ${url} ${JSON.stringify({ query, payload, onBehalfOf }).slice(0, 500)}`;
          assert.ok(response.statusCode < 500, `${response.statusCode} for ${replay}\n${response.body.slice(0, 500)}`);
          if (response.statusCode >= 400) {
            const error = body(response).error;
            assert.equal(typeof error?.code, 'string', `no error code for ${replay}`);
            assert.equal(typeof error?.message, 'string', `no error message for ${replay}`);
          }
        }
      }
    }
    assert.ok(calls > 500, `only ${calls} calls: the OpenAPI document lists too few operations`);
  });
});
