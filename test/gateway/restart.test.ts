import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { buildApp } from '../../src/app.js';
import { DEFAULT_GATEWAY, type GatewayConfig } from '../../src/config.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { createTestApp, TEST_DOMAIN, TEST_REGION, type TestApp } from '../helpers/app.js';
import { newUids } from '../helpers/factories.js';
import { openAuthed, withDeadline, listenOnLoopback, QUICK_FEED } from '../helpers/ws-client.js';
import { newToken } from '../helpers/client.js';

// Presence across a clean restart (docs/realtime.md, "Typing and presence"): a server that shuts
// down hands its users over for the grace, so a client that reconnects to the next server within
// it stays online with nothing recorded, and one that does not goes offline once a running
// server's presence round takes the rows. Two apps on one database in this process: the first
// shuts down, the second is the restarted server.

const GRACE_MS = 2_000;
const gateway: GatewayConfig = { ...DEFAULT_GATEWAY, presenceGraceMs: GRACE_MS, lastActiveEveryMs: 1_000 };

let t: TestApp;
let next: Awaited<ReturnType<typeof buildApp>>;
let port: number;
let nextPort: number;
before(async () => {
  t = await createTestApp({ gateway, eventFeedPace: QUICK_FEED });
  port = await listenOnLoopback(t);
  next = await buildApp({
    config: { region: TEST_REGION, domain: TEST_DOMAIN, bodyLimit: 1024 * 1024, authFailureLimits: { perAddress: 0, perApp: 0 }, gateway },
    database: t.database,
    eventFeedPace: QUICK_FEED,
    logger: false,
  });
  nextPort = await listenOnLoopback(next);
});
after(async () => {
  await next.app.close();
  await t.close();
});

const tokenOf = (app: CreatedApp, uid: string) => newToken(t, app, uid);

async function recorded(app: CreatedApp, uid: string): Promise<string[]> {
  const rows = await sql<{ status: string }>`
    select data->>'status' as status from events
    where app_id = ${app.appId} and trigger = 'user_connection_status_changed' and data->'user'->>'uid' = ${uid} order by id`.execute(t.database.db);
  return rows.rows.map((row) => row.status);
}

const presenceOf = (uid: string, status: string) => (frame: any) => frame.type === 'presence' && frame.uid === uid && frame.status === status;

describe('presence across a clean restart', () => {
  it('keeps a user who reconnects within the grace online with nothing recorded, and takes one who does not offline', async () => {
    const [alice, bob, watcher] = await newUids(t, t.appA, 3);
    for (const uid of [alice, bob]) {
      const befriended = await t.call(t.appA, `/v3/users/${uid}/friends`, { method: 'POST', body: { accepted: [watcher] } });
      assert.equal(befriended.statusCode, 200, befriended.body);
    }
    const aliceToken = await tokenOf(t.appA, alice!);
    const watcherToken = await tokenOf(t.appA, watcher!);
    // The watcher on both servers: on PGlite, a server's presence frames reach its own sockets only.
    const before = await openAuthed(port, t.appA.appId, watcherToken);
    const w = await openAuthed(nextPort, t.appA.appId, watcherToken);
    const a = await openAuthed(port, t.appA.appId, aliceToken);
    const b = await openAuthed(port, t.appA.appId, await tokenOf(t.appA, bob!));
    await before.next(presenceOf(alice!, 'online'));
    await before.next(presenceOf(bob!, 'online'));

    // The first server shuts down: 1012; alice reconnects to the next one, bob does not.
    const closing = t.app.close();
    assert.equal(await withDeadline(a.closed, 'the 1012 close'), 1012);
    assert.equal(await withDeadline(b.closed, 'the 1012 close'), 1012);
    const back = await openAuthed(nextPort, t.appA.appId, aliceToken);
    await withDeadline(closing, 'the first server to close');

    await w.next(presenceOf(bob!, 'offline'));
    assert.deepEqual(await recorded(t.appA, bob!), ['online', 'offline']);
    assert.deepEqual(await recorded(t.appA, alice!), ['online'], 'no offline and online again for a reconnect within the grace');
    assert.ok(!w.frames.some(presenceOf(alice!, 'offline')), `the watcher got ${JSON.stringify(w.frames)}`);
    const user = await next.app.inject({ method: 'GET', url: `/v3/users/${alice}`, headers: { host: `${t.appA.appId}.api-${TEST_REGION}.${TEST_DOMAIN}`, apikey: t.appA.apiKey } });
    assert.equal(user.json().data.status, 'online');
    for (const client of [back, w]) await client.close();
  });
});
