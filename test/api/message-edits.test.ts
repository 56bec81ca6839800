import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { conversationKeysOf } from '../../src/domain/conversation-id.js';
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
const send = async (sender: string, payload: Record<string, unknown>, app = t.appA) => {
  const response = await t.call(app, '/v3/messages', { method: 'POST', body: payload, onBehalfOf: sender });
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
};
const text = (receiver: string, words = 'hello', extra: Record<string, unknown> = {}) => ({ receiver, receiverType: 'user', data: { text: words }, ...extra });
const toGroup = (guid: string, words = 'hi all') => ({ receiver: guid, receiverType: 'group', data: { text: words } });
const edit = (id: string, payload: unknown, onBehalfOf?: string, app = t.appA) =>
  t.call(app, `/v3/messages/${id}`, { method: 'PUT', body: payload, ...(onBehalfOf !== undefined ? { onBehalfOf } : {}) });
const remove = (id: string, payload: unknown, onBehalfOf?: string, app = t.appA) =>
  t.call(app, `/v3/messages/${id}`, { method: 'DELETE', ...(payload !== undefined ? { body: payload } : {}), ...(onBehalfOf !== undefined ? { onBehalfOf } : {}) });
const get = (id: string, app = t.appA) => t.call(app, `/v3/messages/${id}`);
const conversation = (id: string) =>
  // The stored key of the conversation the vendor's id names (one in these tests).
  t.database.db.selectFrom('conversations').selectAll().where('app_id', '=', t.appA.appId).where('conversation_id', 'in', conversationKeysOf(id)).executeTakeFirstOrThrow();
const history = async (viewer: string, other: string, query: Record<string, string> = {}) => {
  const response = await t.call(t.appA, `/v3/users/${other}/messages`, { onBehalfOf: viewer, query: { limit: '100', ...query } });
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data as Array<Record<string, any>>;
};
const expectError = (response: { statusCode: number; body: string }, status: number, code: string, why?: string) => {
  assert.equal(response.statusCode, status, why ?? response.body);
  assert.equal(errorCode(response as never), code, why);
};

describe('update-message', () => {
  it('edits as the sender and answers the edited action message in the vendor’s shape', async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, text(bob!, 'hello spider', { data: { text: 'hello spider', metadata: { k: 'v' } }, tags: ['t1'] }));
    const response = await edit(message.id, { data: { text: 'hello world' }, tags: ['t6'] }, alice);
    assert.equal(response.statusCode, 200, response.body);
    const action = body(response).data;
    assert.deepEqual(
      { category: action.category, type: action.type, sender: action.sender, receiver: action.receiver, receiverType: action.receiverType, conversationId: action.conversationId },
      { category: 'action', type: 'message', sender: alice, receiver: bob, receiverType: 'user', conversationId: message.conversationId },
    );
    assert.match(action.id, /^\d+$/);
    assert.ok(BigInt(action.id) > BigInt(message.id));
    assert.equal(action.data.action, 'edited');
    assert.deepEqual(Object.keys(action.data.entities).sort(), ['by', 'for', 'on']);
    assert.equal(action.data.entities.by.entityType, 'user');
    assert.equal(action.data.entities.by.entity.uid, alice);
    assert.equal(action.data.entities.for.entityType, 'user');
    assert.equal(action.data.entities.for.entity.uid, bob);
    const on = action.data.entities.on;
    assert.equal(on.entityType, 'message');
    assert.equal(on.entity.id, message.id);
    assert.equal(on.entity.data.text, 'hello world');
    assert.deepEqual(on.entity.data.metadata, { k: 'v' }, 'keys not given stay');
    assert.deepEqual(on.entity.tags, ['t6']);
    assert.equal(on.entity.editedBy, alice);
    assert.equal(typeof on.entity.editedAt, 'number');
    assert.equal(typeof action.sentAt, 'number');

    const stored = body(await get(message.id)).data;
    assert.equal(stored.data.text, 'hello world');
    assert.deepEqual(stored.data.metadata, { k: 'v' });
    assert.deepEqual(stored.tags, ['t6']);
    assert.equal(stored.editedBy, alice);
    assert.equal(stored.editedAt, on.entity.editedAt);
    assert.equal(stored.updatedAt, stored.editedAt);
    assert.equal(stored.sentAt, message.sentAt);
    assert.equal(stored.category, 'message');
  });

  it('stores the action message in the conversation, as its last message', async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, text(bob!));
    const action = body(await edit(message.id, { data: { text: 'changed' } }, alice)).data;
    const seen = await history(bob!, alice!);
    assert.deepEqual(
      seen.map((m) => m.id),
      [message.id, action.id],
      'both sides see it',
    );
    assert.equal(seen[1]!.data.action, 'edited');
    assert.equal(seen[1]!.data.entities.on.entity.data.text, 'changed', 'the stored entities come back as stored');
    assert.equal(String((await conversation(message.conversationId)).last_message_id), action.id);
    assert.equal(body(await get(action.id)).data.data.action, 'edited', 'the action message can be read by id');
  });

  it('lets the app edit any message, as app_system', async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, text(bob!));
    const response = await edit(message.id, { data: { text: 'moderated' } });
    assert.equal(response.statusCode, 200, response.body);
    const action = body(response).data;
    assert.equal(action.sender, alice, 'the message’s sender, so the action stays between the two users');
    assert.equal(action.data.entities.by.entity.uid, 'app_system');
    assert.equal(action.data.entities.by.entity.name, 'System');
    assert.equal(body(await get(message.id)).data.editedBy, 'app_system');
    assert.equal((await history(bob!, alice!)).length, 2);
  });

  it('resolves mentions again from the new text', async () => {
    const [alice, bob, carol, dave] = await uids(4);
    const message = await send(alice!, text(bob!, `hi <@uid:${carol}>`));
    assert.deepEqual(Object.keys(body(await get(message.id)).data.data.mentions), [carol]);
    assert.equal((await edit(message.id, { data: { text: `hi <@uid:${dave}> and <@uid:${uniqueId()}>` } }, alice)).statusCode, 200);
    const stored = body(await get(message.id)).data;
    assert.deepEqual(Object.keys(stored.data.mentions), [dave]);
    const byMention = await t.call(t.appA, '/v3/messages', { query: { mentionedUids: carol! } });
    assert.equal(body(byMention).data.length, 0, 'the old mention is gone');
  });

  it('edits a group message as its sender; other members may not', async () => {
    const [owner, member] = await uids(2);
    const group = await newGroup(t, t.appA, { members: { participants: [member] } }, owner);
    const message = await send(member!, toGroup(group.guid));
    const action = body(await edit(message.id, { data: { text: 'edited' } }, member)).data;
    assert.equal(action.receiverType, 'group');
    assert.equal(action.data.entities.for.entityType, 'group');
    assert.equal(action.data.entities.for.entity.guid, group.guid);
    expectError(await edit(message.id, { data: { text: 'by the owner' } }, owner), 403, 'ERR_MESSAGE_NOT_A_SENDER', 'not even the owner');
  });

  it('answers ERR_MESSAGE_NOT_A_SENDER and ERR_MESSAGE_ID_NOT_FOUND, changing nothing', async () => {
    const [alice, bob, eve] = await uids(3);
    const message = await send(alice!, text(bob!, 'original'));
    expectError(await edit(message.id, { data: { text: 'x' } }, bob), 403, 'ERR_MESSAGE_NOT_A_SENDER', 'the receiver');
    expectError(await edit(message.id, { data: { text: 'x' } }, eve), 404, 'ERR_MESSAGE_ID_NOT_FOUND', 'a user not in the conversation');
    expectError(await edit('999999999999', { data: { text: 'x' } }, alice), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    expectError(await edit('abc', { data: { text: 'x' } }), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    expectError(await edit('99999999999999999999999', { data: { text: 'x' } }), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    expectError(await edit(message.id, { data: { text: 'x' } }, uniqueId()), 404, 'ERR_UID_NOT_FOUND');
    const stored = body(await get(message.id)).data;
    assert.equal(stored.data.text, 'original');
    assert.equal(stored.editedAt, undefined);
    assert.equal((await history(alice!, bob!)).length, 1, 'no action message');
  });

  it('applies the content rules of a send, with the vendor’s codes, never a 500', async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, text(bob!));
    const image = await send(alice!, { receiver: bob, receiverType: 'user', type: 'image', data: { attachments: [{ url: 'https://x.test/a.png' }] } });
    const custom = await send(alice!, { receiver: bob, receiverType: 'user', category: 'custom', type: 'location', data: { customData: { lat: 1 } } });
    const cases: Array<[string, unknown, number, string]> = [
      [message.id, { data: { text: '  ' } }, 400, 'ERR_EMPTY_MESSAGE_TEXT'],
      [message.id, {}, 400, 'ERR_BAD_REQUEST'],
      [message.id, { data: 'text' }, 400, 'ERR_BAD_REQUEST'],
      [message.id, { data: { text: 5 } }, 400, 'ERR_BAD_REQUEST'],
      [message.id, { tags: 'a' }, 400, 'ERR_BAD_REQUEST'],
      [message.id, { data: { text: 'x'.repeat(11_000) } }, 400, 'ERR_BAD_REQUEST'],
      [message.id, { data: { text: Array.from({ length: 11 }, (_, i) => `<@uid:u${i}>`).join(' ') } }, 400, 'ERR_BAD_REQUEST'],
      [image.id, { data: { attachments: [] } }, 400, 'ERR_EMPTY_MESSAGE_FILE'],
      [custom.id, { data: { customData: null } }, 400, 'ERR_BAD_REQUEST'],
    ];
    for (const [id, payload, status, code] of cases) expectError(await edit(id, payload, alice), status, code, JSON.stringify(payload));
    // A media message keeps its attachments when only its metadata changes.
    const kept = body(await edit(image.id, { data: { metadata: { seen: true } } }, alice)).data;
    assert.equal(kept.data.entities.on.entity.data.attachments[0].url, 'https://x.test/a.png');
    assert.equal((await history(alice!, bob!)).length, 4, 'three messages and one action message');
  });

  it('refuses to edit action messages and deleted messages', async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, text(bob!));
    const action = body(await edit(message.id, { data: { text: 'one' } }, alice)).data;
    expectError(await edit(action.id, { data: { text: 'x' } }), 403, 'ERR_MESSAGE_ACTION_NOT_ALLOWED', 'an action message');
    expectError(await edit(action.id, { data: { text: 'x' } }, alice), 403, 'ERR_MESSAGE_ACTION_NOT_ALLOWED', 'its own sender neither');
    assert.equal((await remove(message.id, undefined, alice)).statusCode, 200);
    expectError(await edit(message.id, { data: { text: 'x' } }, alice), 403, 'ERR_MESSAGE_ACTION_NOT_ALLOWED', 'a deleted message');
  });

  it("cannot edit another app's message", async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, text(bob!, 'mine'));
    expectError(await edit(message.id, { data: { text: 'x' } }, undefined, t.appB), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    const [mallory] = await uids(1, t.appB);
    expectError(await edit(message.id, { data: { text: 'x' } }, mallory, t.appB), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    assert.equal(body(await get(message.id)).data.data.text, 'mine');
  });
});

describe('delete-message', () => {
  it('soft-deletes as the sender: the message stays, marked deleted, and the list filters work', async () => {
    const [alice, bob] = await uids(2);
    const kept = await send(alice!, text(bob!, 'kept'));
    const message = await send(alice!, text(bob!, 'oops'));
    const response = await remove(message.id, undefined, alice);
    assert.equal(response.statusCode, 200, response.body);
    const action = body(response).data;
    assert.equal(action.category, 'action');
    assert.equal(action.type, 'message');
    assert.equal(action.data.action, 'deleted');
    assert.equal(action.data.entities.by.entity.uid, alice);
    assert.equal(action.data.entities.on.entity.id, message.id);
    assert.equal(action.data.entities.on.entity.deletedBy, alice);
    assert.equal(typeof action.data.entities.on.entity.deletedAt, 'number');

    const stored = body(await get(message.id)).data;
    assert.equal(stored.data.text, 'oops', 'a soft delete keeps the content');
    assert.equal(stored.deletedBy, alice);
    assert.equal(stored.updatedAt, stored.deletedAt);
    assert.deepEqual(
      (await history(bob!, alice!)).map((m) => m.id),
      [kept.id, message.id, action.id],
    );
    assert.deepEqual(
      (await history(bob!, alice!, { hideDeleted: 'true' })).map((m) => m.id),
      [kept.id, action.id],
    );
    assert.deepEqual(
      (await history(bob!, alice!, { onlyDeleted: 'true' })).map((m) => m.id),
      [message.id],
    );
    const both = await t.call(t.appA, `/v3/users/${alice}/messages`, { onBehalfOf: bob, query: { hideDeleted: 'true', onlyDeleted: 'true' } });
    expectError(both, 400, 'ERR_BAD_REQUEST');
    const all = await t.call(t.appA, '/v3/messages', { query: { onlyDeleted: 'true', conversationId: message.conversationId } });
    assert.deepEqual(
      body(all).data.map((m: any) => m.id),
      [message.id],
    );
    assert.equal(String((await conversation(message.conversationId)).last_message_id), action.id);
  });

  it('lets a group’s moderators, admins and owner delete its messages, not its participants', async () => {
    const [owner, admin, moderator, participant, other] = await uids(5);
    const group = await newGroup(t, t.appA, { members: { admins: [admin], moderators: [moderator], participants: [participant, other] } }, owner);
    const messages = await Promise.all(Array.from({ length: 4 }, () => send(other!, toGroup(group.guid))));
    expectError(await remove(messages[0]!.id, undefined, participant), 403, 'ERR_MESSAGE_NOT_A_SENDER');
    for (const [index, staff] of [moderator, admin, owner].entries()) {
      const response = await remove(messages[index]!.id, undefined, staff);
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(body(response).data.sender, staff);
      assert.equal(body(response).data.data.entities.by.entity.uid, staff);
      assert.equal(body(await get(messages[index]!.id)).data.deletedBy, staff);
    }
    const outsider = (await uids(1))[0]!;
    expectError(await remove(messages[3]!.id, undefined, outsider), 404, 'ERR_MESSAGE_ID_NOT_FOUND', 'a non-member');
  });

  it('lets the app delete any message, as app_system', async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, text(bob!));
    const action = body(await remove(message.id, {})).data;
    assert.equal(action.data.entities.by.entity.uid, 'app_system');
    assert.equal(action.sender, alice);
    assert.equal(body(await get(message.id)).data.deletedBy, 'app_system');
  });

  it('deletes permanently: the row, its content in earlier action messages, and the last message moves on', async () => {
    const [alice, bob] = await uids(2);
    const first = await send(alice!, text(bob!, 'first'));
    const message = await send(alice!, text(bob!, 'secret'));
    const edited = body(await edit(message.id, { data: { text: 'still secret' } }, alice)).data;
    const response = await remove(message.id, { permanent: true }, alice);
    assert.equal(response.statusCode, 200, response.body);
    const action = body(response).data;
    assert.equal(action.data.action, 'deleted');
    const on = action.data.entities.on.entity;
    assert.equal(on.id, message.id);
    assert.equal(on.deletedBy, alice);
    assert.equal(on.data.text, undefined, 'no content survives');
    assert.equal(on.tags, undefined);
    expectError(await get(message.id), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    expectError(await get(edited.id), 404, 'ERR_MESSAGE_ID_NOT_FOUND', 'the edited action message carried the content');
    assert.deepEqual(
      (await history(alice!, bob!)).map((m) => m.id),
      [first.id, action.id],
    );
    assert.ok(!JSON.stringify(await history(alice!, bob!)).includes('secret'));
    assert.equal(String((await conversation(message.conversationId)).last_message_id), action.id);
  });

  it('deletes a soft-deleted message permanently, but not twice softly', async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, text(bob!));
    assert.equal((await remove(message.id, undefined, alice)).statusCode, 200);
    expectError(await remove(message.id, undefined, alice), 403, 'ERR_MESSAGE_ACTION_NOT_ALLOWED');
    expectError(await remove(message.id, { permanent: false }, alice), 403, 'ERR_MESSAGE_ACTION_NOT_ALLOWED');
    assert.equal((await remove(message.id, { permanent: true }, alice)).statusCode, 200);
    expectError(await remove(message.id, { permanent: true }, alice), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    const left = await history(alice!, bob!);
    assert.deepEqual(
      left.map((m) => m.data.action),
      ['deleted'],
      'the first deleted action message carried the content: only the last one stays',
    );
  });

  it('uncounts a permanently deleted thread reply on its parent', async () => {
    const [alice, bob] = await uids(2);
    const parent = await send(alice!, text(bob!));
    const reply = await t.call(t.appA, `/v3/messages/${parent.id}/thread`, { method: 'POST', body: text(bob!, 'a reply'), onBehalfOf: alice });
    assert.equal(reply.statusCode, 200, reply.body);
    assert.equal(body(await get(parent.id)).data.replyCount, 1);
    assert.equal((await remove(body(reply).data.id, { permanent: true }, alice)).statusCode, 200);
    assert.equal(body(await get(parent.id)).data.replyCount, undefined);
  });

  it('answers the vendor’s codes for the wrong user, action messages and bad input', async () => {
    const [alice, bob, eve] = await uids(3);
    const message = await send(alice!, text(bob!));
    expectError(await remove(message.id, undefined, bob), 403, 'ERR_MESSAGE_NOT_A_SENDER', 'the receiver');
    expectError(await remove(message.id, undefined, eve), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    expectError(await remove(message.id, undefined, uniqueId()), 404, 'ERR_UID_NOT_FOUND');
    expectError(await remove('12x', undefined), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    expectError(await remove('999999999999', undefined), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    expectError(await remove(message.id, { permanent: 'soon' }, alice), 400, 'ERR_BAD_REQUEST');
    const action = body(await edit(message.id, { data: { text: 'x' } }, alice)).data;
    expectError(await remove(action.id, undefined), 403, 'ERR_MESSAGE_ACTION_NOT_ALLOWED');
    expectError(await remove(action.id, { permanent: true }), 403, 'ERR_MESSAGE_ACTION_NOT_ALLOWED');
    assert.equal(body(await get(message.id)).data.deletedAt, undefined);
  });

  it("cannot delete another app's message", async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, text(bob!));
    expectError(await remove(message.id, { permanent: true }, undefined, t.appB), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    assert.equal(body(await get(message.id)).data.deletedAt, undefined);
  });
});

describe('send-bot-message', () => {
  const bot = (uid: string, payload: unknown, app = t.appA, onBehalfOf?: string) => t.call(app, `/v3/bots/${uid}/messages`, { method: 'POST', body: payload, ...(onBehalfOf ? { onBehalfOf } : {}) });

  it('sends as the uid in the path, as send-message does', async () => {
    const [helper, alice] = await uids(2);
    const response = await bot(helper!.toUpperCase(), text(alice!, 'test     hello', { data: { text: 'test     hello', metadata: { key1: 'val1' } } }));
    assert.equal(response.statusCode, 200, response.body);
    const message = body(response).data;
    assert.equal(message.sender, helper, 'normalised like any uid');
    assert.equal(message.receiver, alice);
    assert.equal(message.data.text, 'test     hello');
    assert.equal(message.data.entities.sender.entity.uid, helper);
    assert.deepEqual(
      (await history(alice!, helper!)).map((m) => m.id),
      [message.id],
    );
    const other = (await uids(1))[0]!;
    const ignored = body(await bot(helper!, text(alice!), t.appA, other)).data;
    assert.equal(ignored.sender, helper, 'the path names the sender, not onBehalfOf');
  });

  it('sends to groups and to several receivers with the rules of a send', async () => {
    const [helper, alice] = await uids(2);
    const group = await newGroup(t, t.appA, { members: { participants: [helper] } });
    assert.equal(body(await bot(helper!, toGroup(group.guid))).data.receiverType, 'group');
    const multi = body(await bot(helper!, { receiverType: 'user', data: { text: 'x' }, multipleReceivers: { uids: [alice], guids: [group.guid] } })).data;
    assert.equal(multi.uids[alice!].success, true);
    assert.equal(multi.guids[group.guid].success, true);
    const notMember = await newGroup(t, t.appA);
    expectError(await bot(helper!, toGroup(notMember.guid)), 403, 'ERR_GROUP_NOT_JOINED');
    expectError(await bot(helper!, { receiver: alice, receiverType: 'user', data: {} }), 400, 'ERR_EMPTY_MESSAGE_TEXT');
    expectError(await bot(helper!, { receiver: alice, receiverType: 'user', data: 'x' }), 400, 'ERR_BAD_REQUEST');
  });

  it('answers ERR_UID_NOT_FOUND for an unknown or deactivated bot, and for another app’s user', async () => {
    const [alice, retired] = await uids(2);
    expectError(await bot(uniqueId(), text(alice!)), 404, 'ERR_UID_NOT_FOUND');
    await t.call(t.appA, `/v3/users/${retired}`, { method: 'DELETE' });
    expectError(await bot(retired!, text(alice!)), 404, 'ERR_UID_NOT_FOUND');
    const [foreign] = await uids(1, t.appB);
    expectError(await bot(foreign!, text(alice!)), 404, 'ERR_UID_NOT_FOUND');
    expectError(await bot(alice!, text(foreign!)), 404, 'ERR_UID_NOT_FOUND', 'nor another app’s receiver');
  });
});
