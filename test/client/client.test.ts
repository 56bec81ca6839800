import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import { type ClientOptions, type ConnectionState, ParleyClient, type StateDetail } from '../../packages/client/src/index.js';
import { FakeGateway } from '../helpers/fake-gateway.js';
import { ManualTimers, until } from '../helpers/manual-timers.js';

// The client library (packages/client, docs in its README.md) against a fake gateway on loopback
// (test/helpers/fake-gateway.ts): real sockets, the client's timers run by the test. The delays
// are told apart by their length: hello timeout 7000, ping 1000 (the gateway's heartbeatMs), the
// silence bound 11000 (1000 + grace 10000), backoff from 100 ms doubling to 1000.
const HELLO_TIMEOUT = 7_000;
const PING = 1_000;
const SILENCE = 11_000;
/** The first backoff delay with random() = 0.5: 100 · (0.5 + 0.5 · 0.5). */
const FIRST_RETRY = 75;

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(options: Partial<ClientOptions> = {}) {
  const gateway = await FakeGateway.start({ tokens: { t1: 'alice', t2: 'alice', t3: 'alice' }, heartbeatMs: PING });
  const timers = new ManualTimers();
  const client = new ParleyClient({
    appId: 'app1',
    authToken: 't1',
    url: gateway.url,
    WebSocket,
    timers,
    random: () => 0.5,
    helloTimeoutMs: HELLO_TIMEOUT,
    heartbeatGraceMs: 10_000,
    backoff: { initialMs: 100, factor: 2, maxMs: 1_000, jitter: 0.5, rateLimitedMs: 5_000, restartSpreadMs: 400 },
    onListenerError: (error) => assert.fail(error as Error),
    ...options,
  });
  const seen = { events: [] as string[], frames: [] as any[], states: [] as [ConnectionState, StateDetail][], resumed: 0, resyncs: 0 };
  client.on('event', (event) => seen.events.push(event.id));
  client.on('frame', (frame) => seen.frames.push(frame));
  client.on('state', (state, detail) => seen.states.push([state, detail]));
  client.on('resumed', () => seen.resumed++);
  client.on('resync_required', () => seen.resyncs++);
  cleanups.push(
    () => gateway.close(),
    () => client.close(),
  );
  return { gateway, client, timers, seen };
}

const opened = (client: ParleyClient) => until(() => client.state === 'open', 'the client is open');

describe('client library: connecting and resuming', () => {
  it('authenticates with its first frame on parley.v1, the token never in the url', async () => {
    const { gateway, client, seen, timers } = await setup();
    client.connect();
    await opened(client);
    const [connection] = gateway.connections;
    assert.equal(connection!.protocol, 'parley.v1');
    const url = new URL(connection!.url, 'ws://host');
    assert.equal(url.pathname, '/v3/ws');
    assert.equal(url.searchParams.get('appId'), 'app1');
    assert.ok(!connection!.url.includes('t1'), connection!.url);
    assert.deepEqual(connection!.frames[0], { type: 'auth', authToken: 't1' });
    assert.deepEqual(
      seen.states.map(([state]) => state),
      ['connecting', 'open'],
    );
    assert.ok(!timers.has(HELLO_TIMEOUT), 'the hello timeout ended with the hello');
  });

  it('resumes after a server-side drop: every event once, in order, the repeats of a replay dropped', async () => {
    const { gateway, client, timers, seen } = await setup();
    client.connect();
    await opened(client);
    for (let n = 1; n <= 3; n++) gateway.publish('message_sent', { n });
    await until(() => seen.events.length === 3, 'three live events');
    gateway.dropAll();
    await until(() => client.state === 'reconnecting', 'reconnecting after the drop');
    gateway.publish('message_edited', { n: 4 });
    gateway.publish('message_deleted', { n: 5 });
    gateway.replayOverlap = 2; // the replay sends 2 and 3 again
    timers.fire(FIRST_RETRY);
    await until(() => seen.resumed === 1, 'resumed');
    gateway.publish('message_sent', { n: 6 });
    gateway.broadcast({ type: 'event', id: '6', trigger: 'message_sent', data: { n: 6 } }); // a live repeat
    gateway.publish('message_sent', { n: 7 });
    await until(() => seen.events.length >= 7, 'the live events after the resume');
    assert.deepEqual(seen.events, ['1', '2', '3', '4', '5', '6', '7']);
    assert.deepEqual(gateway.connections[1]!.auth, { type: 'auth', authToken: 't1', resume: { lastEventId: '3' } });
    assert.equal(client.lastEventId, '7');
    const resumedAt = seen.frames.findIndex((frame) => frame.type === 'resumed');
    assert.deepEqual(
      seen.frames
        .slice(0, resumedAt)
        .filter((frame) => frame.type === 'event')
        .map((frame) => frame.id),
      ['1', '2', '3', '2', '3', '4', '5'],
      'the gateway did replay the repeats',
    );
  });

  it('resumes from the id the app kept from an earlier session', async () => {
    const { gateway, client, seen } = await setup({ lastEventId: '2' });
    for (let n = 1; n <= 4; n++) gateway.publish('message_sent', { n });
    client.connect();
    await until(() => seen.resumed === 1, 'resumed');
    assert.deepEqual(gateway.connections[0]!.auth.resume, { lastEventId: '2' });
    assert.deepEqual(seen.events, ['3', '4']);
  });

  it('on resync_required runs onResync, holds the live events until it is done, then goes on live', async () => {
    let finish!: () => void;
    let refetches = 0;
    const { gateway, client, seen } = await setup({
      lastEventId: '1',
      onResync: () => {
        refetches++;
        return new Promise<void>((resolve) => (finish = resolve));
      },
    });
    for (let n = 1; n <= 5; n++) gateway.publish('message_sent', { n });
    gateway.retainedFrom = 4; // 2 and 3 are gone
    client.connect();
    await until(() => refetches === 1, 'onResync called');
    gateway.publish('message_sent', { n: 6 });
    await until(() => seen.frames.some((frame) => frame.id === '6'), 'event 6 reached the client');
    assert.deepEqual(seen.events, [], 'held while the app refetches');
    finish();
    await until(() => seen.events.length === 1, 'delivered after the refetch');
    gateway.publish('message_sent', { n: 7 });
    await until(() => seen.events.length === 2, 'live again');
    assert.deepEqual(seen.events, ['6', '7']);
    assert.equal(seen.resyncs, 1);
    assert.equal(seen.resumed, 0);
  });

  it('ends cleanly on close(): a 1000 close, no timer left, no reconnect', async () => {
    const { gateway, client, timers } = await setup();
    client.connect();
    await opened(client);
    client.close();
    await gateway.until(() => gateway.connections[0]!.closed !== undefined, 'the gateway saw the close');
    assert.equal(gateway.connections[0]!.closed!.code, 1000);
    assert.equal(client.state, 'closed');
    assert.deepEqual(timers.delays, []);
    assert.equal(client.send({ type: 'ping' }), false);
  });

  it('close() while waiting to reconnect cancels the attempt', async () => {
    const { gateway, client, timers } = await setup();
    client.connect();
    await opened(client);
    gateway.dropAll();
    await until(() => timers.has(FIRST_RETRY), 'a reconnect pending');
    client.close();
    assert.deepEqual(timers.delays, []);
    assert.equal(gateway.connections.length, 1);
  });
});

describe('client library: tokens', () => {
  it('on 4002 asks getToken() once and reconnects with the fresh token at once, and again on a later expiry', async () => {
    const fresh = ['t2', 't3'];
    let calls = 0;
    const { gateway, client, timers, seen } = await setup({ getToken: async () => fresh[calls++]! });
    client.connect();
    await opened(client);
    gateway.expired.add('t1');
    gateway.closeAll(4002, 'token revoked');
    await until(() => gateway.connections.length === 2 && client.state === 'open', 'open again');
    assert.equal(gateway.connections[1]!.auth.authToken, 't2');
    assert.equal(calls, 1);
    assert.deepEqual(seen.states[2], ['reconnecting', { code: 4002, reason: 'token revoked', attempt: 0, delayMs: 0 }]);
    assert.ok(!timers.delays.some((ms) => ms < PING), 'no backoff timer');
    gateway.expired.add('t2');
    gateway.closeAll(4002, 'token expired');
    await until(() => gateway.connections.length === 3 && client.state === 'open', 'open with the third token');
    assert.equal(gateway.connections[2]!.auth.authToken, 't3');
    assert.equal(calls, 2);
  });

  it('stops as unauthorized when the fresh token is refused too: no further attempt', async () => {
    let calls = 0;
    const { gateway, client, timers, seen } = await setup({ getToken: () => (calls++, 'dead') });
    gateway.expired.add('t1');
    client.connect();
    await until(() => client.state === 'unauthorized', 'unauthorized');
    assert.equal(gateway.connections.length, 2);
    assert.equal(gateway.connections[1]!.auth.authToken, 'dead');
    assert.equal(calls, 1);
    assert.deepEqual(seen.states.at(-1), ['unauthorized', { code: 4001, reason: 'bad token' }]);
    assert.deepEqual(timers.delays, [], 'nothing left to run: no attempt can follow');
  });

  it('stops at once on 4001 without getToken, and when getToken() fails', async () => {
    const first = await setup({ authToken: 'nobody' });
    first.client.connect();
    await until(() => first.client.state === 'unauthorized', 'unauthorized');
    assert.equal(first.gateway.connections.length, 1);
    assert.deepEqual(first.timers.delays, []);

    const failure = new Error('the app backend is down');
    const second = await setup({ authToken: 'nobody', getToken: () => Promise.reject(failure) });
    second.client.connect();
    await until(() => second.client.state === 'unauthorized', 'unauthorized');
    assert.equal(second.seen.states.at(-1)![1].error, failure);
    assert.equal(second.gateway.connections.length, 1);
    assert.deepEqual(second.timers.delays, []);
  });
});

describe('client library: backoff and heartbeat', () => {
  it('backs off exponentially, capped, each delay jittered by random()', async () => {
    const draws = [0, 1, 0.5, 0, 1, 0];
    const { gateway, client, timers, seen } = await setup({ random: () => draws.shift()! });
    await gateway.close(); // nothing listens: every attempt fails (1006)
    client.connect();
    for (const delay of [50, 200, 300, 400, 1_000, 500]) {
      await until(() => client.state === 'reconnecting' && timers.has(delay), `a retry in ${delay} ms`);
      timers.fire(delay);
    }
    const retries = seen.states.filter(([state]) => state === 'reconnecting').map(([, detail]) => [detail.attempt, detail.delayMs, detail.code]);
    assert.deepEqual(retries, [
      [1, 50, 1006],
      [2, 200, 1006],
      [3, 300, 1006],
      [4, 400, 1006],
      [5, 1_000, 1006],
      [6, 500, 1006],
    ]);
  });

  it('waits longer after 4008, comes back promptly with jitter after 1012, and starts over once open', async () => {
    const { gateway, client, timers, seen } = await setup();
    client.connect();
    await opened(client);
    gateway.closeAll(4008, 'rate limited');
    await until(() => timers.has(3_750), 'at least rateLimitedMs (5000), jittered');
    timers.fire(3_750);
    await until(() => gateway.open.length === 1, 'open again');
    gateway.closeAll(1012, 'restarting');
    await until(() => timers.has(200), 'within restartSpreadMs (400), jittered');
    timers.fire(200);
    await until(() => gateway.open.length === 1, 'open again');
    gateway.dropAll();
    await until(() => timers.has(FIRST_RETRY), 'an ordinary retry from the first delay');
    const retries = seen.states.filter(([state]) => state === 'reconnecting').map(([, detail]) => [detail.code, detail.delayMs]);
    assert.deepEqual(retries, [
      [4008, 3_750],
      [1012, 200],
      [1006, FIRST_RETRY],
    ]);
  });

  it('pings every heartbeatMs, and reconnects when the server goes silent', async () => {
    const { gateway, client, timers, seen } = await setup();
    client.connect();
    await opened(client);
    assert.ok(timers.has(PING) && timers.has(SILENCE), `pending: ${timers.delays}`);
    const armed = timers.timesSet(SILENCE);
    timers.fire(PING);
    await gateway.until(() => gateway.connections[0]!.frames.at(-1)?.type === 'ping', 'a ping');
    await until(() => timers.timesSet(SILENCE) === armed + 1, 'the pong moved the silence bound on');
    gateway.silent = true;
    timers.fire(PING);
    await gateway.until(() => gateway.connections[0]!.frames.filter((frame) => frame.type === 'ping').length === 2, 'a second ping');
    timers.fire(SILENCE);
    assert.equal(client.state, 'reconnecting');
    assert.match(seen.states.at(-1)![1].reason!, /heartbeat/);
    await gateway.until(() => gateway.connections[0]!.closed !== undefined, 'the silent socket cut');
    gateway.silent = false;
    timers.fire(FIRST_RETRY);
    await until(() => gateway.open.length === 1 && gateway.connections.length === 2, 'a new connection');
  });

  it('drops an open socket that gets no hello, and retries', async () => {
    const { gateway, client, timers } = await setup();
    gateway.withholdHello = true;
    client.connect();
    await until(() => timers.has(HELLO_TIMEOUT), 'waiting for hello');
    timers.fire(HELLO_TIMEOUT);
    assert.equal(client.state, 'reconnecting');
    gateway.withholdHello = false;
    timers.fire(FIRST_RETRY);
    await opened(client);
    assert.equal(gateway.connections.length, 2);
  });
});
