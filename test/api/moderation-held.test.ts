/**
 * Messages held for moderation review (docs/moderation.md): a blockMessage rule holds a message,
 * shown to its sender alone in every read path; approval releases it in its original place,
 * rejection keeps it hidden; a dropMessage rule stores nothing; edits are moderated as sends.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { silentLogger } from '../../src/domain/context.js';
import { EventsRepository } from '../../src/repositories/events.repository.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, errorCode, okData, uniqueId, type TestApp } from '../helpers/app.js';
import { newGroup, newUids } from '../helpers/factories.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

/** A new app with a rule holding `held` and one dropping `dropped` (a fresh app per test: its rules are its own). */
async function moderatedApp(): Promise<CreatedApp> {
  const app = await t.services.apps.create({ appId: '', requestId: 'test', log: silentLogger }, { name: 'Moderated' });
  await rule(app, { id: 'hold-words', value: ['forbidden', 'secret plan'], action: ['blockMessage'] });
  await rule(app, { id: 'drop-words', value: ['unsayable'], action: ['dropMessage'] });
  return app;
}

async function rule(app: CreatedApp, fields: { id: string; value: string[]; action: string[]; operand?: string; category?: string }) {
  const condition = { entity: 'message', operand: fields.operand ?? 'text', category: fields.category ?? 'word', operator: 'contains', value: fields.value };
  return okData(t, app, 'POST', '/v3/moderation/rules', undefined, { id: fields.id, name: fields.id, enabled: true, conditions: [condition], action: fields.action });
}

const send = (app: CreatedApp, from: string, to: string, text: string, receiverType = 'user') =>
  okData(t, app, 'POST', '/v3/messages', from, { receiver: to, receiverType, category: 'message', type: 'text', data: { text } });

const ids = (messages: Array<{ id: string }>) => messages.map((m) => m.id);
const history = async (app: CreatedApp, viewer: string, other: string) => ids(await okData(t, app, 'GET', `/v3/users/${other}/messages`, viewer));
const groupHistory = async (app: CreatedApp, viewer: string, guid: string) => ids(await okData(t, app, 'GET', `/v3/groups/${guid}/messages`, viewer));
const review = (app: CreatedApp, id: string, status: 'approved' | 'rejected') => t.call(app, `/v3/moderation/blocked-messages/${id}`, { method: 'PATCH', body: { status } });

/** The triggers of the app's events about a message, in order. */
async function eventsOf(app: CreatedApp, messageId: string): Promise<string[]> {
  const rows = await sql<{ trigger: string }>`select trigger from events where app_id = ${app.appId} and message_id = ${messageId}::bigint order by id`.execute(t.database.db);
  return rows.rows.map((row) => row.trigger);
}

describe('a message a blockMessage rule holds', () => {
  it('is answered pending, and shown to its sender alone in history, one message, the app-wide list and threads', async () => {
    const app = await moderatedApp();
    const [alice, bob] = await newUids(t, app, 2);
    const earlier = await send(app, alice!, bob!, 'hello');
    const held = await send(app, alice!, bob!, 'this is FORBIDDEN, really');
    const later = await send(app, bob!, alice!, 'hi back');
    assert.equal(earlier.data.moderation.status, 'approved', 'a message the rules let through says so');
    assert.equal(held.data.moderation.status, 'pending');
    assert.deepEqual(await history(app, bob!, alice!), [earlier.id, later.id], 'the receiver does not see it');
    assert.deepEqual(await history(app, alice!, bob!), [earlier.id, held.id, later.id], 'its sender does, in its place');
    assert.equal(errorCode(await t.call(app, `/v3/messages/${held.id}`, { onBehalfOf: bob! })), 'ERR_MESSAGE_ID_NOT_FOUND');
    assert.equal(errorCode(await t.call(app, `/v3/messages/${held.id}`)), 'ERR_MESSAGE_ID_NOT_FOUND', 'the app sees it in the moderation queue only');
    assert.equal((await okData(t, app, 'GET', `/v3/messages/${held.id}`, alice)).id, held.id);
    assert.ok(!ids(await okData(t, app, 'GET', '/v3/messages', undefined)).includes(held.id));
    assert.ok(!ids(await okData(t, app, 'GET', '/v3/messages', bob)).includes(held.id));
    assert.ok(ids(await okData(t, app, 'GET', '/v3/messages', alice)).includes(held.id));
    // A held reply: its parent's count and thread hide it from the receiver.
    const reply = await okData(t, app, 'POST', `/v3/messages/${earlier.id}/thread`, alice, { category: 'message', type: 'text', data: { text: 'a secret   plan' } });
    assert.equal(reply.data.moderation.status, 'pending', 'phrases match across runs of spaces');
    assert.deepEqual(ids(await okData(t, app, 'GET', `/v3/messages/${earlier.id}/thread`, bob)), []);
    assert.deepEqual(ids(await okData(t, app, 'GET', `/v3/messages/${earlier.id}/thread`, alice)), [reply.id]);
    assert.equal((await okData(t, app, 'GET', `/v3/messages/${earlier.id}`, bob)).replyCount ?? 0, 0);
    // Nobody may reply to it, react to it or mark it read but its sender.
    assert.equal(
      errorCode(await t.call(app, `/v3/messages/${held.id}/thread`, { method: 'POST', onBehalfOf: bob!, body: { category: 'message', type: 'text', data: { text: 'x' } } })),
      'ERR_MESSAGE_ID_NOT_FOUND',
    );
    assert.equal(errorCode(await t.call(app, `/v3/messages/${held.id}/reactions/👍`, { method: 'POST', onBehalfOf: bob! })), 'ERR_MESSAGE_ID_NOT_FOUND');
    // Its sender waits for its approval too: nothing about it reaches the others before.
    const ownReply = await t.call(app, `/v3/messages/${held.id}/thread`, { method: 'POST', onBehalfOf: alice!, body: { category: 'message', type: 'text', data: { text: 'x' } } });
    assert.equal(ownReply.statusCode, 403, ownReply.body);
    assert.equal(errorCode(ownReply), 'ERR_MESSAGE_HELD');
    assert.equal(errorCode(await t.call(app, `/v3/messages/${held.id}/reactions/👍`, { method: 'POST', onBehalfOf: alice! })), 'ERR_MESSAGE_HELD');
  });

  it('stays out of the receiver’s conversations, unread counts and kept pages until it is approved, then is back in its place', async () => {
    const app = await moderatedApp();
    const [alice, bob] = await newUids(t, app, 2);
    const first = await send(app, alice!, bob!, 'forbidden words first');
    // A conversation whose only message is held is nobody's but its sender's to see.
    assert.deepEqual(await okData(t, app, 'GET', '/v3/conversations', bob), []);
    const shown = await send(app, alice!, bob!, 'hello');
    const heldLast = await send(app, alice!, bob!, 'and forbidden again');
    const conversations = await okData(t, app, 'GET', '/v3/conversations', bob);
    assert.equal(conversations.length, 1);
    assert.equal(conversations[0].lastMessage.id, shown.id, 'the last message is the newest shown');
    assert.equal(conversations[0].unreadMessageCount, '1');
    // The receiver's page, asked twice (kept from its second time), then after the approvals.
    assert.deepEqual(await history(app, bob!, alice!), [shown.id]);
    assert.deepEqual(await history(app, bob!, alice!), [shown.id]);
    assert.equal((await review(app, first.id, 'approved')).statusCode, 200);
    assert.deepEqual(await history(app, bob!, alice!), [first.id, shown.id], 'released in its original place');
    assert.equal((await review(app, heldLast.id, 'approved')).statusCode, 200);
    assert.deepEqual(await history(app, bob!, alice!), [first.id, shown.id, heldLast.id]);
    const after = await okData(t, app, 'GET', '/v3/conversations', bob);
    assert.equal(after[0].lastMessage.id, heldLast.id);
    assert.equal(after[0].lastMessage.data.moderation.status, 'approved');
    assert.equal(after[0].unreadMessageCount, '3');
    assert.deepEqual(await eventsOf(app, first.id), ['moderation_engine_blocked', 'message_sent', 'moderation_manual_approved'], 'message_sent when approved, once');
    assert.equal((await review(app, first.id, 'approved')).statusCode, 200, 'approving again changes nothing');
    assert.deepEqual(await eventsOf(app, first.id), ['moderation_engine_blocked', 'message_sent', 'moderation_manual_approved']);
    // The conversation was created by the approval, with both sides.
    assert.equal((await okData(t, app, 'GET', '/v3/conversations', alice)).length, 1);
    // The sender's kept page is read again when they send a message that is held (its conversation does not move).
    assert.deepEqual(await history(app, alice!, bob!), [first.id, shown.id, heldLast.id]);
    assert.deepEqual(await history(app, alice!, bob!), [first.id, shown.id, heldLast.id]);
    const heldAgain = await send(app, alice!, bob!, 'forbidden once more');
    assert.deepEqual(await history(app, alice!, bob!), [first.id, shown.id, heldLast.id, heldAgain.id]);
    assert.deepEqual(await history(app, bob!, alice!), [first.id, shown.id, heldLast.id]);
  });

  it('in a group, is hidden from the other members; the webhook payloads of message events leave it out', async () => {
    const app = await moderatedApp();
    const [alice, bob, carol] = await newUids(t, app, 3);
    const group = await newGroup(t, app, { owner: alice, members: { participants: [bob, carol] } });
    const held = await send(app, alice!, group.guid, 'forbidden in the group', 'group');
    assert.equal(held.data.moderation.status, 'pending');
    assert.ok(!(await groupHistory(app, bob!, group.guid)).includes(held.id));
    assert.ok(!(await groupHistory(app, carol!, group.guid)).includes(held.id));
    assert.ok((await groupHistory(app, alice!, group.guid)).includes(held.id));
    assert.deepEqual(await eventsOf(app, held.id), ['moderation_engine_blocked']);
    // Rendered as webhooks and streams get them: the blocked event with what held it.
    const rows = await new EventsRepository(t.database.db).listAfter(app.appId, '0', 1000);
    const payloads = await t.services.eventPayloads.render(rows.filter((row) => row.message_id === held.id));
    assert.equal(payloads.length, 1);
    assert.equal(payloads[0]!.trigger, 'moderation_engine_blocked');
    const data = payloads[0]!.payload.data as { message: { id: string; data: { moderation: { status: string } } }; moderation: Array<{ ruleId: string }> };
    assert.equal(data.message.id, held.id);
    assert.equal(data.message.data.moderation.status, 'pending');
    assert.equal(data.moderation[0]!.ruleId, 'hold-words');
    const listed = await okData(t, app, 'GET', '/v3/moderation/blocked-messages', undefined);
    assert.deepEqual(
      listed.map((item: { message: { id: string } }) => item.message.id),
      [held.id],
    );
    assert.equal(listed[0].ruleId, 'hold-words');
    assert.equal(listed[0].revisionId, `${app.appId}_hold-words_1`);
    assert.deepEqual(listed[0].condition.value, ['forbidden', 'secret plan']);
  });

  it('rejected, stays hidden, its sender sees it disapproved, and it leaves the pending list', async () => {
    const app = await moderatedApp();
    const [alice, bob] = await newUids(t, app, 2);
    const held = await send(app, alice!, bob!, 'forbidden');
    assert.equal((await review(app, held.id, 'rejected')).statusCode, 200);
    assert.deepEqual(await history(app, bob!, alice!), []);
    assert.equal((await okData(t, app, 'GET', `/v3/messages/${held.id}`, alice)).data.moderation.status, 'disapproved');
    assert.deepEqual(await okData(t, app, 'GET', '/v3/moderation/blocked-messages', undefined), []);
    const rejected = await okData(t, app, 'GET', '/v3/moderation/blocked-messages', undefined, undefined);
    assert.deepEqual(rejected, []);
    const all = body(await t.call(app, '/v3/moderation/blocked-messages', { query: { status: 'rejected' } })).data;
    assert.deepEqual(
      all.map((item: { message: { id: string } }) => item.message.id),
      [held.id],
    );
    assert.deepEqual(await eventsOf(app, held.id), ['moderation_engine_blocked']);
  });
});

describe('a dropMessage rule', () => {
  it('refuses the send with ERR_BLOCKED_BY_EXTENSION naming the rule, and stores nothing', async () => {
    const app = await moderatedApp();
    const [alice, bob] = await newUids(t, app, 2);
    const response = await t.call(app, '/v3/messages', {
      method: 'POST',
      onBehalfOf: alice!,
      body: { receiver: bob, receiverType: 'user', category: 'message', type: 'text', data: { text: 'Unsayable!' } },
    });
    assert.equal(response.statusCode, 403, response.body);
    assert.equal(errorCode(response), 'ERR_BLOCKED_BY_EXTENSION');
    assert.deepEqual(body(response).error.details, { ruleId: 'drop-words', revisionId: `${app.appId}_drop-words_1`, conditionId: '1', requestId: response.headers['x-request-id'] });
    const stored = await sql<{ n: string }>`select count(*) as n from messages where app_id = ${app.appId}`.execute(t.database.db);
    assert.equal(Number(stored.rows[0]!.n), 0);
    const events = await sql<{ n: string }>`select count(*) as n from events where app_id = ${app.appId}`.execute(t.database.db);
    assert.equal(Number(events.rows[0]!.n), 0);
  });

  it('wins over blockMessage when both rules match', async () => {
    const app = await moderatedApp();
    const [alice, bob] = await newUids(t, app, 2);
    const response = await t.call(app, '/v3/messages', {
      method: 'POST',
      onBehalfOf: alice!,
      body: { receiver: bob, receiverType: 'user', category: 'message', type: 'text', data: { text: 'forbidden and unsayable' } },
    });
    assert.equal(errorCode(response), 'ERR_BLOCKED_BY_EXTENSION');
  });
});

describe('an edit', () => {
  it('that breaks a blockMessage rule hides the message and its edit until approved, then message_edited fires', async () => {
    const app = await moderatedApp();
    const [alice, bob] = await newUids(t, app, 2);
    const sent = await send(app, alice!, bob!, 'innocent');
    const action = await okData(t, app, 'PUT', `/v3/messages/${sent.id}`, alice, { data: { text: 'now forbidden' } });
    assert.equal(action.category, 'action');
    assert.deepEqual(await history(app, bob!, alice!), [], 'neither the message nor its edit shows');
    assert.deepEqual(await history(app, alice!, bob!), [sent.id, action.id]);
    assert.equal((await okData(t, app, 'GET', `/v3/messages/${sent.id}`, alice)).data.moderation.status, 'pending');
    assert.equal((await review(app, sent.id, 'approved')).statusCode, 200);
    assert.deepEqual(await history(app, bob!, alice!), [sent.id, action.id]);
    assert.equal((await okData(t, app, 'GET', `/v3/messages/${sent.id}`, bob)).data.text, 'now forbidden');
    assert.deepEqual(await eventsOf(app, sent.id), ['moderation_engine_approved', 'message_sent', 'moderation_engine_blocked', 'moderation_manual_approved']);
    assert.deepEqual(await eventsOf(app, action.id), ['message_edited']);
  });

  it('racing other edits of its message, each is moderated and stored, none refused', async () => {
    const app = await moderatedApp();
    const [alice, bob] = await newUids(t, app, 2);
    const sent = await send(app, alice!, bob!, 'first');
    const edits = await Promise.all(Array.from({ length: 6 }, (_, n) => t.call(app, `/v3/messages/${sent.id}`, { method: 'PUT', onBehalfOf: alice!, body: { data: { text: `edit ${n}` } } })));
    assert.deepEqual(
      edits.map((response) => response.statusCode),
      [200, 200, 200, 200, 200, 200],
      edits.map((r) => r.body).join('\n'),
    );
    const now = await okData(t, app, 'GET', `/v3/messages/${sent.id}`, bob);
    assert.match(now.data.text, /^edit [0-5]$/);
    assert.equal(now.data.moderation.status, 'approved');
  });

  it('that breaks a dropMessage rule is refused and changes nothing', async () => {
    const app = await moderatedApp();
    const [alice, bob] = await newUids(t, app, 2);
    const sent = await send(app, alice!, bob!, 'innocent');
    const response = await t.call(app, `/v3/messages/${sent.id}`, { method: 'PUT', onBehalfOf: alice!, body: { data: { text: 'unsayable' } } });
    assert.equal(errorCode(response), 'ERR_BLOCKED_BY_EXTENSION');
    assert.equal((await okData(t, app, 'GET', `/v3/messages/${sent.id}`, bob)).data.text, 'innocent');
    assert.deepEqual(await history(app, bob!, alice!), [sent.id]);
  });
});

describe('blocked messages, across apps', () => {
  it('another app can neither list nor review them', async () => {
    const app = await moderatedApp();
    const [alice, bob] = await newUids(t, app, 2);
    const held = await send(app, alice!, bob!, 'forbidden');
    assert.deepEqual(await okData(t, t.appB, 'GET', '/v3/moderation/blocked-messages', undefined), []);
    const response = await review(t.appB, held.id, 'approved');
    assert.equal(response.statusCode, 404);
    assert.equal(errorCode(response), 'ERR_BLOCKED_MESSAGE_NOT_FOUND');
    assert.deepEqual(await history(app, bob!, alice!), []);
    assert.equal(errorCode(await review(app, uniqueId('x'), 'approved')), 'ERR_BLOCKED_MESSAGE_NOT_FOUND');
  });
});

describe('every entry point is moderated', () => {
  it('bot messages and each receiver of multipleReceivers, as sends', async () => {
    const app = await moderatedApp();
    const [bot, alice, bob] = await newUids(t, app, 3);
    const botMessage = await okData(t, app, 'POST', `/v3/bots/${bot}/messages`, undefined, { receiver: alice, receiverType: 'user', data: { text: 'forbidden offer' } });
    assert.equal(botMessage.data.moderation.status, 'pending');
    assert.deepEqual(await history(app, alice!, bot!), []);
    const multi = await okData(t, app, 'POST', '/v3/messages', alice, { receiver: bob, receiverType: 'user', data: { text: 'forbidden to all' }, multipleReceivers: { uids: [bot] } });
    assert.equal(multi.uids[bob!].data.data.moderation.status, 'pending');
    assert.equal(multi.uids[bot!].data.data.moderation.status, 'pending');
    const dropped = await okData(t, app, 'POST', '/v3/messages', alice, { receiver: bob, receiverType: 'user', data: { text: 'unsayable' }, multipleReceivers: { uids: [bot] } });
    assert.equal(dropped.uids[bob!].error.code, 'ERR_BLOCKED_BY_EXTENSION');
    assert.equal(dropped.uids[bot!].error.code, 'ERR_BLOCKED_BY_EXTENSION');
  });

  it('the data import, only with ?moderate=true: a record a rule drops or blocks is refused, the others carry their status', async () => {
    const app = await moderatedApp();
    const [alice, bob] = await newUids(t, app, 2);
    const sentAt = Math.floor(Date.now() / 1000) - 60;
    const record = (muid: string, text: string) => ({ muid, sender: alice, receiver: bob, receiverType: 'user', category: 'message', type: 'text', data: { text }, sentAt });
    const messages = (suffix: string) => ({
      [`ok-${suffix}`]: record(`ok-${suffix}`, 'hello'),
      [`held-${suffix}`]: record(`held-${suffix}`, 'forbidden'),
      [`dropped-${suffix}`]: record(`dropped-${suffix}`, 'unsayable'),
    });
    const plain = await okData(t, app, 'POST', '/v3.0/data_import/messages', undefined, { messages: messages('a') });
    assert.ok(
      Object.values(plain).every((result: any) => result.success),
      'history is imported as it was',
    );
    assert.equal(plain['held-a'].data.data.moderation, undefined);
    const response = await t.call(app, '/v3.0/data_import/messages', { method: 'POST', query: { moderate: 'true' }, body: { messages: messages('b') } });
    assert.equal(response.statusCode, 200, response.body);
    const moderated = body(response).data;
    assert.equal(moderated['ok-b'].data.data.moderation.status, 'approved');
    assert.equal(moderated['held-b'].error.code, 'ERR_BLOCKED_BY_EXTENSION');
    assert.equal(moderated['dropped-b'].error.code, 'ERR_BLOCKED_BY_EXTENSION');
    assert.deepEqual((await history(app, bob!, alice!)).length, 4);
  });

  it('an app with no enabled rule is not moderated: its messages carry no status', async () => {
    const [alice, bob] = await newUids(t, t.appB, 2);
    const sent = await send(t.appB, alice!, bob!, 'forbidden and unsayable');
    assert.equal(sent.data.moderation, undefined);
  });
});
