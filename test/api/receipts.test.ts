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

const uids = (n: number) => newUids(t, t.appA, n);
async function send(sender: string, receiver: string, receiverType: 'user' | 'group' = 'user') {
  const response = await t.call(t.appA, '/v3/messages', { method: 'POST', onBehalfOf: sender, body: { receiver, receiverType, data: { text: 'hi' } } });
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
}
const mark = (viewer: string | undefined, url: string, method: 'POST' | 'DELETE', messageId?: unknown) =>
  t.call(t.appA, url, { method, ...(viewer ? { onBehalfOf: viewer } : {}), ...(messageId !== undefined ? { body: { messageId } } : {}) });
const unread = async (viewer: string, url: string) => {
  const response = await t.call(t.appA, url, { onBehalfOf: viewer });
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data.unreadMessageCount as string;
};
/** id → [deliveredAt?, readAt?] of a message list, without action messages. */
const receipts = async (viewer: string, url: string, query: Record<string, string> = {}) => {
  const response = await t.call(t.appA, url, { onBehalfOf: viewer, query: { limit: '100', ...query } });
  assert.equal(response.statusCode, 200, response.body);
  return Object.fromEntries((body(response).data as any[]).filter((m) => m.category !== 'action').map((m) => [m.id, [m.deliveredAt !== undefined, m.readAt !== undefined]]));
};

describe('1:1 receipts and unread counts', () => {
  it('moves the marks forwards, unread backwards, and shows them on messages', async () => {
    const [alice, bob] = await uids(2);
    const m1 = await send(bob!, alice!);
    const m2 = await send(bob!, alice!);
    const m3 = await send(bob!, alice!);
    const own = await send(alice!, bob!);
    const conv = `/v3/users/${bob}/conversation`;
    assert.equal(await unread(alice!, conv), '3');
    assert.equal(await unread(bob!, `/v3/users/${alice}/conversation`), '1');

    const delivered = await mark(alice, `${conv}/delivered`, 'POST');
    assert.equal(delivered.statusCode, 200, delivered.body);
    assert.equal(body(delivered).data.success, true);
    assert.equal(typeof body(delivered).data.Message, 'string', "the vendor's spelling");
    assert.deepEqual(await receipts(alice!, `/v3/users/${bob}/messages`), {
      [m1.id]: [true, false],
      [m2.id]: [true, false],
      [m3.id]: [true, false],
      [own.id]: [false, false],
    });
    assert.equal(await unread(alice!, conv), '3', 'delivered is not read');

    const read = await mark(alice, `${conv}/read`, 'POST', Number(m2.id));
    assert.equal(read.statusCode, 200, read.body);
    assert.equal(await unread(alice!, conv), '1');
    const seenByBob = await receipts(bob!, `/v3/users/${alice}/messages`);
    assert.deepEqual(seenByBob[m2.id], [true, true], "the sender sees the receiver's receipts");
    assert.deepEqual(seenByBob[m3.id], [true, false]);
    const single = body(await t.call(t.appA, `/v3/messages/${m1.id}`, { onBehalfOf: bob })).data;
    assert.equal(typeof single.readAt, 'number');
    assert.equal(typeof single.deliveredAt, 'number');

    await mark(alice, `${conv}/read`, 'POST', m1.id);
    assert.equal(await unread(alice!, conv), '1', 'never backwards');
    const unreadAgain = await mark(alice, `${conv}/read`, 'DELETE', m1.id);
    assert.equal(unreadAgain.statusCode, 200, unreadAgain.body);
    assert.equal(typeof body(unreadAgain).data.message, 'string');
    assert.equal(await unread(alice!, conv), '2', 'the messages after m1 are unread');
    await mark(alice, `${conv}/read`, 'DELETE', m3.id);
    assert.equal(await unread(alice!, conv), '2', 'unread never marks anything read');
    await mark(alice, `${conv}/read`, 'DELETE');
    assert.equal(await unread(alice!, conv), '3', 'without messageId: all unread');
    assert.deepEqual((await receipts(alice!, `/v3/users/${bob}/messages`))[m1.id], [true, false], 'delivered stays');

    await mark(alice, `${conv}/read`, 'POST');
    assert.equal(await unread(alice!, conv), '0');
    await send(bob!, alice!);
    assert.equal(await unread(alice!, conv), '1', 'a new message is unread');
  });

  it('lists unread and undelivered messages', async () => {
    const [alice, bob] = await uids(2);
    const m1 = await send(bob!, alice!);
    const m2 = await send(bob!, alice!);
    await send(alice!, bob!);
    const url = `/v3/users/${bob}/messages`;
    const idsOf = async (query: Record<string, string>) => Object.keys(await receipts(alice!, url, query));
    assert.deepEqual(await idsOf({ unread: 'true' }), [m1.id, m2.id]);
    await mark(alice, `/v3/users/${bob}/conversation/delivered`, 'POST', m1.id);
    assert.deepEqual(await idsOf({ undelivered: 'true' }), [m2.id]);
    await mark(alice, `/v3/users/${bob}/conversation/read`, 'POST', m1.id);
    assert.deepEqual(await idsOf({ unread: 'true' }), [m2.id]);
    assert.equal((await idsOf({ unread: 'false' })).length, 3);
    const guid = (await newGroup(t, t.appA, {}, alice!)).guid;
    const noViewer = await t.call(t.appA, `/v3/groups/${guid}/messages`, { query: { unread: 'true' } });
    assert.equal(noViewer.statusCode, 400);
    const bad = await t.call(t.appA, url, { onBehalfOf: alice, query: { undelivered: 'sometimes' } });
    assert.equal(errorCode(bad), 'ERR_BAD_REQUEST');
  });

  it('answers errors and bad input with the vendor codes', async () => {
    const [alice, bob, eve, zed] = await uids(4);
    const m1 = await send(bob!, alice!);
    const elsewhere = await send(bob!, eve!);
    const conv = `/v3/users/${bob}/conversation`;
    for (const [path, method] of [
      ['delivered', 'POST'],
      ['read', 'POST'],
      ['read', 'DELETE'],
    ] as const) {
      const url = `${conv}/${path}`;
      assert.equal(errorCode(await mark(alice, url, method, elsewhere.id)), 'ERR_MESSAGE_ID_NOT_FOUND', `${method} ${path}: another conversation's message`);
      assert.equal(errorCode(await mark(alice, url, method, '99999999999999999999')), 'ERR_MESSAGE_ID_NOT_FOUND');
      for (const value of ['abc', -1, 0, 1.5, true]) {
        const response = await mark(alice, url, method, value);
        assert.equal(response.statusCode, 400, `${method} ${path} ${JSON.stringify(value)}`);
        assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
      }
      assert.equal(errorCode(await mark(undefined, url, method)), 'ERR_BAD_REQUEST');
      assert.equal(errorCode(await mark(zed, url, method)), 'ERR_CONVERSATION_NOT_ACCESSIBLE', 'never talked with bob');
      assert.equal(errorCode(await mark(zed, url, method, m1.id)), 'ERR_CONVERSATION_NOT_ACCESSIBLE');
      assert.equal(errorCode(await mark(eve, url, method, m1.id)), 'ERR_MESSAGE_ID_NOT_FOUND', "a message of alice's conversation, not eve's");
      assert.equal(errorCode(await mark(alice, `/v3/users/nobody-${uniqueId()}/conversation/${path}`, method)), 'ERR_UID_NOT_FOUND');
      assert.equal(errorCode(await t.call(t.appB, url, { method, onBehalfOf: alice })), 'ERR_UID_NOT_FOUND', 'another app');
    }
    assert.equal(await unread(alice!, conv), '1', 'nothing was marked');
  });
});

describe('group receipts and unread counts', () => {
  it("keeps each member's marks; counts what others sent after the member joined", async () => {
    const [owner, member, late, outsider] = await uids(4);
    const guid = (await newGroup(t, t.appA, { members: { participants: [member!] } }, owner)).guid as string;
    const g1 = await send(owner!, guid, 'group');
    const g2 = await send(member!, guid, 'group');
    const conv = `/v3/groups/${guid}/conversation`;
    assert.equal(await unread(member!, conv), '1');
    assert.equal(await unread(owner!, conv), '1');
    const added = await t.call(t.appA, `/v3/groups/${guid}/members`, { method: 'POST', body: { participants: [late] } });
    assert.equal(added.statusCode, 200, added.body);
    assert.equal(await unread(late!, conv), '0', 'messages from before joining are not unread');
    const g3 = await send(owner!, guid, 'group');
    assert.equal(await unread(late!, conv), '1');

    const read = await mark(member, `${conv}/read`, 'POST', g1.id);
    assert.equal(read.statusCode, 200, read.body);
    assert.equal(typeof body(read).data.message, 'string');
    assert.equal(await unread(member!, conv), '1');
    assert.equal(await unread(owner!, conv), '1', "another member's marks are their own");
    const memberView = await receipts(member!, `/v3/groups/${guid}/messages`);
    assert.deepEqual(memberView[g1.id], [true, true]);
    assert.deepEqual(memberView[g2.id], [false, false], 'their own message: no receipt of theirs');
    assert.deepEqual(memberView[g3.id], [false, false]);
    assert.deepEqual((await receipts(owner!, `/v3/groups/${guid}/messages`))[g1.id], [false, false], "the owner's view shows the owner's marks");
    assert.deepEqual((await receipts(owner!, `/v3/groups/${guid}/messages`, {}))[g2.id], [false, false]);

    const delivered = await mark(owner, `${conv}/delivered`, 'POST');
    assert.equal(delivered.statusCode, 200, delivered.body);
    assert.deepEqual((await receipts(owner!, `/v3/groups/${guid}/messages`))[g2.id], [true, false]);
    await mark(member, `${conv}/read`, 'DELETE');
    assert.equal(await unread(member!, conv), '2');

    assert.equal(errorCode(await mark(outsider, `${conv}/read`, 'POST')), 'ERR_CONVERSATION_NOT_ACCESSIBLE');
    assert.equal(errorCode(await mark(member, `/v3/groups/nothing-${uniqueId()}/conversation/read`, 'POST')), 'ERR_GUID_NOT_FOUND');
    assert.equal(errorCode(await mark(member, `${conv}/read`, 'POST', 'x1')), 'ERR_BAD_REQUEST');
    assert.equal(errorCode(await t.call(t.appB, `${conv}/read`, { method: 'POST', onBehalfOf: member })), 'ERR_UID_NOT_FOUND');
    const unreadList = await receipts(member!, `/v3/groups/${guid}/messages`, { unread: 'true' });
    assert.deepEqual(Object.keys(unreadList), [g1.id, g3.id]);
  });
});
