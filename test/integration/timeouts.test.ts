/**
 * Timeouts (issue 20, fault 4): a request that cannot get a database connection, a statement
 * that waits on a held lock, a transaction left idle, and a shutdown with requests that never
 * finish are all bounded, and a timeout answers 503 ERR_MISSION_FAILED with Retry-After.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { pino } from 'pino';
import { DEFAULT_DB_TIMEOUTS } from '../../src/config.js';
import { silentLogger } from '../../src/domain/context.js';
import { startServer } from '../../src/server.js';
import { body, createTestApp, errorCode, hostOf, uniqueId, type TestApp } from '../helpers/app.js';
import { serverDeployment, TEST_ENGINE } from '../helpers/db.js';
import { newUser } from '../helpers/factories.js';

const cleanups: Array<() => Promise<unknown> | unknown> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function testApp(timeouts: Partial<typeof DEFAULT_DB_TIMEOUTS>, poolSize?: number): Promise<TestApp> {
  const t = await createTestApp({}, { poolSize, timeouts: { ...DEFAULT_DB_TIMEOUTS, ...timeouts } });
  cleanups.push(() => t.close());
  return t;
}

/** A gate that a test opens later. */
function gate(): { wait: Promise<void>; open(): void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/** A transaction of another session that locks the user's row until `release` (PostgreSQL). */
async function lockUserRow(url: string, appId: string, uid: string): Promise<{ release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('begin');
  await client.query('select 1 from users where app_id = $1 and uid = $2 for update', [appId, uid]);
  return {
    async release() {
      await client.query('rollback');
      await client.end();
    },
  };
}

function assertUnavailable(response: { statusCode: number; body: string; headers: Record<string, unknown> }, retryAfter: string): void {
  assert.equal(response.statusCode, 503, response.body);
  assert.equal(JSON.parse(response.body).error.code, 'ERR_MISSION_FAILED');
  assert.equal(response.headers['retry-after'], retryAfter);
}

describe('database timeouts', () => {
  it('answers 503 with Retry-After when no connection is free within the acquisition timeout', async () => {
    const t = await testApp({ acquireMs: 300 }, 1);
    const held = gate();
    // The pool's one connection (the embedded engine's one session) is held by a transaction.
    let started!: () => void;
    const holding = new Promise<void>((resolve) => (started = resolve));
    const holder = t.database.db.transaction().execute(async (tx) => {
      await tx.selectFrom('apps').select('id').execute();
      started();
      await held.wait;
    });
    await holding;
    const response = await t.call(t.appA, `/v3/users/${uniqueId()}`);
    assertUnavailable(response, '1');
    held.open();
    await holder;
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${uniqueId()}`)), 'ERR_UID_NOT_FOUND', 'the next request is served');
  });

  it('cancels a statement that waits on a held lock past statement_timeout, changing nothing (PostgreSQL)', async (context) => {
    if (TEST_ENGINE !== 'postgres') return context.skip('the embedded engine has one session in this process: no other session can hold a lock (the acquisition timeout covers it)');
    const t = await testApp({ statementMs: 300 });
    const user = await newUser(t, t.appA, { name: 'Before' });
    const lock = await lockUserRow(t.url!, t.appA.appId, user.uid);
    try {
      const response = await t.call(t.appA, `/v3/users/${user.uid}`, { method: 'PUT', body: { name: 'After' } });
      assertUnavailable(response, '5');
    } finally {
      await lock.release();
    }
    assert.equal(body(await t.call(t.appA, `/v3/users/${user.uid}`)).data.name, 'Before');
  });

  it('ends a transaction left idle past idle_in_transaction_session_timeout, releasing its locks (PostgreSQL)', async (context) => {
    if (TEST_ENGINE !== 'postgres') return context.skip('the embedded engine has one session in this process: an idle transaction there is bounded by the acquisition timeout');
    const t = await testApp({ idleInTransactionMs: 300 });
    const user = await newUser(t, t.appA, { name: 'Before' });
    const idle = gate();
    let locked!: () => void;
    const holding = new Promise<void>((resolve) => (locked = resolve));
    const abandoned = t.database.db.transaction().execute(async (tx) => {
      await tx.selectFrom('users').select('uid').where('app_id', '=', t.appA.appId).where('uid', '=', user.uid).forUpdate().execute();
      locked();
      await idle.wait;
      await tx.selectFrom('users').select('uid').execute();
    });
    await holding;
    // Answered while the transaction still sits idle: the server ended it and its lock went.
    const update = await t.call(t.appA, `/v3/users/${user.uid}`, { method: 'PUT', body: { name: 'After' } });
    assert.equal(update.statusCode, 200, update.body);
    idle.open();
    await assert.rejects(abandoned);
    assert.equal(body(await t.call(t.appA, `/v3/users/${user.uid}`)).data.name, 'After');
  });
});

describe('shutdown', () => {
  it('answers requests arriving while closing with 503 in the vendor shape', async () => {
    // One connection, so that the held transaction keeps the first request waiting on either engine.
    const t = await createTestApp({}, { poolSize: 1 });
    cleanups.push(() => t.close());
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as net.AddressInfo).port;
    const held = gate();
    let started!: () => void;
    const holding = new Promise<void>((resolve) => (started = resolve));
    const holder = t.database.db.transaction().execute(async () => {
      started();
      await held.wait;
    });
    await holding;
    // A request waits for the database on an open connection while the server starts closing;
    // a second one, pipelined on that connection after the close began, is refused.
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => (text += chunk));
    // The server closes the connection once it has answered; if the client's side still holds
    // unread bytes at that moment the kernel may report a reset, which is not the test's concern.
    socket.on('error', () => {});
    const ended = new Promise((resolve) => socket.on('close', resolve));
    const request = () => `GET /v3/users/${uniqueId()} HTTP/1.1\r\nhost: ${hostOf(t.appA)}\r\napikey: ${t.appA.apiKey}\r\n\r\n`;
    socket.write(request());
    await new Promise((resolve) => setTimeout(resolve, 50));
    const closing = t.app.close();
    socket.write(request());
    await new Promise((resolve) => setTimeout(resolve, 50));
    held.open();
    await holder;
    await ended;
    await closing;
    const answers = text.split(/HTTP\/1\.1 (?=\d{3} )/).filter(Boolean);
    assert.deepEqual(
      answers.map((answer) => answer.slice(0, 3)),
      ['404', '503'],
      text,
    );
    assert.match(answers[1]!, /^retry-after: 1\r$/m);
    assert.match(answers[1]!, /"code":"ERR_MISSION_FAILED"/, "in the vendor shape, not Fastify's own");
  });

  it('finishes within its grace when a request never ends, and cuts that request off', async () => {
    const { config, url } = await serverDeployment('parley-timeouts', { PARLEY_SHUTDOWN_GRACE_MS: '300' }, cleanups);
    const server = await startServer(config, pino({ level: 'silent' }));
    const app = server.defaultApp!;
    const uid = uniqueId('stuck');
    await server.services.users.create({ appId: app.appId, requestId: 't', log: silentLogger }, { uid, name: 'Stuck' });
    // Something holds what the request needs, for longer than any grace.
    const held = gate();
    let lock: { release(): Promise<void> } | undefined;
    let holder: Promise<unknown> | undefined;
    if (url) lock = await lockUserRow(url, app.appId, uid);
    else {
      let started!: () => void;
      const holding = new Promise<void>((resolve) => (started = resolve));
      holder = server.database.db
        .transaction()
        .execute(async () => {
          started();
          await held.wait;
        })
        .catch(() => {});
      await holding;
    }
    try {
      const payload = JSON.stringify({ name: 'Never' });
      const answer = new Promise<string>((resolve) => {
        const request = http.request(
          { host: '127.0.0.1', port: server.port, method: 'PUT', path: `/v3/users/${uid}`, headers: { appid: app.appId, apikey: app.apiKey, 'content-type': 'application/json' } },
          (response) => resolve(String(response.statusCode)),
        );
        request.on('error', (error) => resolve((error as NodeJS.ErrnoException).code ?? 'error'));
        request.end(payload);
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      let timer: NodeJS.Timeout | undefined;
      const stopped = await Promise.race([server.close().then(() => true), new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), 20_000)))]);
      clearTimeout(timer);
      assert.ok(stopped, 'close() finished');
      assert.match(await answer, /^(ECONNRESET|503)$/, 'the request that never ended was cut off');
    } finally {
      held.open();
      await holder;
      await lock?.release();
    }
  });
});
