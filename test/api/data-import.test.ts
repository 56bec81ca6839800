import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, errorCode, uniqueId, type CallOptions, type TestApp } from '../helpers/app.js';
import { newGroup, newRole, newUser } from '../helpers/factories.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
  await newRole(t, t.appA, { role: 'moderator' });
});
after(async () => {
  await t.close();
});

type Kind = 'users' | 'groups' | 'members';

/** POSTs `{kind: records}` to the data import API (the vendor's /v3.0 base path unless told). */
function post(app: CreatedApp, kind: Kind, records: unknown, options: CallOptions & { prefix?: string } = {}) {
  return t.call(app, `${options.prefix ?? '/v3.0'}/data_import/${kind}`, { method: 'POST', body: { [kind]: records }, ...options });
}

/** Imports and returns the per-record results, asserting a 200. */
async function imported(app: CreatedApp, kind: Kind, records: unknown): Promise<Record<string, any>> {
  const response = await post(app, kind, records);
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
}

function codes(results: Record<string, any>): Record<string, string> {
  return Object.fromEntries(Object.entries(results).map(([key, result]) => [key, result.success ? 'ok' : result.error.code]));
}

const T0 = 1_673_421_419; // 2023-01-11, the vendor's example

function userRecords(n: number, prefix = uniqueId('iu')): Record<string, any> {
  const records: Record<string, any> = {};
  for (let i = 0; i < n; i++) records[`${prefix}-${i}`] = { uid: `${prefix}-${i}`, name: `Imported ${i}`, createdAt: T0 + i };
  return records;
}

async function memberCount(app: CreatedApp, guid: string): Promise<number> {
  return body(await t.call(app, `/v3/groups/${guid}`)).data.membersCount;
}

describe('import-users', () => {
  it('stores users with their source timestamps, as strings or integers, readable through /v3', async () => {
    const uid = uniqueId('Imp');
    const results = await imported(t.appA, 'users', {
      [uid]: {
        uid,
        name: 'Zoë',
        avatar: 'https://example.com/a.png',
        link: 'https://example.com/u',
        role: 'moderator',
        metadata: { z: 1, a: 2 },
        tags: ['x', 'y', 'x'],
        createdAt: String(T0),
        lastActiveAt: T0 + 6,
      },
    });
    const result = results[uid];
    assert.equal(result.success, true, JSON.stringify(result));
    assert.deepEqual(result.data, {
      uid: uid.toLowerCase(),
      name: 'Zoë',
      avatar: 'https://example.com/a.png',
      link: 'https://example.com/u',
      role: 'moderator',
      status: 'offline',
      metadata: { z: 1, a: 2 },
      tags: ['x', 'y'],
      createdAt: T0,
      lastActiveAt: T0 + 6,
    });
    const fetched = body(await t.call(t.appA, `/v3/users/${uid}`)).data;
    assert.deepEqual(fetched, result.data);
    const listed = body(await t.call(t.appA, '/v3/users', { query: { searchKey: uid } })).data;
    assert.equal(listed.length, 1);
    assert.equal(listed[0].createdAt, T0);
  });

  it('answers the vendor’s example as the vendor does', async () => {
    const uid = uniqueId('uid1');
    const results = await imported(t.appA, 'users', {
      [uid]: {
        uid,
        name: 'uid1',
        avatar: 'https://assets.cometchat.io/sampleapp/v2/users/cometchat-uid-1.webp',
        createdAt: '1673421419',
        metadata: { key: 'value' },
        lastActiveAt: '1673421425',
      },
    });
    assert.deepEqual(results[uid], {
      success: true,
      data: {
        uid,
        name: 'uid1',
        avatar: 'https://assets.cometchat.io/sampleapp/v2/users/cometchat-uid-1.webp',
        metadata: { key: 'value' },
        status: 'offline',
        role: 'default',
        lastActiveAt: 1673421425,
        createdAt: 1673421419,
      },
    });
  });

  it('imports a deactivated user as deactivated', async () => {
    const uid = uniqueId('gone');
    const results = await imported(t.appA, 'users', { [uid]: { uid, name: 'Gone', createdAt: T0, deactivatedAt: T0 + 100 } });
    assert.equal(results[uid].data.deactivatedAt, T0 + 100);
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${uid}`)), 'ERR_UID_NOT_FOUND');
    const listed = body(await t.call(t.appA, '/v3/users', { query: { searchKey: uid, onlyDeactivated: 'true' } })).data;
    assert.equal(listed[0].deactivatedAt, T0 + 100);
  });

  it('answers each bad record on its own and stores the good ones (a mixed batch)', async () => {
    const p = uniqueId('mix');
    const records = {
      [`${p}-good`]: { uid: `${p}-good`, name: 'Good' },
      [`${p}-noname`]: { uid: `${p}-noname` },
      [`${p}-longname`]: { uid: `${p}-longname`, name: 'x'.repeat(101) },
      [`${p}-ms`]: { uid: `${p}-ms`, name: 'Milliseconds', createdAt: 1_673_421_419_000 },
      [`${p}-badtime`]: { uid: `${p}-badtime`, name: 'Bad time', lastActiveAt: 'yesterday' },
      [`${p}-role`]: { uid: `${p}-role`, name: 'No such role', role: 'nope' },
      [`${p}-meta`]: { uid: `${p}-meta`, name: 'Big', metadata: { blob: 'x'.repeat(6000) } },
      [`${p}-avatar`]: { uid: `${p}-avatar`, name: 'Bad avatar', avatar: 'not a url' },
      [`${p}-also-good`]: { uid: `${p}-also-good`, name: 'Also good', createdAt: T0 },
    };
    const results = await imported(t.appA, 'users', records);
    assert.deepEqual(codes(results), {
      [`${p}-good`]: 'ok',
      [`${p}-noname`]: 'ERR_BAD_REQUEST',
      [`${p}-longname`]: 'ERR_BAD_REQUEST',
      [`${p}-ms`]: 'ERR_BAD_REQUEST',
      [`${p}-badtime`]: 'ERR_BAD_REQUEST',
      [`${p}-role`]: 'ERR_ROLE_NOT_FOUND',
      [`${p}-meta`]: 'ERR_BAD_REQUEST',
      [`${p}-avatar`]: 'ERR_BAD_REQUEST',
      [`${p}-also-good`]: 'ok',
    });
    assert.deepEqual(Object.keys(results), Object.keys(records), 'results keep the order of the records');
    assert.equal(results[`${p}-noname`].error.details.name, 'is required');
    assert.match(results[`${p}-ms`].error.details.createdAt, /unix seconds/);
    assert.ok(results[`${p}-meta`].error.details.metadata);
    const listed = body(await t.call(t.appA, '/v3/users', { query: { searchKey: p, withDeactivated: 'true' } })).data;
    assert.deepEqual(listed.map((u: any) => u.uid).sort(), [`${p}-also-good`, `${p}-good`]);
  });

  it('re-importing a batch stores no duplicate: each record answers ERR_UID_ALREADY_EXISTS', async () => {
    const records = userRecords(20);
    const before = body(await t.call(t.appA, '/v3/users', { query: { perPage: '1' } })).meta.pagination.total;
    assert.ok(Object.values(await imported(t.appA, 'users', records)).every((r) => r.success));
    const again = await imported(t.appA, 'users', records);
    assert.ok(Object.values(again).every((r) => !r.success && r.error.code === 'ERR_UID_ALREADY_EXISTS'));
    const total = body(await t.call(t.appA, '/v3/users', { query: { perPage: '1' } })).meta.pagination.total;
    assert.equal(total, before + 20, 'the users counter counts each imported user once');
  });

  it('two concurrent imports of one batch store exactly one copy', async () => {
    const prefix = uniqueId('race');
    const records = userRecords(200, prefix);
    const [a, b] = await Promise.all([imported(t.appA, 'users', records), imported(t.appA, 'users', records)]);
    for (const key of Object.keys(records)) {
      assert.equal([a[key], b[key]].filter((r) => r.success).length, 1, key);
      assert.equal([a[key], b[key]].find((r) => !r.success).error.code, 'ERR_UID_ALREADY_EXISTS');
    }
    const rows = await t.database.db.selectFrom('users').select('uid').where('app_id', '=', t.appA.appId).where('uid', 'like', `${prefix}-%`).execute();
    assert.equal(rows.length, 200);
  });

  it('a uid given twice in one batch (in two cases) is stored once', async () => {
    const uid = uniqueId('twice');
    const results = await imported(t.appA, 'users', {
      [uid]: { uid, name: 'First' },
      [uid.toUpperCase()]: { uid: uid.toUpperCase(), name: 'Second' },
    });
    assert.deepEqual(codes(results), { [uid]: 'ok', [uid.toUpperCase()]: 'ERR_UID_ALREADY_EXISTS' });
  });

  it('works at /v3 as at /v3.0', async () => {
    const uid = uniqueId('v3');
    const response = await post(t.appA, 'users', { [uid]: { uid, name: 'V3' } }, { prefix: '/v3' });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(body(response).data[uid].success, true);
  });

  it('needs a fullAccess key', async () => {
    const uid = uniqueId('auth');
    for (const prefix of ['/v3', '/v3.0']) {
      for (const kind of ['users', 'groups', 'members'] as const) {
        const response = await post(t.appA, kind, {}, { prefix, key: 'auth' });
        assert.equal(response.statusCode, 403);
        assert.equal(errorCode(response), 'AUTH_ERR_NO_ACCESS');
        assert.equal(errorCode(await post(t.appA, kind, {}, { prefix, key: 'none' })), 'AUTH_ERR_EMPTY_APIKEY');
      }
    }
    assert.equal(errorCode(await post(t.appA, 'users', { [uid]: { uid, name: 'x' } }, { key: 'auth' })), 'AUTH_ERR_NO_ACCESS');
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${uid}`)), 'ERR_UID_NOT_FOUND');
  });

  it('refuses a malformed body as a whole, storing nothing', async () => {
    const uid = uniqueId('whole');
    const send = (payload: unknown) => t.call(t.appA, '/v3.0/data_import/users', { method: 'POST', body: payload as object });
    const cases: Array<[unknown, string]> = [
      [[{ uid, name: 'x' }], 'ERR_IMPORT_INVALID_USER_FORMAT'],
      [{}, 'ERR_IMPORT_INVALID_USER_FORMAT'],
      [{ user: { [uid]: { uid, name: 'x' } } }, 'ERR_IMPORT_INVALID_USER_FORMAT'],
      [{ users: [{ uid, name: 'x' }] }, 'ERR_IMPORT_INVALID_USER_FORMAT'],
      [{ users: { [uid]: 'x' } }, 'ERR_IMPORT_INVALID_USER_FORMAT'],
      [{ users: { [uid]: { uid: `${uid}-other`, name: 'x' }, [`${uid}-b`]: { uid: `${uid}-b`, name: 'b' } } }, 'ERR_IMPORT_INVALID_USER_FORMAT'],
      [{ users: { [uid]: { name: 'x' } } }, 'ERR_IMPORT_INVALID_USER_FORMAT'],
    ];
    for (const [payload, code] of cases) {
      const response = await send(payload);
      assert.equal(response.statusCode, 400, JSON.stringify(payload));
      assert.equal(errorCode(response), code, JSON.stringify(payload));
      assert.ok(body(response).error.details, 'names the problem');
    }
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${uid}-b`)), 'ERR_UID_NOT_FOUND', 'a bad key fails the whole call');
    const groups = await t.call(t.appA, '/v3.0/data_import/groups', { method: 'POST', body: { users: {} } });
    assert.equal(errorCode(groups), 'ERR_IMPORT_INVALID_GROUP_FORMAT');
    const members = await t.call(t.appA, '/v3.0/data_import/members', { method: 'POST', body: { members: { a_member_b: { memberId: 'c_member_d', guid: 'c', uid: 'd' } } } });
    assert.equal(errorCode(members), 'ERR_IMPORT_INVALID_MEMBER_FORMAT');
    const empty = await post(t.appA, 'users', {});
    assert.equal(empty.statusCode, 200);
    assert.deepEqual(body(empty), { data: {} });
  });

  it('keeps apps apart', async () => {
    const uid = uniqueId('shared');
    assert.equal((await imported(t.appA, 'users', { [uid]: { uid, name: 'In A', createdAt: T0 } }))[uid].success, true);
    assert.equal(errorCode(await t.call(t.appB, `/v3/users/${uid}`)), 'ERR_UID_NOT_FOUND');
    const inB = await imported(t.appB, 'users', { [uid]: { uid, name: 'In B' } });
    assert.equal(inB[uid].success, true, 'the same uid is free in another app');
    assert.equal(body(await t.call(t.appA, `/v3/users/${uid}`)).data.name, 'In A');
    // app B's role "moderator" does not exist: roles are per app.
    const other = uniqueId('norole');
    assert.equal((await imported(t.appB, 'users', { [other]: { uid: other, name: 'x', role: 'moderator' } }))[other].error.code, 'ERR_ROLE_NOT_FOUND');
  });
});

describe('import-groups', () => {
  it('stores groups with their createdAt; the owner is an admin member joined then', async () => {
    const owner = await newUser(t, t.appA);
    const guid = uniqueId('ig');
    const results = await imported(t.appA, 'groups', {
      [guid]: { guid, name: 'Imported', type: 'public', owner: owner.uid, createdAt: String(T0), metadata: { k: 'v' }, tags: ['t'], icon: 'https://example.com/i.png' },
    });
    assert.deepEqual(results[guid], {
      success: true,
      data: {
        guid,
        name: 'Imported',
        type: 'public',
        icon: 'https://example.com/i.png',
        metadata: { k: 'v' },
        tags: ['t'],
        owner: owner.uid,
        membersCount: 1,
        conversationId: `group_${guid}`,
        createdAt: T0,
      },
    });
    const fetched = body(await t.call(t.appA, `/v3/groups/${guid}`)).data;
    assert.deepEqual(fetched, results[guid].data);
    const members = body(await t.call(t.appA, `/v3/groups/${guid}/members`)).data;
    assert.deepEqual(
      members.map((m: any) => [m.uid, m.scope, m.joinedAt]),
      [[owner.uid, 'admin', T0]],
    );
  });

  it('creates the owner from groupOwnerDetails (the vendor’s example); without details a missing owner fails the record', async () => {
    const owner = uniqueId('owner');
    const guid = uniqueId('guid1');
    const orphan = uniqueId('orphan');
    const results = await imported(t.appA, 'groups', {
      [guid]: { guid, name: 'guid1', createdAt: '1673421419', type: 'public', owner, groupOwnerDetails: { uid: owner, name: owner } },
      [orphan]: { guid: orphan, name: 'Orphan', type: 'public', owner: uniqueId('nobody') },
    });
    assert.equal(results[guid].success, true, JSON.stringify(results[guid]));
    assert.equal(results[guid].data.owner, owner);
    assert.equal(results[guid].data.createdAt, 1673421419);
    assert.equal(body(await t.call(t.appA, `/v3/users/${owner}`)).data.name, owner);
    assert.equal(results[orphan].error.code, 'ERR_UID_NOT_FOUND');
    assert.equal(errorCode(await t.call(t.appA, `/v3/groups/${orphan}`)), 'ERR_GUID_NOT_FOUND');
  });

  it('answers each bad record on its own (a mixed batch)', async () => {
    const p = uniqueId('gmix');
    const results = await imported(t.appA, 'groups', {
      [`${p}-ok`]: { guid: `${p}-ok`, name: 'OK', type: 'private' },
      [`${p}-type`]: { guid: `${p}-type`, name: 'Bad type', type: 'secret' },
      [`${p}-nopass`]: { guid: `${p}-nopass`, name: 'No password', type: 'password' },
      [`${p}-details`]: { guid: `${p}-details`, name: 'Bad details', type: 'public', groupOwnerDetails: { uid: 'someone' } },
      [`${p}-mismatch`]: { guid: `${p}-mismatch`, name: 'Mismatch', type: 'public', owner: 'a', groupOwnerDetails: { uid: 'b', name: 'B' } },
      [`${p}-role`]: { guid: `${p}-role`, name: 'Owner role', type: 'public', groupOwnerDetails: { uid: uniqueId('o'), name: 'O', role: 'nope' } },
    });
    assert.deepEqual(codes(results), {
      [`${p}-ok`]: 'ok',
      [`${p}-type`]: 'ERR_BAD_REQUEST',
      [`${p}-nopass`]: 'ERR_EMPTY_GROUP_PASS',
      [`${p}-details`]: 'ERR_BAD_REQUEST',
      [`${p}-mismatch`]: 'ERR_BAD_REQUEST',
      [`${p}-role`]: 'ERR_ROLE_NOT_FOUND',
    });
    assert.equal(results[`${p}-details`].error.details['groupOwnerDetails.name'], 'is required');
    assert.equal(results[`${p}-ok`].data.membersCount, 0, 'a group without an owner has no members');
  });

  it('stores a password group’s password hashed: joining needs it', async () => {
    const guid = uniqueId('pw');
    const results = await imported(t.appA, 'groups', { [guid]: { guid, name: 'Locked', type: 'password', password: 's3cret' } });
    assert.equal(results[guid].success, true);
    assert.equal(results[guid].data.password, undefined);
    const row = await t.database.db.selectFrom('groups').select('password_hash').where('app_id', '=', t.appA.appId).where('guid', '=', guid).executeTakeFirstOrThrow();
    assert.match(row.password_hash!, /^scrypt\$/);
    const joiner = await newUser(t, t.appA);
    const join = (password: string) => t.call(t.appA, `/v3/groups/${guid}/members`, { method: 'POST', body: { participants: [joiner.uid], password }, onBehalfOf: joiner.uid });
    assert.equal(errorCode(await join('wrong')), 'ERR_WRONG_GROUP_PASS');
    assert.equal((await join('s3cret')).statusCode, 200);
  });

  it('re-importing answers ERR_GUID_ALREADY_EXISTS and changes nothing; concurrent imports store one copy', async () => {
    const owner = await newUser(t, t.appA);
    const p = uniqueId('grace');
    const records: Record<string, any> = {};
    for (let i = 0; i < 50; i++) records[`${p}-${i}`] = { guid: `${p}-${i}`, name: `G ${i}`, type: 'public', owner: owner.uid, createdAt: T0 };
    const [a, b] = await Promise.all([imported(t.appA, 'groups', records), imported(t.appA, 'groups', records)]);
    for (const key of Object.keys(records)) {
      assert.equal([a[key], b[key]].filter((r) => r.success).length, 1, key);
      assert.equal([a[key], b[key]].find((r) => !r.success).error.code, 'ERR_GUID_ALREADY_EXISTS');
    }
    const again = await imported(t.appA, 'groups', records);
    assert.ok(Object.values(again).every((r) => r.error?.code === 'ERR_GUID_ALREADY_EXISTS'));
    const rows = await t.database.db.selectFrom('groups').select(['guid', 'members_count']).where('app_id', '=', t.appA.appId).where('guid', 'like', `${p}-%`).execute();
    assert.equal(rows.length, 50);
    assert.ok(
      rows.every((row) => row.members_count === 1),
      'each group counts its owner once',
    );
  });

  it('keeps apps apart: app B cannot name app A’s user as owner', async () => {
    const owner = await newUser(t, t.appA);
    const guid = uniqueId('iso');
    const results = await imported(t.appB, 'groups', { [guid]: { guid, name: 'B', type: 'public', owner: owner.uid } });
    assert.equal(results[guid].error.code, 'ERR_UID_NOT_FOUND');
    const inA = await imported(t.appA, 'groups', { [guid]: { guid, name: 'A', type: 'public', owner: owner.uid } });
    assert.equal(inA[guid].success, true, 'the failed record in B took nothing from A');
    assert.equal(errorCode(await t.call(t.appB, `/v3/groups/${guid}`)), 'ERR_GUID_NOT_FOUND');
  });
});

describe('import-members', () => {
  async function importedGroup(createdAt = T0): Promise<{ guid: string; owner: string }> {
    const owner = await newUser(t, t.appA);
    const guid = uniqueId('mg');
    const results = await imported(t.appA, 'groups', { [guid]: { guid, name: 'Members', type: 'private', owner: owner.uid, createdAt } });
    assert.equal(results[guid].success, true);
    return { guid, owner: owner.uid };
  }
  const memberId = (guid: string, uid: string) => `${guid}_member_${uid}`;

  it('stores memberships with their joinedAt and scope, readable through /v3', async () => {
    const { guid, owner } = await importedGroup();
    const alice = await newUser(t, t.appA);
    const bob = await newUser(t, t.appA);
    const results = await imported(t.appA, 'members', {
      [memberId(guid, alice.uid)]: { memberId: memberId(guid, alice.uid), guid, uid: alice.uid, scope: 'moderator', joinedAt: String(T0 + 60) },
      [memberId(guid, bob.uid)]: { memberId: memberId(guid, bob.uid), guid, uid: bob.uid, joinedAt: T0 + 120 },
    });
    assert.deepEqual(results[memberId(guid, alice.uid)], { success: true, data: { guid, uid: alice.uid, scope: 'moderator', joinedAt: T0 + 60 } });
    assert.deepEqual(results[memberId(guid, bob.uid)], { success: true, data: { guid, uid: bob.uid, scope: 'participant', joinedAt: T0 + 120 } });
    const members = body(await t.call(t.appA, `/v3/groups/${guid}/members`)).data;
    const seen = Object.fromEntries(members.map((m: any) => [m.uid, [m.scope, m.joinedAt]]));
    assert.deepEqual(seen, { [owner]: ['admin', T0], [alice.uid]: ['moderator', T0 + 60], [bob.uid]: ['participant', T0 + 120] });
    assert.equal(await memberCount(t.appA, guid), 3);
    const asAlice = body(await t.call(t.appA, `/v3/groups/${guid}`, { onBehalfOf: alice.uid })).data;
    assert.equal(asAlice.hasJoined, true);
    assert.equal(asAlice.joinedAt, T0 + 60);
    const messages = await t.database.db.selectFrom('messages').select('id').where('app_id', '=', t.appA.appId).where('conversation_id', '=', `group_${guid}`).execute();
    assert.equal(messages.length, 0, 'imported memberships store no action message');
  });

  it('creates the user and group from userDetails and groupDetails (the vendor’s example)', async () => {
    const owner = uniqueId('uid1');
    const uid = uniqueId('uid2');
    const guid = uniqueId('guid1');
    const results = await imported(t.appA, 'members', {
      [memberId(guid, owner)]: {
        memberId: memberId(guid, owner),
        uid: owner,
        guid,
        joinedAt: '1673421419',
        scope: 'admin',
        userDetails: { uid: owner, name: owner },
        groupDetails: { guid, name: 'guid1', type: 'public', owner, createdAt: '1673421419' },
      },
      [memberId(guid, uid)]: {
        memberId: memberId(guid, uid),
        uid,
        guid,
        joinedAt: '1673421419',
        scope: 'admin',
        groupDetails: { guid, name: 'guid1', type: 'public', owner, createdAt: '1673421419' },
        userDetails: { uid, name: uid },
      },
    });
    assert.deepEqual(results[memberId(guid, uid)], { success: true, data: { guid, uid, scope: 'admin', joinedAt: 1673421419 } });
    // The owner became an admin member with the group; their own record finds them joined.
    assert.equal(results[memberId(guid, owner)].error.code, 'ERR_ALREADY_JOINED');
    assert.equal(body(await t.call(t.appA, `/v3/users/${uid}`)).data.name, uid);
    const group = body(await t.call(t.appA, `/v3/groups/${guid}`)).data;
    assert.equal(group.owner, owner);
    assert.equal(group.createdAt, 1673421419);
    assert.equal(group.membersCount, 2);
  });

  it('answers each bad record on its own (a mixed batch)', async () => {
    const { guid } = await importedGroup();
    const ok = await newUser(t, t.appA);
    const u = await newUser(t, t.appA);
    const later = await newUser(t, t.appA);
    const missingGroup = uniqueId('nogroup');
    const missingUser = uniqueId('nouser');
    const record = (g: string, uid: string, fields: Record<string, unknown> = {}) => ({ [memberId(g, uid)]: { memberId: memberId(g, uid), guid: g, uid, ...fields } });
    const results = await imported(t.appA, 'members', {
      ...record(guid, ok.uid, { joinedAt: T0 + 1 }),
      ...record(missingGroup, u.uid),
      ...record(guid, missingUser),
      ...record(guid, u.uid, { joinedAt: T0 - 1 }),
      ...record(guid, later.uid, { joinedAt: Math.floor(Date.now() / 1000) + 3600 }),
      [memberId(guid, 'someone')]: { memberId: memberId(guid, 'someone'), guid, uid: 'someone-else' },
      [memberId(guid, 'scoped')]: { memberId: memberId(guid, 'scoped'), guid, uid: 'scoped', scope: 'owner' },
      [memberId(guid, 'details')]: { memberId: memberId(guid, 'details'), guid, uid: 'details', userDetails: { uid: 'other', name: 'x' } },
    });
    assert.deepEqual(codes(results), {
      [memberId(guid, ok.uid)]: 'ok',
      [memberId(missingGroup, u.uid)]: 'ERR_GUID_NOT_FOUND',
      [memberId(guid, missingUser)]: 'ERR_UID_NOT_FOUND',
      [memberId(guid, u.uid)]: 'ERR_IMPORT_INVALID_JOINEDAT',
      [memberId(guid, later.uid)]: 'ERR_IMPORT_INVALID_JOINEDAT',
      [memberId(guid, 'someone')]: 'ERR_BAD_REQUEST',
      [memberId(guid, 'scoped')]: 'ERR_BAD_REQUEST',
      [memberId(guid, 'details')]: 'ERR_BAD_REQUEST',
    });
    assert.equal(await memberCount(t.appA, guid), 2);
  });

  it('isBanned makes a ban, not a membership; a banned user cannot be imported as a member', async () => {
    const { guid, owner } = await importedGroup();
    const troll = await newUser(t, t.appA);
    const member = await newUser(t, t.appA);
    const banned = { memberId: memberId(guid, troll.uid), guid, uid: troll.uid, isBanned: true, joinedAt: T0 + 5 };
    const results = await imported(t.appA, 'members', {
      [memberId(guid, troll.uid)]: banned,
      [memberId(guid, owner)]: { memberId: memberId(guid, owner), guid, uid: owner, isBanned: true },
    });
    assert.deepEqual(results[memberId(guid, troll.uid)], { success: true, data: { guid, uid: troll.uid, isBanned: true, bannedAt: T0 + 5 } });
    assert.equal(results[memberId(guid, owner)].error.code, 'ERR_GROUP_NO_CLEARANCE');
    const bannedList = body(await t.call(t.appA, `/v3/groups/${guid}/bannedusers`)).data;
    assert.deepEqual(
      bannedList.map((u: any) => [u.uid, u.bannedAt]),
      [[troll.uid, T0 + 5]],
    );
    assert.equal(await memberCount(t.appA, guid), 1);

    const again = await imported(t.appA, 'members', {
      [memberId(guid, troll.uid)]: { ...banned },
    });
    assert.equal(again[memberId(guid, troll.uid)].error.code, 'ERR_ALREADY_BANNED');
    const asMember = await imported(t.appA, 'members', { [memberId(guid, troll.uid)]: { memberId: memberId(guid, troll.uid), guid, uid: troll.uid } });
    assert.equal(asMember[memberId(guid, troll.uid)].error.code, 'ERR_BANNED_GROUPMEMBER');

    // Banning a member ends the membership.
    await imported(t.appA, 'members', { [memberId(guid, member.uid)]: { memberId: memberId(guid, member.uid), guid, uid: member.uid } });
    assert.equal(await memberCount(t.appA, guid), 2);
    const ban = await imported(t.appA, 'members', { [memberId(guid, member.uid)]: { memberId: memberId(guid, member.uid), guid, uid: member.uid, isBanned: true } });
    assert.equal(ban[memberId(guid, member.uid)].success, true);
    assert.equal(await memberCount(t.appA, guid), 1);
  });

  it('re-importing answers ERR_ALREADY_JOINED; concurrent imports store one copy; counts stay right', async () => {
    const { guid } = await importedGroup();
    const p = uniqueId('mrace');
    const users = userRecords(100, p);
    assert.ok(Object.values(await imported(t.appA, 'users', users)).every((r) => r.success));
    const records: Record<string, any> = {};
    for (const uid of Object.keys(users)) records[memberId(guid, uid)] = { memberId: memberId(guid, uid), guid, uid, joinedAt: T0 + 10 };
    const [a, b] = await Promise.all([imported(t.appA, 'members', records), imported(t.appA, 'members', records)]);
    for (const key of Object.keys(records)) {
      assert.equal([a[key], b[key]].filter((r) => r.success).length, 1, key);
      assert.equal([a[key], b[key]].find((r) => !r.success).error.code, 'ERR_ALREADY_JOINED');
    }
    const again = await imported(t.appA, 'members', records);
    assert.ok(Object.values(again).every((r) => r.error?.code === 'ERR_ALREADY_JOINED'));
    assert.equal(await memberCount(t.appA, guid), 101);
    const counted = await t.database.db
      .selectFrom('group_members')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('app_id', '=', t.appA.appId)
      .where('guid', '=', guid)
      .executeTakeFirstOrThrow();
    assert.equal(Number(counted.n), 101);
  });

  it('keeps apps apart: app B cannot add app A’s user to its group, nor touch app A’s group', async () => {
    const { guid } = await importedGroup();
    const alice = await newUser(t, t.appA);
    const bGroup = await newGroup(t, t.appB);
    const results = await imported(t.appB, 'members', {
      [memberId(bGroup.guid, alice.uid)]: { memberId: memberId(bGroup.guid, alice.uid), guid: bGroup.guid, uid: alice.uid },
      [memberId(guid, alice.uid)]: { memberId: memberId(guid, alice.uid), guid, uid: alice.uid },
    });
    assert.equal(results[memberId(bGroup.guid, alice.uid)].error.code, 'ERR_UID_NOT_FOUND');
    assert.equal(results[memberId(guid, alice.uid)].error.code, 'ERR_GUID_NOT_FOUND');
    assert.equal(await memberCount(t.appA, guid), 1);
  });

  it('joinedAt may equal the group’s createdAt but not precede it', async () => {
    const { guid } = await importedGroup(T0 + 1000);
    const a = await newUser(t, t.appA);
    const results = await imported(t.appA, 'members', { [memberId(guid, a.uid)]: { memberId: memberId(guid, a.uid), guid, uid: a.uid, joinedAt: T0 + 1000 } });
    assert.equal(results[memberId(guid, a.uid)].success, true);
  });
});

describe('record limit', () => {
  let small: TestApp;
  before(async () => {
    small = await createTestApp({ importMaxRecords: 5 });
  });
  after(async () => {
    await small?.close();
  });

  it('answers 400 above the configured maximum, storing nothing', async () => {
    const records = userRecords(6);
    const response = await small.call(small.appA, '/v3.0/data_import/users', { method: 'POST', body: { users: records } });
    assert.equal(response.statusCode, 400);
    assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
    assert.match(body(response).error.message, /at most 5/);
    const first = Object.keys(records)[0]!;
    assert.equal(errorCode(await small.call(small.appA, `/v3/users/${first}`)), 'ERR_UID_NOT_FOUND');
    delete records[first];
    const five = await small.call(small.appA, '/v3.0/data_import/users', { method: 'POST', body: { users: records } });
    assert.equal(five.statusCode, 200);
  });
});

describe('a large batch', () => {
  it('imports 10,000 users in one call, past the general body limit', async () => {
    const prefix = uniqueId('bulk');
    const records = userRecords(10_000, prefix);
    const response = await post(t.appA, 'users', records);
    assert.equal(response.statusCode, 200, response.body.slice(0, 500));
    const results = body(response).data;
    assert.equal(Object.values(results).filter((r: any) => r.success).length, 10_000);
    const count = await t.database.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('app_id', '=', t.appA.appId)
      .where('uid', 'like', `${prefix}-%`)
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 10_000);
  });
});

describe('data import config', () => {
  it('reads PARLEY_IMPORT_MAX_RECORDS and PARLEY_IMPORT_BODY_LIMIT, with documented defaults', () => {
    const defaults = loadConfig({});
    assert.equal(defaults.importMaxRecords, 10_000);
    assert.equal(defaults.importBodyLimit, 64 * 1024 * 1024);
    const set = loadConfig({ PARLEY_IMPORT_MAX_RECORDS: '50000', PARLEY_IMPORT_BODY_LIMIT: '1048576' });
    assert.equal(set.importMaxRecords, 50_000);
    assert.equal(set.importBodyLimit, 1_048_576);
    assert.throws(() => loadConfig({ PARLEY_IMPORT_MAX_RECORDS: '0' }), ConfigError);
  });
});
