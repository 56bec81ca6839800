import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { body, createTestApp, errorCode, uniqueId, type TestApp } from '../helpers/app.js';
import { newGroup, newUser } from '../helpers/factories.js';

// Two conversations that the vendor's id names alike are never one (docs/conversations.md):
// users `a` + `b_user_c` and users `a_user_b` + `c` both show as `a_user_b_user_c`; group
// `x_user_y` and users `group_x` + `y` both show as `group_x_user_y`.

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

async function users(...uids: string[]): Promise<void> {
  for (const uid of uids) await newUser(t, t.appA, { uid });
}
async function send(sender: string, receiver: string, receiverType: 'user' | 'group', text: string) {
  const response = await t.call(t.appA, '/v3/messages', { method: 'POST', onBehalfOf: sender, body: { receiver, receiverType, data: { text } } });
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
}
async function ok(url: string, options: Parameters<TestApp['call']>[2] = {}) {
  const response = await t.call(t.appA, url, options);
  assert.equal(response.statusCode, 200, response.body);
  return body(response);
}
const texts = (messages: any[]) => messages.map((message) => message.data.text);

/** Users a, b_user_c, a_user_b and c (each with a unique prefix); both pairs show as `a_user_b_user_c`. */
async function twoPairs() {
  const p = uniqueId('k');
  const [a, bc, ab, c] = [`${p}-a`, `${p}-b_user_${p}-c`, `${p}-a_user_${p}-b`, `${p}-c`];
  await users(a, bc, ab, c);
  const wire = `${p}-a_user_${p}-b_user_${p}-c`;
  return { a, bc, ab, c, wire };
}

describe('1:1 conversations whose vendor ids are alike', () => {
  it("keep each pair's messages to that pair", async () => {
    const { a, bc, ab, c, wire } = await twoPairs();
    const secret = await send(a, bc, 'user', 'secret');
    assert.equal(secret.conversationId, wire, "the vendor's id is what a message shows");
    const other = await send(ab, c, 'user', 'other');
    assert.equal(other.conversationId, wire);

    assert.deepEqual(texts((await ok(`/v3/users/${ab}/messages`, { onBehalfOf: c })).data), ['other']);
    assert.deepEqual(texts((await ok(`/v3/users/${c}/messages`, { onBehalfOf: ab })).data), ['other']);
    assert.deepEqual(texts((await ok(`/v3/users/${bc}/messages`, { onBehalfOf: a })).data), ['secret']);
    assert.deepEqual(texts((await ok(`/v3/users/${a}/messages`, { onBehalfOf: bc })).data), ['secret']);
  });

  it('count, list and show each conversation on its own', async () => {
    const { a, bc, ab, c, wire } = await twoPairs();
    await send(a, bc, 'user', 'secret');
    await send(a, bc, 'user', 'secret again');
    await send(ab, c, 'user', 'other');

    const ofC = (await ok('/v3/conversations', { onBehalfOf: c })).data;
    assert.equal(ofC.length, 1);
    assert.equal(ofC[0].conversationId, wire);
    assert.equal(ofC[0].conversationWith.uid, ab);
    assert.equal(ofC[0].lastMessage.data.text, 'other');
    assert.equal(ofC[0].unreadMessageCount, '1');
    const ofBc = (await ok('/v3/conversations', { onBehalfOf: bc })).data;
    assert.equal(ofBc.length, 1);
    assert.equal(ofBc[0].conversationWith.uid, a);
    assert.equal(ofBc[0].lastMessage.data.text, 'secret again');
    assert.equal(ofBc[0].unreadMessageCount, '2');

    // By the vendor's id: the viewer's own conversation of the two.
    const byIdForC = (await ok(`/v3/conversations/${wire}`, { onBehalfOf: c })).data;
    assert.equal(byIdForC.conversationWith.uid, ab);
    assert.equal(byIdForC.lastMessage.data.text, 'other');
    const byIdForA = (await ok(`/v3/conversations/${wire}`, { onBehalfOf: a })).data;
    assert.equal(byIdForA.conversationWith.uid, bc);
    // A user of neither pair sees neither.
    const outsider = uniqueId('k');
    await users(outsider);
    const refused = await t.call(t.appA, `/v3/conversations/${wire}`, { onBehalfOf: outsider });
    assert.equal(refused.statusCode, 403, refused.body);
    assert.equal(errorCode(refused), 'ERR_CONVERSATION_NOT_ACCESSIBLE');
  });

  it('mark and reset one conversation without touching the other', async () => {
    const { a, bc, ab, c } = await twoPairs();
    await send(a, bc, 'user', 'secret');
    await send(ab, c, 'user', 'other');
    await ok(`/v3/users/${ab}/conversation/read`, { method: 'POST', onBehalfOf: c });
    const unread = (uid: string) => t.call(t.appA, '/v3/conversations', { onBehalfOf: uid }).then((r) => body(r).data[0].unreadMessageCount);
    assert.equal(await unread(c), '0');
    assert.equal(await unread(bc), '1', "c's read mark is not bc's");
    await ok(`/v3/users/${ab}/conversation`, { method: 'DELETE', onBehalfOf: c });
    assert.equal((await ok('/v3/conversations', { onBehalfOf: c })).data.length, 0);
    assert.deepEqual(texts((await ok(`/v3/users/${a}/messages`, { onBehalfOf: bc })).data), ['secret'], "c's reset is not bc's");
  });

  it('list-all-messages by the vendor id keeps to the onBehalfOf user’s conversation', async () => {
    const { a, bc, ab, c, wire } = await twoPairs();
    await send(a, bc, 'user', 'secret');
    await send(ab, c, 'user', 'other');
    assert.deepEqual(texts((await ok('/v3/messages', { onBehalfOf: c, query: { conversationId: wire } })).data), ['other']);
    assert.deepEqual(texts((await ok('/v3/messages', { onBehalfOf: a, query: { conversationId: wire } })).data), ['secret']);
    // The app itself (no onBehalfOf) reads every conversation the id names.
    assert.deepEqual(texts((await ok('/v3/messages', { query: { conversationId: wire } })).data).sort(), ['other', 'secret']);
  });
});

describe('a group and a pair whose vendor ids are alike', () => {
  it("keep the group's conversation and the pair's apart", async () => {
    const p = uniqueId('k');
    const [groupX, y, member] = [`group_${p}-x`, `${p}-y`, `${p}-m`];
    await users(groupX, y, member);
    const guid = `${p}-x_user_${p}-y`;
    await newGroup(t, t.appA, { guid, members: { participants: [] } }, member);
    const wire = `group_${guid}`;
    const toGroup = await send(member, guid, 'group', 'hello group');
    assert.equal(toGroup.conversationId, wire);
    const privately = await send(groupX, y, 'user', 'private');
    assert.equal(privately.conversationId, wire, 'the same vendor id');

    const ofMember = (await ok('/v3/conversations', { onBehalfOf: member })).data;
    const group = ofMember.find((conversation: any) => conversation.conversationType === 'group' && conversation.conversationWith.guid === guid);
    assert.ok(group, JSON.stringify(ofMember));
    assert.equal(group.lastMessage.data.text, 'hello group', "the pair's message is not the group's last");
    assert.deepEqual(texts((await ok(`/v3/groups/${guid}/messages`, { onBehalfOf: member })).data).filter(Boolean), ['hello group']);

    const ofY = (await ok('/v3/conversations', { onBehalfOf: y })).data;
    assert.equal(ofY.length, 1);
    assert.equal(ofY[0].conversationWith.uid, groupX);
    assert.equal(ofY[0].lastMessage.data.text, 'private');
    assert.deepEqual(texts((await ok(`/v3/users/${groupX}/messages`, { onBehalfOf: y })).data), ['private']);
    // By the vendor's id, each sees their own; the member's is the group's.
    assert.equal((await ok(`/v3/conversations/${wire}`, { onBehalfOf: member })).data.conversationType, 'group');
    assert.equal((await ok(`/v3/conversations/${wire}`, { onBehalfOf: y })).data.conversationType, 'user');
    assert.deepEqual(texts((await ok('/v3/messages', { onBehalfOf: y, query: { conversationId: wire } })).data), ['private']);
    assert.deepEqual(texts((await ok('/v3/messages', { query: { conversationId: wire, receiverType: 'group' } })).data).filter(Boolean), ['hello group']);
  });
});

describe('imported messages of conversations whose vendor ids are alike', () => {
  it('go to their own conversations, with their own receipts', async () => {
    const { a, bc, ab, c, wire } = await twoPairs();
    const T0 = 1_673_421_419;
    const record = (muid: string, sender: string, receiver: string, text: string, sentAt: number, extra = {}) => ({
      muid,
      sender,
      receiver,
      receiverType: 'user',
      category: 'message',
      type: 'text',
      data: { text },
      sentAt,
      ...extra,
    });
    const response = await t.call(t.appA, '/v3.0/data_import/messages', {
      method: 'POST',
      body: {
        messages: {
          m1: record('m1', a, bc, 'secret', T0),
          m2: record('m2', ab, c, 'other', T0 + 1, { deliveredAt: T0 + 2, readAt: T0 + 2 }),
        },
      },
    });
    assert.equal(response.statusCode, 200, response.body);
    const results = body(response).data;
    assert.equal(results.m1.data.conversationId, wire);
    assert.equal(results.m2.data.conversationId, wire);
    assert.deepEqual(texts((await ok(`/v3/users/${ab}/messages`, { onBehalfOf: c })).data), ['other']);
    assert.deepEqual(texts((await ok(`/v3/users/${bc}/messages`, { onBehalfOf: a })).data), ['secret']);
    const ofBc = (await ok('/v3/conversations', { onBehalfOf: bc })).data;
    assert.equal(ofBc[0].unreadMessageCount, '1', "c's imported read receipt is not bc's");
    assert.equal((await ok('/v3/conversations', { onBehalfOf: c })).data[0].unreadMessageCount, '0');
  });
});
