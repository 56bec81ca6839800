import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_GATEWAY } from '../../src/config.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newGroup, newUids } from '../helpers/factories.js';
import { newToken } from '../helpers/client.js';
import { openAuthed, withDeadline, type WsClient, listenOnLoopback, QUICK_FEED } from '../helpers/ws-client.js';

// Typing (docs/realtime.md, "Typing and presence"): one start per throttle per user and
// conversation, the end by itself after the expiry or at the sender's last disconnect, none in
// groups above the size bound. A throttle far longer than the test, an expiry short enough to wait for.

const THROTTLE_MS = 60_000;
const EXPIRY_MS = 500;
const MAX_GROUP = 2;

let t: TestApp;
let port: number;
before(async () => {
  t = await createTestApp({
    gateway: { ...DEFAULT_GATEWAY, typingThrottleMs: THROTTLE_MS, typingExpiryMs: EXPIRY_MS, typingMaxGroupSize: MAX_GROUP },
    eventFeedPace: QUICK_FEED,
  });
  port = await listenOnLoopback(t);
});
after(async () => {
  await t.close();
});

async function connect(app: CreatedApp, uid: string): Promise<WsClient> {
  return openAuthed(port, app.appId, await newToken(t, app, uid));
}

const typing = (client: WsClient, type: 'typing_started' | 'typing_ended') => client.frames.filter((frame) => frame.type === type);

describe('typing', () => {
  it('sends one typing_started per throttle however often the sender starts, then the end the sender sends', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const [a, b] = await Promise.all([connect(t.appA, alice!), connect(t.appA, bob!)]);
    for (let i = 0; i < 3; i++) a.send({ type: 'typing_started', receiver: bob, receiverType: 'user' });
    // A ping after the starts: its pong means the server has read all three.
    a.send({ type: 'ping' });
    await a.next((frame) => frame.type === 'pong');
    a.send({ type: 'typing_ended', receiver: bob, receiverType: 'user' });
    await b.next((frame) => frame.type === 'typing_ended');
    assert.equal(typing(b, 'typing_started').length, 1, JSON.stringify(b.frames));
    assert.equal(typing(b, 'typing_ended').length, 1);
    assert.ok(!a.frames.some((frame) => frame.type === 'error'), JSON.stringify(a.frames));
    await Promise.all([a.close(), b.close()]);
  });

  it('ends a start by itself after the expiry, and at the sender’s disconnect', async () => {
    const [alice, bob, carol] = await newUids(t, t.appA, 3);
    const [a, b, c] = await Promise.all([connect(t.appA, alice!), connect(t.appA, bob!), connect(t.appA, carol!)]);
    a.send({ type: 'typing_started', receiver: bob, receiverType: 'user' });
    await b.next((frame) => frame.type === 'typing_started');
    // Nobody sends an end: the expiry does.
    assert.deepEqual(await b.next((frame) => frame.type === 'typing_ended'), { type: 'typing_ended', sender: alice, receiver: bob, receiverType: 'user' });
    a.send({ type: 'typing_started', receiver: carol, receiverType: 'user' });
    await c.next((frame) => frame.type === 'typing_started');
    await a.close();
    await c.next((frame) => frame.type === 'typing_ended');
    assert.equal(typing(c, 'typing_ended').length, 1);
    await Promise.all([b.close(), c.close()]);
  });

  it(`answers typing in a group of more than ${MAX_GROUP} members with an error frame and tells nobody`, async () => {
    const [owner, one, two] = await newUids(t, t.appA, 3);
    const big = await newGroup(t, t.appA, { members: { participants: [one!, two!] } }, owner!);
    const small = await newGroup(t, t.appA, { members: { participants: [one!] } }, owner!);
    const [o, m] = await Promise.all([connect(t.appA, owner!), connect(t.appA, one!)]);
    o.send({ type: 'typing_started', receiver: big.guid, receiverType: 'group' });
    const error = await o.next((frame) => frame.type === 'error');
    assert.equal(error.code, 'ERR_BAD_REQUEST');
    // Typing in the small group after it: once it reaches the member, the refused one would have too.
    o.send({ type: 'typing_started', receiver: small.guid, receiverType: 'group' });
    const seen = await withDeadline(
      m.next((frame) => frame.type === 'typing_started'),
      'typing in the small group',
    );
    assert.equal(seen.receiver, small.guid);
    assert.equal(typing(m, 'typing_started').length, 1, JSON.stringify(m.frames));
    await Promise.all([o.close(), m.close()]);
  });
});
