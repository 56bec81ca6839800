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
const addFriends = (uid: string, accepted: unknown, app = t.appA, onBehalfOf?: string) =>
  t.call(app, `/v3/users/${uid}/friends`, { method: 'POST', body: { accepted }, ...(onBehalfOf ? { onBehalfOf } : {}) });
const removeFriends = (uid: string, payload: unknown, app = t.appA) => t.call(app, `/v3/users/${uid}/friends`, { method: 'DELETE', body: payload });
const listFriends = (uid: string, query: Record<string, string> = {}, app = t.appA) => t.call(app, `/v3/users/${uid}/friends`, { query });
const friendUids = async (uid: string) =>
  body(await listFriends(uid, { perPage: '1000' }))
    .data.map((f: any) => f.uid)
    .sort();
const ACCEPTED = { success: true, message: 'Created relationship with status accepted.' };

describe('add-friend', () => {
  it('befriends both ways and answers per uid', async () => {
    const [me, a, b] = await uids(3);
    const response = await addFriends(me!, [a, b!.toUpperCase()]);
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(body(response).data, { accepted: { [a!]: ACCEPTED, [b!]: ACCEPTED } });
    assert.deepEqual(await friendUids(me!), [a, b].sort());
    assert.deepEqual(await friendUids(a!), [me]);
    assert.deepEqual(await friendUids(b!), [me]);
  });

  it('answers ERR_UID_NOT_FOUND, ERR_CANNOT_FORM_SELF_RELATION and ERR_ALREADY_FRIEND per uid', async () => {
    const [me, friend, deactivated, fresh] = await uids(4);
    await addFriends(me!, [friend]);
    await t.call(t.appA, `/v3/users/${deactivated}`, { method: 'DELETE' });
    const missing = uniqueId();
    const response = await addFriends(me!, [friend, me, missing, deactivated, fresh]);
    assert.equal(response.statusCode, 200, response.body);
    const accepted = body(response).data.accepted;
    assert.deepEqual(Object.keys(accepted), [friend, me, missing, deactivated, fresh], 'in the order given');
    assert.deepEqual(accepted[friend!], {
      success: false,
      error: { code: 'ERR_ALREADY_FRIEND', message: `The user ${friend} is already a friend of ${me}.` },
    });
    assert.equal(accepted[me!].error.code, 'ERR_CANNOT_FORM_SELF_RELATION');
    assert.equal(accepted[missing].error.code, 'ERR_UID_NOT_FOUND');
    assert.equal(accepted[deactivated!].error.code, 'ERR_UID_NOT_FOUND');
    assert.deepEqual(accepted[fresh!], ACCEPTED);
    assert.deepEqual(await friendUids(me!), [friend, fresh].sort());
  });

  it('answers ERR_PLAN_QUOTA_RESTRICTION per uid beyond 1,000 friends, on either side', async () => {
    const [busy, me, other] = await uids(3);
    // 1,000 friends written directly: 1,000 users through the API would make the test slow.
    const fillers = Array.from({ length: 1000 }, (_, i) => `filler-${i}-${busy}`);
    await t.database.db
      .insertInto('users')
      .values(fillers.map((uid) => ({ app_id: t.appA.appId, uid, name: uid, avatar: null, link: null, role: 'default', status_message: null, created_at: new Date() })))
      .execute();
    await t.database.db
      .insertInto('friends')
      .values(
        fillers.flatMap((uid) => [
          { app_id: t.appA.appId, uid: busy!, friend_uid: uid },
          { app_id: t.appA.appId, uid, friend_uid: busy! },
        ]),
      )
      .execute();
    const fromBusy = body(await addFriends(busy!, [me])).data.accepted[me!];
    assert.equal(fromBusy.error.code, 'ERR_PLAN_QUOTA_RESTRICTION');
    const toBusy = body(await addFriends(me!, [busy, other])).data.accepted;
    assert.equal(toBusy[busy!].error.code, 'ERR_PLAN_QUOTA_RESTRICTION');
    assert.deepEqual(toBusy[other!], ACCEPTED);
    assert.equal(body(await listFriends(busy!)).meta.pagination.total, 1000);
  });

  it('makes one friendship when the same pair is added concurrently, from both sides', async () => {
    const [me, friend] = await uids(2);
    const responses = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? addFriends(me!, [friend]) : addFriends(friend!, [me]))));
    const outcomes = responses.map((r, i) => body(r).data.accepted[i % 2 ? friend! : me!]);
    assert.equal(outcomes.filter((o: any) => o.success).length, 1);
    assert.ok(outcomes.filter((o: any) => !o.success).every((o: any) => o.error.code === 'ERR_ALREADY_FRIEND'));
    const rows = await t.database.db.selectFrom('friends').selectAll().where('app_id', '=', t.appA.appId).where('uid', 'in', [me!, friend!]).execute();
    assert.equal(rows.length, 2, 'one row per direction');
  });

  it('answers ERR_UID_NOT_FOUND (404) for an unknown or deactivated user in the path, writing nothing', async () => {
    const [friend, deactivated] = await uids(2);
    await t.call(t.appA, `/v3/users/${deactivated}`, { method: 'DELETE' });
    for (const uid of [uniqueId(), deactivated!]) {
      const response = await addFriends(uid, [friend]);
      assert.equal(response.statusCode, 404);
      assert.equal(errorCode(response), 'ERR_UID_NOT_FOUND');
    }
    assert.deepEqual(await friendUids(friend!), []);
  });

  it('refuses an unknown onBehalfOf user', async () => {
    const [me, friend] = await uids(2);
    assert.equal(errorCode(await addFriends(me!, [friend], t.appA, uniqueId())), 'ERR_UID_NOT_FOUND');
    assert.deepEqual(await friendUids(me!), []);
  });

  it('refuses bad input with ERR_BAD_REQUEST: missing, empty, not an array, bad uids, more than 25', async () => {
    const [me] = await uids(1);
    const payloads: unknown[] = [{}, { accepted: [] }, { accepted: 'alice' }, { accepted: [42] }, { accepted: ['a b'] }, { accepted: Array.from({ length: 26 }, (_, i) => `u${i}`) }];
    for (const payload of payloads) {
      const response = await t.call(t.appA, `/v3/users/${me}/friends`, { method: 'POST', body: payload });
      assert.equal(response.statusCode, 400, JSON.stringify(payload));
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
    }
    assert.deepEqual(await friendUids(me!), []);
  });

  it("neither sees nor befriends another app's users", async () => {
    const [me] = await uids(1);
    const [stranger, strangerFriend] = await uids(2, t.appB);
    assert.equal(body(await addFriends(me!, [stranger])).data.accepted[stranger!].error.code, 'ERR_UID_NOT_FOUND');
    assert.equal(errorCode(await addFriends(me!, [strangerFriend], t.appB)), 'ERR_UID_NOT_FOUND');
    const fromB = await addFriends(stranger!, [me], t.appB);
    assert.equal(fromB.statusCode, 200);
    assert.equal(body(fromB).data.accepted[me!].error.code, 'ERR_UID_NOT_FOUND');
    assert.deepEqual(await friendUids(me!), []);
  });
});

describe('list-all-friends', () => {
  it('lists friends sorted by name, with conversationId, block fields and pagination', async () => {
    const me = (await newUser(t, t.appA, { name: 'Me' })).uid;
    const zed = (await newUser(t, t.appA, { name: 'Zed', metadata: { a: 1 } })).uid;
    const amy = (await newUser(t, t.appA, { name: 'amy' })).uid;
    const bob = (await newUser(t, t.appA, { name: 'Bob' })).uid;
    await addFriends(me, [zed, amy, bob]);
    await t.call(t.appA, `/v3/users/${me}/blockedusers`, { method: 'POST', body: { blockedUids: [bob] } });
    const response = await listFriends(me);
    assert.equal(response.statusCode, 200, response.body);
    const { data, meta } = body(response);
    assert.deepEqual(
      data.map((f: any) => f.name),
      ['amy', 'Bob', 'Zed'],
    );
    assert.deepEqual(meta.pagination, { total: 3, count: 3, per_page: 100, current_page: 1, total_pages: 1 });
    const [a, b, z] = data;
    assert.equal(z.conversationId, [me, zed].sort().join('_user_'));
    assert.deepEqual(z.metadata, { a: 1 });
    assert.equal(a.blockedByMe, false);
    assert.equal(a.hasBlockedMe, false);
    assert.equal(b.blockedByMe, true);
    assert.equal(typeof b.blockedByMeAt, 'number');
    assert.equal(b.blockedAt, b.blockedByMeAt);
    assert.equal(b.hasBlockedMe, false);
    assert.ok(data.every((f: any) => typeof f.createdAt === 'number' && f.role && f.status));
    const page = body(await listFriends(me, { perPage: '2', page: '2' }));
    assert.deepEqual(
      page.data.map((f: any) => f.name),
      ['Zed'],
    );
    assert.deepEqual(page.meta.pagination, { total: 3, count: 1, per_page: 2, current_page: 2, total_pages: 2 });
  });

  it('searches by a prefix of the name or uid, matching wildcards literally', async () => {
    const me = (await newUser(t, t.appA)).uid;
    const alice = (await newUser(t, t.appA, { name: 'Alice Liddell' })).uid;
    const other = (await newUser(t, t.appA, { uid: uniqueId('zz'), name: 'Someone' })).uid;
    await addFriends(me, [alice, other]);
    assert.deepEqual(
      body(await listFriends(me, { searchKey: 'ALI' })).data.map((f: any) => f.uid),
      [alice],
    );
    assert.deepEqual(
      body(await listFriends(me, { searchKey: other.slice(0, 5) })).data.map((f: any) => f.uid),
      [other],
    );
    const none = body(await listFriends(me, { searchKey: '%' }));
    assert.deepEqual(none.data, []);
    assert.equal(none.meta.pagination.total, 0);
  });

  it('keeps deactivated friends listed, with deactivatedAt', async () => {
    const [me, friend] = await uids(2);
    await addFriends(me!, [friend]);
    await t.call(t.appA, `/v3/users/${friend}`, { method: 'DELETE' });
    const [listed] = body(await listFriends(me!)).data;
    assert.equal(listed.uid, friend);
    assert.equal(typeof listed.deactivatedAt, 'number');
  });

  it('refuses bad paging with ERR_BAD_REQUEST', async () => {
    const [me] = await uids(1);
    const queries: Array<Record<string, string>> = [{ perPage: '0' }, { perPage: '1001' }, { page: '0' }, { page: 'x' }];
    for (const query of queries) {
      const response = await listFriends(me!, query);
      assert.equal(response.statusCode, 400, JSON.stringify(query));
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
    }
  });

  it("answers ERR_UID_NOT_FOUND for an unknown user, an unknown onBehalfOf and another app's user", async () => {
    const [me, friend] = await uids(2);
    await addFriends(me!, [friend]);
    const unknown = await listFriends(uniqueId());
    assert.equal(unknown.statusCode, 404);
    assert.equal(errorCode(unknown), 'ERR_UID_NOT_FOUND');
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${me}/friends`, { onBehalfOf: uniqueId() })), 'ERR_UID_NOT_FOUND');
    assert.equal(errorCode(await listFriends(me!, {}, t.appB)), 'ERR_UID_NOT_FOUND');
  });
});

describe('remove-friend', () => {
  it('removes friendships both ways, ignoring uids that are not friends', async () => {
    const [me, a, b, stranger] = await uids(4);
    await addFriends(me!, [a, b]);
    const response = await removeFriends(me!, { friends: [a!.toUpperCase(), stranger, uniqueId(), me] });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(body(response).data, { success: true, message: 'Deleted the friend relations successfully.' });
    assert.deepEqual(await friendUids(me!), [b]);
    assert.deepEqual(await friendUids(a!), []);
    // From the other side too.
    assert.equal((await removeFriends(b!, { friends: [me] })).statusCode, 200);
    assert.deepEqual(await friendUids(me!), []);
    assert.equal(body(await addFriends(me!, [a])).data.accepted[a!].success, true, 'a removed friend can be added again');
  });

  it('answers ERR_UID_NOT_FOUND (404) for an unknown user in the path', async () => {
    const response = await removeFriends(uniqueId(), { friends: ['x'] });
    assert.equal(response.statusCode, 404);
    assert.equal(errorCode(response), 'ERR_UID_NOT_FOUND');
  });

  it('refuses bad input with ERR_BAD_REQUEST, removing nothing', async () => {
    const [me, friend] = await uids(2);
    await addFriends(me!, [friend]);
    const payloads: unknown[] = [{}, { friends: [] }, { friends: friend }, { friends: [1] }, { friends: Array.from({ length: 26 }, () => friend) }];
    for (const payload of payloads) {
      const response = await removeFriends(me!, payload);
      assert.equal(response.statusCode, 400, JSON.stringify(payload));
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
    }
    assert.deepEqual(await friendUids(me!), [friend]);
  });

  it("cannot remove another app's friendships", async () => {
    const [me, friend] = await uids(2);
    await addFriends(me!, [friend]);
    assert.equal(errorCode(await removeFriends(me!, { friends: [friend] }, t.appB)), 'ERR_UID_NOT_FOUND');
    const [other] = await uids(1, t.appB);
    assert.equal((await removeFriends(other!, { friends: [me] }, t.appB)).statusCode, 200);
    assert.deepEqual(await friendUids(me!), [friend]);
  });
});

describe('deleting users', () => {
  it('a permanent delete removes the friendships both ways', async () => {
    const [me, gone] = await uids(2);
    await addFriends(me!, [gone]);
    const deleted = await t.call(t.appA, `/v3/users/${gone}`, { method: 'DELETE', body: { permanent: true } });
    assert.equal(deleted.statusCode, 200, deleted.body);
    assert.deepEqual(await friendUids(me!), []);
    const rows = await t.database.db
      .selectFrom('friends')
      .selectAll()
      .where('app_id', '=', t.appA.appId)
      .where((eb) => eb.or([eb('uid', '=', gone!), eb('friend_uid', '=', gone!)]))
      .execute();
    assert.deepEqual(rows, []);
  });
});
