/**
 * Bad input never answers 500, and never another app's data: the seeded fuzz (helpers/fuzz.ts)
 * over every operation of the OpenAPI document, across two apps, with malformed JSON, invalid
 * Unicode, deep nesting, huge numbers, wrong types, oversized values and hostile headers. CI
 * runs a short seed; `npm run fuzz -- --requests 100000` runs the long mode. A failure prints
 * the seed and the request, so it can be made again (PARLEY_FUZZ_SEED, PARLEY_FUZZ_REQUESTS).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { answerFailures, fuzzRequest, runFuzz, setupFuzz, type Fuzz, type FuzzSummary } from '../helpers/fuzz.js';

const SEED = Number(process.env.PARLEY_FUZZ_SEED ?? 20261123);
const REQUESTS = Number(process.env.PARLEY_FUZZ_REQUESTS ?? 2000);

let t: TestApp;
let fuzz: Fuzz;
let summary: FuzzSummary;
before(async () => {
  // Rate limits off: the fuzz's own pace must not turn its answers into 429s.
  t = await createTestApp({ rateLimits: { core: 0, standard: 0, import: 0 }, importConcurrency: { perServer: 64, perApp: 64 } });
  fuzz = await setupFuzz(t);
  summary = await runFuzz(fuzz, { seed: SEED, requests: REQUESTS, concurrency: 4 });
});
after(async () => {
  await t?.close();
});

describe('the fuzz of every operation across two apps', () => {
  it('answers no request with a 5xx, an error out of the vendor shape, or the other app’s data', () => {
    const report = summary.failures.map((f) => `${f.kind}: ${f.message}\n  replay: ${f.replay}`).join('\n');
    assert.deepEqual({ fivexx: summary.fivexx, crossApp: summary.crossApp, shape: summary.shape }, { fivexx: 0, crossApp: 0, shape: 0 }, `seed ${SEED}:\n${report}`);
    assert.equal(summary.requests, REQUESTS);
  });

  it('calls every operation, with every kind of hostile input', () => {
    const missed = fuzz.operations.filter((op) => (summary.operations[op.operationId] ?? 0) === 0).map((op) => op.operationId);
    assert.deepEqual(missed, []);
    assert.ok(fuzz.operations.length >= 87, `only ${fuzz.operations.length} operations`);
    for (const family of [
      'malformed: truncated',
      'malformed: trailing garbage',
      'malformed: wrong content type',
      'unicode: invalid UTF-8 bytes',
      'unicode: lone surrogate or NUL escapes',
      'nesting: deep value',
      'nesting: deep body',
      'numbers: beyond a double',
      'body: schema with junk',
      'path: junk',
      'query',
      'key: the other app’s',
      'headers: appId header',
      'headers: host',
      'headers: duplicate apiKey',
      'headers: huge header',
      'headers: onBehalfOf',
      'headers: content-length',
    ]) {
      assert.ok((summary.families[family] ?? 0) > 0, `no request of "${family}": ${JSON.stringify(summary.families)}`);
    }
    // Not only refusals: the seeded entities are found and changed too.
    assert.ok((summary.statuses['2xx'] ?? 0) > REQUESTS / 20, JSON.stringify(summary.statuses));
  });

  it('is the same requests for the same seed', () => {
    const first = fuzzRequest(fuzz, SEED, 7);
    const again = fuzzRequest(fuzz, SEED, 7);
    assert.deepEqual(again, first);
    assert.notDeepEqual(fuzzRequest(fuzz, SEED + 1, 7).inject, first.inject);
  });

  it('its oracle catches a 5xx, an error out of shape, and the other app’s marker, key or message', () => {
    const request = { ...fuzzRequest(fuzz, SEED, 0), actor: 'B' as const };
    const answer = (statusCode: number, payload: unknown) => ({ statusCode, body: JSON.stringify(payload), json: () => payload }) as unknown as Parameters<typeof answerFailures>[2];
    const kinds = (statusCode: number, payload: unknown) => answerFailures(fuzz, request, answer(statusCode, payload)).map((f) => f.kind);
    assert.deepEqual(kinds(500, { error: { code: 'ERR_EXCEPTION', message: 'x' } }), ['5xx']);
    assert.deepEqual(kinds(400, { message: 'no error object' }), ['shape']);
    assert.deepEqual(kinds(404, { error: { code: 'X', message: `named ${fuzz.a.marker}` } }), ['cross-app']);
    assert.deepEqual(kinds(200, { data: { apiKey: fuzz.a.app.apiKey } }), ['cross-app']);
    assert.deepEqual(kinds(200, { data: { id: fuzz.a.tenants[0]!.messages[0] } }), ['cross-app']);
    assert.deepEqual(kinds(200, { data: { name: `own ${fuzz.b.marker}` } }), []);
  });
});
