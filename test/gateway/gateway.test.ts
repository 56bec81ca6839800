import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { DEFAULT_GATEWAY } from '../../src/config.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newGroup, newUids } from '../helpers/factories.js';
import { newToken } from '../helpers/client.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { listenOnLoopback, QUICK_FEED } from '../helpers/ws-client.js';

// GET /v3/ws over a real socket on loopback: auth, hello, durable frames, resume, revocation.

let t: TestApp;
let port: number;
before(async () => {
  t = await createTestApp({ gateway: { ...DEFAULT_GATEWAY, authTimeoutMs: 1_000, presenceGraceMs: 50 }, eventFeedPace: QUICK_FEED });
  port = await listenOnLoopback(t);
});
after(async () => {
  await t.close();
});

interface Client {
  frames: any[];
  closed: Promise<number>;
  next(match: (frame: any) => boolean): Promise<any>;
  send(frame: unknown): void;
  ws: WebSocket;
}

function connect(app: CreatedApp): Promise<Client> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/v3/ws?appId=${app.appId}`, 'parley.v1');
    const frames: any[] = [];
    const waiters: Array<{ match: (f: any) => boolean; resolve: (f: any) => void }> = [];
    const closed = new Promise<number>((done) => ws.on('close', (code) => done(code)));
    ws.on('message', (data) => {
      const frame = JSON.parse(String(data));
      frames.push(frame);
      for (const w of [...waiters]) if (w.match(frame)) waiters.splice(waiters.indexOf(w), 1) && w.resolve(frame);
    });
    ws.on('error', reject);
    ws.on('open', () =>
      resolve({
        ws,
        frames,
        closed,
        send: (frame) => ws.send(JSON.stringify(frame)),
        next(match) {
          const found = frames.find(match);
          if (found) return Promise.resolve(found);
          return new Promise((ok, fail) => {
            const timer = setTimeout(() => fail(new Error(`no such frame; got ${JSON.stringify(frames)}`)), 5_000);
            waiters.push({ match, resolve: (f) => (clearTimeout(timer), ok(f)) });
          });
        },
      }),
    );
  });
}

const tokenOf = (app: CreatedApp, uid: string) => newToken(t, app, uid);

async function send(app: CreatedApp, from: string, to: string, text: string): Promise<string> {
  const response = await t.call(app, '/v3/messages', { method: 'POST', onBehalfOf: from, body: { receiver: to, receiverType: 'user', category: 'message', type: 'text', data: { text } } });
  assert.equal(response.statusCode, 200, response.body);
  return String(response.json().data.id);
}

async function authed(app: CreatedApp, uid: string, resume?: string): Promise<Client> {
  // The token first: the auth frame must follow the socket's opening within authTimeoutMs.
  const authToken = await tokenOf(app, uid);
  const client = await connect(app);
  client.send({ type: 'auth', authToken, ...(resume ? { resume: { lastEventId: resume } } : {}) });
  const hello = await client.next((f) => f.type === 'hello');
  assert.equal(typeof hello.connectionId, 'string');
  assert.equal(hello.heartbeatMs, DEFAULT_GATEWAY.heartbeatMs);
  return client;
}

describe('the gateway', () => {
  it('answers a plain HTTP request with ERR_BAD_REQUEST, and an unknown app with AUTH_ERR_INVALID_APPID, in the vendor shape', async () => {
    const plain = await t.app.inject({ method: 'GET', url: `/v3/ws?appId=${t.appA.appId}`, headers: { host: 'localhost' } });
    assert.equal(plain.statusCode, 400, plain.body);
    assert.equal(plain.json().error.code, 'ERR_BAD_REQUEST');
    assert.match(plain.json().error.message, /WebSocket/);
    const unknown = await t.app.inject({ method: 'GET', url: '/v3/ws?appId=no-such-app', headers: { host: 'localhost' } });
    assert.equal(unknown.statusCode, 401, unknown.body);
    assert.equal(unknown.json().error.code, 'AUTH_ERR_INVALID_APPID');
  });

  it('closes 4001 without an auth frame in time, and for a bad token', async () => {
    const silent = await connect(t.appA);
    assert.equal(await silent.closed, 4001);
    const bad = await connect(t.appA);
    bad.send({ type: 'auth', authToken: 'nope' });
    assert.equal(await bad.closed, 4001);
  });

  it('answers bad frames with an error frame and keeps the socket open; ping gets pong', async () => {
    const [alice] = await newUids(t, t.appA, 1);
    const client = await authed(t.appA, alice!);
    client.ws.send('{not json');
    assert.equal((await client.next((f) => f.type === 'error')).code, 'ERR_BAD_REQUEST');
    client.send({ type: 'whatever' });
    client.send({ type: 'ping' });
    await client.next((f) => f.type === 'pong');
    assert.equal(client.frames.filter((f) => f.type === 'error').length, 2);
    client.ws.close();
  });

  it('sends a message to both participants, nobody else, and resumes with no gap', async () => {
    const [alice, bob, carol] = await newUids(t, t.appA, 3);
    const [other] = await newUids(t, t.appB, 1, { uid: alice });
    const a = await authed(t.appA, alice!);
    const b = await authed(t.appA, bob!);
    const c = await authed(t.appA, carol!);
    const elsewhere = await authed(t.appB, other!);
    const id = await send(t.appA, alice!, bob!, 'hi');
    const atBob = await b.next((f) => f.type === 'event' && f.trigger === 'message_sent');
    assert.equal(String(atBob.data.message.id), id);
    assert.equal(atBob.appId, t.appA.appId);
    await a.next((f) => f.type === 'event' && f.trigger === 'message_sent');
    // Bob leaves; two more messages; he resumes from the last id he saw.
    b.ws.close();
    await b.closed;
    const second = await send(t.appA, alice!, bob!, 'two');
    const third = await send(t.appA, alice!, bob!, 'three');
    await send(t.appA, alice!, carol!, 'not for bob');
    const back = await authed(t.appA, bob!, atBob.id);
    await back.next((f) => f.type === 'resumed');
    const fourth = await send(t.appA, alice!, bob!, 'four');
    await back.next((f) => f.type === 'event' && String(f.data.message.id) === fourth);
    const ids = back.frames.filter((f) => f.type === 'event' && f.trigger === 'message_sent').map((f) => String(f.data.message.id));
    assert.deepEqual(ids, [second, third, fourth]);
    assert.ok(back.frames.findIndex((f) => f.type === 'resumed') < back.frames.findIndex((f) => f.type === 'event' && String(f.data.message.id) === fourth));
    // Carol saw only hers; the other app's user of the same uid nothing.
    await c.next((f) => f.type === 'event');
    assert.ok(c.frames.filter((f) => f.type === 'event').every((f) => f.data.message.receiver === carol || f.data.message.sender === carol));
    assert.equal(elsewhere.frames.filter((f) => f.type === 'event').length, 0);
    for (const client of [a, back, c, elsewhere]) client.ws.close();
  });

  it('closes 4002 when the token is deleted', async () => {
    const [dave] = await newUids(t, t.appA, 1);
    const token = await tokenOf(t.appA, dave!);
    const client = await connect(t.appA);
    client.send({ type: 'auth', authToken: token });
    await client.next((f) => f.type === 'hello');
    const response = await t.call(t.appA, `/v3/users/${dave}/auth_tokens/${token}`, { method: 'DELETE' });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(await client.closed, 4002);
  });

  it('sends typing to the other side of a 1:1', async () => {
    const [erin, frank] = await newUids(t, t.appA, 2);
    const e = await authed(t.appA, erin!);
    const f = await authed(t.appA, frank!);
    e.send({ type: 'typing_started', receiver: frank, receiverType: 'user' });
    const typing = await f.next((x) => x.type === 'typing_started');
    assert.deepEqual(typing, { type: 'typing_started', sender: erin, receiver: frank, receiverType: 'user' });
    e.send({ type: 'typing_ended', receiver: frank, receiverType: 'user' });
    await f.next((x) => x.type === 'typing_ended');
    e.ws.close();
    f.ws.close();
  });

  it("sends a group's messages and typing to its connected members only, and nothing after a member is kicked but their removal", async () => {
    const [owner, member, outsider] = await newUids(t, t.appA, 3);
    const group = await newGroup(t, t.appA, { members: { participants: [member!] } }, owner!);
    const [o, m, x] = await Promise.all([authed(t.appA, owner!), authed(t.appA, member!), authed(t.appA, outsider!)]);
    const sendToGroup = async (text: string) => {
      const response = await t.call(t.appA, '/v3/messages', {
        method: 'POST',
        onBehalfOf: owner,
        body: { receiver: group.guid, receiverType: 'group', category: 'message', type: 'text', data: { text } },
      });
      assert.equal(response.statusCode, 200, response.body);
    };
    await sendToGroup('to the members');
    const seen = await m.next((f) => f.type === 'event' && f.trigger === 'message_sent' && f.data.message.data.text === 'to the members');
    assert.equal(seen.data.message.receiver, group.guid);
    m.send({ type: 'typing_started', receiver: group.guid, receiverType: 'group' });
    assert.deepEqual(await o.next((f) => f.type === 'typing_started'), { type: 'typing_started', sender: member, receiver: group.guid, receiverType: 'group' });
    const kicked = await t.call(t.appA, `/v3/groups/${group.guid}/members/${member}`, { method: 'DELETE' });
    assert.equal(kicked.statusCode, 200, kicked.body);
    await m.next((f) => f.type === 'event' && f.trigger === 'group_member_kicked');
    await sendToGroup('after the kick');
    await o.next((f) => f.type === 'event' && f.data.message?.data?.text === 'after the kick');
    // The owner has the message after the kick: anything sent to the member would have come before.
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.ok(!m.frames.some((f) => f.type === 'event' && f.data.message?.data?.text === 'after the kick'), 'a kicked member gets nothing after their removal');
    assert.ok(!x.frames.some((f) => f.type === 'event' || f.type === 'typing_started'), `the outsider got ${JSON.stringify(x.frames)}`);
    for (const client of [o, m, x]) client.ws.close();
  });
});
