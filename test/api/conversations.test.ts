import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { body, createTestApp, errorCode, uniqueId, type TestApp } from '../helpers/app.js';
import { newGroup, newUids, newUser } from '../helpers/factories.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

const uids = (n: number, fields: Record<string, unknown> = {}) => newUids(t, t.appA, n, fields);
async function send(sender: string, receiver: string, receiverType: 'user' | 'group' = 'user', text = 'hi') {
  const response = await t.call(t.appA, '/v3/messages', { method: 'POST', onBehalfOf: sender, body: { receiver, receiverType, data: { text } } });
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
}
async function groupWith(owner: string, members: string[], fields: Record<string, unknown> = {}) {
  const group = await newGroup(t, t.appA, { ...fields, members: { participants: members } }, owner);
  return group.guid as string;
}
const list = (viewer: string | undefined, query: Record<string, string> = {}) => t.call(t.appA, '/v3/conversations', { query, ...(viewer ? { onBehalfOf: viewer } : {}) });
const ids = (response: { json(): any; body: string }) => {
  const data = response.json().data as any[] | undefined;
  assert.ok(data, response.body);
  return data.map((c) => c.conversationId);
};
const userConv = (a: string, b: string) => (a < b ? `${a}_user_${b}` : `${b}_user_${a}`);

describe('list-all-conversations', () => {
  it("lists the viewer's 1:1 and group conversations, newest activity first", async () => {
    const [alice, bob, carol, dave] = await uids(4);
    const added = await newGroup(t, t.appA, { members: { participants: [alice!] } }, dave!); // its "added" action message
    const guid = await groupWith(alice!, [bob!]);
    await send(alice!, bob!);
    const toGroup = await send(bob!, guid, 'group', 'hello group');
    const last = await send(carol!, alice!, 'user', 'from carol');
    await send(bob!, carol!); // not alice's

    const response = await list(alice);
    assert.equal(response.statusCode, 200, response.body);
    const page = body(response);
    assert.deepEqual(ids(response), [userConv(alice!, carol!), `group_${guid}`, userConv(alice!, bob!), `group_${added.guid}`]);
    assert.deepEqual(page.meta.pagination, { total: 4, count: 4, per_page: 100, current_page: 1, total_pages: 1 });
    const [withCarol, withGroup, withBob, withAdded] = page.data;
    assert.equal(withAdded.unreadMessageCount, '0', 'action messages are not unread');
    assert.equal(withAdded.lastMessage.category, 'action');
    assert.equal(withCarol.conversationType, 'user');
    assert.equal(withCarol.unreadMessageCount, '1');
    assert.deepEqual(withCarol.lastMessage, last, 'the last message, as sent');
    assert.equal(withCarol.conversationWith.uid, carol);
    assert.equal(withCarol.conversationWith.blockedByMe, false);
    assert.equal(withCarol.conversationWith.conversationId, userConv(alice!, carol!));
    assert.equal(withCarol.updatedAt, last.sentAt);
    assert.equal(typeof withCarol.createdAt, 'number');
    assert.equal(withGroup.conversationType, 'group');
    assert.equal(withGroup.unreadMessageCount, '1');
    assert.deepEqual(withGroup.lastMessage, toGroup, "another member's message, as sent");
    assert.equal(withGroup.conversationWith.guid, guid);
    assert.equal(withGroup.conversationWith.hasJoined, true);
    assert.equal(withGroup.conversationWith.scope, 'admin');
    assert.equal(withBob.unreadMessageCount, '0', 'own messages are not unread');

    const paged = await list(alice, { perPage: '3', page: '2' });
    assert.deepEqual(ids(paged), [`group_${added.guid}`]);
    assert.deepEqual(body(paged).meta.pagination, { total: 4, count: 1, per_page: 3, current_page: 2, total_pages: 2 });
    const alone = await newGroup(t, t.appA, {}, dave!);
    assert.ok(!ids(await list(dave)).includes(`group_${alone.guid}`), 'a group without messages has no conversation');
  });

  it('renders last messages that mention others, and the side of a user deleted since', async () => {
    const [alice, bob, carol, dave, eve] = await uids(5);
    const guid = await groupWith(alice!, [bob!, carol!]);
    const mentioning = await send(bob!, guid, 'group', `hi <@uid:${eve}> and <@uid:${carol}>`);
    const toBob = await send(carol!, bob!, 'user', `about <@uid:${alice}>`);
    await send(dave!, bob!);
    await send(bob!, dave!); // bob's own message keeps the conversation when dave's go
    assert.deepEqual(Object.keys(mentioning.data.mentions).sort(), [carol, eve].sort());
    assert.deepEqual(Object.keys(toBob.data.mentions), [alice]);

    const deleted = await t.call(t.appA, `/v3/users/${dave}`, { method: 'DELETE', body: { permanent: true } });
    assert.equal(deleted.statusCode, 200, deleted.body);
    const response = await list(bob);
    assert.equal(response.statusCode, 200, response.body);
    const byId = new Map(body(response).data.map((c: any) => [c.conversationId, c]));
    assert.deepEqual((byId.get(`group_${guid}`) as any).lastMessage, mentioning);
    assert.deepEqual((byId.get(userConv(bob!, carol!)) as any).lastMessage, toBob);
    const withDave = byId.get(userConv(bob!, dave!)) as any;
    assert.ok(withDave, 'the conversation stays');
    assert.deepEqual(withDave.conversationWith, { uid: dave, conversationId: userConv(bob!, dave!) });
  });

  it("shows each 1:1 side's blocks with the viewer, as get-user does", async () => {
    const [alice, bob, carol, dave] = await uids(4);
    for (const other of [bob!, carol!, dave!]) await send(other, alice!);
    const block = (uid: string, other: string) => t.call(t.appA, `/v3/users/${uid}/blockedusers`, { method: 'POST', body: { blockedUids: [other] } });
    assert.equal((await block(alice!, bob!)).statusCode, 200);
    assert.equal((await block(carol!, alice!)).statusCode, 200);
    assert.equal((await block(alice!, carol!)).statusCode, 200);
    const response = await list(alice);
    assert.equal(response.statusCode, 200, response.body);
    const sideOf = new Map(body(response).data.map((c: any) => [c.conversationWith.uid, c.conversationWith]));
    for (const uid of [bob!, carol!, dave!]) {
      const user = body(await t.call(t.appA, `/v3/users/${uid}`, { onBehalfOf: alice })).data;
      const side = sideOf.get(uid) as any;
      for (const field of ['blockedByMe', 'hasBlockedMe', 'blockedByMeAt', 'hasBlockedMeAt', 'blockedAt']) {
        assert.deepEqual(side[field], user[field], `${field} of ${uid}`);
      }
    }
    const [bobSide, carolSide, daveSide] = [bob, carol, dave].map((uid) => sideOf.get(uid) as any);
    assert.deepEqual([bobSide.blockedByMe, bobSide.hasBlockedMe, typeof bobSide.blockedByMeAt], [true, false, 'number']);
    assert.deepEqual([carolSide.blockedByMe, carolSide.hasBlockedMe, typeof carolSide.hasBlockedMeAt], [true, true, 'number']);
    assert.deepEqual([daveSide.blockedByMe, daveSide.hasBlockedMe, daveSide.blockedAt], [false, false, undefined]);
  });

  it('filters by type, unread, tags, user and group tags, and name', async () => {
    const [alice] = await uids(1);
    const [bob] = await uids(1, { name: 'Bobby Tables', tags: ['vip'] });
    const [carol] = await uids(1, { name: 'Carol' });
    const guid = await groupWith(alice!, [bob!], { name: 'Project Zeta', tags: ['work'] });
    await send(alice!, bob!);
    await send(carol!, alice!);
    await send(alice!, guid, 'group');
    const tagged = await t.call(t.appA, `/v3/users/${carol}/conversation`, { method: 'PUT', onBehalfOf: alice, body: { tags: ['pinned'] } });
    assert.equal(tagged.statusCode, 200, tagged.body);

    assert.deepEqual(ids(await list(alice, { conversationType: 'group' })), [`group_${guid}`]);
    assert.deepEqual(ids(await list(alice, { conversationType: 'user' })), [userConv(alice!, carol!), userConv(alice!, bob!)]);
    assert.deepEqual(ids(await list(alice, { unread: 'true' })), [userConv(alice!, carol!)]);
    assert.equal(ids(await list(alice, { unread: 'false' })).length, 3);
    const withTags = body(await list(alice, { tags: 'pinned', withTags: 'true' }));
    assert.deepEqual(
      withTags.data.map((c: any) => [c.conversationId, c.tags]),
      [[userConv(alice!, carol!), ['pinned']]],
    );
    assert.equal(body(await list(alice, { tags: 'pinned' })).data[0].tags, undefined, 'tags only with withTags');
    assert.deepEqual(ids(await list(alice, { userTags: 'vip' })), [userConv(alice!, bob!)]);
    assert.deepEqual(ids(await list(alice, { groupTags: 'work' })), [`group_${guid}`]);
    assert.deepEqual(ids(await list(alice, { userTags: 'vip', groupTags: 'work' })), [`group_${guid}`, userConv(alice!, bob!)]);
    assert.deepEqual(ids(await list(alice, { searchKey: 'bBY tab' })), [userConv(alice!, bob!)]);
    assert.deepEqual(ids(await list(alice, { searchKey: 'zeta' })), [`group_${guid}`]);
    assert.deepEqual(ids(await list(alice, { searchKey: '%' })), [], 'LIKE wildcards match literally');
    const entityTags = body(await list(alice, { withUserAndGroupTags: 'true', conversationType: 'user' }));
    assert.deepEqual(entityTags.data.find((c: any) => c.conversationWith.uid === bob).conversationWith.tags, ['vip']);
    assert.equal(body(await list(alice, { userTags: 'vip' })).data[0].conversationWith.tags, undefined);
  });

  it('needs onBehalfOf and answers bad input with 400', async () => {
    const [alice] = await uids(1);
    const none = await list(undefined);
    assert.equal(none.statusCode, 400);
    assert.equal(errorCode(none), 'ERR_BAD_REQUEST');
    assert.equal(errorCode(await list(`nobody-${uniqueId()}`)), 'ERR_UID_NOT_FOUND');
    const bad: Array<Record<string, string>> = [{ perPage: '0' }, { perPage: '1001' }, { page: '0' }, { conversationType: 'channel' }, { unread: 'maybe' }, { bogus: '1' }];
    for (const query of bad) {
      const response = await list(alice, query);
      assert.equal(response.statusCode, 400, JSON.stringify(query));
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
    }
  });

  it("another app sees none of this app's conversations", async () => {
    const [alice, bob] = await uids(2);
    await send(alice!, bob!);
    const twin = await newUser(t, t.appB, { uid: alice });
    const response = await t.call(t.appB, '/v3/conversations', { onBehalfOf: twin.uid });
    assert.equal(response.statusCode, 200);
    assert.deepEqual(body(response).data, []);
    assert.equal(errorCode(await t.call(t.appB, `/v3/users/${bob}/conversation`, { onBehalfOf: twin.uid })), 'ERR_UID_NOT_FOUND');
    assert.equal(errorCode(await t.call(t.appB, `/v3/conversations/${userConv(alice!, bob!)}`, { onBehalfOf: twin.uid })), 'ERR_CONVERSATION_NOT_ACCESSIBLE');
  });
});

describe('get-user-conversations, get-group-conversations, get-conversation', () => {
  it('answers the conversation to its participants only', async () => {
    const [alice, bob, eve] = await uids(3);
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${bob}/conversation`, { onBehalfOf: alice })), 'ERR_CONVERSATION_NOT_ACCESSIBLE', 'before any message');
    const sent = await send(bob!, alice!);
    const response = await t.call(t.appA, `/v3/users/${bob!.toUpperCase()}/conversation`, { onBehalfOf: alice });
    assert.equal(response.statusCode, 200, response.body);
    const conversation = body(response).data;
    assert.equal(conversation.conversationId, userConv(alice!, bob!));
    assert.equal(conversation.unreadMessageCount, '1');
    assert.equal(conversation.lastMessage.id, sent.id);
    assert.equal(conversation.conversationWith.uid, bob);
    const fromBob = body(await t.call(t.appA, `/v3/users/${alice}/conversation`, { onBehalfOf: bob })).data;
    assert.equal(fromBob.conversationWith.uid, alice);
    assert.equal(fromBob.unreadMessageCount, '0');

    const byId = await t.call(t.appA, `/v3/conversations/${conversation.conversationId}`, { onBehalfOf: alice });
    assert.equal(byId.statusCode, 200, byId.body);
    assert.deepEqual(body(byId).data, conversation);
    assert.equal(errorCode(await t.call(t.appA, `/v3/conversations/${conversation.conversationId}`, { onBehalfOf: eve })), 'ERR_CONVERSATION_NOT_ACCESSIBLE');
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${bob}/conversation`, { onBehalfOf: eve })), 'ERR_CONVERSATION_NOT_ACCESSIBLE');
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/nobody-${uniqueId()}/conversation`, { onBehalfOf: alice })), 'ERR_UID_NOT_FOUND');
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${bob}/conversation`)), 'ERR_BAD_REQUEST');
    assert.equal(errorCode(await t.call(t.appA, `/v3/conversations/nothing-here`, { onBehalfOf: alice })), 'ERR_CONVERSATION_NOT_ACCESSIBLE');
  });

  it("answers a group's conversation to its members only", async () => {
    const [owner, member, outsider] = await uids(3);
    const alone = (await newGroup(t, t.appA, {}, owner!)).guid;
    assert.equal(errorCode(await t.call(t.appA, `/v3/groups/${alone}/conversation`, { onBehalfOf: owner })), 'ERR_CONVERSATION_NOT_ACCESSIBLE', 'no message yet');
    const guid = await groupWith(owner!, [member!]);
    await send(owner!, guid, 'group');
    const response = await t.call(t.appA, `/v3/groups/${guid}/conversation`, { onBehalfOf: member });
    assert.equal(response.statusCode, 200, response.body);
    const conversation = body(response).data;
    assert.equal(conversation.conversationId, `group_${guid}`);
    assert.equal(conversation.conversationWith.scope, 'participant');
    assert.equal(conversation.unreadMessageCount, '1');
    assert.deepEqual(body(await t.call(t.appA, `/v3/conversations/group_${guid}`, { onBehalfOf: member })).data, conversation);
    assert.equal(errorCode(await t.call(t.appA, `/v3/groups/${guid}/conversation`, { onBehalfOf: outsider })), 'ERR_CONVERSATION_NOT_ACCESSIBLE');
    assert.equal(errorCode(await t.call(t.appA, `/v3/conversations/group_${guid}`, { onBehalfOf: outsider })), 'ERR_CONVERSATION_NOT_ACCESSIBLE');
    assert.equal(errorCode(await t.call(t.appA, `/v3/groups/nothing-${uniqueId()}/conversation`, { onBehalfOf: member })), 'ERR_GUID_NOT_FOUND');
    const kicked = await t.call(t.appA, `/v3/groups/${guid}/members/${member}`, { method: 'DELETE' });
    assert.equal(kicked.statusCode, 200, kicked.body);
    assert.equal(errorCode(await t.call(t.appA, `/v3/groups/${guid}/conversation`, { onBehalfOf: member })), 'ERR_CONVERSATION_NOT_ACCESSIBLE');
    assert.deepEqual(ids(await list(member)), []);
    assert.equal(errorCode(await t.call(t.appB, `/v3/groups/${guid}/conversation`, { onBehalfOf: owner })), 'ERR_UID_NOT_FOUND');
  });
});

describe('update-user-conversation, update-group-conversation', () => {
  it("sets the viewer's own tags", async () => {
    const [alice, bob, eve] = await uids(3);
    const guid = await groupWith(alice!, [bob!]);
    await send(alice!, bob!);
    await send(alice!, guid, 'group');
    const response = await t.call(t.appA, `/v3/users/${bob}/conversation`, { method: 'PUT', onBehalfOf: alice, body: { tags: ['a', 'b', 'a'] } });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(body(response).data.tags, ['a', 'b']);
    assert.equal(body(await t.call(t.appA, `/v3/users/${alice}/conversation`, { onBehalfOf: bob })).data.tags, undefined, "the other side's are their own");
    const group = await t.call(t.appA, `/v3/groups/${guid}/conversation`, { method: 'PUT', onBehalfOf: bob, body: { tags: ['g'] } });
    assert.equal(group.statusCode, 200, group.body);
    assert.deepEqual(body(group).data.tags, ['g']);
    const cleared = await t.call(t.appA, `/v3/users/${bob}/conversation`, { method: 'PUT', onBehalfOf: alice, body: { tags: [] } });
    assert.equal(body(cleared).data.tags, undefined);

    for (const payload of [{}, { tags: 'x' }, { tags: Array.from({ length: 26 }, (_, i) => `t${i}`) }, { tags: ['x'.repeat(101)] }, { tags: [''] }]) {
      const bad = await t.call(t.appA, `/v3/users/${bob}/conversation`, { method: 'PUT', onBehalfOf: alice, body: payload });
      assert.equal(bad.statusCode, 400, JSON.stringify(payload));
      assert.equal(errorCode(bad), 'ERR_BAD_REQUEST');
    }
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${bob}/conversation`, { method: 'PUT', onBehalfOf: eve, body: { tags: ['x'] } })), 'ERR_CONVERSATION_NOT_ACCESSIBLE');
    assert.equal(errorCode(await t.call(t.appA, `/v3/groups/${guid}/conversation`, { method: 'PUT', onBehalfOf: eve, body: { tags: ['x'] } })), 'ERR_CONVERSATION_NOT_ACCESSIBLE');
    assert.equal(errorCode(await t.call(t.appA, `/v3/groups/${guid}/conversation`, { method: 'PUT', body: { tags: ['x'] } })), 'ERR_BAD_REQUEST');
    assert.equal(errorCode(await t.call(t.appB, `/v3/users/${bob}/conversation`, { method: 'PUT', onBehalfOf: alice, body: { tags: ['x'] } })), 'ERR_UID_NOT_FOUND');
  });
});

describe('reset-user-conversation, reset-group-conversation, delete-conversation', () => {
  // Without action messages (adding members records some).
  const history = async (viewer: string, url: string) =>
    (body(await t.call(t.appA, url, { onBehalfOf: viewer, query: { limit: '100' } })).data as any[]).filter((m) => m.category !== 'action').map((m) => m.id);

  it("clears the viewer's history only, until a new message", async () => {
    const [alice, bob] = await uids(2);
    const first = await send(bob!, alice!);
    const second = await send(alice!, bob!);
    const response = await t.call(t.appA, `/v3/users/${bob}/conversation`, { method: 'DELETE', onBehalfOf: alice });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(body(response).data.success, true);
    assert.deepEqual(ids(await list(alice)), []);
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${bob}/conversation`, { onBehalfOf: alice })), 'ERR_CONVERSATION_NOT_ACCESSIBLE');
    assert.deepEqual(await history(alice!, `/v3/users/${bob}/messages`), []);
    assert.deepEqual(await history(bob!, `/v3/users/${alice}/messages`), [first.id, second.id], 'the other side keeps it');
    assert.equal(body(await t.call(t.appA, `/v3/users/${alice}/conversation`, { onBehalfOf: bob })).data.lastMessage.id, second.id);
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${bob}/conversation`, { method: 'DELETE', onBehalfOf: alice })), 'ERR_CONVERSATION_NOT_ACCESSIBLE');

    const third = await send(bob!, alice!);
    assert.deepEqual(ids(await list(alice)), [userConv(alice!, bob!)], 'a new message brings it back');
    const back = body(await t.call(t.appA, `/v3/users/${bob}/conversation`, { onBehalfOf: alice })).data;
    assert.equal(back.unreadMessageCount, '1', 'only the newer messages');
    assert.deepEqual(await history(alice!, `/v3/users/${bob}/messages`), [third.id]);
    const all = (body(await t.call(t.appA, '/v3/messages', { onBehalfOf: alice, query: { limit: '100' } })).data as any[]).map((m) => m.id);
    assert.ok(!all.includes(first.id) && all.includes(third.id), 'list-all-messages hides them too');
  });

  it('deletes the conversation and its messages for both with deleteMessagesPermanently', async () => {
    const [alice, bob, eve] = await uids(3);
    await send(bob!, alice!);
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${bob}/conversation`, { method: 'DELETE', onBehalfOf: alice, body: { conversationWith: eve } })), 'ERR_BAD_REQUEST');
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${bob}/conversation`, { method: 'DELETE', onBehalfOf: alice, body: { deleteMessagesPermanently: 'yes' } })), 'ERR_BAD_REQUEST');
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${bob}/conversation`, { method: 'DELETE', onBehalfOf: eve, body: { deleteMessagesPermanently: true } })), 'ERR_CONVERSATION_NOT_ACCESSIBLE');
    const response = await t.call(t.appA, `/v3/users/${bob}/conversation`, {
      method: 'DELETE',
      onBehalfOf: alice,
      body: { conversationWith: bob, deleteMessagesPermanently: true },
    });
    assert.equal(response.statusCode, 200, response.body);
    for (const [viewer, other] of [
      [alice!, bob!],
      [bob!, alice!],
    ] as const) {
      assert.equal(errorCode(await t.call(t.appA, `/v3/users/${other}/conversation`, { onBehalfOf: viewer })), 'ERR_CONVERSATION_NOT_ACCESSIBLE');
      assert.deepEqual(await history(viewer, `/v3/users/${other}/messages`), []);
    }
    const again = await send(alice!, bob!);
    assert.equal(body(await t.call(t.appA, `/v3/users/${alice}/conversation`, { onBehalfOf: bob })).data.lastMessage.id, again.id);
  });

  it('resets a group conversation for one member; delete-conversation clears it for all by id', async () => {
    const [owner, member] = await uids(2);
    const guid = await groupWith(owner!, [member!]);
    const old = await send(owner!, guid, 'group');
    const response = await t.call(t.appA, `/v3/groups/${guid}/conversation`, { method: 'DELETE', onBehalfOf: member });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(await history(member!, `/v3/groups/${guid}/messages`), []);
    assert.deepEqual(await history(owner!, `/v3/groups/${guid}/messages`), [old.id]);
    assert.equal(errorCode(await t.call(t.appA, `/v3/groups/${guid}/conversation`, { method: 'DELETE' })), 'ERR_BAD_REQUEST');
    assert.equal(errorCode(await t.call(t.appA, `/v3/groups/nothing-${uniqueId()}/conversation`, { method: 'DELETE', onBehalfOf: member })), 'ERR_GUID_NOT_FOUND');

    const deleted = await t.call(t.appA, `/v3/conversations/group_${guid}`, { method: 'DELETE', onBehalfOf: owner });
    assert.equal(deleted.statusCode, 200, deleted.body);
    assert.equal(body(deleted).data.message, `The conversation group_${guid} has been deleted successfully for all the users.`);
    assert.deepEqual(await history(owner!, `/v3/groups/${guid}/messages`), []);
    assert.deepEqual(await history(member!, `/v3/groups/${guid}/messages`), [], 'for every member, as the vendor example says');
    assert.equal(errorCode(await t.call(t.appA, `/v3/conversations/group_${guid}`, { method: 'DELETE', onBehalfOf: owner })), 'ERR_CONVERSATION_NOT_ACCESSIBLE');
    assert.equal(errorCode(await t.call(t.appB, `/v3/conversations/group_${guid}`, { method: 'DELETE', onBehalfOf: owner })), 'ERR_UID_NOT_FOUND');
  });

  it('delete-conversation clears a 1:1 conversation for both users, until a new message', async () => {
    const [alice, bob] = await uids(2);
    await send(alice!, bob!);
    const deleted = await t.call(t.appA, `/v3/conversations/${userConv(alice!, bob!)}`, { method: 'DELETE', onBehalfOf: bob });
    assert.equal(deleted.statusCode, 200, deleted.body);
    assert.equal(body(deleted).data.message, `The conversation ${userConv(alice!, bob!)} has been deleted successfully for all the users.`);
    assert.deepEqual(await history(alice!, `/v3/users/${bob}/messages`), []);
    assert.deepEqual(await history(bob!, `/v3/users/${alice}/messages`), []);
    assert.deepEqual(ids(await list(alice)), []);
    const next = await send(bob!, alice!);
    assert.deepEqual(await history(alice!, `/v3/users/${bob}/messages`), [next.id]);
    assert.deepEqual(ids(await list(alice)), [userConv(alice!, bob!)]);
  });

  it('deleting a group deletes its conversation and messages', async () => {
    const [owner, member] = await uids(2);
    const guid = await groupWith(owner!, [member!]);
    await send(owner!, guid, 'group');
    await t.call(t.appA, `/v3/groups/${guid}/conversation/read`, { method: 'POST', onBehalfOf: member });
    const removed = await t.call(t.appA, `/v3/groups/${guid}`, { method: 'DELETE' });
    assert.equal(removed.statusCode, 200, removed.body);
    assert.deepEqual(ids(await list(member)), []);
    await newGroup(t, t.appA, { guid }, owner!);
    const again = await t.call(t.appA, `/v3/groups/${guid}/messages`, { onBehalfOf: owner });
    assert.deepEqual(body(again).data, [], 'a new group of that guid starts empty');
    assert.equal(errorCode(await t.call(t.appA, `/v3/groups/${guid}/conversation`, { onBehalfOf: owner })), 'ERR_CONVERSATION_NOT_ACCESSIBLE');
  });
});
