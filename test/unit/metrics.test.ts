import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { Batcher } from '../../src/db/batcher.js';
import { requestIdOf } from '../../src/http/plugins/request-id.js';
import { collectedCounter, collectedGauge, collectedHistogram } from '../../src/metrics/collected.js';
import { LATENCY_BOUNDS, RequestCounts } from '../../src/metrics/requests.js';

describe('metrics', () => {
  it('counts answers by route, method and status, and renders cumulative latency buckets', async () => {
    const registry = new Registry();
    const requests = new RequestCounts(false);
    const users = requests.route('/v3/users/:uid', 'GET');
    assert.equal(requests.route('/v3/users/:uid', 'GET'), users, 'one set of counts per route and method');
    users.observe(200, 0.5, 'app-a');
    users.observe(200, 3, 'app-b');
    users.observe(404, 20_000, 'app-a');
    collectedCounter(registry, 'requests_total', 'Requests.', () => requests.requests());
    collectedHistogram(registry, 'latency_seconds', 'Latency.', LATENCY_BOUNDS, () => requests.latencies());
    const text = await registry.metrics();
    assert.match(text, /^requests_total\{status="200",route="\/v3\/users\/:uid",method="GET"\} 2$/m);
    assert.match(text, /^requests_total\{status="404",route="\/v3\/users\/:uid",method="GET"\} 1$/m);
    assert.doesNotMatch(text, /app-a/);
    assert.match(text, /^# TYPE latency_seconds histogram$/m);
    assert.match(text, /^latency_seconds_bucket\{route="\/v3\/users\/:uid",method="GET",le="0.001"\} 1$/m);
    assert.match(text, /^latency_seconds_bucket\{route="\/v3\/users\/:uid",method="GET",le="0.0025"\} 1$/m);
    assert.match(text, /^latency_seconds_bucket\{route="\/v3\/users\/:uid",method="GET",le="0.005"\} 2$/m);
    assert.match(text, /^latency_seconds_bucket\{route="\/v3\/users\/:uid",method="GET",le="10"\} 2$/m);
    assert.match(text, /^latency_seconds_bucket\{route="\/v3\/users\/:uid",method="GET",le="\+Inf"\} 3$/m);
    assert.match(text, /^latency_seconds_sum\{route="\/v3\/users\/:uid",method="GET"\} 20.0035$/m);
    assert.match(text, /^latency_seconds_count\{route="\/v3\/users\/:uid",method="GET"\} 3$/m);
  });

  it('labels the counts by app only when asked to', async () => {
    const requests = new RequestCounts(true);
    const route = requests.route('/v3/users', 'POST');
    route.observe(200, 1, 'app-a');
    route.observe(200, 1, 'app-a');
    route.observe(401, 1, '');
    assert.deepEqual(
      requests.requests().map((sample) => [sample.labels.app, sample.labels.status, sample.value]),
      [
        ['app-a', '200', 2],
        ['none', '401', 1],
      ],
    );
  });

  it('leaves out of a scrape a series whose read fails, and escapes label values', async () => {
    const registry = new Registry();
    collectedGauge(registry, 'broken', 'Fails.', () => Promise.reject(new Error('away')));
    collectedGauge(registry, 'fine', 'Works.', () => [{ labels: { name: 'a "quoted"\nvalue\\' }, value: 1 }]);
    const text = await registry.metrics();
    assert.match(text, /^# TYPE broken gauge$/m);
    assert.doesNotMatch(text, /^broken /m);
    assert.match(text, /^fine\{name="a \\"quoted\\"\\nvalue\\\\"\} 1$/m);
  });

  it("counts a Batcher's batches by size, and what it holds", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const batcher = new Batcher<number, number>(
      async (items) => {
        await gate;
        return items;
      },
      { maxBatch: 3, maxInFlight: 1 },
    );
    const answers = [1, 2, 3, 4, 5].map((n) => batcher.submit(n));
    await new Promise((resolve) => setImmediate(resolve));
    // The first batch (3 items) runs and waits; the other 2 are queued.
    assert.deepEqual({ ...batcher.stats(), sizes: undefined }, { queued: 2, inFlight: 1, stalled: 0, batches: 1, items: 3, sizes: undefined });
    release();
    assert.deepEqual(await Promise.all(answers), [1, 2, 3, 4, 5]);
    const stats = batcher.stats();
    assert.equal(stats.batches, 2);
    assert.equal(stats.items, 5);
    // Bounds 1, 2, 4, ...: a batch of 2 in the second bucket, one of 3 in the third.
    assert.deepEqual(stats.sizes.slice(0, 4), [0, 1, 1, 0]);
    assert.equal(stats.queued + stats.inFlight, 0);
  });

  it('keeps an acceptable X-Request-Id, else makes a UUID', () => {
    const of = (value: string | string[] | undefined) => requestIdOf({ headers: { 'x-request-id': value } } as unknown as IncomingMessage);
    assert.equal(of('abc-123'), 'abc-123');
    assert.equal(of(['first', 'second']), 'first');
    for (const bad of [undefined, '', 'a b', 'x'.repeat(129), 'line\nbreak', 'é']) assert.match(of(bad), /^[0-9a-f-]{36}$/, JSON.stringify(bad));
  });
});
