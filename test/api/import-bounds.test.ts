/**
 * Imports cannot exhaust the process (issue 20, fault 6): data import calls in flight are
 * bounded per app and per server, and a call beyond the bound answers 429 with Retry-After
 * before its body is read, having stored nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { body, createTestApp, errorCode, uniqueId, type TestApp } from '../helpers/app.js';

let t: TestApp;
before(async () => {
  t = await createTestApp({ importConcurrency: { perServer: 3, perApp: 2 } }, { poolSize: 1 });
});
after(async () => {
  await t.close();
});

function importUsers(app: TestApp['appA'], uid: string) {
  return t.call(app, '/v3/data_import/users', { method: 'POST', body: { users: { [uid]: { uid, name: 'Imported' } } } });
}

/** Holds the database's one connection (the embedded engine's one session) until released. */
async function holdDatabase(): Promise<{ release(): Promise<void> }> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const holding = new Promise<void>((resolve) => (started = resolve));
  const holder = t.database.db.transaction().execute(async () => {
    started();
    await released;
  });
  await holding;
  return {
    async release() {
      release();
      await holder;
    },
  };
}

async function exists(app: TestApp['appA'], uid: string): Promise<boolean> {
  return (await t.call(app, `/v3/users/${uid}`)).statusCode === 200;
}

describe('data import calls in flight', () => {
  it('answers a call beyond the per-app and per-server bounds 429 with Retry-After, storing nothing', async () => {
    // Both apps' keys are looked up once, so the calls below pass authentication while the database is held.
    assert.equal((await t.call(t.appA, '/v3/users')).statusCode, 200);
    assert.equal((await t.call(t.appB, '/v3/users')).statusCode, 200);
    const held = await holdDatabase();
    const uids = Array.from({ length: 6 }, () => uniqueId('imp'));
    const running = [importUsers(t.appA, uids[0]!), importUsers(t.appA, uids[1]!)];
    await new Promise((resolve) => setTimeout(resolve, 50));
    // App A has its 2 places; the server has one left.
    const overApp = await importUsers(t.appA, uids[2]!);
    assert.equal(overApp.statusCode, 429, overApp.body);
    assert.equal(errorCode(overApp), 'ERR_TOO_MANY_REQUESTS');
    assert.equal(overApp.headers['retry-after'], '1');
    assert.match(body(overApp).error.message, /at most 2 per app/);
    running.push(importUsers(t.appB, uids[3]!));
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The server's 3 places are taken.
    const overServer = await importUsers(t.appB, uids[4]!);
    assert.equal(overServer.statusCode, 429, overServer.body);
    assert.match(body(overServer).error.message, /at most 3 on this server/);
    await held.release();
    assert.deepEqual(await Promise.all(running.map(async (call) => (await call).statusCode)), [200, 200, 200]);
    assert.equal(await exists(t.appA, uids[2]!), false, 'the refused calls stored nothing');
    assert.equal(await exists(t.appB, uids[4]!), false);
    // The places are given back.
    const again = await Promise.all([importUsers(t.appA, uids[2]!), importUsers(t.appA, uids[5]!), importUsers(t.appB, uids[4]!)]);
    assert.deepEqual(
      again.map((response) => response.statusCode),
      [200, 200, 200],
    );
  });

  it('gives the place back when a call fails', async () => {
    const malformed = await t.call(t.appA, '/v3/data_import/users', { method: 'POST', body: { users: 'not an object' } });
    assert.equal(malformed.statusCode, 400);
    const broken = await t.call(t.appA, '/v3/data_import/users', { method: 'POST', body: '{"users":', headers: { 'content-type': 'application/json' } });
    assert.equal(broken.statusCode, 400);
    assert.equal((await importUsers(t.appA, uniqueId('imp'))).statusCode, 200);
  });
});
