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

const uids = (n: number, app = t.appA) => newUids(t, app, n);
const call = (path: string, method: 'POST' | 'PUT' | 'DELETE', payload?: unknown, onBehalfOf?: string) =>
  t.call(t.appA, path, { method, ...(payload !== undefined ? { body: payload } : {}), ...(onBehalfOf !== undefined ? { onBehalfOf } : {}) });
const ok = async (response: Awaited<ReturnType<typeof call>>) => {
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
};
/** The group's action messages, oldest first, as the app reads them. */
const actions = async (guid: string) => {
  const response = await t.call(t.appA, `/v3/groups/${guid}/messages`, { query: { category: 'action', limit: '100' } });
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data as Array<Record<string, any>>;
};
/** action, by, on, sender: what tells one group member action message from another. */
const summary = (message: Record<string, any>) => ({
  action: message.data.action,
  by: message.data.entities.by.entity.uid,
  on: message.data.entities.on.entity.uid,
  sender: message.sender,
});

describe('group member action messages', () => {
  it('answers each added member with its "added" action message, in the vendor’s shape', async () => {
    const [owner, a, m] = await uids(3);
    const group = await newGroup(t, t.appA, {}, owner);
    const missing = uniqueId();
    const result = await ok(await call(`/v3/groups/${group.guid}/members`, 'POST', { admins: [a], participants: [m, missing] }));
    const added = result.admins[a!].data;
    assert.deepEqual(
      { category: added.category, type: added.type, receiver: added.receiver, receiverType: added.receiverType, conversationId: added.conversationId },
      { category: 'action', type: 'groupMember', receiver: group.guid, receiverType: 'group', conversationId: `group_${group.guid}` },
    );
    assert.match(added.id, /^\d+$/);
    assert.deepEqual(summary(added), { action: 'added', by: 'app_system', on: a, sender: 'app_system' });
    assert.deepEqual(added.data.entities.by.entity, { uid: 'app_system', name: 'System', role: 'default', status: 'offline' });
    assert.equal(added.data.entities.on.entityType, 'user');
    assert.equal(added.data.entities.on.entity.name, `User ${a}`);
    assert.equal(added.data.entities.for.entityType, 'group');
    assert.equal(added.data.entities.for.entity.guid, group.guid);
    assert.equal(added.data.entities.for.entity.membersCount, 3, 'the group as it is after the change');
    assert.equal(typeof added.sentAt, 'number');
    assert.equal(result.participants[m!].data.data.action, 'added');
    assert.equal(result.participants[missing].data, undefined, 'a failure has no message');
    assert.deepEqual(
      (await actions(group.guid)).map((x) => x.id),
      [added.id, result.participants[m!].data.id],
    );
    assert.equal(body(await t.call(t.appA, `/v3/groups/${group.guid}`)).data.membersCount, 3, 'action messages are not members');
  });

  it('records the acting member as by and sender', async () => {
    const [owner, p] = await uids(2);
    const group = await newGroup(t, t.appA, {}, owner);
    const result = await ok(await call(`/v3/groups/${group.guid}/members`, 'POST', { participants: [p] }, owner));
    assert.deepEqual(summary(result.participants[p!].data), { action: 'added', by: owner, on: p, sender: owner });
    assert.equal(result.participants[p!].data.data.entities.by.entity.name, `User ${owner}`);
  });

  it('records joins and leaves, sent by the member', async () => {
    const [owner, joiner] = await uids(2);
    const group = await newGroup(t, t.appA, {}, owner);
    const joined = await ok(await call(`/v3/groups/${group.guid}/members`, 'POST', { participants: [joiner] }, joiner));
    assert.deepEqual(summary(joined.participants[joiner!].data), { action: 'joined', by: joiner, on: joiner, sender: joiner });
    await ok(await call(`/v3/groups/${group.guid}/members/${joiner}`, 'DELETE', undefined, joiner));
    assert.deepEqual((await actions(group.guid)).map(summary), [
      { action: 'joined', by: joiner, on: joiner, sender: joiner },
      { action: 'left', by: joiner, on: joiner, sender: joiner },
    ]);
  });

  it('records kicks, bans, unbans and scope changes, by whoever acts', async () => {
    const [owner, admin, k, b, s] = await uids(5);
    const group = await newGroup(t, t.appA, { members: { admins: [admin], participants: [k, b, s] } }, owner);
    const before = (await actions(group.guid)).length;
    await ok(await call(`/v3/groups/${group.guid}/members/${k}`, 'DELETE', undefined, admin));
    await ok(await call(`/v3/groups/${group.guid}/bannedusers/${b}`, 'POST', undefined, admin));
    await ok(await call(`/v3/groups/${group.guid}/bannedusers/${b}`, 'DELETE'));
    await ok(await call(`/v3/groups/${group.guid}/members/${s}`, 'PUT', { scope: 'moderator' }, owner));
    const recorded = (await actions(group.guid)).slice(before);
    assert.deepEqual(recorded.map(summary), [
      { action: 'kicked', by: admin, on: k, sender: admin },
      { action: 'banned', by: admin, on: b, sender: admin },
      { action: 'unbanned', by: 'app_system', on: b, sender: 'app_system' },
      { action: 'scopeChanged', by: owner, on: s, sender: owner },
    ]);
    assert.deepEqual(recorded[3]!.data.extras, { scope: { new: 'moderator', old: 'participant' } });
    assert.equal(recorded[0]!.data.entities.for.entity.membersCount, 4, 'after the kick');
    assert.equal(body(await t.call(t.appA, `/v3/groups/${group.guid}`)).data.membersCount, 3);
  });

  it('records inline members of create-group, added by the owner; a ban is answered without its message', async () => {
    const [owner, a, d] = await uids(3);
    const group = await newGroup(t, t.appA, { members: { participants: [a], usersToBan: [d] } }, owner);
    assert.deepEqual(summary(group.members.participants[a!].data), { action: 'added', by: owner, on: a, sender: owner });
    assert.deepEqual(group.members.usersToBan[d!], { success: true }, 'as the vendor’s example answers a ban');
    const recorded = (await actions(group.guid)).map(summary);
    assert.deepEqual(
      recorded.sort((x, y) => x.action.localeCompare(y.action)),
      [
        { action: 'added', by: owner, on: a, sender: owner },
        { action: 'banned', by: owner, on: d, sender: owner },
      ],
    );
    const ownerless = await newGroup(t, t.appA, { members: { participants: [a] } });
    assert.deepEqual((await actions(ownerless.guid)).map(summary), [{ action: 'added', by: 'app_system', on: a, sender: 'app_system' }]);
  });

  it('stores nothing when the change is refused', async () => {
    const [owner, p, q] = await uids(3);
    const group = await newGroup(t, t.appA, { members: { participants: [p, q] } }, owner);
    const before = await actions(group.guid);
    const again = await ok(await call(`/v3/groups/${group.guid}/members`, 'POST', { participants: [p] }));
    assert.equal(again.participants[p!].error.code, 'ERR_ALREADY_JOINED');
    const refused = [
      await call(`/v3/groups/${group.guid}/members/${q}`, 'DELETE', undefined, p),
      await call(`/v3/groups/${group.guid}/bannedusers/${q}`, 'POST', undefined, p),
      await call(`/v3/groups/${group.guid}/bannedusers/${q}`, 'DELETE'),
      await call(`/v3/groups/${group.guid}/members/${q}`, 'PUT', { scope: 'participant' }),
      await call(`/v3/groups/${group.guid}/members/${owner}`, 'DELETE'),
    ];
    assert.deepEqual(
      refused.map((response) => errorCode(response)),
      ['ERR_GROUP_NO_CLEARANCE', 'ERR_GROUP_NO_CLEARANCE', 'ERR_NOT_A_BANNED_USER', 'ERR_SAME_SCOPE', 'ERR_GROUP_NO_CLEARANCE'],
    );
    assert.deepEqual(
      (await actions(group.guid)).map((x) => x.id),
      before.map((x) => x.id),
    );
  });

  it('stores the messages of one call together, in the order the members were named, the last one last', async () => {
    const [owner, ...added] = await uids(6);
    const group = await newGroup(t, t.appA, {}, owner);
    const result = await ok(await call(`/v3/groups/${group.guid}/members`, 'POST', { participants: added }));
    const ids = added.map((uid) => result.participants[uid!].data.id as string);
    assert.deepEqual(
      [...ids].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1)),
      ids,
      'ids in the order named',
    );
    assert.deepEqual(
      (await actions(group.guid)).map((x) => x.data.entities.on.entity.uid),
      added,
    );
    const conversation = await t.database.db
      .selectFrom('conversations')
      .select('last_message_id')
      .where('app_id', '=', t.appA.appId)
      .where('conversation_id', '=', `group_${group.guid}`)
      .executeTakeFirstOrThrow();
    assert.equal(String(conversation.last_message_id), ids[ids.length - 1]);
  });

  it('are messages of the group’s conversation: its last message, visible to members only', async () => {
    const [owner, member, outsider] = await uids(3);
    const group = await newGroup(t, t.appA, {}, owner);
    const added = (await ok(await call(`/v3/groups/${group.guid}/members`, 'POST', { participants: [member] }))).participants[member!].data;
    const conversation = await t.database.db.selectFrom('conversations').selectAll().where('app_id', '=', t.appA.appId).where('conversation_id', '=', `group_${group.guid}`).executeTakeFirstOrThrow();
    assert.equal(String(conversation.last_message_id), added.id);
    const asMember = await t.call(t.appA, `/v3/groups/${group.guid}/messages`, { onBehalfOf: member });
    assert.deepEqual(
      body(asMember).data.map((x: any) => x.id),
      [added.id],
    );
    const gotByMember = await t.call(t.appA, `/v3/messages/${added.id}`, { onBehalfOf: member });
    assert.equal(body(gotByMember).data.data.action, 'added');
    assert.equal(errorCode(await t.call(t.appA, `/v3/messages/${added.id}`, { onBehalfOf: outsider })), 'ERR_MESSAGE_ID_NOT_FOUND');
    const all = await t.call(t.appA, '/v3/messages', { onBehalfOf: outsider });
    assert.deepEqual(body(all).data, []);
    const onlyMessages = await t.call(t.appA, `/v3/groups/${group.guid}/messages`, { query: { categories: 'message,custom' } });
    assert.deepEqual(body(onlyMessages).data, [], 'categories leave action messages out');
  });

  it('are not seen from another app', async () => {
    const [owner, member] = await uids(2);
    const group = await newGroup(t, t.appA, { members: { participants: [member] } }, owner);
    const added = group.members.participants[member!].data;
    assert.equal(errorCode(await t.call(t.appB, `/v3/messages/${added.id}`)), 'ERR_MESSAGE_ID_NOT_FOUND');
    assert.equal(errorCode(await t.call(t.appB, `/v3/groups/${group.guid}/messages`)), 'ERR_GUID_NOT_FOUND');
    assert.deepEqual(body(await t.call(t.appB, '/v3/messages', { query: { category: 'action' } })).data, []);
  });
});
