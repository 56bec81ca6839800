import assert from 'node:assert/strict';
import http from 'node:http';
import { after, afterEach, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { DEFAULT_GATEWAY } from '../../src/config.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newUids } from '../helpers/factories.js';
import { authenticate, closeAll, connected, openSocket, tokenOf, until, type LimitsClient } from '../helpers/ws-limits.js';
import { listenOnLoopback, QUICK_FEED } from '../helpers/ws-client.js';

// The gateway's limits (docs/realtime.md, "Limits") over real sockets on loopback, with small
// bounds so that each is reached in a few frames: connections per user, app and node; frames a
// second; frame size and bad frames; a slow reader cut without starving the others, then resumed.

const LIMITS = {
  authTimeoutMs: 1_000,
  connectionsPerUser: 2,
  connectionsPerApp: 3,
  connectionsPerNode: 5,
  framesPerSecond: 10,
  maxFrameBytes: 1_024,
  maxBufferedBytes: 64 * 1024,
  presenceGraceMs: 50,
};
/** The interval at which a client keeps to framesPerSecond. */
const PACE_MS = 1_000 / LIMITS.framesPerSecond;
/** Above this, ws itself refuses a frame (close 1009): max(4 × maxFrameBytes, 64 KiB). */
const WS_MAX_PAYLOAD = 64 * 1024;

let t: TestApp;
let port: number;
const open = new Set<LimitsClient>();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

before(async () => {
  t = await createTestApp({ gateway: { ...DEFAULT_GATEWAY, ...LIMITS }, eventFeedPace: QUICK_FEED });
  port = await listenOnLoopback(t);
});
afterEach(async () => {
  await closeAll(open);
  open.clear();
  // The server has given every place back before the next test counts them.
  await until(() => t.gateway.hub.size === 0, 'the connections to be released');
});
after(async () => {
  await t.close();
});

/** A connection of the user that the server must accept (kept open until the test ends). */
async function accepted(app: TestApp['appA'], uid: string, lastEventId?: string): Promise<LimitsClient> {
  const client = await connected(t, port, app, uid, lastEventId);
  open.add(client);
  return client;
}

/** A connection of the user that the server must refuse for a connection limit: an ERR_TOO_MANY_REQUESTS frame, then 4008. */
async function refused(app: TestApp['appA'], uid: string, which: RegExp): Promise<void> {
  const client = await authenticate(t, port, app, uid);
  open.add(client);
  assert.equal(await client.closed, 4008);
  assert.ok(!client.frames.some((frame) => frame.type === 'hello'), JSON.stringify(client.frames));
  const error = client.frames.find((frame) => frame.type === 'error');
  assert.equal(error?.code, 'ERR_TOO_MANY_REQUESTS', JSON.stringify(client.frames));
  assert.match(error.message, which);
}

/** Sends the frame, then waits for the next frame that matches (after those seen). */
async function answer(client: LimitsClient, frame: string | Buffer, match: (frame: any) => boolean, binary = false): Promise<any> {
  const seen = client.frames.length;
  client.ws.send(frame, { binary });
  const got = await client.next((f) => client.frames.indexOf(f) >= seen && match(f));
  await sleep(PACE_MS);
  return got;
}

describe('the gateway’s limits', () => {
  it('refuses a user’s connection beyond connectionsPerUser with ERR_TOO_MANY_REQUESTS and 4008, and takes one again once a place is free', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const first = await accepted(t.appA, alice!);
    await accepted(t.appA, alice!);
    await refused(t.appA, alice!, /2 per user/);
    // Another user of the same app is not held back by alice's limit.
    await accepted(t.appA, bob!);
    first.ws.close();
    await first.closed;
    await until(() => t.gateway.hub.size === 2, 'alice’s first connection to be released');
    await accepted(t.appA, alice!);
  });

  it('counts the SSE fallback’s connections too: beyond the limit, the same error frame, then an event: close with 4008', async () => {
    const [frank] = await newUids(t, t.appA, 1);
    await accepted(t.appA, frank!);
    await accepted(t.appA, frank!);
    const token = await tokenOf(t, t.appA, frank!);
    const stream = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: '/v3/me/events', headers: { appid: t.appA.appId, authtoken: token } }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        })
        .on('error', reject);
    });
    assert.equal(stream.status, 200);
    const data = stream.body
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)));
    assert.equal(data[0]?.type, 'error', stream.body);
    assert.equal(data[0].code, 'ERR_TOO_MANY_REQUESTS');
    assert.match(data[0].message, /2 per user/);
    assert.match(stream.body, /event: close\ndata: \{"type":"close","code":4008/);
  });

  it('refuses an app’s connection beyond connectionsPerApp while another app’s users connect, and any beyond connectionsPerNode', async () => {
    const users = await newUids(t, t.appA, 4);
    const others = await newUids(t, t.appB, 3);
    for (const uid of users.slice(0, 3)) await accepted(t.appA, uid);
    await refused(t.appA, users[3]!, /3 per app/);
    // App B is not held back by app A at its limit.
    await accepted(t.appB, others[0]!);
    await accepted(t.appB, others[1]!);
    assert.equal(t.gateway.hub.size, LIMITS.connectionsPerNode);
    await refused(t.appB, others[2]!, /5 on this server/);
  });

  it('keeps a client sending at framesPerSecond, and closes one sending faster with 4008', async () => {
    const [carol] = await newUids(t, t.appA, 1);
    const steady = await accepted(t.appA, carol!);
    // Two seconds at the limit: every ping answered, the socket open.
    for (let i = 0; i < 2 * LIMITS.framesPerSecond; i++) {
      steady.send({ type: 'ping' });
      await sleep(PACE_MS);
    }
    await until(() => steady.frames.filter((frame) => frame.type === 'pong').length === 2 * LIMITS.framesPerSecond, 'every pong');
    assert.equal(steady.isClosed(), false);
    // Then twice the limit at once.
    for (let i = 0; i < 2 * LIMITS.framesPerSecond; i++) steady.send({ type: 'ping' });
    assert.equal(await steady.closed, 4008);
    assert.ok(steady.frames.filter((frame) => frame.type === 'pong').length < 4 * LIMITS.framesPerSecond);
  });

  it('answers an oversize frame with ERR_PAYLOAD_TOO_LARGE (far over: ws closes 1009), bad frames with ERR_BAD_REQUEST, and stays open', async () => {
    const [dave] = await newUids(t, t.appA, 1);
    const client = await accepted(t.appA, dave!);
    const error = (f: any) => f.type === 'error';
    const pong = (f: any) => f.type === 'pong';
    const oversize = await answer(client, JSON.stringify({ type: 'ping', pad: 'x'.repeat(LIMITS.maxFrameBytes) }), error);
    assert.equal(oversize.code, 'ERR_PAYLOAD_TOO_LARGE');
    assert.match(oversize.message, /1024 bytes/);
    // At the bound exactly, a frame is read.
    const exact = JSON.stringify({ type: 'ping', pad: '' });
    await answer(client, JSON.stringify({ type: 'ping', pad: 'x'.repeat(LIMITS.maxFrameBytes - exact.length) }), pong);
    for (const [frame, message] of [
      ['{not json', /JSON object/],
      ['[1,2]', /JSON object/],
      ['{"type":"whatever"}', /Unknown frame type: whatever/],
      ['{"type":"typing_started","receiver":"\\ud800","receiverType":"user"}', /receiver/],
      ['['.repeat(LIMITS.maxFrameBytes), /JSON object/],
    ] as const) {
      const answered = await answer(client, frame, error);
      assert.equal(answered.code, 'ERR_BAD_REQUEST', frame.slice(0, 40));
      assert.match(answered.message, message);
    }
    // Bytes that are not UTF-8 in a text frame, and a binary frame.
    const notUtf8 = await answer(client, Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), error);
    assert.equal(notUtf8.code, 'ERR_BAD_REQUEST');
    assert.match(notUtf8.message, /UTF-8/);
    const binary = await answer(client, Buffer.from('{"type":"ping"}'), error, true);
    assert.match(binary.message, /binary/);
    // Deep nesting inside a good frame is not walked.
    const deep = `{"type":"ping","x":${'['.repeat(400)}${']'.repeat(400)}}`;
    await answer(client, deep, pong);
    assert.equal(client.isClosed(), false);
    // Far over the bound: ws refuses the frame itself.
    client.ws.send(JSON.stringify({ type: 'ping', pad: 'x'.repeat(WS_MAX_PAYLOAD) }));
    assert.equal(await client.closed, 1009);
  });

  it('closes 4001 without an auth frame within authTimeoutMs, answers a second auth with an error, and a frame before auth too', async () => {
    const silent = await openSocket(port, t.appA);
    open.add(silent);
    const [erin] = await newUids(t, t.appA, 1);
    const early = await openSocket(port, t.appA);
    open.add(early);
    early.send({ type: 'typing_started', receiver: erin, receiverType: 'user' });
    const before = await early.next((f) => f.type === 'error');
    assert.equal(before.code, 'ERR_BAD_REQUEST');
    assert.match(before.message, /Authenticate first/);
    const token = await tokenOf(t, t.appA, erin!);
    early.send({ type: 'auth', authToken: token });
    await early.next((f) => f.type === 'hello');
    early.send({ type: 'auth', authToken: token });
    const twice = await early.next((f) => f.type === 'error' && f !== before);
    assert.equal(twice.code, 'ERR_BAD_REQUEST');
    assert.match(twice.message, /authenticated already/);
    await sleep(PACE_MS);
    early.send({ type: 'ping' });
    await early.next((f) => f.type === 'pong');
    assert.equal(await silent.closed, 4001);
    assert.ok(!silent.frames.some((frame) => frame.type === 'hello'));
    // The authenticated one outlived the timeout.
    assert.equal(early.isClosed(), false);
  });

  it('drops a reader over maxBufferedBytes while the app’s and another app’s readers get every event, and the dropped one resumes with all of its own', async () => {
    const [slowUid, peerUid] = await newUids(t, t.appA, 2);
    const [elsewhereUid] = await newUids(t, t.appB, 1);
    const slow = await accepted(t.appA, slowUid!);
    const peer = await accepted(t.appA, peerUid!);
    const elsewhere = await accepted(t.appB, elsewhereUid!);
    slow.ws.pause();
    // Loopback's socket buffers take some 4 MB before the server holds any: 200 events of 40 kB
    // for the paused reader, each followed by one for the other two.
    const flood = await floodOfBlocks([
      [t.appA.appId, slowUid!, 40_000],
      [t.appA.appId, peerUid!, 100],
      [t.appB.appId, elsewhereUid!, 100],
    ]);
    await until(() => t.gateway.hub.size === 2, 'the slow reader to be dropped');
    const last = (ids: string[]) => ids[ids.length - 1]!;
    await peer.next((f) => f.type === 'event' && f.id === last(flood[1]!));
    await elsewhere.next((f) => f.type === 'event' && f.id === last(flood[2]!));
    assert.deepEqual(eventIds(peer), flood[1]);
    assert.deepEqual(eventIds(elsewhere), flood[2]);
    // More events while it is away; then it reads what reached it (no close frame: 1006).
    const more = await floodOfBlocks([[t.appA.appId, slowUid!, 100]]);
    slow.ws.resume();
    assert.equal(await slow.closed, 1006);
    const before = eventIds(slow);
    const all = [...flood[0]!, ...more[0]!];
    assert.ok(before.length > 0 && before.length < flood[0]!.length, `the slow reader got ${before.length} events before it was dropped`);
    assert.deepEqual(before, all.slice(0, before.length));
    const back = await accepted(t.appA, slowUid!, last(before));
    await back.next((f) => f.type === 'resumed');
    // The feed may not have handed the last of them out when it attached: those come live, after `resumed`.
    await back.next((f) => f.type === 'event' && f.id === last(all));
    assert.deepEqual([...before, ...eventIds(back)], all);
  });
});

/** The ids of the event frames a client received, in order. */
function eventIds(client: LimitsClient): string[] {
  return client.frames.filter((frame) => frame.type === 'event').map((frame) => frame.id as string);
}

/**
 * Records 200 rounds of user_blocked events in the log (one transaction, as a bulk change
 * would), each round one per [app, uid, padding bytes] (by that user, so theirs alone to see);
 * answers each one's event ids, in order.
 */
async function floodOfBlocks(who: Array<[string, string, number]>, rounds = 200): Promise<string[][]> {
  const values = who.map(([appId, uid, pad], n) => sql`(${n}::int, ${appId}::text, ${uid}::text, ${pad}::int)`);
  const rows = await sql<{ app_id: string; uid: string; id: string }>`
    insert into events (app_id, trigger, data)
    select w.app_id, 'user_blocked', json_build_object('users', json_build_object(), 'by', json_build_object('uid', w.uid), 'pad', repeat('x', w.pad))
    from generate_series(1, ${rounds}) as r cross join (values ${sql.join(values)}) as w(n, app_id, uid, pad)
    order by r, w.n
    returning app_id, data->'by'->>'uid' as uid, id::text as id`.execute(t.database.db);
  const ids: string[][] = who.map(() => []);
  const sorted = [...rows.rows].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
  for (const row of sorted) ids[who.findIndex(([appId, uid]) => appId === row.app_id && uid === row.uid)]!.push(row.id);
  return ids;
}
