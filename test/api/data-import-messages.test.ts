import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import { ImportMessagesResponse } from '../../src/schemas/data-import.schema.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, errorCode, uniqueId, type CallOptions, type TestApp } from '../helpers/app.js';
import { newGroup, newUids, newUser } from '../helpers/factories.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

/** POSTs `{messages: records}` to the data import API (the vendor's /v3.0 base path unless told). */
function post(app: CreatedApp, records: unknown, options: CallOptions & { prefix?: string } = {}) {
  return t.call(app, `${options.prefix ?? '/v3.0'}/data_import/messages`, { method: 'POST', body: { messages: records }, ...options });
}

async function imported(app: CreatedApp, records: Record<string, unknown>): Promise<Record<string, any>> {
  const response = await post(app, records);
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
}

function codes(results: Record<string, any>): Record<string, string> {
  return Object.fromEntries(Object.entries(results).map(([key, result]) => [key, result.success ? 'ok' : result.error.code]));
}

const T0 = 1_673_421_419; // 2023-01-11, the vendor's example

/** A text message record from `sender` to the user `receiver`. */
function textRecord(muid: string, sender: string, receiver: string, sentAt: number, extra: Record<string, unknown> = {}) {
  return { muid, sender, receiverType: 'user', receiver, category: 'message', type: 'text', data: { text: `message ${muid}` }, sentAt, ...extra };
}

async function history(app: CreatedApp, viewer: string, path: string): Promise<any[]> {
  const response = await t.call(app, path, { onBehalfOf: viewer, query: { limit: '1000', withTags: 'true' } });
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
}

describe('import-messages', () => {
  it('stores the vendor’s example with its timestamps and creates sender and receiver from their details', async () => {
    const [sender, receiver, muid] = [uniqueId('s12'), uniqueId('r123'), uniqueId('3117')];
    const record = {
      muid,
      sender,
      receiverType: 'user',
      receiver,
      category: 'message',
      type: 'image',
      data: {
        text: 'Hi there,',
        attachments: [{ name: 'cometchat-uid-1.webp', extension: 'webp', size: '350.2', mimeType: 'image/webp', url: 'https://assets.cometchat.io/sampleapp/v2/users/cometchat-uid-1.webp' }],
        metadata: { key: 'value' },
      },
      sentAt: '1674104348',
      deliveredAt: '1674224684',
      readAt: '1674224684',
      tags: ['tag1'],
      senderUserDetails: { uid: sender, name: 'user1', createdAt: '1674228536' },
      receiverUserDetails: { uid: receiver, name: 'Andrew Joseph', createdAt: 1674228536 },
    };
    const result = (await imported(t.appA, { [muid]: record }))[muid];
    assert.equal(result.success, true, JSON.stringify(result));
    const message = result.data;
    assert.match(message.id, /^\d+$/);
    assert.equal(message.muid, muid);
    const conversationId = [sender, receiver].sort().join('_user_');
    assert.equal(message.conversationId, conversationId);
    assert.deepEqual(
      { sender: message.sender, receiver: message.receiver, receiverType: message.receiverType, category: message.category, type: message.type },
      { sender, receiver, receiverType: 'user', category: 'message', type: 'image' },
    );
    assert.deepEqual(
      { sentAt: message.sentAt, deliveredAt: message.deliveredAt, readAt: message.readAt, updatedAt: message.updatedAt, tags: message.tags },
      { sentAt: 1674104348, deliveredAt: 1674224684, readAt: 1674224684, updatedAt: 1674104348, tags: ['tag1'] },
    );
    assert.deepEqual(message.data.attachments, record.data.attachments, 'attachments are kept by URL');
    assert.deepEqual(message.data.metadata, { key: 'value' });
    assert.equal(message.data.entities.sender.entity.name, 'user1');
    assert.equal(message.data.entities.receiver.entity.conversationId, conversationId);
    assert.equal(body(await t.call(t.appA, `/v3/users/${sender}`)).data.createdAt, 1674228536, 'the sender was created from its details');
    assert.equal(body(await t.call(t.appA, `/v3/users/${receiver}`)).data.name, 'Andrew Joseph');

    // Visible through the normal read endpoints, from both sides, and the same message.
    const [seen] = await history(t.appA, receiver, `/v3/users/${sender}/messages`);
    assert.deepEqual(seen, message);
    assert.deepEqual(body(await t.call(t.appA, `/v3/messages/${message.id}`)).data, message);
    const conversation = body(await t.call(t.appA, `/v3/users/${sender}/conversation`, { onBehalfOf: receiver })).data;
    assert.equal(conversation.conversationId, conversationId);
    assert.equal(conversation.lastMessage.id, message.id);
    assert.equal(conversation.unreadMessageCount, '0', 'read at its readAt');
    assert.equal(conversation.updatedAt, 1674104348, 'the conversation moved when the message was sent');
  });

  it('puts a call’s messages in sentAt order: ids, histories and the last message follow sentAt, not the body’s order', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const prefix = uniqueId('order');
    const times = [T0 + 30, T0 + 10, T0 + 20, T0 + 10, T0];
    const records: Record<string, unknown> = {};
    times.forEach((sentAt, n) => (records[`${prefix}-${n}`] = textRecord(`${prefix}-${n}`, n % 2 ? alice! : bob!, n % 2 ? bob! : alice!, sentAt)));
    const results = await imported(t.appA, records);
    assert.deepEqual(Object.keys(results), Object.keys(records), 'results keyed as sent, in the body’s order');
    const listed = await history(t.appA, alice!, `/v3/users/${bob}/messages`);
    assert.deepEqual(
      listed.map((message) => message.muid),
      [4, 1, 3, 2, 0].map((n) => `${prefix}-${n}`),
      'by sentAt, and equal times in the body’s order',
    );
    const ids = listed.map((message) => BigInt(message.id));
    assert.deepEqual(
      [...ids].sort((a, b) => (a < b ? -1 : 1)),
      ids,
      'ids ascend with sentAt',
    );
    const conversation = body(await t.call(t.appA, `/v3/users/${bob}/conversation`, { onBehalfOf: alice })).data;
    assert.equal(conversation.lastMessage.muid, `${prefix}-0`);
    assert.equal(conversation.updatedAt, T0 + 30);

    // A live send afterwards comes after the imported history.
    const sent = await t.call(t.appA, '/v3/messages', { method: 'POST', onBehalfOf: alice, body: { receiver: bob, receiverType: 'user', data: { text: 'now' } } });
    assert.equal(sent.statusCode, 200, sent.body);
    const after = await history(t.appA, alice!, `/v3/users/${bob}/messages`);
    assert.equal(after.at(-1).id, body(sent).data.id);
    assert.ok(BigInt(after.at(-1).id) > ids.at(-1)!);
  });

  it('sets unread state as if the messages had been sent then: readAt moves the reader’s watermark', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const prefix = uniqueId('unread');
    const records: Record<string, unknown> = {};
    for (let n = 0; n < 5; n++) {
      const read = n < 2 ? { deliveredAt: T0 + n + 5, readAt: T0 + n + 10 } : n === 2 ? { deliveredAt: T0 + 50 } : {};
      records[`${prefix}-${n}`] = textRecord(`${prefix}-${n}`, alice!, bob!, T0 + n, read);
    }
    const results = await imported(t.appA, records);
    assert.deepEqual(Object.values(codes(results)), ['ok', 'ok', 'ok', 'ok', 'ok']);
    assert.equal(results[`${prefix}-0`].data.deliveredAt, T0 + 5);
    assert.equal(results[`${prefix}-2`].data.readAt, undefined);
    const forBob = body(await t.call(t.appA, `/v3/users/${alice}/conversation`, { onBehalfOf: bob })).data;
    assert.equal(forBob.unreadMessageCount, '3', 'three messages after the last one read');
    const forAlice = body(await t.call(t.appA, `/v3/users/${bob}/conversation`, { onBehalfOf: alice })).data;
    assert.equal(forAlice.unreadMessageCount, '0', 'her own messages are not unread for her');
    const unread = await t.call(t.appA, `/v3/users/${alice}/messages`, { onBehalfOf: bob, query: { unread: 'true' } });
    assert.deepEqual(
      body(unread).data.map((message: any) => message.muid),
      [2, 3, 4].map((n) => `${prefix}-${n}`),
    );
    // The watermarks moved: marking read now reads the rest.
    const marked = await t.call(t.appA, `/v3/users/${alice}/conversation/read`, { method: 'POST', onBehalfOf: bob });
    assert.ok(marked.statusCode < 300, marked.body);
    assert.equal(body(await t.call(t.appA, `/v3/users/${alice}/conversation`, { onBehalfOf: bob })).data.unreadMessageCount, '0');
  });

  it('imports group messages: the group and its owner from details; readAt reads them for the members', async () => {
    const [sender, member] = await newUids(t, t.appA, 2);
    const [guid, owner] = [uniqueId('igroup'), uniqueId('iowner')];
    const prefix = uniqueId('gmsg');
    const record = (n: number, extra: Record<string, unknown> = {}) => ({
      muid: `${prefix}-${n}`,
      sender,
      receiverType: 'group',
      receiver: guid,
      category: 'custom',
      type: 'poll',
      data: { customData: { question: `q${n}` } },
      sentAt: T0 + n,
      ...extra,
    });
    const results = await imported(t.appA, {
      [`${prefix}-0`]: record(0, {
        receiverGroupDetails: { guid, name: 'Imported group', type: 'public', createdAt: T0 - 100 },
        receiverGroupOwnerDetails: { uid: owner, name: 'Owner' },
        readAt: T0 + 100,
      }),
      [`${prefix}-1`]: record(1),
    });
    assert.deepEqual(Object.values(codes(results)), ['ok', 'ok']);
    assert.equal(results[`${prefix}-0`].data.conversationId, `group_${guid}`);
    assert.deepEqual(results[`${prefix}-0`].data.data.customData, { question: 'q0' });
    const group = body(await t.call(t.appA, `/v3/groups/${guid}`)).data;
    assert.deepEqual({ owner: group.owner, createdAt: group.createdAt }, { owner, createdAt: T0 - 100 });
    // History is kept for anyone allowed to read the group: the sender need not be a member.
    const listed = await history(t.appA, owner, `/v3/groups/${guid}/messages`);
    assert.deepEqual(
      listed.map((message) => message.muid),
      [`${prefix}-0`, `${prefix}-1`],
    );
    const forOwner = body(await t.call(t.appA, `/v3/groups/${guid}/conversation`, { onBehalfOf: owner })).data;
    assert.equal(forOwner.unreadMessageCount, '1', 'the first read at its readAt, the second not');

    // Members who join later see the history as unread; a later import reads it for them too.
    const added = await t.call(t.appA, `/v3/groups/${guid}/members`, { method: 'POST', body: { participants: [member] } });
    assert.equal(added.statusCode, 200, added.body);
    const more = await imported(t.appA, { [`${prefix}-2`]: record(2, { readAt: T0 + 200 }) });
    assert.equal(more[`${prefix}-2`].success, true);
    const forMember = body(await t.call(t.appA, `/v3/groups/${guid}/conversation`, { onBehalfOf: member })).data;
    assert.equal(forMember.unreadMessageCount, '0', 'read up to the newest imported message, past the action message of their joining');
  });

  it('resolves mentions, creating mentioned users from mentionedUserDetails', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const [mentioned, unknown, muid] = [uniqueId('ment'), uniqueId('nobody'), uniqueId('mm')];
    const results = await imported(t.appA, {
      [muid]: textRecord(muid, alice!, bob!, T0, {
        data: { text: `hi <@uid:${mentioned}> and <@uid:${unknown}>` },
        mentionedUserDetails: { [mentioned]: { uid: mentioned, name: 'Mentioned' } },
      }),
    });
    const message = results[muid].data;
    assert.deepEqual(Object.keys(message.data.mentions), [mentioned], 'an unknown user is not a mention');
    assert.equal(message.data.mentions[mentioned].name, 'Mentioned');
    const mentioning = await t.call(t.appA, '/v3/messages', { query: { mentionedUids: mentioned } });
    assert.deepEqual(
      body(mentioning).data.map((m: any) => m.muid),
      [muid],
    );
  });

  it('answers exactly what its response schema serialises (the route writes it with JSON.stringify)', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const [sender, guid, mentioned] = [uniqueId('ser'), uniqueId('sergroup'), uniqueId('sment')];
    const muid = (n: number) => `${guid}-${n}`;
    const response = await post(t.appA, {
      [muid(0)]: textRecord(muid(0), sender, bob!, T0, {
        senderUserDetails: { uid: sender, name: 'Serialised', avatar: 'https://example.com/a.png', metadata: { k: 'v' }, tags: ['t'] },
        data: { text: `hi <@uid:${mentioned}>`, metadata: { nested: { a: [1, 'two'] } } },
        mentionedUserDetails: { [mentioned]: { uid: mentioned, name: 'Mentioned' } },
        tags: ['x', 'y'],
        deliveredAt: T0 + 5,
        readAt: T0 + 10,
      }),
      [muid(1)]: {
        muid: muid(1),
        sender: alice,
        receiverType: 'group',
        receiver: guid,
        category: 'custom',
        type: 'poll',
        data: { customData: { question: 'q' } },
        sentAt: T0 + 1,
        receiverGroupDetails: { guid, name: 'Serialised group', type: 'public', createdAt: T0 - 100, owner: alice },
      },
      [muid(2)]: textRecord(muid(2), alice!, bob!, T0 + 2, { readAt: T0 }),
      [muid(3)]: textRecord(muid(3), alice!, uniqueId('nobody'), T0 + 3),
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(Object.values(codes(body(response).data)), ['ok', 'ok', 'ERR_BAD_REQUEST', 'ERR_UID_NOT_FOUND']);
    // The same answer through the schema's own serialiser: the fields it keeps, in its order.
    const echo = Fastify();
    echo.post('/', { schema: { response: { 200: ImportMessagesResponse } } }, async (request) => request.body);
    const again = await echo.inject({ method: 'POST', url: '/', payload: response.body, headers: { 'content-type': 'application/json' } });
    await echo.close();
    assert.equal(response.body, again.body);
  });

  it('round-trips Unicode and metadata byte-exact', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const muid = uniqueId('uni');
    const data = { text: 'مرحبا 👋🏽 Zoë — 𝄞', metadata: { z: [1, { ü: null }], a: 'שלום', n: 1.5 } };
    const results = await imported(t.appA, { [muid]: textRecord(muid, alice!, bob!, T0, { data }) });
    const [listed] = await history(t.appA, alice!, `/v3/users/${bob}/messages`);
    for (const message of [results[muid].data, listed]) {
      const { entities: _entities, ...stored } = message.data;
      assert.equal(JSON.stringify(stored), JSON.stringify(data));
    }
  });

  it('keeps muids and tags with quotes, backslashes, commas and braces as sent', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const muid = `${uniqueId('odd')} "q" \\ {a,b} NULL`;
    const tags = ['a "quoted" tag', 'back\\slash', '{brace},comma', 'NULL'];
    const results = await imported(t.appA, { [muid]: textRecord(muid, alice!, bob!, T0, { tags }) });
    assert.equal(results[muid].success, true, JSON.stringify(results[muid]));
    const [listed] = await history(t.appA, alice!, `/v3/users/${bob}/messages`);
    for (const message of [results[muid].data, listed]) {
      assert.equal(message.muid, muid);
      assert.deepEqual(message.tags, tags);
    }
    // Found again by that muid: a re-import is refused.
    assert.equal((await imported(t.appA, { [muid]: textRecord(muid, alice!, bob!, T0) }))[muid].error.code, 'ERR_IMPORT_MUID_ALREADY_EXISTS');
  });

  it('answers each bad record on its own and stores the good ones (a mixed batch)', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const guid = (await newGroup(t, t.appA)).guid as string;
    const p = uniqueId('mixed');
    const now = Math.floor(Date.now() / 1000);
    const records: Record<string, any> = {
      [`${p}-good`]: textRecord(`${p}-good`, alice!, bob!, T0),
      [`${p}-nosender`]: textRecord(`${p}-nosender`, uniqueId('ghost'), bob!, T0),
      [`${p}-noreceiver`]: textRecord(`${p}-noreceiver`, alice!, uniqueId('ghost'), T0),
      [`${p}-nogroup`]: textRecord(`${p}-nogroup`, alice!, uniqueId('ghostgroup'), T0, { receiverType: 'group' }),
      [`${p}-empty`]: textRecord(`${p}-empty`, alice!, bob!, T0, { data: { text: '  ' } }),
      [`${p}-category`]: textRecord(`${p}-category`, alice!, bob!, T0, { category: 'action' }),
      [`${p}-type`]: textRecord(`${p}-type`, alice!, bob!, T0, { type: 'sticker' }),
      [`${p}-custom`]: textRecord(`${p}-custom`, alice!, bob!, T0, { category: 'custom', type: 'poll', data: {} }),
      [`${p}-file`]: textRecord(`${p}-file`, alice!, bob!, T0, { type: 'file', data: { attachments: [] } }),
      [`${p}-nosent`]: textRecord(`${p}-nosent`, alice!, bob!, T0, { sentAt: undefined }),
      [`${p}-future`]: textRecord(`${p}-future`, alice!, bob!, now + 3600),
      [`${p}-readbefore`]: textRecord(`${p}-readbefore`, alice!, bob!, T0, { readAt: T0 - 1 }),
      [`${p}-badtime`]: textRecord(`${p}-badtime`, alice!, bob!, T0, { sentAt: '1673421419000' }),
      [`${p}-rtype`]: textRecord(`${p}-rtype`, alice!, bob!, T0, { receiverType: 'channel' }),
      [`${p}-details`]: textRecord(`${p}-details`, alice!, bob!, T0, { senderUserDetails: { uid: 'someone-else', name: 'x' } }),
      [`${p}-role`]: textRecord(`${p}-role`, uniqueId('norole'), bob!, T0, { senderUserDetails: { uid: 'x', name: 'x' } }),
      [`${p}-bigdata`]: textRecord(`${p}-bigdata`, alice!, bob!, T0, { data: { text: 'x'.repeat(20_000) } }),
      [`${p}-group-good`]: textRecord(`${p}-group-good`, alice!, guid, T0, { receiverType: 'group' }),
    };
    records[`${p}-role`].senderUserDetails = { uid: records[`${p}-role`].sender, name: 'No role', role: 'no-such-role' };
    const results = await imported(t.appA, records);
    assert.deepEqual(codes(results), {
      [`${p}-good`]: 'ok',
      [`${p}-nosender`]: 'ERR_UID_NOT_FOUND',
      [`${p}-noreceiver`]: 'ERR_UID_NOT_FOUND',
      [`${p}-nogroup`]: 'ERR_GUID_NOT_FOUND',
      [`${p}-empty`]: 'ERR_EMPTY_MESSAGE_TEXT',
      [`${p}-category`]: 'ERR_INVALID_MESSAGE_CATEGORY',
      [`${p}-type`]: 'ERR_INVALID_MESSAGE_TYPE',
      [`${p}-custom`]: 'ERR_EMPTY_CUSTOM_DATA',
      [`${p}-file`]: 'ERR_EMPTY_MESSAGE_FILE',
      [`${p}-nosent`]: 'ERR_BAD_REQUEST',
      [`${p}-future`]: 'ERR_BAD_REQUEST',
      [`${p}-readbefore`]: 'ERR_BAD_REQUEST',
      [`${p}-badtime`]: 'ERR_BAD_REQUEST',
      [`${p}-rtype`]: 'ERR_BAD_REQUEST',
      [`${p}-details`]: 'ERR_BAD_REQUEST',
      [`${p}-role`]: 'ERR_ROLE_NOT_FOUND',
      [`${p}-bigdata`]: 'ERR_BAD_REQUEST',
      [`${p}-group-good`]: 'ok',
    });
    assert.ok(results[`${p}-nosent`].error.details.sentAt);
    assert.ok(results[`${p}-future`].error.details.sentAt);
    assert.ok(results[`${p}-readbefore`].error.details.readAt);
    const listed = await history(t.appA, alice!, `/v3/users/${bob}/messages`);
    assert.deepEqual(
      listed.map((message) => message.muid),
      [`${p}-good`],
      'only the good record of the conversation is stored',
    );
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${records[`${p}-role`].sender}`)), 'ERR_UID_NOT_FOUND', 'a refused record creates no user');
  });

  it('answers each record with its own message, all new or some imported before', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const p = uniqueId('own');
    // Sent out of sentAt order in the body, so ids (drawn in sentAt order) differ from body order.
    const record = (n: number) => textRecord(`${p}-${n}`, n % 2 ? alice! : bob!, n % 2 ? bob! : alice!, T0 + ((n * 7) % 20));
    const check = (results: Record<string, any>, fresh: number[]) => {
      for (const [key, result] of Object.entries(results)) {
        const n = Number(key.slice(p.length + 1));
        if (!fresh.includes(n)) {
          assert.equal(result.error?.code, 'ERR_IMPORT_MUID_ALREADY_EXISTS', key);
          continue;
        }
        assert.equal(result.success, true, key);
        assert.deepEqual([result.data.muid, result.data.sentAt, result.data.data.text], [key, T0 + ((n * 7) % 20), `message ${key}`]);
      }
    };
    const first = [0, 2, 4, 6, 8, 10, 12, 14, 16, 18];
    const answers = [await imported(t.appA, Object.fromEntries(first.map((n) => [`${p}-${n}`, record(n)])))];
    check(answers[0]!, first);
    const all = Array.from({ length: 20 }, (_, n) => n);
    const rest = all.filter((n) => !first.includes(n));
    answers.push(await imported(t.appA, Object.fromEntries(all.map((n) => [`${p}-${n}`, record(n)]))));
    check(answers[1]!, rest);
    const listed = await history(t.appA, alice!, `/v3/users/${bob}/messages`);
    // Each answer's id is the id its message was stored with.
    const idOf = new Map(listed.map((message) => [message.muid, message.id]));
    for (const results of answers) {
      for (const [key, result] of Object.entries(results)) if (result.success) assert.equal(result.data.id, idOf.get(key), key);
    }
    const bySentAt = (ns: number[]) => [...ns].sort((a, b) => ((a * 7) % 20) - ((b * 7) % 20));
    assert.deepEqual(
      listed.map((message) => [message.muid, message.sentAt]),
      [...bySentAt(first), ...bySentAt(rest)].map((n) => [`${p}-${n}`, T0 + ((n * 7) % 20)]),
      'one message per record, each call in sentAt order',
    );
  });

  it('re-importing stores no duplicate: each record answers ERR_IMPORT_MUID_ALREADY_EXISTS', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const p = uniqueId('again');
    const records: Record<string, unknown> = {};
    for (let n = 0; n < 20; n++) records[`${p}-${n}`] = textRecord(`${p}-${n}`, n % 2 ? alice! : bob!, n % 2 ? bob! : alice!, T0 + n);
    assert.ok(Object.values(codes(await imported(t.appA, records))).every((code) => code === 'ok'));
    const again = await imported(t.appA, records);
    assert.ok(
      Object.values(codes(again)).every((code) => code === 'ERR_IMPORT_MUID_ALREADY_EXISTS'),
      JSON.stringify(codes(again)),
    );
    assert.match(again[`${p}-0`].error.message, new RegExp(`${p}-0`));
    assert.equal((await history(t.appA, alice!, `/v3/users/${bob}/messages`)).length, 20);
    // A muid is the sender's: a message the sender sent with it through /v3 counts as imported.
    const sent = await t.call(t.appA, '/v3/messages', { method: 'POST', onBehalfOf: alice, body: { receiver: bob, receiverType: 'user', muid: `${p}-live`, data: { text: 'x' } } });
    assert.equal(sent.statusCode, 200, sent.body);
    const live = await imported(t.appA, { [`${p}-live`]: textRecord(`${p}-live`, alice!, bob!, T0) });
    assert.equal(live[`${p}-live`].error.code, 'ERR_IMPORT_MUID_ALREADY_EXISTS');
  });

  it('leaves no conversation behind when its only message is a muid used before', async () => {
    const [alice, bob, carol] = await newUids(t, t.appA, 3);
    const muid = uniqueId('once');
    assert.equal((await imported(t.appA, { [muid]: textRecord(muid, alice!, bob!, T0) }))[muid].success, true);
    // The same sender's muid, now to carol: refused, and the alice–carol conversation it would open is not kept.
    const again = await imported(t.appA, { [muid]: textRecord(muid, alice!, carol!, T0 + 1) });
    assert.equal(again[muid].error.code, 'ERR_IMPORT_MUID_ALREADY_EXISTS');
    const conversationId = [alice!, carol!].sort().join('_user_');
    assert.equal(errorCode(await t.call(t.appA, `/v3/conversations/${conversationId}`, { onBehalfOf: alice })), 'ERR_CONVERSATION_NOT_ACCESSIBLE');
    const list = body(await t.call(t.appA, '/v3/conversations', { onBehalfOf: alice })).data;
    assert.deepEqual(
      list.map((conversation: any) => conversation.conversationId),
      [[alice!, bob!].sort().join('_user_')],
    );
    // Its first real message opens it for both sides.
    const next = uniqueId('next');
    assert.equal((await imported(t.appA, { [next]: textRecord(next, alice!, carol!, T0 + 2) }))[next].success, true);
    for (const uid of [alice!, carol!]) {
      const opened = await t.call(t.appA, `/v3/conversations/${conversationId}`, { onBehalfOf: uid });
      assert.equal(opened.statusCode, 200, opened.body);
    }
  });

  it('two concurrent imports of one batch store exactly one copy', async () => {
    const uids = await newUids(t, t.appA, 6);
    const p = uniqueId('race');
    const records: Record<string, unknown> = {};
    for (let n = 0; n < 300; n++) records[`${p}-${n}`] = textRecord(`${p}-${n}`, uids[n % 6]!, uids[(n + 1) % 6]!, T0 + (n % 17));
    const [first, second] = await Promise.all([imported(t.appA, records), imported(t.appA, records)]);
    for (const key of Object.keys(records)) {
      const outcomes = [first[key], second[key]].map((result) => (result.success ? 'ok' : result.error.code)).sort();
      assert.deepEqual(outcomes, ['ERR_IMPORT_MUID_ALREADY_EXISTS', 'ok'], key);
    }
    const all = body(await t.call(t.appA, '/v3/messages', { query: { limit: '1000', searchKey: p } })).data;
    assert.equal(all.length, 300);
    assert.equal(new Set(all.map((message: any) => message.muid)).size, 300);
  });

  it('refuses a malformed body as a whole, storing nothing', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const muid = uniqueId('whole');
    const good = textRecord(muid, alice!, bob!, T0);
    const send = (payload: unknown) => t.call(t.appA, '/v3.0/data_import/messages', { method: 'POST', body: payload as object });
    for (const payload of [
      [good],
      { message: { [muid]: good } },
      { messages: [good] },
      { messages: { [muid]: 'x' } },
      { messages: { [muid.toUpperCase()]: good } },
      { messages: { [muid]: good, other: { ...good, muid: 'different' } } },
    ]) {
      const response = await send(payload);
      assert.equal(response.statusCode, 400, JSON.stringify(payload));
      assert.equal(errorCode(response), 'ERR_IMPORT_INVALID_MESSAGE_FORMAT');
    }
    assert.deepEqual(await history(t.appA, alice!, `/v3/users/${bob}/messages`), []);
  });

  it('answers 400 above the record limit, storing nothing', async () => {
    const limited = await createTestApp({ importMaxRecords: 3 });
    try {
      const [alice, bob] = (await Promise.all([newUser(limited, limited.appA), newUser(limited, limited.appA)])).map((user) => user.uid as string);
      const records: Record<string, unknown> = {};
      for (let n = 0; n < 4; n++) records[`m-${n}`] = textRecord(`m-${n}`, alice!, bob!, T0);
      const response = await limited.call(limited.appA, '/v3.0/data_import/messages', { method: 'POST', body: { messages: records } });
      assert.equal(response.statusCode, 400);
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
      const listed = await limited.call(limited.appA, `/v3/users/${bob}/messages`, { onBehalfOf: alice });
      assert.deepEqual(body(listed).data, []);
    } finally {
      await limited.close();
    }
  });

  it('works at /v3 as at /v3.0, and needs a fullAccess key', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const muid = uniqueId('v3');
    assert.equal(errorCode(await post(t.appA, { [muid]: textRecord(muid, alice!, bob!, T0) }, { key: 'auth' })), 'AUTH_ERR_NO_ACCESS');
    assert.equal(errorCode(await post(t.appA, {}, { key: 'none', prefix: '/v3' })), 'AUTH_ERR_EMPTY_APIKEY');
    const response = await post(t.appA, { [muid]: textRecord(muid, alice!, bob!, T0) }, { prefix: '/v3' });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(body(response).data[muid].success, true);
  });

  it('keeps apps apart: app B cannot import into app A’s conversations nor read them', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const guid = (await newGroup(t, t.appA)).guid as string;
    const muid = uniqueId('iso');
    assert.equal((await imported(t.appA, { [muid]: textRecord(muid, alice!, bob!, T0) }))[muid].success, true);
    const fromB = await imported(t.appB, {
      a: textRecord('a', alice!, bob!, T0),
      b: textRecord('b', alice!, guid, T0, { receiverType: 'group' }),
    });
    assert.deepEqual(codes(fromB), { a: 'ERR_UID_NOT_FOUND', b: 'ERR_UID_NOT_FOUND' });
    assert.deepEqual(body(await t.call(t.appB, '/v3/messages', { query: { searchKey: muid } })).data, []);
    // The same muid and uids are free in app B.
    const twin = await imported(t.appB, {
      [muid]: textRecord(muid, alice!, bob!, T0, {
        senderUserDetails: { uid: alice, name: 'B alice' },
        receiverUserDetails: { uid: bob, name: 'B bob' },
      }),
    });
    assert.equal(twin[muid].success, true, JSON.stringify(twin[muid]));
    assert.equal(body(await t.call(t.appA, `/v3/users/${alice}`)).data.name.startsWith('User '), true, 'app A’s user is untouched');
  });
});
