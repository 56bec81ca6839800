import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { DEFAULT_GATEWAY } from '../../src/config.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newUids } from '../helpers/factories.js';
import { openAuthed, openSocket, openSse, withDeadline, listenOnLoopback, QUICK_FEED } from '../helpers/ws-client.js';
import { newToken } from '../helpers/client.js';

// A gateway connection's life (docs/realtime.md): the heartbeat and the idle close, resumes that
// cannot be replayed (resync_required, then live), the SSE fallback, and the shutdown's 1012.

const IDLE_MS = 3_000;
const RESUME_MAX = 3;

let t: TestApp;
let port: number;
before(async () => {
  t = await createTestApp({
    gateway: { ...DEFAULT_GATEWAY, heartbeatMs: IDLE_MS / 3, idleTimeoutMs: IDLE_MS, resumeMaxEvents: RESUME_MAX },
    eventFeedPace: QUICK_FEED,
  });
  port = await listenOnLoopback(t);
});
after(async () => {
  await t.close();
});

const tokenOf = (app: CreatedApp, uid: string) => newToken(t, app, uid);

async function send(app: CreatedApp, from: string, to: string, text: string): Promise<string> {
  const response = await t.call(app, '/v3/messages', { method: 'POST', onBehalfOf: from, body: { receiver: to, receiverType: 'user', category: 'message', type: 'text', data: { text } } });
  assert.equal(response.statusCode, 200, response.body);
  return String(response.json().data.id);
}

const messageSent = (id: string) => (frame: any) => frame.type === 'event' && frame.trigger === 'message_sent' && String(frame.data.message.id) === id;
const sentIds = (frames: any[]) => frames.filter((frame) => frame.type === 'event' && frame.trigger === 'message_sent').map((frame) => String(frame.data.message.id));

describe('the heartbeat', () => {
  it('answers ping with pong, and closes a connection silent for the idle timeout with 1001 while one that pings stays', async () => {
    const [quiet, chatty] = await newUids(t, t.appA, 2);
    const silent = await openAuthed(port, t.appA.appId, await tokenOf(t.appA, quiet!));
    const pinging = await openAuthed(port, t.appA.appId, await tokenOf(t.appA, chatty!));
    const hello = pinging.frames.find((frame) => frame.type === 'hello');
    assert.equal(hello.heartbeatMs, IDLE_MS / 3);
    const timer = setInterval(() => pinging.send({ type: 'ping' }), IDLE_MS / 3);
    try {
      await pinging.next((frame) => frame.type === 'pong');
      assert.equal(await withDeadline(silent.closed, 'the idle close'), 1001);
      assert.equal(pinging.ws.readyState, pinging.ws.OPEN, 'a connection that pings is kept');
      const pongs = pinging.frames.filter((frame) => frame.type === 'pong').length;
      await pinging.next((frame) => frame.type === 'pong', pinging.frames.length);
      assert.ok(pinging.frames.filter((frame) => frame.type === 'pong').length > pongs);
    } finally {
      clearInterval(timer);
    }
    await pinging.close();
  });
});

describe('an authentication that fails', () => {
  it('closes 4001 for a refused token, and 1013 (try again) when the token could not be checked', async () => {
    const [uid] = await newUids(t, t.appA, 1);
    const token = await tokenOf(t.appA, uid!);
    const refused = await openSocket(port, t.appA.appId);
    refused.send({ type: 'auth', authToken: `${token}x` });
    assert.equal(await withDeadline(refused.closed, 'the refused token’s close'), 4001);
    // The token's lookup fails as a database outage would: not the client's fault, so not 4001.
    const authenticate = t.gateway.authenticate;
    t.gateway.authenticate = async () => {
      throw new Error('connection terminated unexpectedly');
    };
    try {
      const failed = await openSocket(port, t.appA.appId);
      failed.send({ type: 'auth', authToken: token });
      assert.equal(await withDeadline(failed.closed, 'the failed lookup’s close'), 1013);
    } finally {
      t.gateway.authenticate = authenticate;
    }
    const again = await openAuthed(port, t.appA.appId, token);
    await again.close();
  });
});

describe('resync_required', () => {
  it(`answers a gap of more than resumeMaxEvents (${RESUME_MAX}) with resync_required, then live events; a gap of ${RESUME_MAX} is replayed`, async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const token = await tokenOf(t.appA, bob!);
    // The sender's socket sees each send live: once it has the last, the resume's start point is past the gap.
    const sender = await openAuthed(port, t.appA.appId, await tokenOf(t.appA, alice!));
    const first = await openAuthed(port, t.appA.appId, token);
    const seen = await first.next(messageSent(await send(t.appA, alice!, bob!, 'seen')));
    await first.close();
    const missed: string[] = [];
    for (let i = 0; i < RESUME_MAX + 1; i++) missed.push(await send(t.appA, alice!, bob!, `missed ${i}`));
    await sender.next(messageSent(missed.at(-1)!));
    const behind = await openAuthed(port, t.appA.appId, token, seen.id);
    await behind.next((frame) => frame.type === 'resync_required');
    const live = await send(t.appA, alice!, bob!, 'live');
    await behind.next(messageSent(live));
    assert.deepEqual(
      behind.frames.map((frame) => frame.type),
      ['hello', 'resync_required', 'event'],
      'nothing of the gap is replayed, and no resumed',
    );
    await behind.close();
    // A gap of exactly the maximum: replayed.
    const fromHere = behind.events('message_sent')[0].id;
    const gap: string[] = [];
    for (let i = 0; i < RESUME_MAX; i++) gap.push(await send(t.appA, alice!, bob!, `gap ${i}`));
    await sender.next(messageSent(gap.at(-1)!));
    const close = await openAuthed(port, t.appA.appId, token, fromHere);
    await close.next((frame) => frame.type === 'resumed');
    assert.deepEqual(sentIds(close.frames), gap);
    assert.ok(!close.frames.some((frame) => frame.type === 'resync_required'));
    await close.close();
    await sender.close();
  });

  it('answers a resume from before what the retention kept with resync_required, then live events', async () => {
    // appB: its log is this test's alone, so its oldest events can be taken away as the retention would.
    const [carol, dan] = await newUids(t, t.appB, 2);
    const token = await tokenOf(t.appB, dan!);
    const sender = await openAuthed(port, t.appB.appId, await tokenOf(t.appB, carol!));
    const first = await openAuthed(port, t.appB.appId, token);
    const seen = await first.next(messageSent(await send(t.appB, carol!, dan!, 'seen')));
    await first.close();
    const pruned = await send(t.appB, carol!, dan!, 'pruned');
    const kept = await send(t.appB, carol!, dan!, 'kept');
    await sender.next(messageSent(kept));
    const prunedEvent = await sql<{ id: string }>`select id::text as id from events where app_id = ${t.appB.appId} and message_id = ${pruned}::bigint`.execute(t.database.db);
    // What the retention does: the oldest events gone, the oldest kept one near the retention's age.
    await sql`delete from events where app_id = ${t.appB.appId} and id <= ${prunedEvent.rows[0]!.id}::bigint`.execute(t.database.db);
    await sql`update events set created_at = now() - interval '7 days' where app_id = ${t.appB.appId}`.execute(t.database.db);
    const behind = await openAuthed(port, t.appB.appId, token, seen.id);
    await behind.next((frame) => frame.type === 'resync_required');
    const live = await send(t.appB, carol!, dan!, 'live');
    await behind.next(messageSent(live));
    assert.deepEqual(sentIds(behind.frames), [live], `not the kept ${kept} of the gap`);
    assert.ok(!behind.frames.some((frame) => frame.type === 'resumed'));
    await behind.close();
    await sender.close();
  });
});

describe('the SSE fallback', () => {
  it('refuses a request without a token with 401 in the vendor shape, and a bad Last-Event-ID with 400', async () => {
    const none = await openSse(port, t.appA.appId, {});
    assert.equal(none.status, 401);
    assert.equal(none.body.error.code, 'AUTH_ERR_EMPTY_AUTH_TOKEN');
    assert.equal(typeof none.body.error.message, 'string');
    const wrong = await openSse(port, t.appA.appId, { authtoken: 'nope' });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.error.code, 'AUTH_ERR_AUTH_TOKEN_NOT_FOUND');
    const [erin] = await newUids(t, t.appA, 1);
    const bad = await openSse(port, t.appA.appId, { authtoken: await tokenOf(t.appA, erin!), 'last-event-id': 'yesterday' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'ERR_BAD_REQUEST');
  });

  it("sends the socket's frames, each durable one with its id, and resumes from Last-Event-ID with no gap and no repeat", async () => {
    const [frank, gina] = await newUids(t, t.appA, 2);
    const token = await tokenOf(t.appA, gina!);
    const stream = await openSse(port, t.appA.appId, { authtoken: token });
    assert.equal(stream.status, 200);
    const socket = await openAuthed(port, t.appA.appId, token);
    await stream.next((frame) => frame.type === 'hello');
    const firstId = await send(t.appA, frank!, gina!, 'one');
    const overSse = await stream.next(messageSent(firstId));
    assert.deepEqual(overSse, await socket.next(messageSent(firstId)), 'the same frame on both transports');
    assert.equal(stream.raw.find((frame) => frame.data.includes(`"id":"${overSse.id}"`))!.id, overSse.id);
    await socket.close();
    stream.close();
    await stream.ended;
    const missed = [await send(t.appA, frank!, gina!, 'two'), await send(t.appA, frank!, gina!, 'three')];
    const resumed = await openSse(port, t.appA.appId, { authtoken: token, 'last-event-id': overSse.id });
    await resumed.next((frame) => frame.type === 'resumed');
    const live = await send(t.appA, frank!, gina!, 'four');
    await resumed.next(messageSent(live));
    assert.deepEqual(sentIds(resumed.frames), [...missed, live]);
    assert.ok(resumed.frames.findIndex((frame) => frame.type === 'resumed') < resumed.frames.findIndex(messageSent(live)));
    resumed.close();
  });
});

// Last: it closes the server.
describe('the shutdown', () => {
  it('closes every socket with 1012 and ends every SSE stream with a close frame of 1012', async () => {
    const [henry, iris] = await newUids(t, t.appA, 2);
    const socket = await openAuthed(port, t.appA.appId, await tokenOf(t.appA, henry!));
    const stream = await openSse(port, t.appA.appId, { authtoken: await tokenOf(t.appA, iris!) });
    await stream.next((frame) => frame.type === 'hello');
    const closing = t.app.close();
    assert.equal(await withDeadline(socket.closed, 'the 1012 close'), 1012);
    await withDeadline(stream.ended, 'the SSE stream to end');
    assert.deepEqual(stream.frames.at(-1), { type: 'close', code: 1012, reason: 'server restarting' });
    assert.equal(stream.raw.at(-1)!.event, 'close');
    await withDeadline(closing, 'the server to close');
  });
});
