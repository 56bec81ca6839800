import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { withTransaction } from '../../src/db/transaction.js';
import { UserPurgeRepository } from '../../src/repositories/user-purge.repository.js';
import { body, createTestApp, errorCode, type TestApp } from '../helpers/app.js';
import { newGroup, newUids } from '../helpers/factories.js';

// delete-user with `permanent: true`: "permanently deletes the user along with all the
// messages, conversations, etc." (the vendor's spec).

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

async function send(sender: string, receiver: string, receiverType: 'user' | 'group', text: string, extra: Record<string, unknown> = {}) {
  const response = await t.call(t.appA, '/v3/messages', { method: 'POST', onBehalfOf: sender, body: { receiver, receiverType, data: { text }, ...extra } });
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
}
async function ok(url: string, options: Parameters<TestApp['call']>[2] = {}) {
  const response = await t.call(t.appA, url, options);
  assert.equal(response.statusCode, 200, response.body);
  return body(response);
}
const react = (id: string, uid: string) => ok(`/v3/messages/${id}/reactions/${encodeURIComponent('👍')}`, { method: 'POST', onBehalfOf: uid });
const deletePermanently = (uid: string) => ok(`/v3/users/${uid}`, { method: 'DELETE', body: { permanent: true } });
const texts = (messages: any[]) => messages.filter((m) => m.category !== 'action').map((m) => m.data.text);

describe('delete-user permanently', () => {
  it('deletes the messages the user sent, with their reactions, and the conversations left empty', async () => {
    const [gone, bob, carol] = await newUids(t, t.appA, 3);
    const toBob = await send(gone!, bob!, 'user', 'to bob');
    const toCarol = await send(gone!, carol!, 'user', 'to carol');
    const fromCarol = await send(carol!, gone!, 'user', 'from carol');
    await send(gone!, carol!, 'user', 'to carol again');
    await react(toBob.id, bob!);
    await react(fromCarol.id, gone!);

    await deletePermanently(gone!);

    for (const id of [toBob.id, toCarol.id]) assert.equal(errorCode(await t.call(t.appA, `/v3/messages/${id}`)), 'ERR_MESSAGE_ID_NOT_FOUND');
    // bob's conversation held only the user's messages: it is gone.
    assert.deepEqual((await ok('/v3/conversations', { onBehalfOf: bob })).data, []);
    // carol's keeps her own message, now its last, without the deleted user's reaction.
    const ofCarol = (await ok('/v3/conversations', { onBehalfOf: carol })).data;
    assert.equal(ofCarol.length, 1);
    assert.equal(ofCarol[0].lastMessage.id, fromCarol.id);
    assert.equal(ofCarol[0].lastMessage.data.reactions, undefined, "the deleted user's reactions go too");
    assert.deepEqual(texts((await ok(`/v3/messages`, { query: { limit: '1000' }, onBehalfOf: carol })).data), ['from carol']);
    const rows = await t.database.db.selectFrom('messages').select('id').where('app_id', '=', t.appA.appId).where('sender', '=', gone!).execute();
    assert.deepEqual(rows, []);
    const reactions = await t.database.db.selectFrom('message_reactions').select('id').where('app_id', '=', t.appA.appId).where('uid', '=', gone!).execute();
    assert.deepEqual(reactions, []);
  });

  it('deletes their group messages, their replies (uncounted on the parent) and the action messages that carry their text', async () => {
    const [gone, owner] = await newUids(t, t.appA, 2);
    const group = await newGroup(t, t.appA, { members: { participants: [gone!] } }, owner);
    const parent = await send(owner!, group.guid, 'group', 'parent');
    const reply = await t.call(t.appA, `/v3/messages/${parent.id}/thread`, {
      method: 'POST',
      onBehalfOf: gone,
      body: { receiver: group.guid, receiverType: 'group', data: { text: 'reply words' } },
    });
    assert.equal(reply.statusCode, 200, reply.body);
    const edited = await send(gone!, group.guid, 'group', 'first words');
    await ok(`/v3/messages/${edited.id}`, { method: 'PUT', onBehalfOf: gone, body: { data: { text: 'second words' } } });
    assert.equal((await ok(`/v3/messages/${parent.id}`)).data.replyCount, 1);

    await deletePermanently(gone!);

    const history = (await ok(`/v3/groups/${group.guid}/messages`, { onBehalfOf: owner, query: { limit: '100' } })).data as any[];
    assert.ok(!JSON.stringify(history).includes('words'), 'no message or action message keeps their text');
    assert.deepEqual(texts(history), ['parent']);
    assert.equal((await ok(`/v3/messages/${parent.id}`)).data.replyCount, undefined);
    const ofOwner = (await ok('/v3/conversations', { onBehalfOf: owner })).data;
    assert.ok(!JSON.stringify(ofOwner).includes('words'), 'nor is the last message theirs');
  });

  it('leaves other apps alone, and answers not found for a user that is not there', async () => {
    const [gone, bob] = await newUids(t, t.appA, 2);
    const twin = (await t.call(t.appB, '/v3/users', { method: 'POST', body: { uid: gone, name: 'Twin' } })).statusCode;
    assert.equal(twin, 200);
    const [bobB] = await newUids(t, t.appB, 1);
    const inB = (await t.call(t.appB, '/v3/messages', { method: 'POST', onBehalfOf: gone, body: { receiver: bobB, receiverType: 'user', data: { text: 'in B' } } })).json().data;
    await send(gone!, bob!, 'user', 'in A');
    await deletePermanently(gone!);
    assert.equal((await t.call(t.appB, `/v3/messages/${inB.id}`)).statusCode, 200);
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${gone}`, { method: 'DELETE', body: { permanent: true } })), 'ERR_UID_NOT_FOUND');
  });
});

describe('the purge, step by step', () => {
  it('scans a bounded window of messages per transaction until it reaches the newest', async () => {
    const [gone, bob] = await newUids(t, t.appA, 2);
    const sent = [];
    for (let i = 0; i < 7; i++) sent.push(await send(i % 2 ? bob! : gone!, i % 2 ? gone! : bob!, 'user', `m${i}`));
    const purge = new UserPurgeRepository();
    const first = String(BigInt(sent[0].id) - 1n);
    let after = first;
    const steps = [];
    for (;;) {
      const step = await withTransaction(t.database.db, 'test_purge', (tx) => purge.step(t.appA.appId, gone!, after, 3, tx));
      steps.push(step);
      assert.ok(step.deleted <= 3, 'no step deletes more than its window');
      if (step.scannedTo !== null) after = step.scannedTo;
      if (step.done) break;
    }
    assert.ok(steps.length >= 3, `${steps.length} steps`);
    assert.equal(
      steps.reduce((sum, step) => sum + step.deleted, 0),
      4,
    );
    const left = texts((await ok(`/v3/users/${gone}/messages`, { onBehalfOf: bob, query: { limit: '100' } })).data);
    assert.deepEqual(left, ['m1', 'm3', 'm5']);
    const ofBob = (await ok('/v3/conversations', { onBehalfOf: bob })).data;
    assert.equal(ofBob[0].lastMessage.data.text, 'm5', 'the last message moved back to the newest left');
  });
});
