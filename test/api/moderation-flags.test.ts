import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { silentLogger } from '../../src/domain/context.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, errorCode, uniqueId, type TestApp } from '../helpers/app.js';
import { newGroup, newUids } from '../helpers/factories.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

/** A new app for each test: the flagged and reviewed lists are the whole app's. */
const freshApp = () => t.services.apps.create({ appId: '', requestId: 'test', log: silentLogger }, { name: 'Fresh app' });
let A: CreatedApp;
beforeEach(async () => {
  A = await freshApp();
});

type Response = { statusCode: number; body: string };
const uids = (n: number, app = A) => newUids(t, app, n);
const send = async (sender: string, receiver: string, receiverType = 'user', app = A) => {
  const response = await t.call(app, '/v3/messages', { method: 'POST', body: { receiver, receiverType, data: { text: `Hi from ${sender}` } }, onBehalfOf: sender });
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
};
const flag = (id: string, uid: string | undefined, payload: Record<string, unknown> = { reasonId: 'spam' }, app = A) =>
  t.call(app, `/v3/messages/${id}/flagged`, { method: 'POST', body: payload, ...(uid !== undefined ? { onBehalfOf: uid } : {}) });
const flagOk = async (id: string, uid: string, payload: Record<string, unknown> = { reasonId: 'spam' }, app = A) => {
  const response = await flag(id, uid, payload, app);
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
};
const review = (id: string, status: unknown, app = A) => t.call(app, `/v3/moderation/flagged-messages/${id}`, { method: 'PATCH', body: { status } });
const reviewOk = async (id: string, status: 'approved' | 'disapproved', app = A) => {
  const response = await review(id, status, app);
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
};
const listOf = async (path: string, query: Record<string, string> = {}, app = A) => {
  const response = await t.call(app, path, { query });
  assert.equal(response.statusCode, 200, response.body);
  return body(response);
};
const flagged = (query: Record<string, string> = {}, app = A) => listOf('/v3/moderation/flagged-messages', query, app);
const reviewed = (query: Record<string, string> = {}, app = A) => listOf('/v3/moderation/reviewed-messages', query, app);
const expectError = (response: Response, status: number, code: string) => {
  assert.equal(response.statusCode, status, response.body);
  assert.equal(errorCode(response as never), code, response.body);
};
/** The ids of the 1:1 conversation between `viewer` and `other`, as `viewer` reads it. */
const conversationIds = async (viewer: string, other: string) => {
  const response = await t.call(A, `/v3/users/${other}/messages`, { onBehalfOf: viewer });
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data.map((m: any) => m.id as string);
};
const getAs = (id: string, viewer: string) => t.call(A, `/v3/messages/${id}`, { onBehalfOf: viewer });

describe('flag-a-message', () => {
  it('flags a 1:1 message as its receiver, answering success, and queues it as pending with the message', async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, bob!);
    const answer = await flagOk(message.id, bob!, { reasonId: 'spam', remark: 'Selling things' });
    assert.equal(answer.success, true);
    assert.equal(answer.message, `Message with id ${message.id} has been flagged successfully.`);
    assert.deepEqual({ ...answer.flag, createdAt: 0 }, { messageId: message.id, uid: bob, reasonId: 'spam', remark: 'Selling things', createdAt: 0 });
    const list = await flagged();
    assert.equal(list.data.length, 1);
    const item = list.data[0];
    assert.deepEqual([item.source, item.messageId, item.status, item.flagsCount, item.reviewedAt], ['flagged', message.id, 'pending', 1, undefined]);
    assert.equal(item.message.id, message.id);
    assert.equal(item.message.data.text, message.data.text);
    assert.equal(item.message.data.entities.sender.entity.uid, alice);
    assert.deepEqual(item.flags, [{ uid: bob, reasonId: 'spam', remark: 'Selling things', createdAt: answer.flag.createdAt }]);
    assert.deepEqual(item.reasons, [{ id: 'spam', name: 'Spam', count: 1 }]);
    assert.equal(item.firstFlaggedAt, answer.flag.createdAt);
    assert.equal(item.lastFlaggedAt, answer.flag.createdAt);
    assert.deepEqual(list.meta, { current: { limit: 50, count: 1 } });
    // Flagging does not hide it.
    assert.ok((await conversationIds(bob!, alice!)).includes(message.id));
  });

  it('flags a group message as a member, and a message the user sent', async () => {
    const [owner, member] = await uids(2);
    const group = await newGroup(t, A, { members: { participants: [member] } }, owner);
    const message = await send(owner!, group.guid, 'group');
    await flagOk(message.id, member!, { reasonId: 'harassment' });
    const own = await send(member!, group.guid, 'group');
    await flagOk(own.id, member!);
    assert.deepEqual((await flagged()).data.map((item: any) => item.messageId).sort(), [message.id, own.id].sort());
  });

  it('keeps one flag per user: flagging again replaces its reason and remark', async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, bob!);
    await flagOk(message.id, bob!, { reasonId: 'spam', remark: 'first' });
    const again = await flagOk(message.id, bob!, { reasonId: 'harassment' });
    assert.equal(again.flag.remark, undefined);
    const [item] = (await flagged()).data;
    assert.equal(item.flagsCount, 1);
    assert.deepEqual(
      item.flags.map((f: any) => [f.uid, f.reasonId, f.remark]),
      [[bob, 'harassment', undefined]],
    );
    assert.deepEqual(item.reasons, [{ id: 'harassment', name: 'Harassment', count: 1 }]);
    const stored = await t.database.db.selectFrom('moderation_flags').selectAll().where('app_id', '=', A.appId).execute();
    assert.equal(stored.length, 1);
  });

  it('counts the flags of several users, by reason, the most given first', async () => {
    const [sender, ...members] = await uids(5);
    const group = await newGroup(t, A, { members: { participants: members } }, sender);
    const message = await send(sender!, group.guid, 'group');
    const reasons = ['harassment', 'spam', 'harassment', 'violence'];
    for (const [i, uid] of members.entries()) await flagOk(message.id, uid, { reasonId: reasons[i] });
    const [item] = (await flagged()).data;
    assert.equal(item.flagsCount, 4);
    assert.deepEqual(item.reasons, [
      { id: 'harassment', name: 'Harassment', count: 2 },
      { id: 'spam', name: 'Spam', count: 1 },
      { id: 'violence', name: 'Violence', count: 1 },
    ]);
    assert.deepEqual(item.flags.map((f: any) => f.uid).sort(), [...members].sort());
  });

  it('keeps every flag when several users (and one user twice) flag a message at once', async () => {
    const [sender, ...members] = await uids(9);
    const group = await newGroup(t, A, { members: { participants: members } }, sender);
    const message = await send(sender!, group.guid, 'group');
    const responses = await Promise.all([...members, members[0]!].map((uid) => flag(message.id, uid, { reasonId: 'spam' })));
    assert.ok(
      responses.every((r) => r.statusCode === 200),
      responses.map((r) => r.body).join('\n'),
    );
    const list = await flagged();
    assert.equal(list.data.length, 1);
    assert.equal(list.data[0].flagsCount, members.length);
    const queued = await t.database.db.selectFrom('moderation_flagged_messages').selectAll().where('app_id', '=', A.appId).execute();
    assert.equal(queued.length, 1);
  });

  it('flags with a reason of the app’s own and with a built-in reason it changed', async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, bob!);
    assert.equal((await t.call(A, '/v3/moderation/reasons', { method: 'POST', body: { id: 'scam', name: 'Scam' } })).statusCode, 200);
    assert.equal((await t.call(A, '/v3/moderation/reasons/other', { method: 'PUT', body: { name: 'Something else' } })).statusCode, 200);
    await flagOk(message.id, bob!, { reasonId: 'scam' });
    await flagOk(message.id, alice!, { reasonId: 'other' });
    const [item] = (await flagged()).data;
    assert.deepEqual(item.reasons.map((r: any) => [r.id, r.name]).sort(), [
      ['other', 'Something else'],
      ['scam', 'Scam'],
    ]);
  });

  it('needs onBehalfOf, naming an active user', async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, bob!);
    const none = await flag(message.id, undefined);
    expectError(none, 400, 'ERR_BAD_REQUEST');
    assert.ok(body(none).error.details.onBehalfOf, none.body);
    expectError(await flag(message.id, uniqueId()), 404, 'ERR_UID_NOT_FOUND');
    assert.equal((await t.call(A, `/v3/users/${bob}`, { method: 'DELETE' })).statusCode, 200);
    expectError(await flag(message.id, bob), 404, 'ERR_UID_NOT_FOUND');
    assert.deepEqual((await flagged()).data, []);
  });

  it('answers a message the user cannot see as an unknown id: another 1:1’s, a group they are not in, another app’s', async () => {
    const [alice, bob, eve, banned] = await uids(4);
    const theirs = await send(alice!, bob!);
    const group = await newGroup(t, A, { members: { usersToBan: [banned] } }, alice);
    const inGroup = await send(alice!, group.guid, 'group');
    const [otherSender, otherReceiver] = await uids(2, t.appB);
    const otherApps = await send(otherSender!, otherReceiver!, 'user', t.appB);
    for (const [id, uid] of [
      [theirs.id, eve],
      [inGroup.id, eve],
      [inGroup.id, banned],
      [otherApps.id, eve],
      ['999999999', bob],
      ['abc', bob],
      ['99999999999999999999999', bob],
    ] as const) {
      expectError(await flag(id, uid), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    }
    assert.deepEqual((await flagged()).data, []);
    assert.deepEqual(
      (await flagged({}, t.appB)).data.filter((item: any) => item.messageId === otherApps.id),
      [],
    );
  });

  it('refuses an action message with ERR_MESSAGE_ACTION_NOT_ALLOWED', async () => {
    const [owner, member] = await uids(2);
    const group = await newGroup(t, A, {}, owner);
    const added = await t.call(A, `/v3/groups/${group.guid}/members`, { method: 'POST', body: { participants: [member] } });
    assert.equal(added.statusCode, 200, added.body);
    const action = body(added).data.participants[member!].data;
    assert.equal(action.category, 'action');
    expectError(await flag(action.id, member), 403, 'ERR_MESSAGE_ACTION_NOT_ALLOWED');
    assert.deepEqual((await flagged()).data, []);
  });

  it('needs a reason of the app: ERR_REASON_NOT_FOUND for an unknown, deleted or other app’s reason', async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, bob!);
    assert.equal((await t.call(t.appB, '/v3/moderation/reasons', { method: 'POST', body: { id: `b-${A.appId}`, name: 'B' } })).statusCode, 200);
    assert.equal((await t.call(A, '/v3/moderation/reasons/spam', { method: 'DELETE' })).statusCode, 200);
    for (const reasonId of ['nope', 'spam', `b-${A.appId}`, 'SPAM', 'a.b']) expectError(await flag(message.id, bob, { reasonId }), 404, 'ERR_REASON_NOT_FOUND');
    expectError(await flag(message.id, bob, {}), 400, 'ERR_BAD_REQUEST');
    expectError(await flag(message.id, bob, { reasonId: '' }), 400, 'ERR_BAD_REQUEST');
    assert.deepEqual((await flagged()).data, []);
  });

  it('takes a remark of at most 1,000 characters', async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, bob!);
    const long = await flag(message.id, bob, { reasonId: 'spam', remark: 'r'.repeat(1001) });
    expectError(long, 400, 'ERR_BAD_REQUEST');
    assert.ok(body(long).error.details.remark ?? body(long).error.details['/remark'] ?? Object.keys(body(long).error.details).some((k) => k.includes('remark')), long.body);
    assert.deepEqual((await flagged()).data, []);
    assert.equal((await flagOk(message.id, bob!, { reasonId: 'spam', remark: 'r'.repeat(1000) })).flag.remark.length, 1000);
  });
});

describe('list-flagged-messages', () => {
  it('lists the queue, the message flagged last first, in pages of `limit`', async () => {
    const [alice, bob] = await uids(2);
    const messages = [await send(alice!, bob!), await send(alice!, bob!), await send(alice!, bob!)];
    await flagOk(messages[1]!.id, bob!);
    await flagOk(messages[0]!.id, bob!);
    await flagOk(messages[2]!.id, bob!);
    await flagOk(messages[1]!.id, alice!);
    const order = [messages[1]!.id, messages[2]!.id, messages[0]!.id];
    assert.deepEqual(
      (await flagged()).data.map((item: any) => item.messageId),
      order,
    );
    const first = await flagged({ limit: '2' });
    assert.deepEqual(
      first.data.map((item: any) => item.messageId),
      order.slice(0, 2),
    );
    assert.deepEqual(first.meta, { current: { limit: 2, count: 2 } });
    const second = await flagged({ limit: '2', page: '2' });
    assert.deepEqual(
      second.data.map((item: any) => item.messageId),
      order.slice(2),
    );
    assert.deepEqual(second.meta, { current: { limit: 2, count: 1 } });
    assert.deepEqual((await flagged({ limit: '2', page: '3' })).data, []);
  });

  it('filters by reasonId and by sender', async () => {
    const [alice, bob, carol] = await uids(3);
    const fromAlice = await send(alice!, bob!);
    const fromCarol = await send(carol!, bob!);
    await flagOk(fromAlice.id, bob!, { reasonId: 'violence' });
    await flagOk(fromCarol.id, bob!, { reasonId: 'spam' });
    assert.deepEqual(
      (await flagged({ reasonId: 'violence' })).data.map((item: any) => item.messageId),
      [fromAlice.id],
    );
    assert.deepEqual(
      (await flagged({ sender: carol!.toUpperCase() })).data.map((item: any) => item.messageId),
      [fromCarol.id],
    );
    assert.deepEqual((await flagged({ sender: carol!, reasonId: 'violence' })).data, []);
  });

  it('refuses a limit outside 1..100 and a page below 1 with ERR_BAD_REQUEST', async () => {
    for (const query of [{ limit: '0' }, { limit: '101' }, { page: '0' }, { limit: 'x' }] as Array<Record<string, string>>) {
      expectError(await t.call(A, '/v3/moderation/flagged-messages', { query }), 400, 'ERR_BAD_REQUEST');
      expectError(await t.call(A, '/v3/moderation/reviewed-messages', { query }), 400, 'ERR_BAD_REQUEST');
    }
  });
});

describe('blockreview-flagged-message', () => {
  it('approved: the message moves to the reviewed list, out of the queue, and stays visible to its receiver', async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, bob!);
    await flagOk(message.id, bob!);
    const item = await reviewOk(message.id, 'approved');
    assert.deepEqual([item.source, item.messageId, item.status, item.flagsCount], ['flagged', message.id, 'approved', 1]);
    assert.ok(Number.isInteger(item.reviewedAt));
    assert.deepEqual((await flagged()).data, []);
    const list = await reviewed();
    assert.deepEqual(
      list.data.map((i: any) => [i.source, i.messageId, i.status]),
      [['flagged', message.id, 'approved']],
    );
    assert.deepEqual(list.meta, { current: { limit: 50, count: 1 } });
    assert.ok((await conversationIds(bob!, alice!)).includes(message.id));
    assert.equal((await getAs(message.id, bob!)).statusCode, 200);
  });

  it('disapproved: the message is hidden from its receiver, not from its sender', async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, bob!);
    await flagOk(message.id, bob!);
    const item = await reviewOk(message.id, 'disapproved');
    assert.equal(item.status, 'disapproved');
    assert.equal(item.message.data.moderation?.status, 'disapproved', JSON.stringify(item.message.data));
    assert.deepEqual((await flagged()).data, []);
    assert.deepEqual(
      (await reviewed()).data.map((i: any) => [i.messageId, i.status]),
      [[message.id, 'disapproved']],
    );
    assert.ok(!(await conversationIds(bob!, alice!)).includes(message.id), 'hidden from the receiver’s history');
    expectError(await getAs(message.id, bob!), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    assert.ok((await conversationIds(alice!, bob!)).includes(message.id), 'the sender still sees it');
    assert.equal((await getAs(message.id, alice!)).statusCode, 200);
    // The receiver cannot flag what they cannot see.
    expectError(await flag(message.id, bob), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
  });

  it('reviewing a disapproved message again as approved shows it again', async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, bob!);
    await flagOk(message.id, bob!);
    await reviewOk(message.id, 'disapproved');
    const item = await reviewOk(message.id, 'approved');
    assert.equal(item.status, 'approved');
    assert.ok((await conversationIds(bob!, alice!)).includes(message.id));
    assert.equal((await getAs(message.id, bob!)).statusCode, 200);
    assert.deepEqual(
      (await reviewed()).data.map((i: any) => [i.messageId, i.status]),
      [[message.id, 'approved']],
    );
  });

  it('a message flagged again after an approval is pending again', async () => {
    const [alice, bob, carol] = await uids(3);
    const group = await newGroup(t, A, { members: { participants: [bob, carol] } }, alice);
    const message = await send(alice!, group.guid, 'group');
    await flagOk(message.id, bob!);
    const approved = await reviewOk(message.id, 'approved');
    await flagOk(message.id, carol!, { reasonId: 'harassment' });
    const [item] = (await flagged()).data;
    assert.deepEqual([item.messageId, item.status, item.flagsCount, item.reviewedAt], [message.id, 'pending', 2, approved.reviewedAt]);
    assert.deepEqual((await reviewed()).data, []);
  });

  it('answers ERR_FLAGGED_MESSAGE_NOT_FOUND for a message nobody flagged, an unknown id and a bad id', async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, bob!);
    for (const id of [message.id, '999999999', 'abc']) expectError(await review(id, 'approved'), 404, 'ERR_FLAGGED_MESSAGE_NOT_FOUND');
    assert.ok((await conversationIds(bob!, alice!)).includes(message.id));
  });

  it('refuses a status other than approved or disapproved with ERR_BAD_REQUEST, changing nothing', async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, bob!);
    await flagOk(message.id, bob!);
    for (const status of ['pending', 'blocked', '', 1, undefined]) expectError(await review(message.id, status), 400, 'ERR_BAD_REQUEST');
    assert.equal((await flagged()).data[0].status, 'pending');
  });
});

describe('list-reviewed-messages', () => {
  it('lists flagged and engine-held messages moderators reviewed, the latest review first, by source', async () => {
    const [alice, bob] = await uids(2);
    const first = await send(alice!, bob!);
    const second = await send(alice!, bob!);
    const held = await send(alice!, bob!);
    await flagOk(first.id, bob!);
    await flagOk(second.id, bob!);
    await reviewOk(second.id, 'disapproved');
    await reviewOk(first.id, 'approved');
    // A message the rules engine held, which a moderator rejected (review-blocked-message's record).
    const condition = { id: 1, entity: 'message', operand: 'text', category: 'word', operator: 'contains', value: ['hi'] };
    await t.database.db
      .insertInto('moderation_blocked_messages')
      .values({
        app_id: A.appId,
        message_id: held.id,
        rule_id: 'profanity',
        rule_name: 'Profanity',
        revision_id: `${A.appId}_profanity_1`,
        condition: JSON.stringify(condition),
        action: JSON.stringify(['blockMessage']),
        kind: 'send',
        status: 'rejected',
        reviewed: true,
        created_at: new Date(Date.now() - 60_000),
        updated_at: new Date(Date.now() + 60_000),
      })
      .execute();
    const list = await reviewed();
    assert.deepEqual(
      list.data.map((i: any) => [i.source, i.messageId, i.status]),
      [
        ['blocked', held.id, 'rejected'],
        ['flagged', first.id, 'approved'],
        ['flagged', second.id, 'disapproved'],
      ],
    );
    const blocked = list.data[0];
    assert.deepEqual(blocked.rule, { id: 'profanity', name: 'Profanity', revisionId: `${A.appId}_profanity_1` });
    assert.deepEqual(blocked.condition, condition);
    assert.deepEqual(blocked.action, ['blockMessage']);
    assert.equal(blocked.kind, 'send');
    assert.equal(blocked.message.id, held.id);
    assert.ok(blocked.reviewedAt > blocked.heldAt);
    assert.deepEqual(
      (await reviewed({ source: 'blocked' })).data.map((i: any) => i.messageId),
      [held.id],
    );
    assert.deepEqual(
      (await reviewed({ source: 'flagged' })).data.map((i: any) => i.messageId),
      [first.id, second.id],
    );
    const page = await reviewed({ limit: '2', page: '2' });
    assert.deepEqual(
      page.data.map((i: any) => i.messageId),
      [second.id],
    );
    assert.deepEqual(page.meta, { current: { limit: 2, count: 1 } });
    expectError(await t.call(A, '/v3/moderation/reviewed-messages', { query: { source: 'other' } }), 400, 'ERR_BAD_REQUEST');
  });

  it('leaves out engine-held messages not reviewed yet, and shows one marked reviewed without a decision as pending', async () => {
    const [alice, bob] = await uids(2);
    const held = await send(alice!, bob!);
    const marked = await send(alice!, bob!);
    const record = (id: string, reviewedFlag: boolean) => ({
      app_id: A.appId,
      message_id: id,
      rule_id: 'r',
      rule_name: 'R',
      revision_id: 'x',
      condition: null,
      action: '[]',
      kind: 'edit' as const,
      reviewed: reviewedFlag,
      created_at: new Date(),
      updated_at: new Date(),
    });
    await t.database.db
      .insertInto('moderation_blocked_messages')
      .values([record(held.id, false), record(marked.id, true)])
      .execute();
    const list = (await reviewed()).data;
    assert.deepEqual(
      list.map((i: any) => [i.source, i.messageId, i.status, i.kind, i.condition]),
      [['blocked', marked.id, 'pending', 'edit', undefined]],
    );
  });
});

describe('flags and tenants', () => {
  it('another app sees, reviews and flags none of this app’s flagged messages', async () => {
    const [alice, bob] = await uids(2);
    const message = await send(alice!, bob!);
    await flagOk(message.id, bob!);
    const B = await freshApp();
    const [eve] = await uids(1, B);
    assert.deepEqual((await flagged({}, B)).data, []);
    expectError(await review(message.id, 'disapproved', B), 404, 'ERR_FLAGGED_MESSAGE_NOT_FOUND');
    expectError(await flag(message.id, eve, { reasonId: 'spam' }, B), 404, 'ERR_MESSAGE_ID_NOT_FOUND');
    assert.deepEqual((await reviewed({}, B)).data, []);
    const [item] = (await flagged()).data;
    assert.deepEqual([item.messageId, item.status, item.flagsCount], [message.id, 'pending', 1]);
    assert.ok((await conversationIds(bob!, alice!)).includes(message.id));
  });
});
