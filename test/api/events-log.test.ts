import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { withTransaction } from '../../src/db/transaction.js';
import { EventsRepository } from '../../src/repositories/events.repository.js';
import { EventRetention } from '../../src/services/event-retention.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, uniqueId, type TestApp } from '../helpers/app.js';
import { newGroup, newUids } from '../helpers/factories.js';

// The event log (docs/events.md): each change a webhook trigger names is recorded with it, in
// its transaction; a refused, repeated or rolled-back change records nothing.

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

interface Logged {
  id: string;
  trigger: string;
  conversation_id: string | null;
  message_id: string | null;
  data: any;
}

/** The app's events after `afterId`, oldest first. */
async function eventsAfter(app: CreatedApp, afterId: string): Promise<Logged[]> {
  const rows = await t.database.db
    .selectFrom('events')
    .select(['id', 'trigger', 'conversation_id', 'message_id', 'data'])
    .where('app_id', '=', app.appId)
    .where('id', '>', afterId)
    .orderBy('id')
    .execute();
  return rows.map((row) => ({ ...row, id: String(row.id), message_id: row.message_id === null ? null : String(row.message_id) }));
}

async function lastEventId(): Promise<string> {
  const row = await t.database.db
    .selectFrom('events')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  return row?.id === null || row?.id === undefined ? '0' : String(row.id);
}

/** What `change` recorded in app A: the events after it, as [trigger, message id or data]. */
async function recorded(change: () => Promise<unknown>): Promise<Logged[]> {
  const before = await lastEventId();
  await change();
  return eventsAfter(t.appA, before);
}

async function ok(url: string, options: Parameters<TestApp['call']>[2] = {}): Promise<any> {
  const response = await t.call(t.appA, url, options);
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
}
const send = (sender: string, receiver: string, receiverType: 'user' | 'group', extra: Record<string, unknown> = {}) =>
  ok('/v3/messages', { method: 'POST', onBehalfOf: sender, body: { receiver, receiverType, category: 'message', type: 'text', data: { text: 'hi' }, ...extra } });

describe('the event log', () => {
  it('a send records message_sent naming the message, and user_mentioned when it mentions users', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    let sent: any;
    const plain = await recorded(async () => (sent = await send(alice!, bob!, 'user')));
    assert.deepEqual(
      plain.map((e) => [e.trigger, e.message_id, e.data]),
      [['message_sent', sent.id, null]],
    );
    let mentioning: any;
    const mentions = await recorded(async () => (mentioning = await send(alice!, bob!, 'user', { data: { text: `hi <@uid:${bob}>` } })));
    assert.deepEqual(
      mentions.map((e) => [e.trigger, e.message_id]),
      [
        ['message_sent', mentioning.id],
        ['user_mentioned', mentioning.id],
      ],
    );
    assert.equal(mentions[0]!.conversation_id, mentions[1]!.conversation_id);
    assert.ok(BigInt(mentions[0]!.id) < BigInt(mentions[1]!.id));
  });

  it('group sends, bot messages, multipleReceivers and replies record message_sent; member changes record no message event', async () => {
    const [alice, bob, carol] = await newUids(t, t.appA, 3);
    const group = await newGroup(t, t.appA, {}, alice);
    const events = await recorded(async () => {
      const toGroup = await send(alice!, group.guid, 'group');
      await ok(`/v3/bots/${bob}/messages`, { method: 'POST', body: { receiver: alice, receiverType: 'user', data: { text: 'beep' } } });
      await ok('/v3/messages', { method: 'POST', onBehalfOf: alice, body: { receiver: bob, receiverType: 'user', data: { text: 'all' }, multipleReceivers: { uids: [carol] } } });
      await ok(`/v3/messages/${toGroup.id}/thread`, { method: 'POST', onBehalfOf: alice, body: { receiver: group.guid, receiverType: 'group', data: { text: 'reply' } } });
    });
    assert.deepEqual(
      events.map((e) => e.trigger),
      ['message_sent', 'message_sent', 'message_sent', 'message_sent', 'message_sent'],
    );
    const members = await recorded(() => ok(`/v3/groups/${group.guid}/members`, { method: 'POST', body: { participants: [bob, carol] } }));
    assert.ok(
      members.every((e) => e.message_id === null),
      JSON.stringify(members),
    );
  });

  it('a refused send and a repeated muid record nothing', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    await ok(`/v3/users/${bob}/blockedusers`, { method: 'POST', body: { blockedUids: [alice] } });
    const refused = await recorded(async () => {
      const response = await t.call(t.appA, '/v3/messages', { method: 'POST', onBehalfOf: alice, body: { receiver: bob, receiverType: 'user', data: { text: 'hi' } } });
      assert.equal(response.statusCode, 403, response.body);
    });
    assert.deepEqual(refused, []);
    const [carol] = await newUids(t, t.appA, 1);
    const muid = uniqueId('muid');
    const first = await recorded(() => send(alice!, carol!, 'user', { muid }));
    assert.equal(first.length, 1);
    assert.deepEqual(await recorded(() => send(alice!, carol!, 'user', { muid })), []);
  });

  it('an import records no events unless the call asks with recordEvents=true (then as a send does; a muid imported before records nothing)', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const sentAt = Math.floor(Date.now() / 1000) - 60;
    const messages = (muid: string, text: string) => ({
      messages: { [muid]: { muid, sender: alice, receiver: bob, receiverType: 'user', sentAt, category: 'message', type: 'text', data: { text } } },
    });
    const quiet = await recorded(() => ok('/v3/data_import/messages', { method: 'POST', body: messages(uniqueId('q'), 'quiet') }));
    assert.deepEqual(quiet, []);
    const muid = uniqueId('loud');
    let answer: any;
    const loud = await recorded(async () => (answer = await ok('/v3/data_import/messages?recordEvents=true', { method: 'POST', body: messages(muid, `hi <@uid:${bob}>`) })));
    const id = String(answer[muid].data.id);
    assert.deepEqual(
      loud.map((e) => [e.trigger, e.message_id]),
      [
        ['message_sent', id],
        ['user_mentioned', id],
      ],
    );
    assert.deepEqual(await recorded(() => ok('/v3/data_import/messages?recordEvents=true', { method: 'POST', body: messages(muid, 'again') })), []);
  });

  it('an edit records message_edited and a delete message_deleted, each naming its action message', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const message = await send(alice!, bob!, 'user');
    const edited = await recorded(() => ok(`/v3/messages/${message.id}`, { method: 'PUT', onBehalfOf: alice, body: { data: { text: 'edited' } } }));
    assert.deepEqual(
      edited.map((e) => e.trigger),
      ['message_edited'],
    );
    const deleted = await recorded(() => ok(`/v3/messages/${message.id}`, { method: 'DELETE', onBehalfOf: alice }));
    assert.deepEqual(
      deleted.map((e) => e.trigger),
      ['message_deleted'],
    );
    for (const event of [...edited, ...deleted]) {
      const action = await t.database.db.selectFrom('messages').selectAll().where('app_id', '=', t.appA.appId).where('id', '=', event.message_id!).executeTakeFirstOrThrow();
      assert.equal(action.category, 'action');
      assert.equal((action.data as any).entities.on.entity.id, message.id);
    }
  });

  it('reactions record added and removed with the vendor’s data.reaction; a repeat records nothing', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const message = await send(alice!, bob!, 'user');
    const path = `/v3/messages/${message.id}/reactions/${encodeURIComponent('👍')}`;
    const added = await recorded(() => ok(path, { method: 'POST', onBehalfOf: bob }));
    assert.deepEqual(
      added.map((e) => e.trigger),
      ['message_reaction_added'],
    );
    const reaction = added[0]!.data.reaction;
    assert.deepEqual(Object.keys(reaction).sort(), ['id', 'messageId', 'reactedAt', 'reactedBy', 'reaction', 'uid']);
    assert.equal(reaction.messageId, message.id);
    assert.equal(reaction.reaction, '👍');
    assert.equal(reaction.uid, bob);
    assert.equal(reaction.reactedBy.uid, bob);
    assert.equal(typeof reaction.reactedAt, 'number');
    assert.deepEqual(await recorded(() => ok(path, { method: 'POST', onBehalfOf: bob })), []);
    const removed = await recorded(() => ok(path, { method: 'DELETE', onBehalfOf: bob }));
    assert.deepEqual(
      removed.map((e) => [e.trigger, e.data.reaction.id]),
      [['message_reaction_removed', reaction.id]],
    );
    assert.deepEqual(await recorded(() => ok(path, { method: 'DELETE', onBehalfOf: bob })), []);
  });

  it('receipts record delivered and read with the vendor’s receipt data; unread records nothing', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const message = await send(alice!, bob!, 'user');
    const delivered = await recorded(() => ok(`/v3/users/${alice}/conversation/delivered`, { method: 'POST', onBehalfOf: bob, body: {} }));
    assert.deepEqual(
      delivered.map((e) => e.trigger),
      ['message_delivery_receipt'],
    );
    const data = delivered[0]!.data;
    assert.deepEqual(
      { ...data, body: { ...data.body, timestamp: typeof data.body.timestamp } },
      {
        receiver: alice,
        receiverType: 'user',
        type: 'receipts',
        sender: bob,
        messageSender: alice,
        body: { action: 'delivered', messageId: message.id, user: { uid: bob, name: `User ${bob}`, status: 'offline' }, timestamp: 'number' },
      },
    );
    const read = await recorded(() => ok(`/v3/users/${alice}/conversation/read`, { method: 'POST', onBehalfOf: bob, body: { messageId: message.id } }));
    assert.deepEqual(
      read.map((e) => [e.trigger, e.data.body.action]),
      [['message_read_receipt', 'read']],
    );
    assert.deepEqual(await recorded(() => ok(`/v3/users/${alice}/conversation/read`, { method: 'DELETE', onBehalfOf: bob })), []);
  });

  it('blocks record the users blocked and by whom; blocking again records nothing', async () => {
    const [alice, bob, carol] = await newUids(t, t.appA, 3);
    const blocked = await recorded(() => ok(`/v3/users/${alice}/blockedusers`, { method: 'POST', body: { blockedUids: [bob, carol] } }));
    assert.deepEqual(
      blocked.map((e) => e.trigger),
      ['user_blocked'],
    );
    assert.deepEqual(Object.keys(blocked[0]!.data.users).sort(), [bob, carol].sort());
    assert.equal(blocked[0]!.data.by.uid, alice);
    assert.deepEqual(await recorded(() => ok(`/v3/users/${alice}/blockedusers`, { method: 'POST', body: { blockedUids: [bob] } })), []);
    const unblocked = await recorded(() => ok(`/v3/users/${alice}/blockedusers`, { method: 'DELETE', body: { blockedUids: [bob] } }));
    assert.deepEqual(
      unblocked.map((e) => [e.trigger, Object.keys(e.data.users)]),
      [['user_unblocked', [bob]]],
    );
  });

  it('groups record created (before their inline members), updated, owner transferred and deleted, with data.group and data.by', async () => {
    const [owner, bob, carol] = await newUids(t, t.appA, 3);
    const guid = uniqueId('g');
    const created = await recorded(() => ok('/v3/groups', { method: 'POST', onBehalfOf: owner, body: { guid, name: 'G', type: 'public', members: { participants: [bob, carol] } } }));
    assert.deepEqual(
      created.map((e) => e.trigger),
      ['group_created', 'group_member_added'],
    );
    assert.equal(created[0]!.data.group.guid, guid);
    assert.equal(created[0]!.data.by.uid, owner);
    assert.equal(created[0]!.conversation_id, `group_${guid}`);
    assert.deepEqual(Object.keys(created[1]!.data.members).sort(), [bob, carol].sort());
    const updated = await recorded(() => ok(`/v3/groups/${guid}`, { method: 'PUT', onBehalfOf: owner, body: { name: 'Renamed', owner: bob } }));
    assert.deepEqual(
      updated.map((e) => e.trigger),
      ['group_updated', 'group_owner_transferred'],
    );
    assert.equal(updated[0]!.data.group.name, 'Renamed');
    assert.equal(updated[1]!.data.group.owner, bob);
    assert.equal(updated[1]!.data.oldOwner, owner);
    const deleted = await recorded(() => ok(`/v3/groups/${guid}`, { method: 'DELETE' }));
    assert.deepEqual(
      deleted.map((e) => [e.trigger, e.data.group.guid, e.data.by]),
      [['group_deleted', guid, undefined]],
    );
  });

  it('member changes record joined, left, added, kicked, banned, unbanned and scope changed', async () => {
    const [owner, joiner, added, kicked, banned] = await newUids(t, t.appA, 5);
    const group = await newGroup(t, t.appA, {}, owner);
    const members = (path: string, payload: object, onBehalfOf?: string) => ok(`/v3/groups/${group.guid}/${path}`, { method: 'POST', body: payload, ...(onBehalfOf ? { onBehalfOf } : {}) });
    const events = await recorded(async () => {
      await members('members', { participants: [joiner] }, joiner);
      await members('members', { participants: [added, kicked] }, owner);
      await ok(`/v3/groups/${group.guid}/members/${added}`, { method: 'PUT', onBehalfOf: owner, body: { scope: 'moderator' } });
      await ok(`/v3/groups/${group.guid}/members/${kicked}`, { method: 'DELETE', onBehalfOf: owner });
      await ok(`/v3/groups/${group.guid}/members/${joiner}`, { method: 'DELETE', onBehalfOf: joiner });
      await ok(`/v3/groups/${group.guid}/bannedusers/${banned}`, { method: 'POST', onBehalfOf: owner });
      await ok(`/v3/groups/${group.guid}/bannedusers/${banned}`, { method: 'DELETE', onBehalfOf: owner });
    });
    assert.deepEqual(
      events.map((e) => [e.trigger, Object.keys(e.data.members).sort().join(','), e.data.by?.uid ?? null]),
      [
        ['group_member_joined', joiner, null],
        ['group_member_added', [added, kicked].sort().join(','), owner],
        ['group_member_scope_changed', added, owner],
        ['group_member_kicked', kicked, owner],
        ['group_member_left', joiner, null],
        ['group_member_banned', banned, owner],
        ['group_member_unbanned', banned, owner],
      ],
    );
    const scope = events[2]!.data.members[added!];
    assert.deepEqual([scope.scope, scope.oldScope], ['moderator', 'participant']);
    assert.ok(events.every((e) => e.data.group.guid === group.guid && e.conversation_id === `group_${group.guid}`));
  });

  it('an event recorded in a transaction that then fails is not kept', async () => {
    const events = new EventsRepository(t.database.db);
    const before = await lastEventId();
    await assert.rejects(
      withTransaction(t.database.db, 'test_rollback', async (tx) => {
        await events.record(t.appA.appId, [{ trigger: 'user_blocked', data: { users: {}, by: {} } }], tx);
        throw new Error('the change fails after its event');
      }),
      /the change fails/,
    );
    assert.deepEqual(await eventsAfter(t.appA, before), []);
  });

  it('the retention deletes events older than it, of every app, and keeps the rest', async () => {
    const day = 24 * 3600 * 1000;
    const [alice, bob] = await newUids(t, t.appA, 2);
    const [carol, dave] = await newUids(t, t.appB, 2);
    await send(alice!, bob!, 'user');
    await t.call(t.appB, '/v3/messages', { method: 'POST', onBehalfOf: carol, body: { receiver: dave, receiverType: 'user', data: { text: 'b' } } });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const boundary = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const recent = await recorded(() => send(alice!, bob!, 'user'));
    // As if a week had passed since `boundary`: everything recorded before it is older than the retention.
    const retention = new EventRetention({ events: new EventsRepository(t.database.db), retentionMs: 7 * day, now: () => boundary + 7 * day });
    assert.ok((await retention.sweep()) >= 2);
    const left = await t.database.db.selectFrom('events').select(['id', 'created_at']).execute();
    assert.ok(
      left.every((row) => row.created_at.getTime() >= boundary),
      'every event before the boundary is gone, in both apps',
    );
    assert.deepEqual(
      left.map((row) => String(row.id)),
      recent.map((event) => event.id),
    );
    assert.equal(await retention.sweep(), 0);
  });

  it('keeps each app’s events to itself', async () => {
    const [alice, bob] = await newUids(t, t.appB, 2);
    const before = await lastEventId();
    const response = await t.call(t.appB, '/v3/messages', { method: 'POST', onBehalfOf: alice, body: { receiver: bob, receiverType: 'user', data: { text: 'b' } } });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(await eventsAfter(t.appA, before), []);
    assert.deepEqual(
      (await eventsAfter(t.appB, before)).map((e) => e.trigger),
      ['message_sent'],
    );
  });
});
