/** Sends to several receivers at once (`multipleReceivers`): answered per receiver, never a 500 after a partial commit. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { body, createTestApp, errorCode, uniqueId, type TestApp } from '../helpers/app.js';
import { newGroup, newUids } from '../helpers/factories.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

const uids = (n: number, app = t.appA) => newUids(t, app, n);
const send = (sender: string | undefined, payload: Record<string, unknown>, app = t.appA) =>
  t.call(app, '/v3/messages', { method: 'POST', body: payload, ...(sender !== undefined ? { onBehalfOf: sender } : {}) });
const sorted = (a: string, b: string) => (a < b ? `${a}_user_${b}` : `${b}_user_${a}`);

describe('send-message with multipleReceivers', () => {
  it('sends to multipleReceivers and answers per receiver', async () => {
    const [alice, bob, carol] = await uids(3);
    const group = await newGroup(t, t.appA, {}, alice);
    const closed = await newGroup(t, t.appA, {}, bob);
    const missing = uniqueId();
    const response = await send(alice, {
      receiver: bob,
      receiverType: 'user',
      data: { text: 'to everyone' },
      multipleReceivers: { uids: [carol, missing], guids: [group.guid, closed.guid] },
    });
    assert.equal(response.statusCode, 200, response.body);
    const data = body(response).data;
    assert.deepEqual(Object.keys(data.uids).sort(), [bob, carol, missing].sort());
    assert.equal(data.uids[bob!].success, true);
    assert.equal(data.uids[bob!].data.conversationId, sorted(alice!, bob!));
    assert.equal(data.uids[carol!].data.receiver, carol);
    assert.deepEqual(data.uids[missing].error.code, 'ERR_UID_NOT_FOUND');
    assert.equal(data.guids[group.guid].data.conversationId, `group_${group.guid}`);
    assert.equal(data.guids[closed.guid].error.code, 'ERR_GROUP_NOT_JOINED');
    assert.equal(errorCode(await send(alice, { receiverType: 'user', data: { text: 'x' }, multipleReceivers: {} })), 'ERR_EMPTY_RECEIVER');
  });

  it('answers per receiver when one send of multipleReceivers fails inside, never a 500 after others were stored', async () => {
    const [alice, bob, carol] = await uids(3);
    // Fault injection: the coalesced send of one receiver fails as a lost connection would.
    const deps = (t.services.messages as unknown as { deps: { send: (item: { appId: string; message: { receiver: string } }) => Promise<unknown> } }).deps;
    const original = deps.send;
    const failing = new Set([carol!]);
    deps.send = (item) => {
      if (failing.has(item.message.receiver)) return Promise.reject(new Error('Connection terminated unexpectedly'));
      return original(item);
    };
    try {
      const response = await send(alice, { receiverType: 'user', data: { text: 'to both' }, multipleReceivers: { uids: [bob, carol] } });
      assert.equal(response.statusCode, 200, response.body);
      const data = body(response).data;
      assert.equal(data.uids[bob!].success, true);
      assert.equal(data.uids[carol!].success, false);
      assert.equal(data.uids[carol!].error.code, 'ERR_EXCEPTION');
      const stored = await t.call(t.appA, `/v3/users/${bob}/messages`, { onBehalfOf: alice! });
      assert.deepEqual(
        body(stored).data.map((m: any) => m.id),
        [data.uids[bob!].data.id],
      );
      // When every receiver's send failed, nothing was stored: the failure is the answer.
      failing.add(bob!);
      const none = await send(alice, { receiverType: 'user', data: { text: 'to none' }, multipleReceivers: { uids: [bob, carol] } });
      assert.equal(none.statusCode, 500, none.body);
      assert.equal(body(await t.call(t.appA, `/v3/users/${bob}/messages`, { onBehalfOf: alice! })).data.length, 1);
    } finally {
      deps.send = original;
    }
  });
});
