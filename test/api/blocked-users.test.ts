import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { body, createTestApp, errorCode, uniqueId, type TestApp } from '../helpers/app.js';
import { newUids, newUser } from '../helpers/factories.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

const uids = (n: number, app = t.appA) => newUids(t, app, n);
const blockUsers = (uid: string, payload: unknown, app = t.appA, onBehalfOf?: string) =>
  t.call(app, `/v3/users/${uid}/blockedusers`, { method: 'POST', body: payload, ...(onBehalfOf ? { onBehalfOf } : {}) });
const unblockUsers = (uid: string, payload: unknown, app = t.appA) => t.call(app, `/v3/users/${uid}/blockedusers`, { method: 'DELETE', body: payload });
const listBlocked = (uid: string, query: Record<string, string> = {}, app = t.appA) => t.call(app, `/v3/users/${uid}/blockedusers`, { query });
const blockedUids = async (uid: string, direction = 'blockedByMe') =>
  body(await listBlocked(uid, { direction, perPage: '1000' }))
    .data.map((u: any) => u.uid)
    .sort();
const blocked = (uid: string, other: string) => ({ success: true, message: `The user with UID ${uid} has blocked user with UID ${other} successfully.` });

const badPayloads = (uid: string): unknown[] => [
  {},
  { blockedUids: [] },
  { blockedUids: uid },
  { blockedUids: [7] },
  { blockedUids: ['not valid!'] },
  { blockedUids: Array.from({ length: 26 }, (_, i) => `u${i}`) },
];

describe('block-users', () => {
  it('blocks one way and answers per uid, keyed by uid', async () => {
    const [me, a, b] = await uids(3);
    const response = await blockUsers(me!, { blockedUids: [a, b!.toUpperCase()] });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(body(response).data, { [a!]: blocked(me!, a!), [b!]: blocked(me!, b!) });
    assert.deepEqual(await blockedUids(me!), [a, b].sort());
    assert.deepEqual(await blockedUids(a!), [], 'blocking is one-way');
    assert.deepEqual(await blockedUids(a!, 'hasBlockedMe'), [me]);
  });

  it('answers ERR_UID_NOT_FOUND and ERR_CANNOT_BLOCK_SELF per uid', async () => {
    const [me, deactivated, ok] = await uids(3);
    await t.call(t.appA, `/v3/users/${deactivated}`, { method: 'DELETE' });
    const missing = uniqueId();
    const data = body(await blockUsers(me!, { blockedUids: [me, missing, deactivated, ok] })).data;
    assert.deepEqual(Object.keys(data), [me, missing, deactivated, ok]);
    assert.deepEqual(data[me!], { success: false, error: { code: 'ERR_CANNOT_BLOCK_SELF', message: `The user ${me} cannot block or unblock themselves.` } });
    assert.equal(data[missing].error.code, 'ERR_UID_NOT_FOUND');
    assert.equal(data[deactivated!].error.code, 'ERR_UID_NOT_FOUND');
    assert.deepEqual(data[ok!], blocked(me!, ok!));
    assert.deepEqual(await blockedUids(me!), [ok]);
  });

  it('succeeds again on a blocked user, keeping the first block (also concurrently)', async () => {
    const [me, other] = await uids(2);
    await blockUsers(me!, { blockedUids: [other] });
    const first = body(await listBlocked(me!)).data[0].blockedByMeAt;
    const responses = await Promise.all(Array.from({ length: 6 }, () => blockUsers(me!, { blockedUids: [other] })));
    for (const response of responses) assert.deepEqual(body(response).data, { [other!]: blocked(me!, other!) });
    const rows = await t.database.db.selectFrom('blocked_users').selectAll().where('app_id', '=', t.appA.appId).where('uid', '=', me!).execute();
    assert.equal(rows.length, 1);
    assert.equal(body(await listBlocked(me!)).data[0].blockedByMeAt, first);
  });

  it('answers ERR_UID_NOT_FOUND (404) for an unknown or deactivated user in the path, or an unknown onBehalfOf', async () => {
    const [other, deactivated, me] = await uids(3);
    await t.call(t.appA, `/v3/users/${deactivated}`, { method: 'DELETE' });
    for (const uid of [uniqueId(), deactivated!]) {
      const response = await blockUsers(uid, { blockedUids: [other] });
      assert.equal(response.statusCode, 404);
      assert.equal(errorCode(response), 'ERR_UID_NOT_FOUND');
    }
    assert.equal(errorCode(await blockUsers(me!, { blockedUids: [other] }, t.appA, uniqueId())), 'ERR_UID_NOT_FOUND');
    assert.deepEqual(await blockedUids(other!, 'hasBlockedMe'), []);
  });

  it('refuses bad input with ERR_BAD_REQUEST, blocking nothing', async () => {
    const [me] = await uids(1);
    for (const payload of badPayloads(me!)) {
      const response = await blockUsers(me!, payload);
      assert.equal(response.statusCode, 400, JSON.stringify(payload));
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
    }
    assert.deepEqual(await blockedUids(me!), []);
  });

  it("neither sees nor blocks another app's users", async () => {
    const [me] = await uids(1);
    const [stranger] = await uids(1, t.appB);
    assert.equal(body(await blockUsers(me!, { blockedUids: [stranger] })).data[stranger!].error.code, 'ERR_UID_NOT_FOUND');
    assert.equal(errorCode(await blockUsers(me!, { blockedUids: [stranger] }, t.appB)), 'ERR_UID_NOT_FOUND');
    assert.equal(body(await blockUsers(stranger!, { blockedUids: [me] }, t.appB)).data[me!].error.code, 'ERR_UID_NOT_FOUND');
    assert.deepEqual(await blockedUids(me!, 'both'), []);
  });
});

describe('unblock-users', () => {
  it('unblocks and answers per uid; unblocking a user who is not blocked succeeds', async () => {
    const [me, a, b, never] = await uids(4);
    await blockUsers(me!, { blockedUids: [a, b] });
    await blockUsers(a!, { blockedUids: [me] });
    const response = await unblockUsers(me!, { blockedUids: [a, never] });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(body(response).data, {
      [a!]: { success: true, message: `The user with UID ${me} has unblocked user with UID ${a} successfully.` },
      [never!]: { success: true, message: `The user with UID ${me} has unblocked user with UID ${never} successfully.` },
    });
    assert.deepEqual(await blockedUids(me!), [b]);
    assert.deepEqual(await blockedUids(a!), [me], "the other user's block stays");
  });

  it('answers ERR_UID_NOT_FOUND and ERR_CANNOT_BLOCK_SELF per uid, and ERR_UID_NOT_FOUND (404) for the path', async () => {
    const [me] = await uids(1);
    const missing = uniqueId();
    const data = body(await unblockUsers(me!, { blockedUids: [me, missing] })).data;
    assert.equal(data[me!].error.code, 'ERR_CANNOT_BLOCK_SELF');
    assert.equal(data[missing].error.code, 'ERR_UID_NOT_FOUND');
    const response = await unblockUsers(uniqueId(), { blockedUids: [me] });
    assert.equal(response.statusCode, 404);
    assert.equal(errorCode(response), 'ERR_UID_NOT_FOUND');
  });

  it('refuses bad input with ERR_BAD_REQUEST, unblocking nothing', async () => {
    const [me, other] = await uids(2);
    await blockUsers(me!, { blockedUids: [other] });
    for (const payload of badPayloads(other!)) {
      const response = await unblockUsers(me!, payload);
      assert.equal(response.statusCode, 400, JSON.stringify(payload));
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
    }
    assert.deepEqual(await blockedUids(me!), [other]);
  });

  it('cannot unblock in another app', async () => {
    const [me, other] = await uids(2);
    await blockUsers(me!, { blockedUids: [other] });
    assert.equal(errorCode(await unblockUsers(me!, { blockedUids: [other] }, t.appB)), 'ERR_UID_NOT_FOUND');
    const [stranger] = await uids(1, t.appB);
    assert.equal(body(await unblockUsers(stranger!, { blockedUids: [other] }, t.appB)).data[other!].error.code, 'ERR_UID_NOT_FOUND');
    assert.deepEqual(await blockedUids(me!), [other]);
  });
});

describe('list-blocked-users', () => {
  it('lists by direction, sorted by name, with block fields, conversationId and pagination', async () => {
    const me = (await newUser(t, t.appA, { name: 'Me' })).uid;
    const carl = (await newUser(t, t.appA, { name: 'Carl' })).uid;
    const anna = (await newUser(t, t.appA, { name: 'anna' })).uid;
    const both = (await newUser(t, t.appA, { name: 'Bea' })).uid;
    await blockUsers(me, { blockedUids: [carl, anna, both] });
    await blockUsers(both, { blockedUids: [me] });
    const hater = (await newUser(t, t.appA, { name: 'Dan' })).uid;
    await blockUsers(hater, { blockedUids: [me] });

    const response = await listBlocked(me);
    assert.equal(response.statusCode, 200, response.body);
    const { data, meta } = body(response);
    assert.deepEqual(
      data.map((u: any) => u.name),
      ['anna', 'Bea', 'Carl'],
      'blockedByMe by default',
    );
    assert.deepEqual(meta.pagination, { total: 3, count: 3, per_page: 100, current_page: 1, total_pages: 1 });
    const [a, b] = data;
    assert.equal(a.blockedByMe, true);
    assert.equal(a.hasBlockedMe, false);
    assert.equal(typeof a.blockedByMeAt, 'number');
    assert.equal(a.blockedAt, a.blockedByMeAt);
    assert.equal(a.hasBlockedMeAt, undefined);
    assert.equal(a.conversationId, [me, anna].sort().join('_user_'));
    assert.equal(b.hasBlockedMe, true);
    assert.equal(typeof b.hasBlockedMeAt, 'number');

    const theirs = body(await listBlocked(me, { direction: 'hasBlockedMe' })).data;
    assert.deepEqual(
      theirs.map((u: any) => u.name),
      ['Bea', 'Dan'],
    );
    assert.equal(theirs[1].blockedByMe, false);
    assert.equal(theirs[1].blockedAt, theirs[1].hasBlockedMeAt);
    const all = body(await listBlocked(me, { direction: 'both' }));
    assert.deepEqual(
      all.data.map((u: any) => u.name),
      ['anna', 'Bea', 'Carl', 'Dan'],
    );
    assert.equal(all.meta.pagination.total, 4);
    const page = body(await listBlocked(me, { direction: 'both', perPage: '3', page: '2' }));
    assert.deepEqual(
      page.data.map((u: any) => u.name),
      ['Dan'],
    );
    assert.deepEqual(page.meta.pagination, { total: 4, count: 1, per_page: 3, current_page: 2, total_pages: 2 });
    assert.deepEqual(
      body(await listBlocked(me, { direction: 'both', searchKey: 'c' })).data.map((u: any) => u.name),
      ['Carl'],
    );
  });

  it('refuses an unknown direction and bad paging with ERR_BAD_REQUEST', async () => {
    const [me] = await uids(1);
    const queries: Array<Record<string, string>> = [{ direction: 'sideways' }, { perPage: '0' }, { perPage: '1001' }, { page: '0' }];
    for (const query of queries) {
      const response = await listBlocked(me!, query);
      assert.equal(response.statusCode, 400, JSON.stringify(query));
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
    }
  });

  it("answers ERR_UID_NOT_FOUND for an unknown user, an unknown onBehalfOf and another app's user", async () => {
    const [me, other] = await uids(2);
    await blockUsers(me!, { blockedUids: [other] });
    const unknown = await listBlocked(uniqueId());
    assert.equal(unknown.statusCode, 404);
    assert.equal(errorCode(unknown), 'ERR_UID_NOT_FOUND');
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${me}/blockedusers`, { onBehalfOf: uniqueId() })), 'ERR_UID_NOT_FOUND');
    assert.equal(errorCode(await listBlocked(me!, {}, t.appB)), 'ERR_UID_NOT_FOUND');
  });
});

describe('blockedByMe and hasBlockedMe on users', () => {
  it('get-user carries them relative to onBehalfOf, and not without it', async () => {
    const [me, blockedOne, blocker, neutral] = await uids(4);
    await blockUsers(me!, { blockedUids: [blockedOne] });
    await blockUsers(blocker!, { blockedUids: [me] });
    const get = async (uid: string, onBehalfOf?: string) => body(await t.call(t.appA, `/v3/users/${uid}`, onBehalfOf ? { onBehalfOf } : {})).data;
    const seenBlocked = await get(blockedOne!, me);
    assert.equal(seenBlocked.blockedByMe, true);
    assert.equal(seenBlocked.hasBlockedMe, false);
    assert.equal(typeof seenBlocked.blockedByMeAt, 'number');
    assert.equal(seenBlocked.blockedAt, seenBlocked.blockedByMeAt);
    const seenBlocker = await get(blocker!, me!.toUpperCase());
    assert.equal(seenBlocker.blockedByMe, false);
    assert.equal(seenBlocker.hasBlockedMe, true);
    assert.equal(typeof seenBlocker.hasBlockedMeAt, 'number');
    const seenNeutral = await get(neutral!, me);
    assert.deepEqual([seenNeutral.blockedByMe, seenNeutral.hasBlockedMe, seenNeutral.blockedAt], [false, false, undefined]);
    const plain = await get(blockedOne!);
    for (const field of ['blockedByMe', 'hasBlockedMe', 'blockedByMeAt', 'hasBlockedMeAt', 'blockedAt']) assert.equal(field in plain, false, field);
  });

  it('list-users carries them relative to onBehalfOf, and refuses an unknown onBehalfOf', async () => {
    const tag = uniqueId('tag');
    const [me, blockedOne, blocker, neutral] = await Promise.all(Array.from({ length: 4 }, () => newUser(t, t.appA, { tags: [tag] }).then((u) => u.uid as string)));
    await blockUsers(me!, { blockedUids: [blockedOne] });
    await blockUsers(blocker!, { blockedUids: [me] });
    const listed = async (onBehalfOf?: string) =>
      Object.fromEntries(body(await t.call(t.appA, '/v3/users', { query: { tags: tag }, ...(onBehalfOf ? { onBehalfOf } : {}) })).data.map((u: any) => [u.uid, u]));
    const seen = await listed(me);
    assert.deepEqual(Object.fromEntries(Object.entries(seen).map(([uid, u]: [string, any]) => [uid, [u.blockedByMe, u.hasBlockedMe]])), {
      [me!]: [false, false],
      [blockedOne!]: [true, false],
      [blocker!]: [false, true],
      [neutral!]: [false, false],
    });
    assert.equal(typeof seen[blockedOne!].blockedByMeAt, 'number');
    assert.equal(typeof seen[blocker!].hasBlockedMeAt, 'number');
    const plain = await listed();
    assert.ok(Object.values(plain).every((u: any) => !('blockedByMe' in u) && !('hasBlockedMe' in u)));
    assert.equal(errorCode(await t.call(t.appA, '/v3/users', { onBehalfOf: uniqueId() })), 'ERR_UID_NOT_FOUND');
  });
});

describe('deleting users', () => {
  it('a permanent delete removes blocks both ways; deactivation keeps them', async () => {
    const [me, gone, paused] = await uids(3);
    await blockUsers(me!, { blockedUids: [gone, paused] });
    await blockUsers(gone!, { blockedUids: [me] });
    await t.call(t.appA, `/v3/users/${paused}`, { method: 'DELETE' });
    const deleted = await t.call(t.appA, `/v3/users/${gone}`, { method: 'DELETE', body: { permanent: true } });
    assert.equal(deleted.statusCode, 200, deleted.body);
    assert.deepEqual(await blockedUids(me!, 'both'), [paused]);
    const [listed] = body(await listBlocked(me!)).data;
    assert.equal(typeof listed.deactivatedAt, 'number');
    const rows = await t.database.db
      .selectFrom('blocked_users')
      .selectAll()
      .where('app_id', '=', t.appA.appId)
      .where((eb) => eb.or([eb('uid', '=', gone!), eb('blocked_uid', '=', gone!)]))
      .execute();
    assert.deepEqual(rows, []);
  });
});

describe('blocks and messages', () => {
  it('a pair blocked in either direction cannot message each other, and only in its app', async () => {
    const [a, b, c] = await uids(3);
    await blockUsers(b!, { blockedUids: [a] });
    const send = (app: typeof t.appA, sender: string, receiver: string) =>
      t.call(app, '/v3/messages', { method: 'POST', onBehalfOf: sender, body: { receiver, receiverType: 'user', data: { text: 'hi' } } });
    assert.equal(errorCode(await send(t.appA, a!, b!)), 'ERR_BLOCKED_SENDER');
    assert.equal(errorCode(await send(t.appA, b!, a!)), 'ERR_BLOCKED_RECEIVER');
    assert.equal((await send(t.appA, a!, c!)).statusCode, 200);
    for (const uid of [a!, b!]) await newUser(t, t.appB, { uid });
    assert.equal((await send(t.appB, a!, b!)).statusCode, 200, 'the same uids in another app are not blocked');
  });
});
