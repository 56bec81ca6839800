import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fastJsonStringify from 'fast-json-stringify';
import { messagePageJson } from '../../src/http/message-page-json.js';
import { MessageListResponse } from '../../src/schemas/messages.schema.js';
import { body, createTestApp, type TestApp } from '../helpers/app.js';
import { newGroup, newUids } from '../helpers/factories.js';

// History pages are written by messagePageJson (JSON.stringify, each shared entity once), not by
// the route schema's serializer. These pages hold every kind of message field; each must read
// exactly as the schema's serializer writes it, so that a page carries nothing its schema does
// not declare, with the same types.

const schemaSerializer = fastJsonStringify(MessageListResponse as never);

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

async function ok(method: string, url: string, onBehalfOf: string, payload?: unknown) {
  const response = await t.call(t.appA, url, { method: method as 'GET', onBehalfOf, ...(payload ? { body: payload } : {}) });
  assert.ok(response.statusCode < 300, `${method} ${url}: ${response.body}`);
  return body(response).data;
}

/** The page as answered, and as the schema's serializer writes what it holds. */
async function bothWays(url: string, viewer: string, query: Record<string, string>) {
  const response = await t.call(t.appA, url, { onBehalfOf: viewer, query: { limit: '50', ...query } });
  assert.equal(response.statusCode, 200, response.body);
  const answered = JSON.parse(response.body);
  return { answered, bySchema: JSON.parse(schemaSerializer(answered)) };
}

describe('history pages as JSON', () => {
  it('read as the schema writes them: mentions, reactions, replies, edits, deletes, receipts, tags, action messages', async () => {
    const [alice, bob, carol] = await newUids(t, t.appA, 3, { metadata: { note: 'x', nested: { deep: [1, 'two', null] } }, tags: ['vip'] } as never);
    const group = await newGroup(t, t.appA, { members: { participants: [bob!, carol!] } } as never, alice);
    const first = await ok('POST', '/v3/messages', alice!, { receiver: bob, receiverType: 'user', data: { text: `hi <@uid:${carol}>`, metadata: { k: 1 } }, tags: ['t1'] });
    await ok('POST', '/v3/messages', bob!, { receiver: alice, receiverType: 'user', data: { text: 'second', customData: { a: [1, { b: 'c' }] } } });
    await ok('POST', `/v3/messages/${first.id}/reactions/👍`, bob!);
    await ok('POST', `/v3/messages/${first.id}/thread`, bob!, { data: { text: 'a reply' } });
    await ok('PUT', `/v3/messages/${first.id}`, alice!, { data: { text: 'edited' } });
    const doomed = await ok('POST', '/v3/messages', alice!, { receiver: bob, receiverType: 'user', data: { text: 'to delete' } });
    await ok('DELETE', `/v3/messages/${doomed.id}`, alice!);
    await ok('POST', `/v3/users/${alice}/conversation/read`, bob!);
    await ok('POST', '/v3/messages', carol!, { receiver: group.guid, receiverType: 'group', data: { text: `group <@uid:${alice}>` } });
    await ok('DELETE', `/v3/groups/${group.guid}/members/${carol}`, alice!);

    const pages = [
      await bothWays(`/v3/users/${alice}/messages`, bob!, { withTags: 'true', mentionsWithTagInfo: 'true', mentionsWithBlockedInfo: 'true' }),
      await bothWays(`/v3/users/${bob}/messages`, alice!, {}),
      await bothWays(`/v3/groups/${group.guid}/messages`, alice!, { withTags: 'true' }),
    ];
    for (const { answered, bySchema } of pages) assert.deepEqual(answered, bySchema);
    const [oneToOne, , inGroup] = pages.map((page) => page.answered.data as any[]);
    // The page holds what this test means to check.
    const edited = oneToOne!.find((m) => m.id === String(first.id));
    assert.equal(edited.data.text, 'edited');
    assert.deepEqual(edited.data.reactions, [{ reaction: '👍', count: 1, reactedByMe: true }]);
    assert.equal(edited.replyCount, 1);
    assert.deepEqual(edited.tags, ['t1']);
    assert.equal(edited.data.entities.receiver.entity.uid, bob);
    assert.equal(typeof edited.readAt, 'number');
    assert.ok(oneToOne!.some((m) => m.deletedAt !== undefined));
    assert.ok(inGroup!.some((m) => m.category === 'action'));
    assert.ok(inGroup!.some((m) => m.data.mentions?.[alice!]));
    assert.ok(inGroup!.some((m) => m.data.entities?.receiver?.entityType === 'group'));
  });

  it("writes the page whole when a marker's form appears in it", () => {
    const entity = { entity: { uid: 'a' }, entityType: 'user' as const };
    const message = {
      id: '1',
      conversationId: 'a_user_b',
      sender: 'a',
      receiverType: 'user' as const,
      receiver: 'b',
      category: 'message',
      type: 'text',
      // A string of a marker's form (no stored text can hold NUL): the page is written whole.
      data: { text: 'x', odd: '\u00000', entities: { sender: entity, receiver: entity } },
      sentAt: 1,
      updatedAt: 1,
    };
    const page = { data: [message, { ...message, id: '2', data: { text: 'y', entities: { sender: entity, receiver: entity, absent: undefined } } }], meta: { current: { limit: 2, count: 2 } } };
    assert.equal(messagePageJson(page as never), JSON.stringify(page));
    assert.equal(page.data[0]!.data.entities.sender, entity, 'the entities are given back');
    const plain = { data: [page.data[1]!, { ...message, id: '3', data: { text: 'z', entities: { sender: entity, receiver: entity } } }], meta: page.meta };
    assert.equal(messagePageJson(plain as never), JSON.stringify(plain));
  });
});
