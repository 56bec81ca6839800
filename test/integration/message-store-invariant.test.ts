import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, uniqueId, type TestApp } from '../helpers/app.js';
import { newGroup, newUids } from '../helpers/factories.js';

// The message store's invariant (src/repositories/message-store/conversation-moves.ts), checked
// in the database after each entry point that stores messages: ids of a conversation follow its
// time, its last message is its newest shown, a 1:1 has exactly its two sides, a group none; a
// message held for moderation review stays out of its conversation until it is released.

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

interface Broken {
  conversation_id: string;
  problem: string;
}

/** Every conversation of the app that breaks the invariant, with what is wrong. */
async function brokenConversations(app: CreatedApp): Promise<Broken[]> {
  const result = await sql<Broken>`
    with m as (
      select conversation_id, max(id) as newest, max(sent_at) as latest, count(distinct receiver_type) as types, min(receiver_type) as receiver_type,
             bool_and(ordered) as ordered
      from (select conversation_id, id, sent_at, receiver_type,
                   sent_at >= coalesce(lag(sent_at) over (partition by conversation_id order by id), sent_at) as ordered
            from messages where app_id = ${app.appId} and not held) x
      group by conversation_id
    ), sides as (
      select conversation_id, array_agg(uid || '>' || conversation_with order by uid) as sides
      from user_conversations where app_id = ${app.appId} group by conversation_id
    ), pairs as (
      select distinct on (conversation_id) conversation_id,
             array[least(sender, receiver) || '>' || greatest(sender, receiver), greatest(sender, receiver) || '>' || least(sender, receiver)] as expected
      from messages where app_id = ${app.appId} and receiver_type = 'user' and not held order by conversation_id, id
    )
    select coalesce(c.conversation_id, m.conversation_id) as conversation_id, v.problem
    from (select * from conversations where app_id = ${app.appId}) c
    full join m on m.conversation_id = c.conversation_id
    left join sides s on s.conversation_id = coalesce(c.conversation_id, m.conversation_id)
    left join pairs p on p.conversation_id = coalesce(c.conversation_id, m.conversation_id),
    lateral (values
      (case when c.conversation_id is null then 'messages without a conversation row' end),
      (case when m.conversation_id is null then 'a conversation row without messages' end),
      (case when c.last_message_id is distinct from m.newest then 'last_message_id is not the newest message' end),
      (case when c.updated_at < m.latest then 'updated_at is before its newest message' end),
      (case when m.types > 1 or c.conversation_type <> m.receiver_type then 'mixed receiver types' end),
      (case when not m.ordered then 'ids do not follow the messages'' time' end),
      (case when m.receiver_type = 'user' and s.sides is distinct from (select array_agg(x order by x) from unnest(p.expected) x) then '1:1 sides missing or wrong' end),
      (case when m.receiver_type = 'group' and s.sides is not null then 'a group with 1:1 sides' end)
    ) as v (problem)
    where v.problem is not null
    order by 1, 2`.execute(t.database.db);
  return result.rows;
}

async function ok(url: string, options: Parameters<TestApp['call']>[2] = {}): Promise<any> {
  const response = await t.call(t.appA, url, options);
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
}
const send = (sender: string, receiver: string, receiverType: 'user' | 'group', text = 'hi') =>
  ok('/v3/messages', { method: 'POST', onBehalfOf: sender, body: { receiver, receiverType, category: 'message', type: 'text', data: { text } } });

/** The conversation's last message id, as stored. */
async function lastMessageOf(conversationId: string): Promise<string | null> {
  const row = await t.database.db.selectFrom('conversations').select('last_message_id').where('app_id', '=', t.appA.appId).where('conversation_id', '=', conversationId).executeTakeFirst();
  return row?.last_message_id === undefined || row.last_message_id === null ? null : String(row.last_message_id);
}

async function keyOf(messageId: string): Promise<string> {
  const row = await t.database.db.selectFrom('messages').select('conversation_id').where('app_id', '=', t.appA.appId).where('id', '=', messageId).executeTakeFirstOrThrow();
  return row.conversation_id;
}

/** After an entry point stored `newestId`: it is its conversation's last message, and no conversation of the app is broken. */
async function holds(newestId: string): Promise<void> {
  assert.equal(await lastMessageOf(await keyOf(newestId)), String(newestId));
  assert.deepEqual(await brokenConversations(t.appA), []);
}

describe('the message store invariant, per entry point', () => {
  it('send-message, 1:1: the first message creates both sides, the next moves the conversation', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    await holds((await send(alice!, bob!, 'user')).id);
    await holds((await send(bob!, alice!, 'user')).id);
  });

  it('send-message, group', async () => {
    const [alice] = await newUids(t, t.appA, 1);
    const group = await newGroup(t, t.appA, {}, alice);
    await holds((await send(alice!, group.guid, 'group')).id);
  });

  it('send-message with multipleReceivers', async () => {
    const [alice, bob, carol] = await newUids(t, t.appA, 3);
    const group = await newGroup(t, t.appA, {}, alice);
    const data = await ok('/v3/messages', {
      method: 'POST',
      onBehalfOf: alice,
      body: { receiver: bob, receiverType: 'user', data: { text: 'all' }, multipleReceivers: { uids: [carol], guids: [group.guid] } },
    });
    for (const id of [data.uids[bob!].data.id, data.uids[carol!].data.id, data.guids[group.guid].data.id]) await holds(id);
  });

  it('send-bot-message', async () => {
    const [bot, bob] = await newUids(t, t.appA, 2);
    await holds((await ok(`/v3/bots/${bot}/messages`, { method: 'POST', body: { receiver: bob, receiverType: 'user', data: { text: 'beep' } } })).id);
  });

  it('thread reply', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const parent = await send(alice!, bob!, 'user');
    await holds((await ok(`/v3/messages/${parent.id}/thread`, { method: 'POST', onBehalfOf: bob, body: { receiver: alice, receiverType: 'user', data: { text: 'reply' } } })).id);
  });

  it('edit and delete: their action messages', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const message = await send(alice!, bob!, 'user');
    await ok(`/v3/messages/${message.id}`, { method: 'PUT', onBehalfOf: alice, body: { data: { text: 'edited' } } });
    const afterEdit = await lastMessageOf(await keyOf(message.id));
    assert.ok(BigInt(afterEdit!) > BigInt(message.id), 'the edit stored an action message');
    await holds(afterEdit!);
    await ok(`/v3/messages/${message.id}`, { method: 'DELETE', onBehalfOf: alice });
    assert.deepEqual(await brokenConversations(t.appA), []);
  });

  it('group member changes: their action messages, several in one change', async () => {
    const [owner, a, b, c] = await newUids(t, t.appA, 4);
    const group = await newGroup(t, t.appA, {}, owner);
    await send(owner!, group.guid, 'group');
    await ok(`/v3/groups/${group.guid}/members`, { method: 'POST', body: { participants: [a, b, c] } });
    const actions = await t.database.db
      .selectFrom('messages')
      .select('id')
      .where('app_id', '=', t.appA.appId)
      .where('receiver', '=', group.guid)
      .where('category', '=', 'action')
      .orderBy('id')
      .execute();
    assert.equal(actions.length, 3, 'one action message per member added');
    await holds(String(actions[2]!.id));
  });

  it('data import: messages of new and existing conversations, in history order', async () => {
    const [alice, bob, carol, dave] = await newUids(t, t.appA, 4);
    const now = Math.floor(Date.now() / 1000);
    const record = (sender: string, receiver: string, sentAt: number) => ({
      muid: uniqueId('m'),
      sender,
      receiverType: 'user',
      receiver,
      category: 'message',
      type: 'text',
      data: { text: `imported at ${sentAt}` },
      sentAt,
    });
    const importMessages = async (records: Array<ReturnType<typeof record>>) => {
      const response = await t.call(t.appA, '/v3.0/data_import/messages', { method: 'POST', body: { messages: Object.fromEntries(records.map((r) => [r.muid, r])) } });
      assert.equal(response.statusCode, 200, response.body);
      const results = Object.values(body(response).data) as any[];
      assert.ok(
        results.every((result) => result.success),
        response.body,
      );
      return results.map((result) => String(result.data.id)).sort((x, y) => (BigInt(x) < BigInt(y) ? -1 : 1));
    };
    // New conversations, then more of one of them and a live send after.
    await importMessages([record(alice!, bob!, now - 900), record(bob!, alice!, now - 899), record(carol!, dave!, now - 898)]);
    const more = await importMessages([record(alice!, bob!, now - 600), record(bob!, alice!, now - 599)]);
    await holds(more[1]!);
    await holds((await send(alice!, bob!, 'user')).id);
  });

  it('moderation: a held send and reply stay out, their release puts them in, a withhold takes a message out', async () => {
    const rule = { id: 'invariant-hold', name: 'Hold', enabled: true, action: ['blockMessage'], conditions: [{ operand: 'text', category: 'word', operator: 'contains', value: ['heldword'] }] };
    await ok('/v3/moderation/rules', { method: 'POST', body: rule });
    const [alice, bob] = await newUids(t, t.appA, 2);
    // The first message of a 1:1, held: no conversation yet.
    const first = await send(alice!, bob!, 'user', 'heldword first');
    assert.equal(await lastMessageOf(await keyOf(first.id)), null);
    assert.deepEqual(await brokenConversations(t.appA), []);
    const shown = await send(alice!, bob!, 'user', 'shown');
    const reply = await ok(`/v3/messages/${shown.id}/thread`, { method: 'POST', onBehalfOf: bob, body: { data: { text: 'a heldword reply' } } });
    await holds(shown.id);
    await ok(`/v3/moderation/blocked-messages/${reply.id}`, { method: 'PATCH', body: { status: 'approved' } });
    await holds(reply.id);
    await ok(`/v3/moderation/blocked-messages/${first.id}`, { method: 'PATCH', body: { status: 'approved' } });
    await holds(reply.id);
    // A moderator takes the newest away again: the conversation moves back.
    await ok(`/v3/moderation/blocked-messages/${reply.id}`, { method: 'PATCH', body: { status: 'rejected' } });
    await holds(shown.id);
    await ok(`/v3/moderation/rules/${rule.id}`, { method: 'DELETE' });
  });

  it('racing writers of one group conversation (sends, replies, bot messages, edits, member changes) keep ids in time order', async () => {
    const uids = await newUids(t, t.appA, 8);
    const [owner] = uids;
    const group = await newGroup(t, t.appA, {}, owner);
    await ok(`/v3/groups/${group.guid}/members`, { method: 'POST', body: { participants: uids.slice(1, 4) } });
    const parent = await send(owner!, group.guid, 'group');
    const writes: Array<Promise<unknown>> = [];
    for (let round = 0; round < 6; round++) {
      writes.push(send(uids[1 + (round % 3)]!, group.guid, 'group', `send ${round}`));
      writes.push(ok(`/v3/messages/${parent.id}/thread`, { method: 'POST', onBehalfOf: owner, body: { receiver: group.guid, receiverType: 'group', data: { text: `reply ${round}` } } }));
      writes.push(ok(`/v3/bots/${owner}/messages`, { method: 'POST', body: { receiver: group.guid, receiverType: 'group', data: { text: `bot ${round}` } } }));
      writes.push(ok(`/v3/messages/${parent.id}`, { method: 'PUT', onBehalfOf: owner, body: { data: { text: `edit ${round}` } } }));
    }
    writes.push(ok(`/v3/groups/${group.guid}/members`, { method: 'POST', body: { participants: uids.slice(4) } }));
    await Promise.all(writes);
    assert.deepEqual(await brokenConversations(t.appA), []);
  });
});
