import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { coalesced } from '../../src/db/batcher.js';
import { EventsRepository } from '../../src/repositories/events.repository.js';
import { GatewayRepository } from '../../src/repositories/gateway/gateway.repository.js';
import { UsersRepository } from '../../src/repositories/users.repository.js';
import { groupsOfUsers } from '../../src/services/gateway/hub.js';
import { friendsOfUsers, markOnlineMany } from '../../src/services/gateway/presence-online.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newGroup, newUids } from '../helpers/factories.js';

// The gateway's reads and writes for many connecting users at once (container-gateway.ts
// coalesces concurrent connections into them): each user gets their own answer, of their own
// app, in the order asked, whatever the others in the batch.

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

const batch = { maxBatch: 100, maxInFlight: 1 };

describe("the gateway's batched reads and writes", () => {
  it("answers each user's groups and friends, per app, with users of none among them", async () => {
    const [a, b, c, lonely] = await newUids(t, t.appA, 4);
    const [z] = await newUids(t, t.appB, 1);
    const g1 = (await newGroup(t, t.appA, { members: { participants: [b!] } }, a)).guid as string;
    const g2 = (await newGroup(t, t.appA, {}, b)).guid as string;
    const gz = (await newGroup(t, t.appB, {}, z)).guid as string;
    assert.equal((await t.call(t.appA, `/v3/users/${a}/friends`, { method: 'POST', body: { accepted: [b, c] } })).statusCode, 200);
    const rows = new GatewayRepository(t.database.db);
    const groupsOf = coalesced(groupsOfUsers(rows), batch);
    const [ga, gb, gc, gl, gzz, gaInB] = await Promise.all([
      groupsOf({ appId: t.appA.appId, uid: a! }),
      groupsOf({ appId: t.appA.appId, uid: b! }),
      groupsOf({ appId: t.appA.appId, uid: c! }),
      groupsOf({ appId: t.appA.appId, uid: lonely! }),
      groupsOf({ appId: t.appB.appId, uid: z! }),
      groupsOf({ appId: t.appB.appId, uid: a! }),
    ]);
    assert.deepEqual(ga, [g1]);
    assert.deepEqual([...gb!].sort(), [g1, g2].sort());
    assert.deepEqual([gc, gl, gaInB], [[], [], []]);
    assert.deepEqual(gzz, [gz]);
    const friendsOf = coalesced(friendsOfUsers(rows), batch);
    const [fa, fb, fc, fl, fa1] = await Promise.all([
      friendsOf({ appId: t.appA.appId, uid: a!, limit: 10 }),
      friendsOf({ appId: t.appA.appId, uid: b!, limit: 10 }),
      friendsOf({ appId: t.appA.appId, uid: c!, limit: 10 }),
      friendsOf({ appId: t.appA.appId, uid: lonely!, limit: 10 }),
      friendsOf({ appId: t.appA.appId, uid: a!, limit: 1 }),
    ]);
    assert.deepEqual([...fa!].sort(), [b, c].sort());
    assert.deepEqual([fb, fc, fl], [[a], [a], []]);
    assert.equal(fa1!.length, 1, 'at most the limit');
  });

  it('marks users online together: a change (and its event) only for those who were offline, none for an unknown user', async () => {
    const [a, b, c] = await newUids(t, t.appA, 3);
    const [z] = await newUids(t, t.appB, 1);
    const db = t.database.db;
    await sql`update users set status = 'online' where app_id = ${t.appA.appId} and uid = ${b!}`.execute(db);
    const stores = { db, gateway: new GatewayRepository(db), users: new UsersRepository(db), events: new EventsRepository(db) };
    const markOnline = coalesced(markOnlineMany(stores, 'node-1'), batch);
    const outcomes = await Promise.all([
      markOnline({ appId: t.appA.appId, uid: a! }),
      markOnline({ appId: t.appA.appId, uid: b! }),
      markOnline({ appId: t.appA.appId, uid: 'nobody-here' }),
      markOnline({ appId: t.appB.appId, uid: z! }),
      markOnline({ appId: t.appA.appId, uid: c! }),
    ]);
    assert.ok(outcomes[0] instanceof Date && outcomes[3] instanceof Date && outcomes[4] instanceof Date, 'those offline went online');
    assert.equal(outcomes[1], undefined, 'online already: no change');
    assert.equal(outcomes[2], undefined, 'no such user');
    const status = await sql<{ app_id: string; uid: string; status: string }>`
      select app_id, uid, status from users where (app_id = ${t.appA.appId} and uid in (${a!}, ${b!}, ${c!})) or (app_id = ${t.appB.appId} and uid = ${z!})`.execute(db);
    assert.deepEqual(
      status.rows.map((row) => row.status),
      ['online', 'online', 'online', 'online'],
    );
    const presence = await sql<{ n: number }>`select count(*)::int as n from gateway_presence where node_id = 'node-1'`.execute(db);
    assert.equal(presence.rows[0]!.n, 4, 'a row for each user who exists');
    const recorded = await sql<{ app_id: string; uid: string }>`
      select app_id, data->'user'->>'uid' as uid from events where trigger = 'user_connection_status_changed' and data->>'status' = 'online' order by id`.execute(db);
    assert.deepEqual(recorded.rows.map((row) => `${row.app_id}/${row.uid}`).sort(), [`${t.appA.appId}/${a}`, `${t.appA.appId}/${c}`, `${t.appB.appId}/${z}`].sort());
    // Again (another connection's first on a restarted node): no change, no event.
    assert.deepEqual(await Promise.all([markOnline({ appId: t.appA.appId, uid: a! }), markOnline({ appId: t.appB.appId, uid: z! })]), [undefined, undefined]);
  });
});
