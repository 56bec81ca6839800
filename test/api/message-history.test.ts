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
async function send(sender: string, receiver: string, data: Record<string, unknown> = { text: 'hi' }, extra: Record<string, unknown> = {}) {
  const response = await t.call(t.appA, '/v3/messages', {
    method: 'POST',
    onBehalfOf: sender,
    body: { receiver, receiverType: extra.receiverType ?? 'user', data, ...extra },
  });
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
}
const list = (url: string, query: Record<string, string> = {}, onBehalfOf?: string) => t.call(t.appA, url, { query, ...(onBehalfOf ? { onBehalfOf } : {}) });
const ids = (response: { json(): any; body?: string }) => {
  const data = response.json().data as any[] | undefined;
  assert.ok(data, response.body);
  return data.map((m) => m.id);
};

/** mulberry32: a seeded generator, so a failing run can be replayed from its seed. */
function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let r = Math.imul(a ^ (a >>> 15), 1 | a);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

describe('user-list-user-messages', () => {
  it('lists the conversation with cursors in meta, oldest first', async () => {
    const [alice, bob, carol] = await uids(3);
    const sent = [];
    for (let i = 0; i < 5; i++) sent.push(await send(i % 2 ? bob! : alice!, i % 2 ? alice! : bob!, { text: `m${i}` }));
    await send(alice!, carol!);
    const response = await list(`/v3/users/${bob}/messages`, {}, alice);
    assert.equal(response.statusCode, 200, response.body);
    const page = body(response);
    assert.deepEqual(
      ids(response),
      sent.map((m) => m.id),
    );
    assert.deepEqual(page.meta.current, { limit: 10, count: 5 });
    assert.deepEqual(page.meta.next, { affix: 'append', id: sent[4].id, sentAt: sent[4].sentAt });
    assert.deepEqual(page.meta.previous, { affix: 'prepend', id: sent[0].id, sentAt: sent[0].sentAt });
    assert.deepEqual(page.data[2], sent[2], 'list items equal the sent messages');

    const newest2 = await list(`/v3/users/${bob}/messages`, { limit: '2' }, alice);
    assert.deepEqual(ids(newest2), [sent[3].id, sent[4].id], 'without a cursor: the newest, oldest first');
    const before = await list(`/v3/users/${bob}/messages`, { limit: '2', affix: 'prepend', id: sent[3].id }, alice);
    assert.deepEqual(ids(before), [sent[1].id, sent[2].id]);
    const afterId = await list(`/v3/users/${bob}/messages`, { limit: '2', id: sent[1].id }, alice);
    assert.deepEqual(ids(afterId), [sent[2].id, sent[3].id], 'an id alone pages forwards');
    const huge = await list(`/v3/users/${bob}/messages`, { limit: '1', affix: 'prepend', id: '999999999999999999999999' }, alice);
    assert.deepEqual(ids(huge), [sent[4].id], 'prepend from an id past the end starts at the newest');
    assert.deepEqual(
      ids(await list(`/v3/users/${bob}/messages`, { perPage: '3', affix: 'append' }, alice)),
      sent.slice(0, 3).map((m) => m.id),
    );
    const fromBob = await list(`/v3/users/${alice}/messages`, { limit: '100' }, bob);
    assert.deepEqual(
      ids(fromBob),
      sent.map((m) => m.id),
      'the same conversation from the other side',
    );
    const mention = await send(bob!, alice!, { text: `ping <@uid:${alice}>` });
    assert.deepEqual(ids(await list(`/v3/users/${bob}/messages`, { myMentionsOnly: 'true' }, alice)), [mention.id]);
    assert.deepEqual(ids(await list(`/v3/users/${bob}/messages`, { myMentionsOnly: 'true' }, bob)), []);
    const empty = body(await list(`/v3/users/${bob}/messages`, { id: mention.id }, alice));
    assert.deepEqual(empty, { data: [], meta: { current: { limit: 10, count: 0 } } });
  });

  it('needs onBehalfOf and an existing user; never shows a conversation the viewer is not in', async () => {
    const [alice, bob, eve] = await uids(3);
    await send(alice!, bob!);
    const none = await list(`/v3/users/${bob}/messages`);
    assert.equal(none.statusCode, 400);
    assert.equal(errorCode(none), 'ERR_BAD_REQUEST');
    assert.equal(errorCode(await list(`/v3/users/${uniqueId()}/messages`, {}, alice)), 'ERR_UID_NOT_FOUND');
    assert.equal(errorCode(await list(`/v3/users/${bob}/messages`, {}, uniqueId())), 'ERR_UID_NOT_FOUND');
    assert.deepEqual(ids(await list(`/v3/users/${bob}/messages`, {}, eve)), [], "eve's conversation with bob is empty");
    assert.equal(errorCode(await t.call(t.appB, `/v3/users/${bob}/messages`, { onBehalfOf: alice })), 'ERR_UID_NOT_FOUND');
  });
});

describe('user-list-group-messages', () => {
  it('lists a group’s messages for members and the app, not for others', async () => {
    const [owner, member, outsider, banned] = await uids(4);
    const group = await newGroup(t, t.appA, { members: { participants: [member], usersToBan: [banned] } }, owner);
    const a = await send(owner!, group.guid, { text: 'one' }, { receiverType: 'group' });
    const b = await send(member!, group.guid, { text: 'two' }, { receiverType: 'group' });
    // The inline members' action messages (added, banned) are left out.
    assert.deepEqual(ids(await list(`/v3/groups/${group.guid}/messages`, { category: 'message' }, member)), [a.id, b.id]);
    assert.deepEqual(ids(await list(`/v3/groups/${group.guid}/messages`, { category: 'message' })), [a.id, b.id]);
    const notJoined = await list(`/v3/groups/${group.guid}/messages`, {}, outsider);
    assert.equal(notJoined.statusCode, 403);
    assert.equal(errorCode(notJoined), 'ERR_GROUP_NOT_JOINED');
    assert.equal(errorCode(await list(`/v3/groups/${group.guid}/messages`, {}, banned)), 'ERR_BANNED_GROUPMEMBER');
    assert.equal(errorCode(await list(`/v3/groups/${uniqueId()}/messages`)), 'ERR_GUID_NOT_FOUND');
    assert.equal(errorCode(await t.call(t.appB, `/v3/groups/${group.guid}/messages`)), 'ERR_GUID_NOT_FOUND');
  });
});

describe('list-all-messages', () => {
  it('lists the app’s messages and filters them', async () => {
    const [alice, bob, carol] = await uids(3);
    const group = await newGroup(t, t.appA, { members: { participants: [bob] } }, alice);
    const m1 = await send(alice!, bob!, { text: `Hello <@uid:${carol}> see https://example.com` }, { tags: ['red'] });
    const m2 = await send(bob!, alice!, { attachments: [{ url: 'https://f.example/a.png' }] }, { type: 'image' });
    const m3 = await send(alice!, group.guid, { text: 'group hello' }, { receiverType: 'group', tags: ['blue'] });
    const m4 = await send(carol!, alice!, { customData: { x: 1 } }, { category: 'custom', type: 'poll' });
    const mine = [m1.id, m2.id, m3.id, m4.id];
    const all = (query: Record<string, string>, onBehalfOf?: string) => list('/v3/messages', { limit: '1000', affix: 'append', id: String(BigInt(m1.id) - 1n), ...query }, onBehalfOf);
    assert.deepEqual(ids(await all({})), mine);
    assert.deepEqual(ids(await all({ conversationId: `group_${group.guid}` })), [m3.id]);
    assert.deepEqual(ids(await all({ receiverType: 'group' })), [m3.id]);
    assert.deepEqual(ids(await all({ category: 'custom' })), [m4.id]);
    assert.deepEqual(ids(await all({ categories: 'custom,message', types: 'image,poll' })), [m2.id, m4.id]);
    assert.deepEqual(ids(await all({ type: 'text', sender: alice! })), [m1.id, m3.id]);
    assert.deepEqual(ids(await all({ tags: 'blue,green' })), [m3.id]);
    assert.equal(body(await all({ tags: 'red' })).data[0].tags, undefined, 'tags only withTags');
    assert.deepEqual(body(await all({ tags: 'red', withTags: 'true' })).data[0].tags, ['red']);
    assert.deepEqual(ids(await all({ searchKey: 'HELLO' })), [m1.id, m3.id]);
    assert.deepEqual(ids(await all({ searchKey: '%' })), []);
    assert.deepEqual(ids(await all({ hasAttachments: 'true' })), [m2.id]);
    assert.deepEqual(ids(await all({ hasAttachments: 'false' })), [m1.id, m3.id, m4.id]);
    assert.deepEqual(ids(await all({ attachmentTypes: 'video' })), []);
    assert.deepEqual(ids(await all({ hasMentions: 'true' })), [m1.id]);
    assert.deepEqual(ids(await all({ mentionedUids: carol! })), [m1.id]);
    assert.deepEqual(ids(await all({ hasLinks: 'true' })), [m1.id]);
    assert.deepEqual(ids(await all({ hideReplies: 'true', hideDeleted: 'true' })), mine);
    assert.deepEqual(ids(await all({ onlyDeleted: 'true' })), []);
    const tagged = body(await all({ mentionedUids: carol!, mentionsWithTagInfo: 'true' })).data[0];
    assert.equal(tagged.data.mentions[carol!].uid, carol);
  });

  it('mentionsWithBlockedInfo: mentioned users with their blocks relative to onBehalfOf, on the three lists', async () => {
    const [alice, bob, carol, dave] = await uids(4);
    const group = await newGroup(t, t.appA, { members: { participants: [bob] } }, alice);
    const text = `hi <@uid:${carol}> and <@uid:${dave}>`;
    const direct = await send(alice!, bob!, { text });
    await send(alice!, group.guid, { text }, { receiverType: 'group' });
    const block = (app: typeof t.appA, uid: string, blocked: string, method: 'POST' | 'DELETE' = 'POST') =>
      t.call(app, `/v3/users/${uid}/blockedusers`, { method, body: { blockedUids: [blocked] } }).then((r) => assert.equal(r.statusCode, 200, r.body));
    await block(t.appA, alice!, carol!);
    await block(t.appA, dave!, alice!);
    // The same uids in another app, blocked the other way there: never seen from app A.
    for (const uid of [alice!, carol!]) await t.call(t.appB, '/v3/users', { method: 'POST', body: { uid, name: uid } });
    await block(t.appB, carol!, alice!);
    const mentions = async (url: string, query: Record<string, string>, onBehalfOf: string) => {
      const response = await list(url, query, onBehalfOf);
      assert.equal(response.statusCode, 200, response.body);
      // The newest: a group's page begins with the action message of its members being added.
      return body(response).data.at(-1).data.mentions;
    };
    const lists: Array<[string, Record<string, string>]> = [
      [`/v3/users/${bob}/messages`, {}],
      [`/v3/groups/${group.guid}/messages`, {}],
      ['/v3/messages', { conversationId: direct.conversationId }],
    ];
    for (const [url, query] of lists) {
      const plain = await mentions(url, query, alice!);
      assert.equal(plain[carol!].blockedByMe, undefined, `${url}: only when asked`);
      const shown = await mentions(url, { ...query, mentionsWithBlockedInfo: 'true' }, alice!);
      assert.equal(shown[carol!].blockedByMe, true, url);
      assert.equal(shown[carol!].hasBlockedMe, false, url);
      assert.equal(typeof shown[carol!].blockedByMeAt, 'number', url);
      assert.equal(shown[dave!].blockedByMe, false, url);
      assert.equal(shown[dave!].hasBlockedMe, true, url);
      assert.equal(shown[dave!].name, plain[dave!].name);
    }
    // Relative to the viewer: bob has no blocks with either.
    const bobs = await mentions(`/v3/users/${alice}/messages`, { mentionsWithBlockedInfo: 'true' }, bob!);
    assert.deepEqual([bobs[carol!].blockedByMe, bobs[carol!].hasBlockedMe, bobs[dave!].hasBlockedMe], [false, false, false]);
    // A block that changes shows on the next read of the same page.
    await block(t.appA, alice!, carol!, 'DELETE');
    const after = await mentions(`/v3/users/${bob}/messages`, { mentionsWithBlockedInfo: 'true' }, alice!);
    assert.equal(after[carol!].blockedByMe, false);
    assert.equal(errorCode(await list('/v3/messages', { mentionsWithBlockedInfo: 'true' })), 'ERR_BAD_REQUEST', 'needs onBehalfOf');
  });

  it('scopes the list to the onBehalfOf user’s conversations', async () => {
    const [alice, bob, carol, dave] = await uids(4);
    const group = await newGroup(t, t.appA, { members: { participants: [carol] } }, bob);
    const ab = await send(alice!, bob!);
    const inGroup = await send(bob!, group.guid, { text: 'g' }, { receiverType: 'group' });
    const cd = await send(carol!, dave!);
    const from = String(BigInt(ab.id) - 1n);
    const seen = (uid: string) => list('/v3/messages', { affix: 'append', id: from, limit: '100' }, uid).then(ids);
    assert.deepEqual(await seen(alice!), [ab.id]);
    assert.deepEqual(await seen(bob!), [ab.id, inGroup.id]);
    assert.deepEqual(await seen(carol!), [inGroup.id, cd.id]);
    assert.deepEqual(await seen(dave!), [cd.id]);
    assert.deepEqual(ids(await list('/v3/messages', { affix: 'append', id: from, sender: carol! }, alice)), [], 'sender within common conversations');
    await t.database.db.insertInto('blocked_users').values({ app_id: t.appA.appId, uid: carol!, blocked_uid: bob!, blocked_at: new Date() }).execute();
    assert.deepEqual(ids(await list('/v3/messages', { affix: 'append', id: from, hideMessagesFromBlockedUsers: 'true' }, carol)), [cd.id]);
    assert.equal(errorCode(await list('/v3/messages', { hideMessagesFromBlockedUsers: 'true' })), 'ERR_BAD_REQUEST');
  });

  it("never shows another app's messages", async () => {
    const [alice, bob] = await uids(2);
    const sent = await send(alice!, bob!);
    const other = await t.call(t.appB, '/v3/messages', { query: { affix: 'append', id: String(BigInt(sent.id) - 1n), limit: '1000' } });
    assert.equal(other.statusCode, 200);
    assert.ok(!ids(other).includes(sent.id));
    const conversation = await t.call(t.appB, '/v3/messages', { query: { conversationId: sent.conversationId } });
    assert.deepEqual(ids(conversation), []);
  });

  it('filters by time and refuses bad or unsupported parameters', async () => {
    const [alice, bob] = await uids(2);
    const sent = await send(alice!, bob!);
    const c = sent.conversationId;
    assert.deepEqual(ids(await list('/v3/messages', { conversationId: c, fromTimestamp: String(sent.sentAt) })), [sent.id]);
    assert.deepEqual(ids(await list('/v3/messages', { conversationId: c, fromTimestamp: String(sent.sentAt + 1) })), []);
    assert.deepEqual(ids(await list('/v3/messages', { conversationId: c, fromTimestamp: '0', toTimestamp: String(sent.sentAt - 1) })), []);
    assert.deepEqual(ids(await list('/v3/messages', { conversationId: c, toTimestamp: '1' })), [sent.id], 'toTimestamp alone is ignored');
    assert.deepEqual(ids(await list('/v3/messages', { conversationId: c, sentAt: String(sent.sentAt - 1) })), [sent.id]);
    assert.deepEqual(ids(await list('/v3/messages', { conversationId: c, sentAt: String(sent.sentAt), affix: 'prepend' })), []);
    const bad: Array<Record<string, string>> = [
      { limit: '0' },
      { limit: '1001' },
      { affix: 'sideways' },
      { id: 'abc' },
      { id: '-5' },
      { unread: 'true' },
      { count: 'true' },
      { hasReactions: 'maybe' },
      { sentAt: 'yesterday' },
      { onlyDeleted: 'true', hideDeleted: 'true' },
    ];
    for (const query of bad) {
      const response = await list('/v3/messages', query);
      assert.equal(response.statusCode, 400, JSON.stringify(query));
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST', JSON.stringify(query));
    }
  });
});

describe('paging a conversation', () => {
  for (const seed of [1, 7, 42, 2024]) {
    it(`returns every message exactly once, in order, forwards and backwards, while messages arrive (seed ${seed})`, async () => {
      const next = random(seed);
      const [alice, bob] = await uids(2);
      const length = Math.floor(next() * 251);
      const existing: string[] = [];
      for (let i = 0; i < length; i++) {
        const fromAlice = next() < 0.5;
        existing.push((await send(fromAlice ? alice! : bob!, fromAlice ? bob! : alice!, { text: `m${i}` })).id);
      }
      const url = `/v3/users/${bob}/messages`;
      const arrived: string[] = [];
      const arrive = async () => {
        if (next() < 0.5) arrived.push((await send(bob!, alice!, { text: 'late' })).id);
      };

      // Backwards from the newest: exactly the messages there were when paging began.
      const backwards: string[] = [];
      let cursor: string | undefined;
      for (;;) {
        const limit = 1 + Math.floor(next() * 40);
        const page: any = body(await list(url, { limit: String(limit), affix: 'prepend', ...(cursor ? { id: cursor } : {}) }, alice));
        assert.ok(page.data.length <= limit);
        if (page.data.length === 0) break;
        const pageIds = page.data.map((m: any) => m.id);
        backwards.unshift(...pageIds);
        assert.equal(page.meta.previous.id, pageIds[0]);
        cursor = page.meta.previous.id;
        await arrive();
      }
      assert.deepEqual(backwards, existing, `seed ${seed}: backwards`);

      // Forwards from the oldest: everything, including what arrived meanwhile.
      const forwards: string[] = [];
      cursor = undefined;
      for (;;) {
        const limit = 1 + Math.floor(next() * 40);
        const page: any = body(await list(url, { limit: String(limit), affix: 'append', ...(cursor ? { id: cursor } : {}) }, alice));
        if (page.data.length === 0) break;
        forwards.push(...page.data.map((m: any) => m.id));
        cursor = page.meta.next.id;
        if (forwards.length < existing.length) await arrive();
      }
      assert.deepEqual(forwards, [...existing, ...arrived], `seed ${seed}: forwards`);
      assert.equal(new Set(forwards).size, forwards.length);
    });
  }
});
