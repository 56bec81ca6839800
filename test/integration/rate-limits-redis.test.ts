/**
 * Two nodes (two buildApp instances on one database) sharing rate-limit counters in Redis:
 * PARLEY_REDIS_URL, else redis://127.0.0.1:6379. Redis must be there: CI starts it, and this
 * file fails (it does not skip) without it. Keys go under a prefix of this run's own, removed
 * at the end.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import net from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { FastifyBaseLogger, LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { buildApp, type ParleyApp } from '../../src/app.js';
import { silentLogger } from '../../src/domain/context.js';
import type { RateLimits } from '../../src/domain/rate-limits.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { hostOf, TEST_DOMAIN, TEST_REGION, uniqueId } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const REDIS_URL = process.env.PARLEY_REDIS_URL || 'redis://127.0.0.1:6379';
const PREFIX = `parley-test:${process.pid}:${crypto.randomBytes(4).toString('hex')}:`;
const LIMITS: Partial<RateLimits> = { core: 4, standard: 6, import: 2, send_per_user: 2 };

let now = Date.UTC(2031, 5, 1, 0, 0, 20);
const clock = () => now;
function nextWindow(): void {
  now = (Math.floor(now / 60_000) + 1) * 60_000 + 20_000;
}
const windowEnd = () => (Math.floor(now / 60_000) + 1) * 60;

let redis: Redis;
let testDb: TestDatabase;
let nodeA: ParleyApp;
let nodeB: ParleyApp;
let app: CreatedApp;
let other: CreatedApp;

function node(redisUrl: string, options: { loggerInstance?: FastifyBaseLogger } = {}): Promise<ParleyApp> {
  return buildApp({
    config: { region: TEST_REGION, domain: TEST_DOMAIN, bodyLimit: 1024 * 1024, rateLimits: LIMITS, redisUrl, redisKeyPrefix: PREFIX },
    database: testDb.database,
    clock,
    ...options,
  });
}

function call(on: ParleyApp, target: CreatedApp, url: string, options: { method?: 'GET' | 'POST'; body?: object; onBehalfOf?: string } = {}) {
  const headers: Record<string, string> = { host: hostOf(target), apikey: target.apiKey };
  if (options.onBehalfOf) headers.onbehalfof = options.onBehalfOf;
  return on.app.inject({ method: options.method ?? 'GET', url, headers, ...(options.body ? { payload: options.body } : {}) });
}

const remaining = (response: LightMyRequestResponse) => Number(response.headers['x-rate-limit-remaining']);

async function prefixKeys(): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${PREFIX}*`, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys;
}

before(async () => {
  redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 2_000, retryStrategy: () => null });
  await redis.connect().catch((error: Error) => {
    throw new Error(`Redis is not reachable at ${REDIS_URL} (${error.message}); these tests need it (set PARLEY_REDIS_URL).`);
  });
  assert.equal(await redis.ping(), 'PONG');
  testDb = await createTestDatabase();
  nodeA = await node(REDIS_URL);
  nodeB = await node(REDIS_URL);
  const ctx = { appId: '', requestId: 'test', log: silentLogger };
  app = await nodeA.services.apps.create(ctx, { name: 'Shared' });
  other = await nodeA.services.apps.create(ctx, { name: 'Other' });
});

after(async () => {
  await nodeA?.app.close();
  await nodeB?.app.close();
  await testDb?.drop();
  if (redis?.status === 'ready') {
    const keys = await prefixKeys();
    if (keys.length) await redis.del(...keys);
    assert.deepEqual(await prefixKeys(), []);
    await redis.quit();
  }
});

describe('rate limits shared by two nodes through Redis', () => {
  it('counts requests alternating between the nodes exactly, and both refuse past the limit', async () => {
    nextWindow();
    for (let n = 1; n <= 6; n++) {
      const response = await call(n % 2 ? nodeA : nodeB, app, '/v3/users');
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(remaining(response), 6 - n);
      assert.equal(Number(response.headers['x-ratelimit-reset']), windowEnd());
    }
    for (const on of [nodeA, nodeB]) {
      const refused = await call(on, app, '/v3/users');
      assert.equal(refused.statusCode, 429);
      assert.equal(refused.headers['retry-after'], '40');
      assert.equal(Number(refused.headers['x-rate-limit-reset']), windowEnd());
    }
    // The other app is counted apart; and both nodes read the same standing.
    assert.equal(remaining(await call(nodeB, other, '/v3/users')), 5);
    const usage = (await call(nodeB, app, '/v3/rate_limits')).json().data;
    assert.deepEqual(usage.standard, { limit: 6, remaining: 0, reset: windowEnd() });
    assert.deepEqual((await call(nodeA, app, '/v3/rate_limits')).json().data, usage);
  });

  it('lets exactly the limit through when both nodes take requests at once', async () => {
    nextWindow();
    const responses = await Promise.all(Array.from({ length: 20 }, (_, n) => call(n % 2 ? nodeA : nodeB, app, '/v3/users')));
    const statuses = responses.map((response) => response.statusCode);
    assert.equal(statuses.filter((status) => status === 200).length, 6);
    assert.equal(statuses.filter((status) => status === 429).length, 14);
    assert.deepEqual(
      responses
        .filter((r) => r.statusCode === 200)
        .map(remaining)
        .sort(),
      [0, 1, 2, 3, 4, 5],
    );
  });

  it('counts a per-user limit across the nodes, with the app class in the same step', async () => {
    nextWindow();
    const [alice, bob] = [uniqueId('a'), uniqueId('b')];
    for (const [on, uid] of [
      [nodeA, alice],
      [nodeB, bob],
    ] as const) {
      assert.equal((await call(on, app, '/v3/users', { method: 'POST', body: { uid, name: uid } })).statusCode, 200);
    }
    const message = { receiver: bob, receiverType: 'user', category: 'message', type: 'text', data: { text: 'hi' } };
    assert.equal((await call(nodeA, app, '/v3/messages', { method: 'POST', body: message, onBehalfOf: alice })).statusCode, 200);
    assert.equal((await call(nodeB, app, '/v3/messages', { method: 'POST', body: message, onBehalfOf: alice })).statusCode, 200);
    const refused = await call(nodeA, app, '/v3/messages', { method: 'POST', body: message, onBehalfOf: alice });
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.headers['x-rate-limit'], '2');
    const usage = (await call(nodeB, app, '/v3/rate_limits', { onBehalfOf: alice })).json().data;
    assert.deepEqual(usage.send_per_user, { limit: 2, remaining: 0, reset: windowEnd() });
    // Two sends counted as standard; the refused one not at all.
    assert.deepEqual(usage.standard, { limit: 6, remaining: 4, reset: windowEnd() });
    assert.deepEqual(usage.core, { limit: 4, remaining: 2, reset: windowEnd() });
  });

  it('keeps its counters under the prefix, expiring soon after their minute', async () => {
    const keys = await prefixKeys();
    assert.ok(keys.length > 0);
    for (const key of keys) {
      assert.match(key, /^parley-test:\d+:[0-9a-f]{8}:rl:\{[a-z0-9-]+\}:(core|standard|import|send_per_user|unread_per_user):\d+(:[a-z0-9-]+)?$/);
      const ttl = await redis.ttl(key);
      assert.ok(ttl > 0 && ttl <= 65, `${key} expires in ${ttl} s`);
    }
  });
});

describe('rate limits when Redis does not answer', () => {
  /** A pino logger whose lines are kept. */
  function capturingLogger() {
    const lines: Array<{ level: number; msg: string }> = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    return { lines, logger: pino({ level: 'warn' }, stream) };
  }

  for (const [what, target] of [
    ['refuses connections', 'closed'],
    ['accepts connections but never answers', 'silent'],
  ] as const) {
    it(`starts and serves at once, counting in memory, when Redis ${what}`, async () => {
      const sockets: net.Socket[] = [];
      const server = net.createServer((socket) => sockets.push(socket));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as net.AddressInfo).port;
      if (target === 'closed') await new Promise((resolve) => server.close(resolve));
      const { lines, logger } = capturingLogger();
      const started = Date.now();
      const lonely = await node(`redis://127.0.0.1:${port}`, { loggerInstance: logger });
      try {
        assert.ok(Date.now() - started < 5_000, 'the start waits a short while only');
        nextWindow();
        const times: number[] = [];
        for (let n = 1; n <= 7; n++) {
          const begun = Date.now();
          const response = await call(lonely, app, '/v3/users');
          times.push(Date.now() - begun);
          if (n <= 6) {
            assert.equal(response.statusCode, 200, response.body);
            assert.equal(remaining(response), 6 - n);
          } else assert.equal(response.statusCode, 429);
        }
        assert.ok(Math.max(...times) < 1_000, `no request waits for Redis: ${times.join(', ')} ms`);
        const warnings = lines.filter((line) => line.level === 40 && /rate limits: Redis does not answer/.test(line.msg));
        assert.equal(warnings.length, 1, JSON.stringify(lines));
      } finally {
        await lonely.app.close();
        for (const socket of sockets) socket.destroy();
        if (target === 'silent') await new Promise((resolve) => server.close(resolve));
      }
    });
  }
});
