/**
 * Request ids: an incoming X-Request-Id kept when acceptable (else a new one), sent back, bound
 * to every log line of the request, and in every error body's details; and readiness (/readyz)
 * against the database and its migrations.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { pino } from 'pino';
import { buildApp } from '../../src/app.js';
import { silentLogger } from '../../src/domain/context.js';
import { body, createTestApp, hostOf, managementCall, newManagementCredential, TEST_DOMAIN, TEST_REGION, type TestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let t: TestApp;
before(async () => {
  // Two requests a minute of the core class, so a third is refused.
  t = await createTestApp({ rateLimits: { core: 2 } });
});
after(async () => {
  await t.close();
});

/** The error body's request id, which must be the response's X-Request-Id. */
function requestIdOf(response: { headers: Record<string, unknown>; json(): any }): string {
  const error = response.json().error;
  assert.ok(error, 'an error body');
  assert.equal(typeof error.details?.requestId, 'string', JSON.stringify(error));
  assert.equal(error.details.requestId, response.headers['x-request-id']);
  return error.details.requestId;
}

describe('request ids', () => {
  it('keeps an acceptable incoming X-Request-Id and sends it back', async () => {
    for (const id of ['trace-0af7651916cd43dd8448eb211c80319c', 'a.b_c:d-e/f+g=@h', 'x'.repeat(128)]) {
      const response = await t.call(t.appA, '/v3/users/nobody', { headers: { 'x-request-id': id } });
      assert.equal(response.headers['x-request-id'], id);
      assert.equal(requestIdOf(response), id);
    }
  });

  it('replaces an overlong or unsafe X-Request-Id by a UUID of its own', async () => {
    for (const id of ['x'.repeat(129), 'two words', 'quote"d', '<script>', 'tab\there', '']) {
      const response = await t.call(t.appA, '/v3/users/nobody', { headers: { 'x-request-id': id } });
      assert.match(String(response.headers['x-request-id']), UUID, JSON.stringify(id));
      assert.notEqual(response.headers['x-request-id'], id);
    }
    const fresh = await t.call(t.appA, '/v3/users/nobody');
    assert.match(String(fresh.headers['x-request-id']), UUID);
  });

  it('puts the id in the details of every error body, keeping the details already there', async () => {
    // A validation error: the fields at fault stay.
    const invalid = await t.call(t.appA, '/v3/users', { method: 'POST', body: { uid: 'no-name' } });
    assert.equal(invalid.statusCode, 400);
    assert.equal(invalid.json().error.details.name, 'is required');
    requestIdOf(invalid);
    // A catalogue error from a service, a route that does not exist, and the router's own refusals.
    for (const [url, status] of [
      ['/v3/users/nobody', 404],
      ['/v3/no-such-thing', 404],
      [`/v3/users/${'a'.repeat(600)}`, 400],
      ['/v3/users/%E0%A4%A', 400],
    ] as const) {
      const response = await t.call(t.appA, url);
      assert.equal(response.statusCode, status, url);
      requestIdOf(response);
    }
    // Authentication refused before any route runs.
    const unauthenticated = await t.call(t.appA, '/v3/users', { key: { literal: 'wrong' } });
    assert.equal(unauthenticated.statusCode, 401);
    requestIdOf(unauthenticated);
  });

  it('puts the id in a 429 rate-limit refusal', async () => {
    const statuses: number[] = [];
    // biome-ignore lint/suspicious/noImplicitAnyLet: typed by its assignment below (TypeScript's control-flow typing)
    let refused;
    for (let i = 0; i < 3; i++) {
      const response = await t.call(t.appB, '/v3/users', { method: 'POST', body: { uid: `limited-${i}`, name: 'Limited' } });
      statuses.push(response.statusCode);
      if (response.statusCode === 429) refused = response;
    }
    assert.deepEqual(statuses, [200, 200, 429]);
    assert.equal(refused!.json().error.code, 'ERR_TOO_MANY_REQUESTS');
    requestIdOf(refused!);
  });

  it('binds the id to every log line of the request, the services’ lines among them', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const log = pino({ level: 'info' }, new Writable({ write: (chunk, _encoding, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
    const testDb = await createTestDatabase();
    const { app, services } = await buildApp({ config: { region: TEST_REGION, domain: TEST_DOMAIN, bodyLimit: 1024 * 1024 }, database: testDb.database, loggerInstance: log });
    try {
      const target = await services.apps.create({ appId: '', requestId: 'test', log: silentLogger }, { name: 'Doomed' });
      const credential = await newManagementCredential({ services } as TestApp);
      const id = 'delete-app-4711';
      const response = await managementCall({ app } as TestApp, credential, `/apps/${target.appId}`, { method: 'DELETE', headers: { 'x-request-id': id } });
      assert.equal(response.statusCode, 200, response.body);
      const own = lines.filter((line) => line.requestId === id);
      // Fastify's lines of the request and the service's own (ctx.log), all with the id.
      assert.deepEqual(
        own.map((line) => line.msg),
        ['incoming request', 'app deleted', 'request completed'],
      );
      assert.ok(!lines.some((line) => line.msg === 'app deleted' && line.requestId !== id));
      // An error's line carries it too (a failure inside, logged with its cause).
      await testDb.database.close();
      const failed = await app.inject({ method: 'GET', url: '/v3/users', headers: { host: hostOf(target), apikey: target.apiKey, 'x-request-id': 'broken-1' } });
      assert.ok(failed.statusCode >= 500);
      assert.equal(body(failed).error.details.requestId, 'broken-1');
      const logged = lines.filter((line) => line.requestId === 'broken-1').map((line) => line.msg);
      assert.ok(logged.length >= 3 && logged.includes('incoming request') && logged.includes('request completed'), JSON.stringify(logged));
    } finally {
      await app.close();
      await testDb.drop().catch(() => undefined);
    }
  });
});

describe('a 503 and readiness', () => {
  let held: TestApp;
  before(async () => {
    // One connection, waited for at most 200 ms.
    held = await createTestApp({}, { poolSize: 1, timeouts: { acquireMs: 200, statementMs: 30_000, idleInTransactionMs: 60_000 } });
  });
  after(async () => {
    await held.close();
  });

  it('answers /healthz and /readyz while the database answers and is migrated', async () => {
    for (const url of ['/healthz', '/readyz']) {
      const response = await held.app.inject({ method: 'GET', url });
      assert.equal(response.statusCode, 200, url);
    }
    assert.deepEqual(body(await held.app.inject({ method: 'GET', url: '/readyz' })), { status: 'ready' });
  });

  it('answers /readyz 503 while a migration is missing', async () => {
    const db = held.database.db;
    const newest = await sql<{ version: number; name: string }>`select version, name from parley_migrations order by version desc limit 1`.execute(db);
    const { version, name } = newest.rows[0]!;
    await sql`delete from parley_migrations where version = ${version}`.execute(db);
    try {
      const response = await held.app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(response.statusCode, 503);
      assert.equal(body(response).status, 'unavailable');
      assert.match(body(response).reason, /migrations pending/);
      assert.equal((await held.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200, 'still alive');
    } finally {
      await sql`insert into parley_migrations (version, name) values (${version}, ${name})`.execute(db);
    }
    assert.equal((await held.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
  });

  it('answers 503 with the id while the database cannot be reached, /readyz too', async () => {
    let release!: () => void;
    const blocker = new Promise<void>((resolve) => (release = resolve));
    // Every connection taken: the requests wait 200 ms for one, then give up.
    const holding = held.database.db.connection().execute(() => blocker);
    try {
      const busy = await held.call(held.appA, '/v3/users', { headers: { 'x-request-id': 'busy-1' } });
      assert.equal(busy.statusCode, 503);
      assert.equal(busy.json().error.code, 'ERR_MISSION_FAILED');
      assert.equal(requestIdOf(busy), 'busy-1');
      const readiness = await held.app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(readiness.statusCode, 503);
      assert.match(body(readiness).reason, /does not answer|did not answer/);
      assert.equal((await held.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200, 'still alive');
    } finally {
      release();
      await holding;
    }
    assert.equal((await held.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
  });
});
