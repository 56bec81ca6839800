import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { body, createTestApp, errorCode, type TestApp } from '../helpers/app.js';
import { newGroup, newUids } from '../helpers/factories.js';

// A history page asked for again is answered from the copy the node kept only while nothing it
// shows has changed (RenderedPages, MessagePagesRepository.readPages' version). Each test reads a
// page twice (the second answer comes from the copy), changes one thing the page shows, and
// reads it again: the change must be there.

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

async function call(method: string, url: string, onBehalfOf: string | undefined, payload?: unknown) {
  const response = await t.call(t.appA, url, { method: method as 'GET', ...(onBehalfOf ? { onBehalfOf } : {}), ...(payload ? { body: payload } : {}) });
  assert.ok(response.statusCode < 300, `${method} ${url}: ${response.body}`);
  return body(response).data;
}
const send = (sender: string, receiver: string, text: string, receiverType = 'user') => call('POST', '/v3/messages', sender, { receiver, receiverType, data: { text } });

/** Reads the page twice (the same bytes both times) and answers it. */
async function readTwice(url: string, viewer: string, query: Record<string, string> = {}): Promise<any[]> {
  const first = await t.call(t.appA, url, { onBehalfOf: viewer, query: { limit: '50', ...query } });
  assert.equal(first.statusCode, 200, first.body);
  const second = await t.call(t.appA, url, { onBehalfOf: viewer, query: { limit: '50', ...query } });
  assert.equal(second.body, first.body);
  assert.match(second.headers['content-type'] as string, /^application\/json/);
  return body(second).data;
}
const lastOf = (page: any[]) => page[page.length - 1];

describe('history pages answered again', () => {
  it('show a new message, an edit, a delete, a reaction and a reply', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const url = `/v3/users/${bob}/messages`;
    const first = await send(alice!, bob!, 'one');
    assert.deepEqual(
      (await readTwice(url, alice!)).map((m) => m.data.text),
      ['one'],
    );
    const fence = await send(bob!, alice!, 'two');
    assert.deepEqual(
      (await readTwice(url, alice!)).map((m) => m.data.text),
      ['one', 'two'],
    );

    // The page before `fence` holds `first` alone: the action messages and the reply that these
    // changes add come after it, so only the changed row tells the page has changed.
    const window = { affix: 'prepend', id: String(fence.id) };
    assert.deepEqual(
      (await readTwice(url, alice!, window)).map((m) => m.id),
      [first.id],
    );
    await call('PUT', `/v3/messages/${first.id}`, alice, { data: { text: 'one, edited' } });
    let [shown] = await readTwice(url, alice!, window);
    assert.equal(shown.data.text, 'one, edited');
    assert.equal(typeof shown.editedAt, 'number');

    await call('POST', `/v3/messages/${first.id}/reactions/👍`, bob);
    [shown] = await readTwice(url, alice!, window);
    assert.deepEqual(shown.data.reactions, [{ reaction: '👍', count: 1 }]);
    await call('DELETE', `/v3/messages/${first.id}/reactions/👍`, bob);
    [shown] = await readTwice(url, alice!, window);
    assert.equal(shown.data.reactions, undefined);

    await call('POST', `/v3/messages/${first.id}/thread`, bob, { receiver: alice, receiverType: 'user', data: { text: 'a reply' } });
    [shown] = await readTwice(url, alice!, window);
    assert.equal(shown.replyCount, 1);

    await call('DELETE', `/v3/messages/${first.id}`, alice);
    [shown] = await readTwice(url, alice!, window);
    assert.equal(typeof shown.deletedAt, 'number');
  });

  it('show receipts, a renamed user, and a reset conversation', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const url = `/v3/users/${bob}/messages`;
    const sent = await send(alice!, bob!, 'hello');
    assert.equal(lastOf(await readTwice(url, alice!)).readAt, undefined);

    await call('POST', `/v3/users/${alice}/conversation/read`, bob, { messageId: sent.id });
    assert.equal(typeof lastOf(await readTwice(url, alice!)).readAt, 'number', 'the receiver read it');

    await call('PUT', `/v3/users/${bob}`, undefined, { name: 'Robert' });
    assert.equal(lastOf(await readTwice(url, alice!)).data.entities.receiver.entity.name, 'Robert');

    await call('DELETE', `/v3/users/${bob}/conversation`, alice);
    assert.deepEqual(await readTwice(url, alice!), [], 'cleared for the viewer');
    assert.equal((await readTwice(`/v3/users/${alice}/messages`, bob!)).length, 1, 'kept for the other side');
  });

  it('show a message deleted permanently, an imported message, and a deleted sender', async () => {
    const [alice, bob, carol] = await newUids(t, t.appA, 3);
    const url = `/v3/users/${bob}/messages`;
    const first = await send(alice!, bob!, 'one');
    const fence = await send(bob!, alice!, 'two');
    const window = { affix: 'prepend', id: String(fence.id) };
    assert.deepEqual(
      (await readTwice(url, alice!, window)).map((m) => m.id),
      [first.id],
    );
    await call('DELETE', `/v3/messages/${first.id}`, alice, { permanent: true });
    assert.deepEqual(await readTwice(url, alice!, window), [], 'deleted permanently');

    // An imported message (of long ago, with an id of now) joins the newest page.
    const texts = async () => (await readTwice(url, alice!)).filter((m) => m.category === 'message').map((m) => m.data.text);
    assert.deepEqual(await texts(), ['two']);
    const muid = `import-${first.id}`;
    await call('POST', '/v3.0/data_import/messages', undefined, {
      messages: { [muid]: { muid, sender: bob, receiverType: 'user', receiver: alice, category: 'message', type: 'text', data: { text: 'old' }, sentAt: 1_600_000_000 } },
    });
    assert.deepEqual(await texts(), ['two', 'old']);

    // A group page names its senders: one deleted permanently takes her messages with her.
    const guid = (await newGroup(t, t.appA, {}, alice!)).guid;
    await call('POST', `/v3/groups/${guid}/members`, undefined, { participants: [carol] });
    await send(carol!, guid, 'from carol', 'group');
    const fromCarol = async () => (await readTwice(`/v3/groups/${guid}/messages`, alice!)).find((m) => m.data.text === 'from carol');
    assert.equal(typeof (await fromCarol()).data.entities.sender.entity.name, 'string');
    await call('DELETE', `/v3/users/${carol}`, undefined, { permanent: true });
    assert.equal(await fromCarol(), undefined, 'her message is gone from the page read again');
  });

  it('show a group reply and a reaction in a group', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const guid = (await newGroup(t, t.appA, {}, alice!)).guid;
    await call('POST', `/v3/groups/${guid}/members`, undefined, { participants: [bob] });
    const first = await send(alice!, guid, 'hello group', 'group');
    const url = `/v3/groups/${guid}/messages`;
    const window = { affix: 'append', id: String(BigInt(first.id) - 1n), limit: '1' };
    assert.equal((await readTwice(url, bob!, window))[0].replyCount, undefined);
    await call('POST', `/v3/messages/${first.id}/thread`, bob, { receiver: guid, receiverType: 'group', data: { text: 'a reply' } });
    assert.equal((await readTwice(url, bob!, window))[0].replyCount, 1);
    await call('POST', `/v3/messages/${first.id}/reactions/🎉`, alice);
    assert.deepEqual((await readTwice(url, bob!, window))[0].data.reactions, [{ reaction: '🎉', count: 1 }]);
  });

  it('read again while hiding blocked senders', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const guid = (await newGroup(t, t.appA, {}, alice!)).guid;
    await call('POST', `/v3/groups/${guid}/members`, undefined, { participants: [bob] });
    await send(bob!, guid, 'from bob', 'group');
    const url = `/v3/groups/${guid}/messages`;
    const query = { hideMessagesFromBlockedUsers: 'true' };
    assert.equal(
      (await readTwice(url, alice!, query)).some((m) => m.data.text === 'from bob'),
      true,
    );
    await call('POST', `/v3/users/${alice}/blockedusers`, undefined, { blockedUids: [bob] });
    assert.equal(
      (await readTwice(url, alice!, query)).some((m) => m.data.text === 'from bob'),
      false,
      'bob is blocked now',
    );
  });

  it('refuse a viewer who can no longer read them', async () => {
    const [alice, bob, carol] = await newUids(t, t.appA, 3);
    await send(alice!, bob!, 'hello');
    await readTwice(`/v3/users/${bob}/messages`, alice!);
    await call('DELETE', '/v3/users', undefined, { uidsToDeactivate: [alice] });
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${bob}/messages`, { onBehalfOf: alice, query: { limit: '50' } })), 'ERR_UID_NOT_FOUND');

    const guid = (await newGroup(t, t.appA, {}, bob!)).guid;
    await call('POST', `/v3/groups/${guid}/members`, undefined, { participants: [carol] });
    await send(bob!, guid, 'to the group', 'group');
    const url = `/v3/groups/${guid}/messages`;
    assert.ok((await readTwice(url, carol!)).some((m) => m.data.text === 'to the group'));
    await call('DELETE', `/v3/groups/${guid}/members/${carol}`, undefined);
    assert.equal(errorCode(await t.call(t.appA, url, { onBehalfOf: carol, query: { limit: '50' } })), 'ERR_GROUP_NOT_JOINED');
  });

  it('are kept per viewer and per app', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    await send(alice!, bob!, 'for alice and bob');
    const aliceView = await readTwice(`/v3/users/${bob}/messages`, alice!);
    const bobView = await readTwice(`/v3/users/${bob}/messages`, bob!);
    assert.equal(aliceView.length, 1);
    assert.deepEqual(bobView, [], 'bob with himself: another conversation');
    // The same path and viewer in app B: app B's data (no such users there).
    const other = await t.call(t.appB, `/v3/users/${bob}/messages`, { onBehalfOf: alice, query: { limit: '50' } });
    assert.equal(errorCode(other), 'ERR_UID_NOT_FOUND');
  });

  it('are kept from the second time they are asked for, and read without their version the first time', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    await send(alice!, bob!, 'asked for three times');
    const reads = watchReads('listWithUser');
    try {
      const url = `/v3/users/${bob}/messages`;
      const bodies = await readThrice(url, alice!);
      assert.deepEqual(
        bodies.map((text) => JSON.parse(text).data.map((m: any) => m.data.text)),
        Array(3).fill(['asked for three times']),
      );
      assert.equal(bodies[1], bodies[0]);
      assert.equal(bodies[2], bodies[0]);
      // Read without a version, then with it (and kept), then answered from the copy after its check.
      assert.deepEqual(reads.asked, [false, true]);
      assert.equal(reads.checks(), 1);
      // Changed, it is read again with its version (it was kept), and kept again.
      await send(bob!, alice!, 'a reply');
      const changed = await t.call(t.appA, url, { onBehalfOf: alice, query: { limit: '50' } });
      assert.deepEqual(
        body(changed).data.map((m: any) => m.data.text),
        ['asked for three times', 'a reply'],
      );
      assert.deepEqual(reads.asked, [false, true, true]);
    } finally {
      reads.restore();
    }
  });

  it('of a group are kept from the second time they are asked for, as a conversation with a user', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const guid = (await newGroup(t, t.appA, {}, alice!)).guid;
    await call('POST', `/v3/groups/${guid}/members`, undefined, { participants: [bob] });
    await send(bob!, guid, 'to the group', 'group');
    const reads = watchReads('listInGroup');
    try {
      const bodies = await readThrice(`/v3/groups/${guid}/messages`, alice!);
      assert.ok(JSON.parse(bodies[0]!).data.some((m: any) => m.data.text === 'to the group'));
      assert.equal(bodies[2], bodies[0]);
      assert.deepEqual(reads.asked, [false, true]);
      assert.equal(reads.checks(), 1);
    } finally {
      reads.restore();
    }
  });
});

/** Reads a page three times as `viewer` and answers the three bodies. */
async function readThrice(url: string, viewer: string): Promise<string[]> {
  const bodies: string[] = [];
  for (let i = 0; i < 3; i++) {
    const response = await t.call(t.appA, url, { onBehalfOf: viewer, query: { limit: '50' } });
    assert.equal(response.statusCode, 200, response.body);
    assert.match(response.headers['content-type'] as string, /^application\/json/);
    bodies.push(response.body);
  }
  return bodies;
}

/**
 * Watches the history service while a test reads pages: for each page read by `method`, whether
 * it was read with its version (`asked`), and how many kept pages' versions were checked.
 */
function watchReads(method: 'listWithUser' | 'listInGroup') {
  const history = t.services.history;
  const list = history[method];
  const pageVersion = history.pageVersion;
  const asked: boolean[] = [];
  let checks = 0;
  history[method] = async (...args: Parameters<typeof list>) => {
    const read = await list.apply(history, args);
    asked.push(read.versioned !== undefined);
    return read;
  };
  history.pageVersion = (...args: Parameters<typeof pageVersion>) => {
    checks++;
    return pageVersion.apply(history, args);
  };
  return {
    asked,
    checks: () => checks,
    restore() {
      history[method] = list;
      history.pageVersion = pageVersion;
    },
  };
}
