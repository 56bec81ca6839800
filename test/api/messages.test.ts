import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { userConversationKey } from '../../src/domain/conversation-id.js';
import { body, createTestApp, errorCode, uniqueId, type TestApp } from '../helpers/app.js';
import { TEST_ENGINE } from '../helpers/db.js';
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
const text = (receiver: string, words = 'hello', extra: Record<string, unknown> = {}) => ({
  receiver,
  receiverType: 'user',
  category: 'message',
  type: 'text',
  data: { text: words },
  ...extra,
});
const sorted = (a: string, b: string) => (a < b ? `${a}_user_${b}` : `${b}_user_${a}`);

describe('send-message', () => {
  it('sends a 1:1 text message in the vendor’s shape', async () => {
    const [alice, bob] = await uids(2);
    const response = await send(alice, text(bob!, 'test     hello', { data: { text: 'test     hello', metadata: { key1: 'val1' } }, muid: 'm-1', tags: ['a', 'b'] }));
    assert.equal(response.statusCode, 200, response.body);
    const message = body(response).data;
    assert.match(message.id, /^\d+$/);
    assert.equal(message.conversationId, sorted(alice!, bob!));
    assert.deepEqual(
      { sender: message.sender, receiver: message.receiver, receiverType: message.receiverType, category: message.category, type: message.type, muid: message.muid },
      { sender: alice, receiver: bob, receiverType: 'user', category: 'message', type: 'text', muid: 'm-1' },
    );
    assert.deepEqual(message.tags, ['a', 'b']);
    assert.equal(message.data.text, 'test     hello');
    assert.deepEqual(message.data.metadata, { key1: 'val1' });
    assert.equal(message.data.entities.sender.entityType, 'user');
    assert.equal(message.data.entities.sender.entity.uid, alice);
    assert.equal(message.data.entities.sender.entity.name, `User ${alice}`);
    assert.equal(typeof message.data.entities.sender.entity.createdAt, 'number');
    assert.deepEqual(
      { uid: message.data.entities.receiver.entity.uid, conversationId: message.data.entities.receiver.entity.conversationId, type: message.data.entities.receiver.entityType },
      { uid: bob, conversationId: message.conversationId, type: 'user' },
    );
    assert.equal(typeof message.sentAt, 'number');
    assert.equal(message.updatedAt, message.sentAt);
    assert.ok(Math.abs(message.sentAt - Date.now() / 1000) < 60);
  });

  it('creates the conversation with the first message and bumps it with each', async () => {
    const [alice, bob] = await uids(2);
    const conversationId = sorted(alice!, bob!);
    const conversation = () =>
      t.database.db.selectFrom('conversations').selectAll().where('app_id', '=', t.appA.appId).where('conversation_id', '=', userConversationKey(alice!, bob!)).executeTakeFirst();
    assert.equal(await conversation(), undefined);
    const first = body(await send(alice, text(bob!))).data;
    assert.equal(String((await conversation())!.last_message_id), first.id);
    const second = body(await send(bob, text(alice!))).data;
    assert.equal(second.conversationId, conversationId, 'the same conversation from either side');
    const row = (await conversation())!;
    assert.equal(String(row.last_message_id), second.id);
    assert.equal(row.conversation_type, 'user');
    const sides = await t.database.db
      .selectFrom('user_conversations')
      .select(['uid', 'conversation_with'])
      .where('app_id', '=', t.appA.appId)
      .where('conversation_id', '=', userConversationKey(alice!, bob!))
      .orderBy('uid')
      .execute();
    assert.deepEqual(
      sides,
      [alice!, bob!].sort().map((uid) => ({ uid, conversation_with: uid === alice ? bob : alice })),
    );
  });

  it('sends to a group its sender is a member of', async () => {
    const [owner, member] = await uids(2);
    const group = await newGroup(t, t.appA, { members: { participants: [member] } }, owner);
    const response = await send(member, { receiver: group.guid, receiverType: 'group', data: { text: 'hi all' } });
    assert.equal(response.statusCode, 200, response.body);
    const message = body(response).data;
    assert.equal(message.conversationId, `group_${group.guid}`);
    assert.equal(message.type, 'text', 'category and type default to message / text');
    assert.equal(message.data.entities.receiver.entityType, 'group');
    assert.equal(message.data.entities.receiver.entity.guid, group.guid);
    assert.equal(message.data.entities.receiver.entity.conversationId, `group_${group.guid}`);
  });

  it('answers ERR_GROUP_NOT_JOINED, ERR_BANNED_GROUPMEMBER and ERR_GUID_NOT_FOUND for groups', async () => {
    const [owner, outsider, banned] = await uids(3);
    const group = await newGroup(t, t.appA, { members: { usersToBan: [banned] } }, owner);
    const toGroup = { receiver: group.guid, receiverType: 'group', data: { text: 'x' } };
    const notJoined = await send(outsider, toGroup);
    assert.equal(notJoined.statusCode, 403);
    assert.equal(errorCode(notJoined), 'ERR_GROUP_NOT_JOINED');
    const bannedResponse = await send(banned, toGroup);
    assert.equal(bannedResponse.statusCode, 403);
    assert.equal(errorCode(bannedResponse), 'ERR_BANNED_GROUPMEMBER');
    const unknown = await send(owner, { ...toGroup, receiver: uniqueId('group') });
    assert.equal(unknown.statusCode, 404);
    assert.equal(errorCode(unknown), 'ERR_GUID_NOT_FOUND');
  });

  it('needs onBehalfOf naming an active user, and an active receiver', async () => {
    const [alice, bob, gone] = await uids(3);
    const none = await send(undefined, text(bob!));
    assert.equal(none.statusCode, 400);
    assert.equal(errorCode(none), 'ERR_BAD_REQUEST');
    assert.ok(body(none).error.details.onBehalfOf);
    assert.equal(errorCode(await send(uniqueId(), text(bob!))), 'ERR_UID_NOT_FOUND');
    const unknownReceiver = await send(alice, text(uniqueId()));
    assert.equal(unknownReceiver.statusCode, 404);
    assert.equal(errorCode(unknownReceiver), 'ERR_UID_NOT_FOUND');
    await t.call(t.appA, `/v3/users/${gone}`, { method: 'DELETE' });
    assert.equal(errorCode(await send(alice, text(gone!))), 'ERR_UID_NOT_FOUND', 'a deactivated receiver');
    assert.equal(errorCode(await send(gone, text(alice!))), 'ERR_UID_NOT_FOUND', 'a deactivated sender');
  });

  it('answers the vendor’s codes for bad receivers, categories, types and content', async () => {
    const [alice, bob] = await uids(2);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ receiverType: 'user', data: { text: 'x' } }, 'ERR_EMPTY_RECEIVER'],
      [{ receiver: '', receiverType: 'user', data: { text: 'x' } }, 'ERR_EMPTY_RECEIVER'],
      [{ receiver: bob, receiverType: 'channel', data: { text: 'x' } }, 'ERR_INVALID_RECEIVER_TYPE'],
      [{ receiver: bob, data: { text: 'x' } }, 'ERR_INVALID_RECEIVER_TYPE'],
      [{ receiver: bob, receiverType: 'user', category: 'action', data: { text: 'x' } }, 'ERR_INVALID_MESSAGE_CATEGORY'],
      [{ receiver: bob, receiverType: 'user', category: 'message', type: 'poll', data: { text: 'x' } }, 'ERR_INVALID_MESSAGE_TYPE'],
      [{ receiver: bob, receiverType: 'user', category: 'custom', data: { customData: {} } }, 'ERR_EMPTY_MESSAGE_TYPE'],
      [{ receiver: bob, receiverType: 'user', data: {} }, 'ERR_EMPTY_MESSAGE_TEXT'],
      [{ receiver: bob, receiverType: 'user', data: { text: '   ' } }, 'ERR_EMPTY_MESSAGE_TEXT'],
      [{ receiver: bob, receiverType: 'user' }, 'ERR_EMPTY_MESSAGE_TEXT'],
      [{ receiver: bob, receiverType: 'user', type: 'image', data: {} }, 'ERR_EMPTY_MESSAGE_FILE'],
      [{ receiver: bob, receiverType: 'user', type: 'file', data: { attachments: [{ name: 'a.pdf' }] } }, 'ERR_EMPTY_MESSAGE_FILE'],
      [{ receiver: bob, receiverType: 'user', category: 'custom', type: 'location', data: { text: 'x' } }, 'ERR_EMPTY_CUSTOM_DATA'],
    ];
    for (const [payload, code] of cases) {
      const response = await send(alice, payload);
      assert.equal(errorCode(response), code, JSON.stringify(payload));
      assert.equal(response.statusCode, 400, JSON.stringify(payload));
    }
  });

  it('refuses malformed bodies and oversized content with ERR_BAD_REQUEST, never a 500', async () => {
    const [alice, bob] = await uids(2);
    const big = 'x'.repeat(11 * 1024);
    const payloads: Array<Record<string, unknown>> = [
      text(bob!, 'x', { data: 'hello' }),
      text(bob!, 'x', { data: { text: 5 } }),
      text(bob!, 'x', { tags: 'a' }),
      text(bob!, 'x', { tags: Array.from({ length: 26 }, (_, i) => `t${i}`) }),
      text(bob!, 'x', { tags: ['x'.repeat(101)] }),
      text(bob!, 'x', { muid: '' }),
      text(bob!, 'x', { data: { text: 'x', metadata: 'not an object' } }),
      text(bob!, big),
      text(bob!, 'x', { data: { text: 'x', metadata: { blob: big } } }),
      text(bob!, Array.from({ length: 11 }, (_, i) => `<@uid:m${i}>`).join(' ')),
      text(bob!, 'x', { multipleReceivers: { uids: 'bob' } }),
      text(bob!, 'x', { multipleReceivers: { uids: [bob] }, muid: 'one' }),
      { receiver: bob, receiverType: 'user', type: 'image', data: { attachments: [{ url: 'not a url' }] } },
      { receiver: 'x'.repeat(300), receiverType: 'user', data: { text: 'x' } },
    ];
    for (const payload of payloads) {
      const response = await send(alice, payload);
      assert.equal(response.statusCode, 400, `${JSON.stringify(payload).slice(0, 120)}: ${response.body}`);
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
    }
    // Other limits keep a stored message well under it; an unknown field can still carry the body past it.
    const whole = await send(alice, text(bob!, 'x', { note: 'n'.repeat(70_000) }));
    assert.equal(whole.statusCode, 400, 'a message over 65,536 characters as JSON');
    assert.equal(errorCode(whole), 'ERR_BAD_REQUEST');
    for (const raw of ['{"receiver":', '[]', 'null']) {
      const response = await t.call(t.appA, '/v3/messages', { method: 'POST', body: raw, onBehalfOf: alice, headers: { 'content-type': 'application/json' } });
      assert.equal(response.statusCode, 400, raw);
    }
  });

  it('sends media and custom messages', async () => {
    const [alice, bob] = await uids(2);
    const attachment = { url: 'https://files.example/a.png', name: 'a.png', mimeType: 'image/png', extension: 'png', size: '1024' };
    const image = body(await send(alice, { receiver: bob, receiverType: 'user', type: 'image', data: { attachments: [attachment] } })).data;
    assert.equal(image.type, 'image');
    assert.deepEqual(image.data.attachments, [attachment]);
    const custom = body(await send(alice, { receiver: bob, receiverType: 'user', category: 'custom', type: 'location', data: { customData: { lat: 1.5, lng: -2 } } })).data;
    assert.deepEqual([custom.category, custom.type, custom.data.customData], ['custom', 'location', { lat: 1.5, lng: -2 }]);
  });

  it('resolves <@uid:UID> mentions of existing users into data.mentions', async () => {
    const [alice, bob, carol] = await uids(3);
    const missing = uniqueId();
    const message = body(await send(alice, text(bob!, `hi <@uid:${carol}> and <@uid:${missing}> and <@uid:${carol!.toUpperCase()}>`))).data;
    assert.deepEqual(Object.keys(message.data.mentions), [carol]);
    assert.equal(message.data.mentions[carol!].uid, carol);
    assert.equal(message.data.mentions[carol!].name, `User ${carol}`);
    assert.ok(message.data.text.includes(`<@uid:${carol}>`), 'the text is kept as sent');
    const plain = body(await send(alice, text(bob!, 'no mentions'))).data;
    assert.equal(plain.data.mentions, undefined);
  });

  it('answers a send that mentions only its own sender and receiver as it reads them back', async () => {
    // Such a send is rendered from what its statement read, without reading the users again.
    const [alice, bob] = await uids(2);
    const sent = body(await send(alice, text(bob!, `<@uid:${bob}> meet <@uid:${alice}>`))).data;
    assert.deepEqual(Object.keys(sent.data.mentions).sort(), [alice!, bob!].sort());
    assert.equal(sent.data.mentions[bob!].name, `User ${bob}`);
    assert.equal(sent.data.entities.receiver.entity.conversationId, sent.conversationId);
    assert.equal(sent.data.entities.sender.entity.conversationId, undefined);
    const read = body(await t.call(t.appA, `/v3/messages/${sent.id}`, { onBehalfOf: alice })).data;
    assert.deepEqual(sent, read);
  });

  it('keeps unicode, emoji, RTL text and metadata key order byte for byte', async () => {
    const [alice, bob] = await uids(2);
    const words = 'שלום עולם 👋🏽 مرحبا — naïve café 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \u202Eabc\u202C 👨‍👩‍👧‍👦';
    const metadata = { zeta: 1, alpha: { ключ: 'значение', b: [3, 2, 1], a: null }, '@private': 'kept', mid: '🙂', emptyObject: {}, nested: { z: true, y: false } };
    const sent = body(await send(alice, text(bob!, words, { data: { text: words, metadata } }))).data;
    const fetched = body(await t.call(t.appA, `/v3/messages/${sent.id}`)).data;
    for (const message of [sent, fetched]) {
      assert.equal(message.data.text, words);
      assert.equal(JSON.stringify(message.data.metadata), JSON.stringify(metadata));
    }
  });

  it('answers ERR_BLOCKED_RECEIVER and ERR_BLOCKED_SENDER for a blocked pair', async () => {
    const [alice, bob, carol] = await uids(3);
    await t.database.db.insertInto('blocked_users').values({ app_id: t.appA.appId, uid: alice!, blocked_uid: bob!, blocked_at: new Date() }).execute();
    const byMe = await send(alice, text(bob!));
    assert.equal(byMe.statusCode, 403);
    assert.equal(errorCode(byMe), 'ERR_BLOCKED_RECEIVER');
    const byThem = await send(bob, text(alice!));
    assert.equal(byThem.statusCode, 403);
    assert.equal(errorCode(byThem), 'ERR_BLOCKED_SENDER');
    assert.equal((await send(carol, text(bob!))).statusCode, 200, 'others are not affected');
  });

  it('answers the first message for a repeated muid', async () => {
    const [alice, bob, carol] = await uids(3);
    const first = body(await send(alice, text(bob!, 'first', { muid: 'client-1' }))).data;
    const again = await send(alice, text(bob!, 'second try', { muid: 'client-1' }));
    assert.equal(again.statusCode, 200);
    assert.equal(body(again).data.id, first.id);
    assert.equal(body(again).data.data.text, 'first');
    const otherSender = body(await send(carol, text(bob!, 'mine', { muid: 'client-1' }))).data;
    assert.notEqual(otherSender.id, first.id, 'a muid is per sender');
    const count = await t.database.db
      .selectFrom('messages')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('app_id', '=', t.appA.appId)
      .where('sender', '=', alice!)
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 1);
  });

  it('stores one message for concurrent sends with the same muid, to one or several conversations', async () => {
    const [alice, bob, carol] = await uids(3);
    const responses = await Promise.all(Array.from({ length: 12 }, (_, i) => send(alice, text(i % 2 ? bob! : carol!, `attempt ${i}`, { muid: 'race' }))));
    assert.ok(
      responses.every((r) => r.statusCode === 200),
      responses.map((r) => r.body).join('\n'),
    );
    assert.equal(new Set(responses.map((r) => body(r).data.id)).size, 1);
    const rows = await t.database.db.selectFrom('messages').select('id').where('app_id', '=', t.appA.appId).where('sender', '=', alice!).execute();
    assert.equal(rows.length, 1);
    const conversations = await t.database.db
      .selectFrom('conversations')
      .select('conversation_id')
      .where('app_id', '=', t.appA.appId)
      .where('conversation_id', 'in', [userConversationKey(alice!, bob!), userConversationKey(alice!, carol!)])
      .execute();
    assert.equal(conversations.length, 1, 'the losing sends leave no empty conversation behind');
  });

  it('gives 100 parallel sends to one conversation 100 distinct ids, listed in order', async () => {
    const [alice, bob] = await uids(2);
    const responses = await Promise.all(Array.from({ length: 100 }, (_, i) => send(i % 2 ? alice : bob, text(i % 2 ? bob! : alice!, `n${i}`))));
    assert.ok(responses.every((r) => r.statusCode === 200));
    const ids = responses.map((r) => BigInt(body(r).data.id));
    assert.equal(new Set(ids).size, 100);
    const listed = body(await t.call(t.appA, `/v3/users/${bob}/messages`, { onBehalfOf: alice, query: { limit: '1000' } })).data;
    assert.equal(listed.length, 100);
    const listedIds = listed.map((m: any) => BigInt(m.id));
    assert.deepEqual(
      listedIds,
      [...ids].sort((a, b) => (a < b ? -1 : 1)),
    );
    for (let i = 1; i < listed.length; i++) assert.ok(listed[i].sentAt >= listed[i - 1].sentAt, 'sentAt never goes back as ids go up');
    const conversation = await t.database.db
      .selectFrom('conversations')
      .select('last_message_id')
      .where('app_id', '=', t.appA.appId)
      .where('conversation_id', '=', userConversationKey(alice!, bob!))
      .executeTakeFirstOrThrow();
    assert.equal(String(conversation.last_message_id), String(listedIds[99]));
  });

  it('does not hold up other sends behind one waiting on its conversation’s lock', { skip: TEST_ENGINE !== 'postgres' && 'PostgreSQL only: PGlite runs one statement at a time' }, async () => {
    const [alice, bob, carol, dave] = await uids(4);
    assert.equal((await send(alice, text(bob!, 'first'))).statusCode, 200);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    // Another transaction holds the conversation's row, as an import does while it writes to it.
    const holder = t.database.db.transaction().execute(async (tx) => {
      await tx.selectFrom('conversations').select('conversation_id').where('app_id', '=', t.appA.appId).where('conversation_id', '=', userConversationKey(alice!, bob!)).forUpdate().execute();
      locked();
      await released;
    });
    await isLocked;
    let blockedDone = false;
    const blocked = send(alice, text(bob!, 'waits')).then((response) => ((blockedDone = true), response));
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Sent after the blocked one, to another conversation: answered while the lock is still held.
    let timer: NodeJS.Timeout | undefined;
    const others = await Promise.race([
      Promise.all([send(carol, text(dave!, 'one')), send(dave, text(carol!, 'two'))]),
      new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), 5_000))),
    ]);
    clearTimeout(timer);
    const stillBlocked = !blockedDone;
    release();
    assert.deepEqual(
      others?.map((response) => response.statusCode),
      [200, 200],
      'the other sends are answered within 5 s',
    );
    assert.ok(stillBlocked, 'the first send still waited for the lock');
    await holder;
    assert.equal((await blocked).statusCode, 200);
  });

  it("keeps another app's users and groups out of reach", async () => {
    const [alice] = await uids(1);
    const [stranger] = await uids(1, t.appB);
    assert.equal(errorCode(await send(alice, text(stranger!))), 'ERR_UID_NOT_FOUND');
    assert.equal(errorCode(await send(stranger, text(alice!), t.appA)), 'ERR_UID_NOT_FOUND');
    const group = await newGroup(t, t.appB, {}, stranger);
    assert.equal(errorCode(await send(alice, { receiver: group.guid, receiverType: 'group', data: { text: 'x' } })), 'ERR_GUID_NOT_FOUND');
  });
});

describe('get-message-details', () => {
  it('retrieves a message', async () => {
    const [alice, bob] = await uids(2);
    const sent = body(await send(alice, text(bob!, 'details', { tags: ['t'] }))).data;
    const response = await t.call(t.appA, `/v3/messages/${sent.id}`);
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(body(response).data, sent);
  });

  it('answers ERR_MESSAGE_ID_NOT_FOUND for unknown, malformed and out-of-range ids', async () => {
    for (const id of ['999999999999', 'abc', '-1', '1.5', '99999999999999999999', '9223372036854775808']) {
      const response = await t.call(t.appA, `/v3/messages/${id}`);
      assert.equal(response.statusCode, 404, id);
      assert.equal(errorCode(response), 'ERR_MESSAGE_ID_NOT_FOUND', id);
    }
  });

  it('hides a message from a user outside its conversation, and from another app', async () => {
    const [alice, bob, eve, member] = await uids(4);
    const direct = body(await send(alice, text(bob!))).data;
    const group = await newGroup(t, t.appA, { members: { participants: [member] } }, alice);
    const inGroup = body(await send(alice, { receiver: group.guid, receiverType: 'group', data: { text: 'g' } })).data;
    assert.equal((await t.call(t.appA, `/v3/messages/${direct.id}`, { onBehalfOf: bob })).statusCode, 200);
    assert.equal((await t.call(t.appA, `/v3/messages/${inGroup.id}`, { onBehalfOf: member })).statusCode, 200);
    for (const id of [direct.id, inGroup.id]) {
      const hidden = await t.call(t.appA, `/v3/messages/${id}`, { onBehalfOf: eve });
      assert.equal(hidden.statusCode, 404);
      assert.equal(errorCode(hidden), 'ERR_MESSAGE_ID_NOT_FOUND');
      assert.equal(errorCode(await t.call(t.appB, `/v3/messages/${id}`)), 'ERR_MESSAGE_ID_NOT_FOUND');
    }
    assert.equal(errorCode(await t.call(t.appA, `/v3/messages/${direct.id}`, { onBehalfOf: uniqueId() })), 'ERR_UID_NOT_FOUND');
  });

  it("shows a permanently deleted receiver by uid in the sender's history", async () => {
    const [alice, bob] = await uids(2);
    const sent = body(await send(alice, text(bob!, 'before'))).data;
    assert.equal((await t.call(t.appA, `/v3/users/${bob}`, { method: 'DELETE', body: { permanent: true } })).statusCode, 200);
    const kept = body(await t.call(t.appA, `/v3/messages/${sent.id}`)).data;
    assert.equal(kept.data.text, 'before');
    assert.deepEqual(kept.data.entities.receiver, { entity: { uid: bob, conversationId: sorted(alice!, bob!) }, entityType: 'user' });
  });
});
