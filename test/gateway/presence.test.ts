import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { DEFAULT_GATEWAY } from '../../src/config.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newGroup, newUids } from '../helpers/factories.js';
import { openAuthed, listenOnLoopback, QUICK_FEED } from '../helpers/ws-client.js';
import { newToken } from '../helpers/client.js';

// Presence on one node (docs/realtime.md, "Typing and presence"): online while a connection is,
// offline a grace after the last, the user's status and lastActiveAt, presence frames to friends
// and fellow group members, and user_connection_status_changed once per real change.

/** Long enough for a reconnect on a slow machine, short enough to wait for. */
const GRACE_MS = 1_000;

let t: TestApp;
let port: number;
before(async () => {
  t = await createTestApp({ gateway: { ...DEFAULT_GATEWAY, presenceGraceMs: GRACE_MS }, eventFeedPace: QUICK_FEED });
  port = await listenOnLoopback(t);
});
after(async () => {
  await t.close();
});

const tokenOf = (app: CreatedApp, uid: string) => newToken(t, app, uid);

const connect = async (app: CreatedApp, uid: string) => openAuthed(port, app.appId, await tokenOf(app, uid));

/** The statuses recorded in the event log for the user, in order. */
async function recorded(app: CreatedApp, uid: string): Promise<string[]> {
  const rows = await sql<{ status: string }>`
    select data->>'status' as status from events
    where app_id = ${app.appId} and trigger = 'user_connection_status_changed' and data->'user'->>'uid' = ${uid} order by id`.execute(t.database.db);
  return rows.rows.map((row) => row.status);
}

async function userOf(app: CreatedApp, uid: string): Promise<{ status: string; lastActiveAt?: number }> {
  const response = await t.call(app, `/v3/users/${uid}`);
  assert.equal(response.statusCode, 200, response.body);
  return response.json().data;
}

const presenceOf = (uid: string, status: string) => (frame: any) => frame.type === 'presence' && frame.uid === uid && frame.status === status;

describe('presence', () => {
  it('is online while a connection is and offline a grace after the last, told to friends and fellow members, set on the user, recorded once each', async () => {
    const [alice, friend, member, outsider] = await newUids(t, t.appA, 4);
    const befriended = await t.call(t.appA, `/v3/users/${alice}/friends`, { method: 'POST', body: { accepted: [friend] } });
    assert.equal(befriended.statusCode, 200, befriended.body);
    await newGroup(t, t.appA, { members: { participants: [alice!] } }, member);
    const [f, m, x] = await Promise.all([connect(t.appA, friend!), connect(t.appA, member!), connect(t.appA, outsider!)]);
    assert.equal((await userOf(t.appA, alice!)).status, 'offline');

    const a = await connect(t.appA, alice!);
    const online = await f.next(presenceOf(alice!, 'online'));
    assert.equal(typeof online.lastActiveAt, 'number');
    assert.deepEqual(await m.next(presenceOf(alice!, 'online')), online);
    const whileOnline = await userOf(t.appA, alice!);
    assert.equal(whileOnline.status, 'online');
    assert.equal(whileOnline.lastActiveAt, online.lastActiveAt);
    assert.deepEqual(await recorded(t.appA, alice!), ['online']);

    // A second connection, then the first gone: still online.
    const again = await connect(t.appA, alice!);
    await a.close();
    await again.close();
    const offline = await f.next(presenceOf(alice!, 'offline'));
    await m.next(presenceOf(alice!, 'offline'));
    assert.ok(offline.lastActiveAt >= online.lastActiveAt);
    const afterwards = await userOf(t.appA, alice!);
    assert.equal(afterwards.status, 'offline');
    assert.equal(afterwards.lastActiveAt, offline.lastActiveAt);
    assert.deepEqual(await recorded(t.appA, alice!), ['online', 'offline']);
    assert.deepEqual(
      f.frames.filter((frame) => frame.type === 'presence' && frame.uid === alice).map((frame) => frame.status),
      ['online', 'offline'],
    );
    assert.ok(!x.frames.some((frame) => frame.type === 'presence' && frame.uid === alice), `the outsider got ${JSON.stringify(x.frames)}`);
    // The event log's record, as webhooks get it.
    const rows = await sql<{ data: any }>`
      select data from events where app_id = ${t.appA.appId} and trigger = 'user_connection_status_changed' and data->'user'->>'uid' = ${alice} order by id`.execute(t.database.db);
    assert.equal(rows.rows[0]!.data.currentConnection.action, 'connected');
    assert.equal(rows.rows[1]!.data.currentConnection.action, 'disconnected');
    for (const client of [f, m, x]) await client.close();
  });

  it('does not flap on a reconnect within the grace', async () => {
    const [bob, watcher] = await newUids(t, t.appA, 2);
    const befriended = await t.call(t.appA, `/v3/users/${bob}/friends`, { method: 'POST', body: { accepted: [watcher] } });
    assert.equal(befriended.statusCode, 200, befriended.body);
    const w = await connect(t.appA, watcher!);
    const token = await tokenOf(t.appA, bob!);
    const first = await openAuthed(port, t.appA.appId, token);
    await w.next(presenceOf(bob!, 'online'));
    await first.close();
    const back = await openAuthed(port, t.appA.appId, token);
    await back.close();
    // The only offline is the last close's: a flap after the first would have come before it (one user's changes are in order).
    await w.next(presenceOf(bob!, 'offline'));
    assert.deepEqual(await recorded(t.appA, bob!), ['online', 'offline']);
    assert.deepEqual(
      w.frames.filter((frame) => frame.type === 'presence' && frame.uid === bob).map((frame) => frame.status),
      ['online', 'offline'],
    );
    await w.close();
  });
});
