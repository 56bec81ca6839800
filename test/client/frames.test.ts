import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import { type Conversation, ParleyClient, type PresenceFrame, type TypingFrame } from '../../packages/client/src/index.js';
import { FakeGateway } from '../helpers/fake-gateway.js';
import { ManualTimers, until } from '../helpers/manual-timers.js';

// The client library's typing indicators and ephemeral frames, against the fake gateway
// (test/helpers/fake-gateway.ts). The typing throttle's timers are run by the test: 3000 is the
// throttle (at most one start per conversation), 5000 the idle end.
const THROTTLE = 3_000;
const IDLE = 5_000;
const bob: Conversation = { receiver: 'bob', receiverType: 'user' };
const group: Conversation = { receiver: 'g1', receiverType: 'group' };

let gateway: FakeGateway;
let client: ParleyClient;
let timers: ManualTimers;
afterEach(async () => {
  client.close();
  await gateway.close();
});

async function connected(): Promise<void> {
  gateway = await FakeGateway.start({ tokens: { t1: 'alice' } });
  timers = new ManualTimers();
  client = new ParleyClient({ appId: 'app1', authToken: 't1', url: gateway.url, WebSocket, timers, onListenerError: (error) => assert.fail(error as Error) });
  client.connect();
  await until(() => client.state === 'open', 'open');
}

/** The typing frames the gateway got, once every frame sent before this call has arrived. */
async function typingSent(): Promise<string[]> {
  client.send({ type: 'ping' });
  const frames = gateway.connections[0]!.frames;
  const pings = frames.filter((frame) => frame.type === 'ping').length + 1;
  await gateway.until(() => frames.filter((frame) => frame.type === 'ping').length === pings, 'the marker ping');
  return frames.filter((frame) => frame.type.startsWith('typing_')).map((frame) => `${frame.type} ${frame.receiverType}:${frame.receiver}`);
}

describe('client library: typing', () => {
  it('sends at most one typing_started per conversation in 3 s, typing_ended on stop and when idle', async () => {
    await connected();
    for (let i = 0; i < 5; i++) client.typing(bob);
    client.typing(group); // another conversation is not held back
    assert.deepEqual(await typingSent(), ['typing_started user:bob', 'typing_started group:g1']);

    client.stopTyping(group);
    timers.fire(THROTTLE); // bob's throttle ends (group's is pending too)
    client.typing(bob); // still typing: started again, so that it does not expire at the server
    assert.deepEqual((await typingSent()).slice(2), ['typing_ended group:g1', 'typing_started user:bob']);

    client.stopTyping(bob); // sent, or the draft emptied
    client.typing(bob); // typed again within 3 s of the last start: it waits
    assert.deepEqual((await typingSent()).slice(4), ['typing_ended user:bob']);
    timers.fire(THROTTLE); // the group's throttle, the older: nothing was held back there
    assert.deepEqual((await typingSent()).slice(5), []);
    timers.fire(THROTTLE); // bob's: the keystroke held back goes out now
    assert.deepEqual((await typingSent()).slice(5), ['typing_started user:bob']);
  });

  it('starts a held-back keystroke when the throttle ends, and ends it when the draft goes idle', async () => {
    await connected();
    client.typing(bob);
    client.stopTyping(bob);
    client.typing(bob);
    assert.deepEqual(await typingSent(), ['typing_started user:bob', 'typing_ended user:bob']);
    timers.fire(THROTTLE);
    assert.deepEqual((await typingSent()).slice(2), ['typing_started user:bob']);
    timers.fire(IDLE);
    assert.deepEqual((await typingSent()).slice(3), ['typing_ended user:bob']);
  });

  it('sends nothing while not connected, and forgets the indicators of a lost connection', async () => {
    await connected();
    client.typing(bob);
    gateway.dropAll();
    await until(() => client.state === 'reconnecting', 'reconnecting');
    client.typing(group);
    assert.deepEqual(
      timers.delays.filter((ms) => ms === THROTTLE),
      [],
      'no throttle left from the lost connection',
    );
  });
});

describe('client library: ephemeral and other frames', () => {
  it('a listener that throws is reported, and the other listeners and the connection carry on', async () => {
    gateway = await FakeGateway.start({ tokens: { t1: 'alice' } });
    const thrown: unknown[] = [];
    client = new ParleyClient({ appId: 'app1', authToken: 't1', url: gateway.url, WebSocket, onListenerError: (error) => thrown.push(error) });
    const heard: string[] = [];
    client.on('event', () => {
      throw new Error('app bug');
    });
    client.on('event', (event) => heard.push(event.id));
    client.connect();
    await until(() => client.state === 'open', 'open');
    gateway.publish('message_sent');
    gateway.publish('message_sent');
    await until(() => heard.length === 2, 'both events');
    assert.deepEqual(heard, ['1', '2']);
    assert.deepEqual(
      thrown.map((error) => (error as Error).message),
      ['app bug', 'app bug'],
    );
    assert.equal(client.lastEventId, '2');
  });

  it('hands typing, presence and error frames to their listeners, and every frame to frame listeners', async () => {
    await connected();
    const typing: TypingFrame[] = [];
    const presence: PresenceFrame[] = [];
    const errors: unknown[] = [];
    const types: string[] = [];
    const events: unknown[] = [];
    client.on('typing', (frame) => typing.push(frame));
    client.on('presence', (frame) => presence.push(frame));
    client.on('server_error', (frame) => errors.push(frame));
    client.on('event', (frame) => events.push(frame));
    const unsubscribe = client.on('frame', (frame) => types.push(frame.type));
    gateway.broadcast({ type: 'typing_started', sender: 'bob', receiver: 'alice', receiverType: 'user' });
    gateway.broadcast({ type: 'presence', uid: 'bob', status: 'online', lastActiveAt: 1_700_000_000 });
    gateway.broadcast({ type: 'error', code: 'ERR_BAD_REQUEST', message: 'typing needs a receiver' });
    gateway.broadcast({ type: 'a_later_frame', detail: 1 });
    gateway.broadcast({ type: 'event', trigger: 'message_sent', data: {} }); // no id: not an event
    gateway.broadcast({ type: 'typing_ended', sender: 'bob', receiver: 'alice', receiverType: 'user' });
    await until(() => typing.length === 2, 'both typing frames');
    assert.deepEqual(typing, [
      { type: 'typing_started', sender: 'bob', receiver: 'alice', receiverType: 'user' },
      { type: 'typing_ended', sender: 'bob', receiver: 'alice', receiverType: 'user' },
    ]);
    assert.deepEqual(presence, [{ type: 'presence', uid: 'bob', status: 'online', lastActiveAt: 1_700_000_000 }]);
    assert.deepEqual(errors, [{ type: 'error', code: 'ERR_BAD_REQUEST', message: 'typing needs a receiver' }]);
    assert.deepEqual(types, ['typing_started', 'presence', 'error', 'a_later_frame', 'typing_ended']);
    assert.deepEqual(events, []);
    unsubscribe();
    gateway.broadcast({ type: 'presence', uid: 'bob', status: 'offline' });
    await until(() => presence.length === 2, 'the offline frame');
    assert.equal(types.length, 5, 'an unsubscribed listener hears nothing more');
    assert.equal(client.state, 'open', 'an error frame leaves the connection open');
  });
});
