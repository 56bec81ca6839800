import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_GATEWAY } from '../../src/config.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newGroup, newUids, newUser } from '../helpers/factories.js';
import { newToken } from '../helpers/client.js';
import { openAuthed, type WsClient, listenOnLoopback, QUICK_FEED } from '../helpers/ws-client.js';

// Every durable frame kind of a 1:1 conversation and of a group reaches its participants and
// nobody else (docs/realtime.md, "Durable frames"): not another user of the app, not a user of
// another app with the same uid, not a member who left, not the user someone blocked.

const ONE_TO_ONE = ['message_sent', 'message_edited', 'message_reaction_added', 'message_reaction_removed', 'message_delivery_receipt', 'message_read_receipt', 'message_deleted'];

let t: TestApp;
let port: number;
before(async () => {
  t = await createTestApp({ gateway: DEFAULT_GATEWAY, eventFeedPace: QUICK_FEED });
  port = await listenOnLoopback(t);
});
after(async () => {
  await t.close();
});

async function connect(app: CreatedApp, uid: string): Promise<WsClient> {
  return openAuthed(port, app.appId, await newToken(t, app, uid));
}

async function ok(app: CreatedApp, url: string, options: { method: 'POST' | 'PUT' | 'DELETE'; onBehalfOf?: string; body?: unknown }): Promise<any> {
  const response = await t.call(app, url, options);
  assert.ok(response.statusCode === 200, `${options.method} ${url}: ${response.statusCode} ${response.body}`);
  return response.json().data;
}

const send = (app: CreatedApp, from: string, receiver: string, receiverType: 'user' | 'group', text: string) =>
  ok(app, '/v3/messages', { method: 'POST', onBehalfOf: from, body: { receiver, receiverType, category: 'message', type: 'text', data: { text } } });

const textOf = (frame: any): string | undefined => frame.data?.message?.data?.text;
const triggersOf = (client: WsClient) => client.events().map((frame) => frame.trigger as string);
/**
 * The triggers from the first message on: a connection made just after the group's set-up may
 * still be handed its membership events live (docs/realtime.md, "Resume").
 */
const fromFirstMessage = (client: WsClient) => {
  const triggers = triggersOf(client);
  return triggers.slice(triggers.indexOf('message_sent'));
};

describe('durable frames', () => {
  it('gives both sides of a 1:1 every kind of its events, in order, and nobody else', async () => {
    const [alice, bob, carol] = await newUids(t, t.appA, 3);
    // The same uid in another app: another user entirely.
    await newUser(t, t.appB, { uid: alice! });
    const [a, b, c, otherApp] = await Promise.all([connect(t.appA, alice!), connect(t.appA, bob!), connect(t.appA, carol!), connect(t.appB, alice!)]);

    const message = await send(t.appA, bob!, alice!, 'user', 'hello');
    await ok(t.appA, `/v3/messages/${message.id}`, { method: 'PUT', onBehalfOf: bob!, body: { data: { text: 'hello, edited' } } });
    await ok(t.appA, `/v3/messages/${message.id}/reactions/${encodeURIComponent('👍')}`, { method: 'POST', onBehalfOf: alice! });
    await ok(t.appA, `/v3/messages/${message.id}/reactions/${encodeURIComponent('👍')}`, { method: 'DELETE', onBehalfOf: alice! });
    await ok(t.appA, `/v3/users/${bob}/conversation/delivered`, { method: 'POST', onBehalfOf: alice!, body: { messageId: message.id } });
    await ok(t.appA, `/v3/users/${bob}/conversation/read`, { method: 'POST', onBehalfOf: alice!, body: { messageId: message.id } });
    await ok(t.appA, `/v3/messages/${message.id}`, { method: 'DELETE', onBehalfOf: bob! });

    for (const side of [a, b]) {
      await side.next((frame) => frame.type === 'event' && frame.trigger === 'message_deleted');
      assert.deepEqual(triggersOf(side), ONE_TO_ONE);
      const ids = side.events().map((frame) => BigInt(frame.id));
      assert.deepEqual(
        ids,
        [...ids].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)),
        'in the log’s order',
      );
      // An edit is the vendor's action message, the edited message as its `on` entity.
      assert.equal(side.events('message_edited')[0].data.message.data.entities.on.entity.data.text, 'hello, edited');
      assert.equal(String(side.events('message_deleted')[0].data.message.data.entities.on.entity.id), String(message.id));
    }
    // A message to carol, recorded after all of the above: once it reaches her, the feed has
    // handed out everything before it, and none of it was hers.
    await send(t.appA, bob!, carol!, 'user', 'for carol');
    await c.next((frame) => frame.type === 'event' && textOf(frame) === 'for carol');
    assert.deepEqual(triggersOf(c), ['message_sent']);
    await send(t.appB, alice!, alice!, 'user', 'to myself in the other app');
    await otherApp.next((frame) => frame.type === 'event' && textOf(frame) === 'to myself in the other app');
    assert.deepEqual(triggersOf(otherApp), ['message_sent'], 'another app’s user of the same uid sees none of this app’s events');
    await Promise.all([a, b, c, otherApp].map((client) => client.close()));
  });

  it('gives a block to the user who blocked, not to the one blocked or a third user', async () => {
    const [alice, bob, carol] = await newUids(t, t.appA, 3);
    const [a, b, c] = await Promise.all([connect(t.appA, alice!), connect(t.appA, bob!), connect(t.appA, carol!)]);
    await ok(t.appA, `/v3/users/${alice}/blockedusers`, { method: 'POST', body: { blockedUids: [bob!] } });
    await ok(t.appA, `/v3/users/${alice}/blockedusers`, { method: 'DELETE', body: { blockedUids: [bob!] } });
    await a.next((frame) => frame.type === 'event' && frame.trigger === 'user_unblocked');
    assert.deepEqual(triggersOf(a), ['user_blocked', 'user_unblocked']);
    for (const [uid, client] of [
      [bob!, b],
      [carol!, c],
    ] as const) {
      await send(t.appA, alice!, uid, 'user', `after the block, to ${uid}`);
      await client.next((frame) => frame.type === 'event' && textOf(frame) === `after the block, to ${uid}`);
      assert.deepEqual(triggersOf(client), ['message_sent'], `${uid} is told of no block`);
    }
    await Promise.all([a, b, c].map((client) => client.close()));
  });

  it("gives a member who left their leaving and none of the group's later events", async () => {
    const [owner, leaver, stayer] = await newUids(t, t.appA, 3);
    const group = await newGroup(t, t.appA, { members: { participants: [leaver!, stayer!] } }, owner!);
    const [left, stays] = await Promise.all([connect(t.appA, leaver!), connect(t.appA, stayer!)]);
    await send(t.appA, owner!, group.guid, 'group', 'before');
    await ok(t.appA, `/v3/groups/${group.guid}/members/${leaver}`, { method: 'DELETE', onBehalfOf: leaver! });
    await send(t.appA, owner!, group.guid, 'group', 'after');
    await ok(t.appA, `/v3/groups/${group.guid}`, { method: 'PUT', onBehalfOf: owner!, body: { name: 'Renamed' } });
    await stays.next((frame) => frame.type === 'event' && frame.trigger === 'group_updated');
    assert.deepEqual(fromFirstMessage(stays), ['message_sent', 'group_member_left', 'message_sent', 'group_updated']);
    // The leaver's last frame is their leaving: a message to them afterwards shows nothing came between.
    await send(t.appA, owner!, leaver!, 'user', 'after you left');
    await left.next((frame) => frame.type === 'event' && textOf(frame) === 'after you left');
    assert.deepEqual(fromFirstMessage(left), ['message_sent', 'group_member_left', 'message_sent']);
    assert.equal(textOf(left.events('message_sent')[0]), 'before');
    await Promise.all([left.close(), stays.close()]);
  });
});
