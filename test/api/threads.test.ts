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
const send = async (sender: string, receiver: string, extra: Record<string, unknown> = {}) => {
  const response = await t.call(t.appA, '/v3/messages', {
    method: 'POST',
    body: { receiver, receiverType: 'user', data: { text: 'parent' }, ...extra },
    onBehalfOf: sender,
  });
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
};
const reply = (parentId: string, sender: string | undefined, payload: Record<string, unknown> = { data: { text: 'a reply' } }, app = t.appA) =>
  t.call(app, `/v3/messages/${parentId}/thread`, { method: 'POST', body: payload, ...(sender !== undefined ? { onBehalfOf: sender } : {}) });
const replyOk = async (parentId: string, sender: string, payload?: Record<string, unknown>) => {
  const response = await reply(parentId, sender, payload);
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
};
const thread = (parentId: string, query: Record<string, string> = {}, onBehalfOf?: string, app = t.appA) =>
  t.call(app, `/v3/messages/${parentId}/thread`, { query, ...(onBehalfOf !== undefined ? { onBehalfOf } : {}) });
const getMessage = async (id: string) => body(await t.call(t.appA, `/v3/messages/${id}`)).data;
const ids = (response: { json(): any }) => (response.json().data as Array<{ id: string }>).map((m) => m.id);
const expectError = (response: { statusCode: number; body: string; json(): any }, status: number, code: string) => {
  assert.equal(response.statusCode, status, response.body);
  assert.equal(errorCode(response as never), code, response.body);
};

describe('send-thread-message', () => {
  it('replies in the parent’s 1:1 conversation, from either side, and counts replies on the parent', async () => {
    const [alice, bob] = await uids(2);
    const parent = await send(alice!, bob!, { data: { text: 'parent', metadata: { k: 'v' } } });
    const first = await replyOk(parent.id, bob!, { data: { text: 'test     hello', metadata: { key1: 'val1' } }, tags: ['t1'], muid: 'r-1' });
    assert.equal(first.parentId, parent.id);
    assert.equal(first.conversationId, parent.conversationId);
    assert.deepEqual({ sender: first.sender, receiver: first.receiver, receiverType: first.receiverType }, { sender: bob, receiver: alice, receiverType: 'user' });
    assert.deepEqual({ category: first.category, type: first.type, text: first.data.text }, { category: 'message', type: 'text', text: 'test     hello' });
    assert.deepEqual(first.data.metadata, { key1: 'val1' });
    assert.deepEqual(first.tags, ['t1']);
    assert.equal(first.muid, 'r-1');
    assert.equal(first.data.entities.receiver.entity.uid, alice);
    assert.equal(first.data.entities.receiver.entity.conversationId, parent.conversationId);
    assert.equal(first.replyCount, undefined);
    assert.equal((await getMessage(parent.id)).replyCount, 1);
    // The body's receiver may name the conversation, as the vendor's body has it.
    const second = await replyOk(parent.id, alice!, { receiver: bob, receiverType: 'user', data: { text: 'from alice' } });
    assert.deepEqual({ sender: second.sender, receiver: second.receiver, parentId: second.parentId }, { sender: alice, receiver: bob, parentId: parent.id });
    const upper = await replyOk(parent.id, alice!, { receiver: bob!.toUpperCase(), data: { text: 'any case' } });
    assert.equal(upper.receiver, bob);
    assert.equal((await getMessage(parent.id)).replyCount, 3);
    const updated = await getMessage(parent.id);
    assert.equal(updated.updatedAt, parent.updatedAt, 'a reply does not change its parent');
  });

  it('replies in a group, with the send-message content rules', async () => {
    const [owner, member] = await uids(2);
    const group = await newGroup(t, t.appA, { members: { participants: [member] } }, owner);
    const parentResponse = await t.call(t.appA, '/v3/messages', {
      method: 'POST',
      body: { receiver: group.guid, receiverType: 'group', data: { text: 'topic' } },
      onBehalfOf: owner,
    });
    const parent = body(parentResponse).data;
    const custom = await replyOk(parent.id, member!, { category: 'custom', type: 'location', data: { customData: { lat: 1 } }, receiverType: 'group', receiver: group.guid });
    assert.deepEqual(
      { conversationId: custom.conversationId, receiver: custom.receiver, receiverType: custom.receiverType, parentId: custom.parentId, type: custom.type },
      { conversationId: `group_${group.guid}`, receiver: group.guid, receiverType: 'group', parentId: parent.id, type: 'location' },
    );
    assert.equal(custom.data.entities.receiver.entity.guid, group.guid);
    const image = await replyOk(parent.id, owner!, { type: 'image', data: { attachments: [{ url: 'https://example.com/a.png' }] } });
    assert.equal(image.type, 'image');
    expectError(await reply(parent.id, member!, { data: { text: '   ' } }), 400, 'ERR_EMPTY_MESSAGE_TEXT');
    expectError(await reply(parent.id, member!, { category: 'action', data: { text: 'x' } }), 400, 'ERR_INVALID_MESSAGE_CATEGORY');
    expectError(await reply(parent.id, member!, { type: 'image', data: {} }), 400, 'ERR_EMPTY_MESSAGE_FILE');
    expectError(await reply(parent.id, member!, { category: 'custom', type: 'x', data: {} }), 400, 'ERR_EMPTY_CUSTOM_DATA');
    expectError(await reply(parent.id, member!, { data: 'text' }), 400, 'ERR_BAD_REQUEST');
    assert.equal((await getMessage(parent.id)).replyCount, 2, 'refused replies are not counted');
  });

  it('answers a muid used before with the first reply, counted once', async () => {
    const [alice, bob] = await uids(2);
    const parent = await send(alice!, bob!);
    const first = await replyOk(parent.id, bob!, { muid: 'same', data: { text: 'one' } });
    const again = await replyOk(parent.id, bob!, { muid: 'same', data: { text: 'two' } });
    assert.equal(again.id, first.id);
    assert.equal(again.data.text, 'one');
    assert.equal((await getMessage(parent.id)).replyCount, 1);
  });

  it('counts every one of concurrent replies', async () => {
    const [alice, bob] = await uids(2);
    const parent = await send(alice!, bob!);
    const responses = await Promise.all(Array.from({ length: 12 }, (_, i) => reply(parent.id, i % 2 ? alice : bob, { data: { text: `r${i}` } })));
    for (const response of responses) assert.equal(response.statusCode, 200, response.body);
    assert.equal((await getMessage(parent.id)).replyCount, 12);
    assert.equal(body(await thread(parent.id)).data.length, 12);
  });

  it('needs onBehalfOf naming an active user, and a parent that user can see', async () => {
    const [alice, bob, eve, owner, outsider, banned] = await uids(6);
    const parent = await send(alice!, bob!);
    const none = await reply(parent.id, undefined);
    expectError(none, 400, 'ERR_BAD_REQUEST');
    assert.ok(body(none).error.details.onBehalfOf);
    expectError(await reply(parent.id, uniqueId()), 404, 'ERR_UID_NOT_FOUND');
    expectError(await reply('999999999', alice), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    expectError(await reply('abc', alice), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    expectError(await reply('99999999999999999999999', alice), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    expectError(await reply(parent.id, eve), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    const group = await newGroup(t, t.appA, { members: { usersToBan: [banned] } }, owner);
    const topic = body(await t.call(t.appA, '/v3/messages', { method: 'POST', body: { receiver: group.guid, receiverType: 'group', data: { text: 'x' } }, onBehalfOf: owner })).data;
    expectError(await reply(topic.id, outsider), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    expectError(await reply(topic.id, banned), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    assert.equal((await getMessage(parent.id)).replyCount, undefined);
    assert.equal((await getMessage(topic.id)).replyCount, undefined);
  });

  it('refuses replies to replies and to action messages', async () => {
    const [alice, bob] = await uids(2);
    const parent = await send(alice!, bob!);
    const first = await replyOk(parent.id, bob!);
    expectError(await reply(first.id, alice), 400, 'ERR_MESSAGE_THREAD_NESTING');
    // An action message, stored as the action-messages path stores one.
    const action = await t.services.messages.storeInConversation(
      t.appA.appId,
      {
        conversationId: parent.conversationId,
        sender: alice!,
        receiver: bob!,
        receiverType: 'user',
        category: 'action',
        type: 'message',
        dataJson: JSON.stringify({ action: 'edited', entities: {} }),
        tags: [],
        mentionedUids: [],
        muid: null,
      },
      t.database.db,
    );
    expectError(await reply(String(action!.id), alice), 400, 'ERR_WRONG_MESSAGE_THREAD_CATEGORY');
    assert.equal((await getMessage(parent.id)).replyCount, 1);
  });

  it('refuses a body receiver outside the parent’s conversation, and multipleReceivers', async () => {
    const [alice, bob, carol, owner] = await uids(4);
    const parent = await send(alice!, bob!);
    const group = await newGroup(t, t.appA, { members: { participants: [alice] } }, owner);
    expectError(await reply(parent.id, bob, { receiver: carol, receiverType: 'user', data: { text: 'x' } }), 400, 'ERR_WRONG_MESSAGE_THREAD');
    expectError(await reply(parent.id, bob, { receiver: bob, receiverType: 'user', data: { text: 'x' } }), 400, 'ERR_WRONG_MESSAGE_THREAD');
    expectError(await reply(parent.id, alice, { receiver: group.guid, receiverType: 'group', data: { text: 'x' } }), 400, 'ERR_WRONG_MESSAGE_THREAD');
    expectError(await reply(parent.id, alice, { receiverType: 'group', data: { text: 'x' } }), 400, 'ERR_WRONG_MESSAGE_THREAD');
    expectError(await reply(parent.id, alice, { receiver: bob, receiverType: 'robot', data: { text: 'x' } }), 400, 'ERR_INVALID_RECEIVER_TYPE');
    const multi = await reply(parent.id, alice, { multipleReceivers: { uids: [bob] }, data: { text: 'x' } });
    expectError(multi, 400, 'ERR_BAD_REQUEST');
    assert.ok(body(multi).error.details.multipleReceivers);
    const topic = body(await t.call(t.appA, '/v3/messages', { method: 'POST', body: { receiver: group.guid, receiverType: 'group', data: { text: 'x' } }, onBehalfOf: owner })).data;
    expectError(await reply(topic.id, alice, { receiver: bob, receiverType: 'user', data: { text: 'x' } }), 400, 'ERR_WRONG_MESSAGE_THREAD');
    expectError(await reply(topic.id, alice, { receiver: uniqueId('group'), receiverType: 'group', data: { text: 'x' } }), 400, 'ERR_WRONG_MESSAGE_THREAD');
    assert.equal((await getMessage(parent.id)).replyCount, undefined);
  });

  it('keeps the receiver rules of send-message: blocks and a deactivated partner', async () => {
    const [alice, bob, carol] = await uids(3);
    const parent = await send(alice!, bob!);
    const block = (uid: string, other: string, method: 'POST' | 'DELETE') => t.call(t.appA, `/v3/users/${uid}/blockedusers`, { method, body: { blockedUids: [other] } });
    assert.equal((await block(bob!, alice!, 'POST')).statusCode, 200);
    expectError(await reply(parent.id, alice), 403, 'ERR_BLOCKED_SENDER');
    expectError(await reply(parent.id, bob), 403, 'ERR_BLOCKED_RECEIVER');
    await block(bob!, alice!, 'DELETE');
    await replyOk(parent.id, alice!);
    const other = await send(carol!, alice!);
    await t.call(t.appA, `/v3/users/${carol}`, { method: 'DELETE' });
    expectError(await reply(other.id, alice), 404, 'ERR_UID_NOT_FOUND');
    assert.equal((await getMessage(parent.id)).replyCount, 1);
  });

  it('keeps apps apart', async () => {
    const [alice, bob] = await uids(2);
    const [other] = await uids(1, t.appB);
    const parent = await send(alice!, bob!);
    expectError(await reply(parent.id, other, undefined, t.appB), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    expectError(await reply(parent.id, alice, undefined, t.appB), 404, 'ERR_UID_NOT_FOUND');
    expectError(await thread(parent.id, {}, undefined, t.appB), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    assert.equal((await getMessage(parent.id)).replyCount, undefined);
  });

  it('shows replies in the message lists, and hideReplies leaves them out', async () => {
    const [alice, bob] = await uids(2);
    const parent = await send(alice!, bob!);
    const answer = await replyOk(parent.id, bob!);
    const all = await t.call(t.appA, `/v3/users/${bob}/messages`, { onBehalfOf: alice });
    assert.deepEqual(ids(all), [parent.id, answer.id]);
    assert.equal(body(all).data[0].replyCount, 1);
    assert.equal(body(all).data[1].parentId, parent.id);
    assert.deepEqual(ids(await t.call(t.appA, `/v3/users/${bob}/messages`, { onBehalfOf: alice, query: { hideReplies: 'true' } })), [parent.id]);
    assert.deepEqual(ids(await t.call(t.appA, '/v3/messages', { query: { conversationId: parent.conversationId, hideReplies: 'true' } })), [parent.id]);
  });
});

describe('list-all-thread-messages', () => {
  it('lists a parent’s replies oldest first, by page, with the vendor’s meta', async () => {
    const [alice, bob] = await uids(2);
    const parent = await send(alice!, bob!);
    const other = await send(alice!, bob!);
    const replies = [];
    for (let i = 0; i < 5; i++) replies.push(await replyOk(parent.id, i % 2 ? alice! : bob!, { data: { text: `r${i}` }, tags: ['x'] }));
    await replyOk(other.id, bob!);
    const all = await thread(parent.id, {}, alice);
    assert.equal(all.statusCode, 200, all.body);
    assert.deepEqual(
      ids(all),
      replies.map((r) => r.id),
    );
    const last = replies[4];
    assert.deepEqual(body(all).meta, { current: { limit: 100, count: 5 }, next: { affix: 'append', id: last.id, sentAt: last.sentAt } });
    assert.deepEqual(body(all).data[0], replies[0], 'each reply as send-thread-message answered it');
    assert.deepEqual(ids(await thread(parent.id, { perPage: '2' })), [replies[0].id, replies[1].id]);
    assert.deepEqual(ids(await thread(parent.id, { perPage: '2', page: '3' })), [replies[4].id]);
    const beyond = await thread(parent.id, { perPage: '2', page: '4' });
    assert.deepEqual(body(beyond), { data: [], meta: { current: { limit: 2, count: 0 } } });
    assert.deepEqual(ids(await thread(replies[0].id)), [], 'a reply has no thread');
  });

  it('needs a parent the onBehalfOf user can see, and valid paging', async () => {
    const [alice, bob, eve] = await uids(3);
    const parent = await send(alice!, bob!);
    await replyOk(parent.id, bob!);
    assert.equal(ids(await thread(parent.id, {}, bob)).length, 1);
    expectError(await thread(parent.id, {}, eve), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    expectError(await thread(parent.id, {}, uniqueId()), 404, 'ERR_UID_NOT_FOUND');
    expectError(await thread('123456789012'), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    expectError(await thread('not-an-id'), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    for (const query of [{ perPage: '0' }, { perPage: '1001' }, { page: '0' }, { page: 'x' }, { page: '1e300' }, { limit: '5' }] as Array<Record<string, string>>) {
      expectError(await thread(parent.id, query), 400, 'ERR_BAD_REQUEST');
    }
  });
});
