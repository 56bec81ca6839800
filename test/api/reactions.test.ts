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

const GRIN = '😀';
const SWEAT = '😅';
const FAMILY = '👨‍👩‍👧'; // several code points, one emoji

const uids = (n: number, app = t.appA) => newUids(t, app, n);
const send = async (sender: string, receiver: string, receiverType = 'user', extra: Record<string, unknown> = {}) => {
  const response = await t.call(t.appA, '/v3/messages', {
    method: 'POST',
    body: { receiver, receiverType, data: { text: 'Hi,' }, ...extra },
    onBehalfOf: sender,
  });
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
};
const path = (id: string, reaction?: string) => `/v3/messages/${id}/reactions${reaction === undefined ? '' : `/${encodeURIComponent(reaction)}`}`;
const react = (id: string, reaction: string, uid: string | undefined, method: 'POST' | 'DELETE' = 'POST', app = t.appA) =>
  t.call(app, path(id, reaction), { method, ...(uid !== undefined ? { onBehalfOf: uid } : {}) });
const reactOk = async (id: string, reaction: string, uid: string, method: 'POST' | 'DELETE' = 'POST') => {
  const response = await react(id, reaction, uid, method);
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
};
const reactions = (id: string, reaction?: string, query: Record<string, string> = {}, onBehalfOf?: string, app = t.appA) =>
  t.call(app, path(id, reaction), { query, ...(onBehalfOf !== undefined ? { onBehalfOf } : {}) });
const expectError = (response: { statusCode: number; body: string }, status: number, code: string) => {
  assert.equal(response.statusCode, status, response.body);
  assert.equal(errorCode(response as never), code, response.body);
};
const stored = (messageId: string) =>
  t.database.db.selectFrom('message_reactions').select(['reaction', 'uid']).where('app_id', '=', t.appA.appId).where('message_id', '=', messageId).orderBy('id').execute();

describe('add-message-reactions and remove-message-reactions', () => {
  it('adds URL-encoded emoji and text reactions and answers the message with its counts', async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, bob!);
    const first = await reactOk(message.id, GRIN, bob!);
    assert.equal(first.id, message.id);
    assert.equal(first.conversationId, message.conversationId);
    assert.equal(first.data.text, 'Hi,');
    assert.equal(first.data.entities.sender.entity.uid, alice);
    assert.deepEqual(first.data.reactions, [{ reaction: GRIN, count: 1, reactedByMe: true }]);
    const second = await reactOk(message.id, ':reaction', alice!);
    assert.deepEqual(second.data.reactions, [
      { reaction: GRIN, count: 1 },
      { reaction: ':reaction', count: 1, reactedByMe: true },
    ]);
    const third = await reactOk(message.id, GRIN, alice!);
    assert.deepEqual(third.data.reactions, [
      { reaction: GRIN, count: 2, reactedByMe: true },
      { reaction: ':reaction', count: 1, reactedByMe: true },
    ]);
    const family = await reactOk(message.id, FAMILY, bob!);
    assert.deepEqual(family.data.reactions.at(-1), { reaction: FAMILY, count: 1, reactedByMe: true });
    assert.equal(family.sentAt, message.sentAt);
    assert.equal(family.updatedAt, message.updatedAt);
  });

  it('is idempotent: adding twice is one reaction, removing one never added changes nothing', async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, bob!);
    await reactOk(message.id, SWEAT, bob!);
    const again = await reactOk(message.id, SWEAT, bob!);
    assert.deepEqual(again.data.reactions, [{ reaction: SWEAT, count: 1, reactedByMe: true }]);
    assert.equal((await stored(message.id)).length, 1);
    const notMine = await reactOk(message.id, SWEAT, alice!, 'DELETE');
    assert.deepEqual(notMine.data.reactions, [{ reaction: SWEAT, count: 1 }]);
    const removed = await reactOk(message.id, SWEAT, bob!, 'DELETE');
    assert.equal(removed.data.reactions, undefined, 'no reactions: no field');
    assert.deepEqual(await stored(message.id), []);
    const twice = await reactOk(message.id, SWEAT, bob!, 'DELETE');
    assert.equal(twice.data.reactions, undefined);
  });

  it('reacts in groups as a member; outsiders and banned users do not see the message', async () => {
    const [owner, member, outsider, banned] = await uids(4);
    const group = await newGroup(t, t.appA, { members: { participants: [member], usersToBan: [banned] } }, owner);
    const message = await send(owner!, group.guid, 'group');
    const reacted = await reactOk(message.id, GRIN, member!);
    assert.deepEqual(reacted.data.reactions, [{ reaction: GRIN, count: 1, reactedByMe: true }]);
    for (const uid of [outsider!, banned!]) {
      expectError(await react(message.id, GRIN, uid), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
      expectError(await react(message.id, GRIN, uid, 'DELETE'), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
      expectError(await reactions(message.id, undefined, {}, uid), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
      expectError(await reactions(message.id, GRIN, {}, uid), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    }
    assert.equal((await stored(message.id)).length, 1);
  });

  it('needs onBehalfOf naming an active user, a visible message and a valid reaction', async () => {
    const [alice, bob, eve] = await uids(3);
    const message = await send(alice!, bob!);
    for (const method of ['POST', 'DELETE'] as const) {
      const none = await react(message.id, GRIN, undefined, method);
      expectError(none, 400, 'ERR_BAD_REQUEST');
      assert.ok(body(none).error.details.onBehalfOf);
      expectError(await react(message.id, GRIN, uniqueId(), method), 404, 'ERR_UID_NOT_FOUND');
      expectError(await react('999999999', GRIN, alice, method), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
      expectError(await react('abc', GRIN, alice, method), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
      expectError(await react('99999999999999999999999', GRIN, alice, method), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
      expectError(await react(message.id, GRIN, eve, method), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
      expectError(await react(message.id, 'x'.repeat(46), alice, method), 400, 'ERR_BAD_REQUEST');
      expectError(await react(message.id, '   ', alice, method), 400, 'ERR_BAD_REQUEST');
    }
    await t.call(t.appA, `/v3/users/${bob}`, { method: 'DELETE' });
    expectError(await react(message.id, GRIN, bob), 404, 'ERR_UID_NOT_FOUND');
    const longest = await reactOk(message.id, 'x'.repeat(45), alice!);
    assert.equal(longest.data.reactions[0].reaction, 'x'.repeat(45));
    assert.deepEqual(await stored(message.id), [{ reaction: 'x'.repeat(45), uid: alice }]);
  });

  it('allows 25 distinct reactions per message, more of those already there', async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, bob!);
    for (let i = 0; i < 25; i++) await reactOk(message.id, `r${i}`, alice!);
    const over = await react(message.id, 'one-too-many', alice);
    expectError(over, 400, 'ERR_BAD_REQUEST');
    assert.ok(body(over).error.details.reaction);
    const existing = await reactOk(message.id, 'r7', bob!);
    assert.equal(existing.data.reactions.length, 25);
    assert.deepEqual(existing.data.reactions[7], { reaction: 'r7', count: 2, reactedByMe: true });
    await reactOk(message.id, 'r0', alice!, 'DELETE');
    await reactOk(message.id, 'now-fits', bob!);
    assert.equal(new Set((await stored(message.id)).map((row) => row.reaction)).size, 25);
  });

  it('keeps the limit under concurrent adds', async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, bob!);
    for (let i = 0; i < 20; i++) await reactOk(message.id, `base${i}`, alice!);
    const responses = await Promise.all(Array.from({ length: 12 }, (_, i) => react(message.id, `new${i}`, i % 2 ? alice : bob)));
    const accepted = responses.filter((response) => response.statusCode === 200).length;
    for (const response of responses) if (response.statusCode !== 200) expectError(response, 400, 'ERR_BAD_REQUEST');
    assert.equal(accepted, 5);
    assert.equal(new Set((await stored(message.id)).map((row) => row.reaction)).size, 25);
  });

  it('keeps apps apart', async () => {
    const [alice, bob] = await uids(2);
    const [other] = await uids(1, t.appB);
    const message = await send(alice!, bob!);
    await reactOk(message.id, GRIN, alice!);
    expectError(await react(message.id, GRIN, other, 'POST', t.appB), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    expectError(await react(message.id, GRIN, other, 'DELETE', t.appB), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    expectError(await react(message.id, GRIN, alice, 'DELETE', t.appB), 404, 'ERR_UID_NOT_FOUND');
    expectError(await reactions(message.id, undefined, {}, undefined, t.appB), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    expectError(await reactions(message.id, GRIN, {}, undefined, t.appB), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    assert.deepEqual(await stored(message.id), [{ reaction: GRIN, uid: alice }]);
  });

  it('goes with its message when the message is deleted permanently', async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, bob!);
    await reactOk(message.id, GRIN, alice!);
    await reactOk(message.id, SWEAT, bob!);
    await t.database.db
      .deleteFrom('messages')
      .where('app_id', '=', t.appA.appId)
      .where('id', '=', message.id as never)
      .execute();
    assert.deepEqual(await stored(message.id), []);
  });
});

describe('list-all-reactions and get-message-reactions', () => {
  it('lists who reacted, in order, with the vendor’s fields and meta', async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, bob!);
    await reactOk(message.id, ':reaction', alice!);
    await reactOk(message.id, SWEAT, alice!);
    await reactOk(message.id, SWEAT, bob!);
    const all = await reactions(message.id, undefined, {}, alice);
    assert.equal(all.statusCode, 200, all.body);
    const { data, meta } = body(all);
    assert.deepEqual(
      data.map((r: any) => [r.messageId, r.reaction, r.uid]),
      [
        [message.id, ':reaction', alice],
        [message.id, SWEAT, alice],
        [message.id, SWEAT, bob],
      ],
    );
    for (const r of data) {
      assert.match(r.id, /^\d+$/);
      assert.equal(typeof r.reactedAt, 'number');
      assert.ok(Math.abs(r.reactedAt - Date.now() / 1000) < 60);
      assert.equal(r.reactedBy.uid, r.uid);
      assert.equal(r.reactedBy.name, `User ${r.uid}`);
      assert.equal(typeof r.reactedBy.createdAt, 'number');
    }
    assert.ok(BigInt(data[0].id) < BigInt(data[1].id) && BigInt(data[1].id) < BigInt(data[2].id));
    assert.deepEqual(meta, { current: { limit: 100, count: 3 }, next: { affix: 'append', id: data[2].id } });
    assert.deepEqual(body(await reactions(message.id)).data, data, 'the app sees the same without onBehalfOf');

    const one = await reactions(message.id, SWEAT, {}, bob);
    assert.equal(one.statusCode, 200, one.body);
    assert.deepEqual(body(one).data, data.slice(1));
    assert.deepEqual(body(one).meta, { current: { limit: 100, count: 2 }, next: { affix: 'append', id: data[2].id } });
    assert.deepEqual(body(await reactions(message.id, GRIN)), { data: [], meta: { current: { limit: 100, count: 0 } } });
  });

  it('pages with limit and id', async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, bob!);
    for (const uid of [alice!, bob!]) await reactOk(message.id, GRIN, uid);
    await reactOk(message.id, SWEAT, alice!);
    const first = body(await reactions(message.id, undefined, { limit: '2' }));
    assert.deepEqual(
      first.data.map((r: any) => r.reaction),
      [GRIN, GRIN],
    );
    assert.deepEqual(first.meta, { current: { limit: 2, count: 2 }, next: { affix: 'append', id: first.data[1].id } });
    const second = body(await reactions(message.id, undefined, { limit: '2', id: first.meta.next.id }));
    assert.deepEqual(
      second.data.map((r: any) => [r.reaction, r.uid]),
      [[SWEAT, alice]],
    );
    const grin = body(await reactions(message.id, GRIN, { limit: '1', id: first.data[0].id }));
    assert.deepEqual(
      grin.data.map((r: any) => r.uid),
      [bob],
    );
  });

  it('shows a permanently deleted user by uid, and refuses bad input', async () => {
    const [alice, bob, gone] = await uids(3);
    const message = await send(alice!, bob!);
    await reactOk(message.id, GRIN, alice!);
    await t.database.db.deleteFrom('users').where('app_id', '=', t.appA.appId).where('uid', '=', gone!).execute();
    await t.database.db.insertInto('message_reactions').values({ app_id: t.appA.appId, message_id: message.id, reaction: GRIN, uid: gone! }).execute();
    const listed = body(await reactions(message.id, GRIN)).data;
    assert.deepEqual(listed[1].reactedBy, { uid: gone });
    for (const query of [{ limit: '0' }, { limit: '101' }, { id: 'x' }, { perPage: '5' }] as Array<Record<string, string>>) {
      expectError(await reactions(message.id, undefined, query), 400, 'ERR_BAD_REQUEST');
      expectError(await reactions(message.id, GRIN, query), 400, 'ERR_BAD_REQUEST');
    }
    expectError(await reactions(message.id, 'y'.repeat(46)), 400, 'ERR_BAD_REQUEST');
    expectError(await reactions(message.id, undefined, {}, uniqueId()), 404, 'ERR_UID_NOT_FOUND');
    expectError(await reactions('424242424242'), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    expectError(await reactions('424242424242', GRIN), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
  });
});

describe('reactions on messages', () => {
  it('renders data.reactions on get and on every list, relative to onBehalfOf', async () => {
    const [alice, bob, owner] = await uids(3);
    const m1 = await send(alice!, bob!);
    const m2 = await send(bob!, alice!);
    const m3 = await send(alice!, bob!);
    await reactOk(m1.id, GRIN, alice!);
    await reactOk(m1.id, GRIN, bob!);
    await reactOk(m3.id, SWEAT, bob!);
    const asAlice = body(await t.call(t.appA, `/v3/messages/${m1.id}`, { onBehalfOf: alice })).data;
    assert.deepEqual(asAlice.data.reactions, [{ reaction: GRIN, count: 2, reactedByMe: true }]);
    const asApp = body(await t.call(t.appA, `/v3/messages/${m1.id}`)).data;
    assert.deepEqual(asApp.data.reactions, [{ reaction: GRIN, count: 2 }]);
    const list = body(await t.call(t.appA, `/v3/users/${bob}/messages`, { onBehalfOf: alice })).data;
    assert.deepEqual(
      list.map((m: any) => [m.id, m.data.reactions]),
      [
        [m1.id, [{ reaction: GRIN, count: 2, reactedByMe: true }]],
        [m2.id, undefined],
        [m3.id, [{ reaction: SWEAT, count: 1 }]],
      ],
    );
    const group = await newGroup(t, t.appA, { members: { participants: [alice] } }, owner);
    const g1 = await send(owner!, group.guid, 'group');
    await send(owner!, group.guid, 'group');
    await reactOk(g1.id, FAMILY, alice!);
    const groupList = body(await t.call(t.appA, `/v3/groups/${group.guid}/messages`, { onBehalfOf: owner, query: { hasReactions: 'true' } })).data;
    assert.deepEqual(
      groupList.map((m: any) => [m.id, m.data.reactions]),
      [[g1.id, [{ reaction: FAMILY, count: 1 }]]],
    );
  });

  it('filters the three message lists with hasReactions', async () => {
    const [alice, bob, owner] = await uids(3);
    const m1 = await send(alice!, bob!);
    const m2 = await send(alice!, bob!);
    await reactOk(m2.id, GRIN, bob!);
    const ids = async (url: string, query: Record<string, string>, onBehalfOf?: string) => {
      const response = await t.call(t.appA, url, { query, ...(onBehalfOf ? { onBehalfOf } : {}) });
      assert.equal(response.statusCode, 200, response.body);
      return body(response).data.map((m: any) => m.id);
    };
    assert.deepEqual(await ids(`/v3/users/${bob}/messages`, { hasReactions: 'true' }, alice), [m2.id]);
    assert.deepEqual(await ids(`/v3/users/${bob}/messages`, { hasReactions: 'false' }, alice), [m1.id]);
    assert.deepEqual(await ids('/v3/messages', { hasReactions: 'true', conversationId: m1.conversationId }), [m2.id]);
    assert.deepEqual(await ids('/v3/messages', { hasReactions: 'false', conversationId: m1.conversationId }), [m1.id]);
    assert.deepEqual(await ids('/v3/messages', { hasReactions: 'true' }, alice), [m2.id]);
    const group = await newGroup(t, t.appA, {}, owner);
    const g1 = await send(owner!, group.guid, 'group');
    const g2 = await send(owner!, group.guid, 'group');
    await reactOk(g1.id, SWEAT, owner!);
    assert.deepEqual(await ids(`/v3/groups/${group.guid}/messages`, { hasReactions: 'true' }), [g1.id]);
    assert.ok((await ids(`/v3/groups/${group.guid}/messages`, { hasReactions: 'false' })).includes(g2.id));
    assert.ok(!(await ids(`/v3/groups/${group.guid}/messages`, { hasReactions: 'false' })).includes(g1.id));
    await reactOk(m2.id, GRIN, bob!, 'DELETE');
    assert.deepEqual(await ids(`/v3/users/${bob}/messages`, { hasReactions: 'true' }, alice), []);
  });

  it('drops a client’s own data.reactions from a send', async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, bob!, 'user', { data: { text: 'x', reactions: [{ reaction: 'fake', count: 99 }] } });
    assert.equal(message.data.reactions, undefined);
    const again = body(await t.call(t.appA, `/v3/messages/${message.id}`)).data;
    assert.equal(again.data.reactions, undefined);
  });
});
