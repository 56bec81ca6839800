import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { body, createTestApp, errorCode, uniqueId, type TestApp } from '../helpers/app.js';
import { newGroup, newUser } from '../helpers/factories.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

const members = async (guid: string, app = t.appA) => body(await t.call(app, `/v3/groups/${guid}/members`, { query: { perPage: '100' } })).data as Array<{ uid: string; scope: string }>;

describe('create-group', () => {
  it('creates a group with every field; the onBehalfOf user owns it as an admin', async () => {
    const owner = await newUser(t, t.appA);
    const guid = uniqueId('Group');
    const response = await t.call(t.appA, '/v3/groups', {
      method: 'POST',
      onBehalfOf: owner.uid,
      body: {
        guid,
        name: 'Project 🚀',
        type: 'public',
        icon: 'https://example.com/i.png',
        description: 'Ünïcode',
        metadata: { b: 1, a: [1, 2] },
        tags: ['work', 'work', 'team'],
      },
    });
    assert.equal(response.statusCode, 200, response.body);
    const group = body(response).data;
    assert.equal(group.guid, guid.toLowerCase());
    assert.equal(group.name, 'Project 🚀');
    assert.equal(group.type, 'public');
    assert.equal(group.icon, 'https://example.com/i.png');
    assert.equal(group.description, 'Ünïcode');
    assert.deepEqual(Object.keys(group.metadata), ['b', 'a']);
    assert.deepEqual(group.tags, ['work', 'team']);
    assert.equal(group.owner, owner.uid);
    assert.equal(group.membersCount, 1);
    assert.equal(group.conversationId, `group_${guid.toLowerCase()}`);
    assert.equal(group.hasJoined, true);
    assert.equal(group.scope, 'admin');
    assert.equal(typeof group.joinedAt, 'number');
    assert.equal(typeof group.createdAt, 'number');
    assert.deepEqual(
      await members(group.guid),
      [{ ...owner, scope: 'admin', joinedAt: group.joinedAt, tags: undefined }].map(({ tags, ...m }) => m),
    );
  });

  it('creates an ownerless group without onBehalfOf, and one owned by `owner`', async () => {
    const ownerless = await newGroup(t, t.appA);
    assert.equal(ownerless.owner, undefined);
    assert.equal(ownerless.membersCount, 0);
    assert.equal(ownerless.hasJoined, undefined, 'no viewer fields without onBehalfOf');
    const owner = await newUser(t, t.appA);
    const owned = await newGroup(t, t.appA, { owner: owner.uid.toUpperCase() });
    assert.equal(owned.owner, owner.uid);
    assert.deepEqual(
      (await members(owned.guid)).map((m) => [m.uid, m.scope]),
      [[owner.uid, 'admin']],
    );
  });

  it('adds inline members per uid: the highest scope wins, and failures do not fail the create', async () => {
    const [a, b, c, d] = [await newUser(t, t.appA), await newUser(t, t.appA), await newUser(t, t.appA), await newUser(t, t.appA)];
    const missing = uniqueId();
    const group = await newGroup(t, t.appA, {
      members: { participants: [a.uid, b.uid, missing], moderators: [b.uid], admins: [c.uid], usersToBan: [d.uid] },
    });
    // Each addition carries its "added" action message (here reduced to its action); a ban does not.
    const outcomes = JSON.parse(JSON.stringify(group.members, (key, value) => (key === 'data' && value?.category === 'action' ? value.data.action : value)));
    assert.deepEqual(outcomes, {
      participants: { [a.uid]: { success: true, data: 'added' }, [missing]: { success: false, error: { code: 'ERR_UID_NOT_FOUND', message: `The UID ${missing} does not exist.` } } },
      moderators: { [b.uid]: { success: true, data: 'added' } },
      admins: { [c.uid]: { success: true, data: 'added' } },
      usersToBan: { [d.uid]: { success: true } },
    });
    assert.equal(group.membersCount, 3);
    const scopes = Object.fromEntries((await members(group.guid)).map((m) => [m.uid, m.scope]));
    assert.deepEqual(scopes, { [a.uid]: 'participant', [b.uid]: 'moderator', [c.uid]: 'admin' });
    const banned = body(await t.call(t.appA, `/v3/groups/${group.guid}/bannedusers`)).data.map((u: any) => u.uid);
    assert.deepEqual(banned, [d.uid]);
  });

  it('requires a password for a password group, stores it hashed and never returns it', async () => {
    const guid = uniqueId();
    const missing = await t.call(t.appA, '/v3/groups', { method: 'POST', body: { guid, name: 'x', type: 'password' } });
    assert.equal(missing.statusCode, 400);
    assert.equal(errorCode(missing), 'ERR_EMPTY_GROUP_PASS');
    const group = await newGroup(t, t.appA, { guid, type: 'password', password: 'hunter2' });
    assert.equal(group.password, undefined);
    const row = await t.database.db.selectFrom('groups').select('password_hash').where('app_id', '=', t.appA.appId).where('guid', '=', guid).executeTakeFirstOrThrow();
    assert.match(row.password_hash!, /^scrypt\$/);
    assert.ok(!row.password_hash!.includes('hunter2'));
  });

  it('refuses an existing guid with ERR_GUID_ALREADY_EXISTS, whatever its case; another app may use it', async () => {
    const group = await newGroup(t, t.appA);
    const again = await t.call(t.appA, '/v3/groups', { method: 'POST', body: { guid: group.guid.toUpperCase(), name: 'x', type: 'public' } });
    assert.equal(again.statusCode, 400);
    assert.equal(errorCode(again), 'ERR_GUID_ALREADY_EXISTS');
    assert.equal((await t.call(t.appB, '/v3/groups', { method: 'POST', body: { guid: group.guid, name: 'x', type: 'public' } })).statusCode, 200);
  });

  it('gives one group when the same guid is created concurrently', async () => {
    const guid = uniqueId('race');
    const responses = await Promise.all(Array.from({ length: 6 }, () => t.call(t.appA, '/v3/groups', { method: 'POST', body: { guid, name: 'race', type: 'public' } })));
    assert.equal(responses.filter((r) => r.statusCode === 200).length, 1);
    assert.ok(responses.every((r) => r.statusCode === 200 || errorCode(r) === 'ERR_GUID_ALREADY_EXISTS'));
  });

  it('refuses an unknown owner or onBehalfOf with ERR_UID_NOT_FOUND and creates nothing', async () => {
    const guid = uniqueId();
    const other = await newUser(t, t.appB);
    for (const request of [{ body: { guid, name: 'x', type: 'public', owner: uniqueId() } }, { body: { guid, name: 'x', type: 'public' }, onBehalfOf: other.uid }]) {
      const response = await t.call(t.appA, '/v3/groups', { method: 'POST', ...request });
      assert.equal(errorCode(response), 'ERR_UID_NOT_FOUND');
    }
    assert.equal(errorCode(await t.call(t.appA, `/v3/groups/${guid}`)), 'ERR_GUID_NOT_FOUND');
  });

  const invalid: Array<[string, Record<string, unknown>, string]> = [
    ['no guid', { name: 'x', type: 'public' }, 'guid'],
    ['no name', { guid: 'g', type: 'public' }, 'name'],
    ['no type', { guid: 'g', name: 'x' }, 'type'],
    ['an unknown type', { guid: 'g', name: 'x', type: 'secret' }, 'type'],
    ['a guid with a space', { guid: 'a b', name: 'x', type: 'public' }, 'guid'],
    ['a guid of 101 characters', { guid: 'g'.repeat(101), name: 'x', type: 'public' }, 'guid'],
    ['a description of 256 characters', { guid: 'g', name: 'x', type: 'public', description: 'd'.repeat(256) }, 'description'],
    ['an icon that is not a URL', { guid: 'g', name: 'x', type: 'public', icon: 'icon' }, 'icon'],
    ['a member uid with @', { guid: 'g', name: 'x', type: 'public', members: { participants: ['a@b'] } }, 'members.participants.0'],
    [
      '26 inline members',
      { guid: 'g', name: 'x', type: 'public', members: { participants: Array.from({ length: 13 }, (_, i) => `p${i}`), admins: Array.from({ length: 13 }, (_, i) => `a${i}`) } },
      'members',
    ],
    ['metadata over 5 KB', { guid: 'g', name: 'x', type: 'public', metadata: { big: 'x'.repeat(6000) } }, 'metadata'],
  ];
  for (const [what, payload, field] of invalid) {
    it(`refuses ${what} with ERR_BAD_REQUEST, creating nothing`, async () => {
      const guid = uniqueId();
      const response = await t.call(t.appA, '/v3/groups', { method: 'POST', body: { ...payload, ...(payload.guid ? { guid: payload.guid === 'g' ? guid : payload.guid } : {}) } });
      assert.equal(response.statusCode, 400, response.body);
      const error = body(response).error;
      assert.equal(error.code, 'ERR_BAD_REQUEST');
      assert.ok(field in error.details, JSON.stringify(error.details));
      assert.equal(errorCode(await t.call(t.appA, `/v3/groups/${guid}`)), 'ERR_GUID_NOT_FOUND');
    });
  }
});

describe('list-groups', () => {
  let prefix: string;
  let viewer: Record<string, any>;
  before(async () => {
    prefix = uniqueId('lg');
    viewer = await newUser(t, t.appA);
    await newGroup(t, t.appA, { guid: `${prefix}-c`, name: `${prefix} Alpha`, type: 'public', tags: ['red'] }, viewer.uid);
    await newGroup(t, t.appA, { guid: `${prefix}-a`, name: `${prefix} Charlie`, type: 'private', tags: ['blue'] });
    await newGroup(t, t.appA, { guid: `${prefix}-b`, name: `${prefix} Bravo`, type: 'password', password: 'pw', tags: ['red', 'blue'] });
  });

  const list = async (query: Record<string, string>, onBehalfOf?: string, app = t.appA) => {
    const response = await t.call(app, '/v3/groups', { query, ...(onBehalfOf ? { onBehalfOf } : {}) });
    assert.equal(response.statusCode, 200, response.body);
    return body(response);
  };
  const guids = (result: any) => result.data.map((g: any) => g.guid);

  it('lists by name by default, with the vendor pagination', async () => {
    const result = await list({ searchKey: prefix });
    assert.deepEqual(guids(result), [`${prefix}-c`, `${prefix}-b`, `${prefix}-a`]);
    assert.deepEqual(result.meta.pagination, { total: 3, count: 3, per_page: 100, current_page: 1, total_pages: 1 });
    assert.equal(result.data[0].tags, undefined, 'tags only withTags');
    const paged = await list({ searchKey: prefix, perPage: '2', page: '2' });
    assert.deepEqual(guids(paged), [`${prefix}-a`]);
  });

  it('sorts by guid and createdAt, either way', async () => {
    assert.deepEqual(guids(await list({ searchKey: prefix, sortBy: 'guid' })), [`${prefix}-a`, `${prefix}-b`, `${prefix}-c`]);
    assert.deepEqual(guids(await list({ searchKey: prefix, sortBy: 'guid', sortOrder: 'desc' })), [`${prefix}-c`, `${prefix}-b`, `${prefix}-a`]);
    assert.deepEqual(guids(await list({ searchKey: prefix, sortBy: 'createdAt' })).length, 3);
  });

  it('filters by type(s), tags and searchIn', async () => {
    assert.deepEqual(guids(await list({ searchKey: prefix, type: 'private' })), [`${prefix}-a`]);
    assert.deepEqual(guids(await list({ searchKey: prefix, types: 'private,password', sortBy: 'guid' })), [`${prefix}-a`, `${prefix}-b`]);
    assert.deepEqual(guids(await list({ searchKey: prefix, tags: 'blue', sortBy: 'guid', withTags: 'true' })), [`${prefix}-a`, `${prefix}-b`]);
    assert.deepEqual(guids(await list({ searchKey: `${prefix}-a`, searchIn: 'guid' })), [`${prefix}-a`]);
    assert.deepEqual(guids(await list({ searchKey: `${prefix}-a`, searchIn: 'name' })), []);
  });

  it('shows the onBehalfOf user’s membership, and hasJoined keeps only their groups', async () => {
    const result = await list({ searchKey: prefix }, viewer.uid);
    const mine = result.data.find((g: any) => g.guid === `${prefix}-c`);
    assert.equal(mine.hasJoined, true);
    assert.equal(mine.scope, 'admin');
    assert.equal(result.data.find((g: any) => g.guid === `${prefix}-a`).hasJoined, false);
    assert.deepEqual(guids(await list({ searchKey: prefix, hasJoined: 'true' }, viewer.uid)), [`${prefix}-c`]);
  });

  it('lists groups changed after or before a time (affix, updatedAt)', async () => {
    const now = Math.floor(Date.now() / 1000);
    assert.equal((await list({ searchKey: prefix, affix: 'prepend', updatedAt: String(now + 60) })).data.length, 3);
    assert.equal((await list({ searchKey: prefix, affix: 'append', updatedAt: String(now + 60) })).data.length, 0);
  });

  it("shows none of another app's groups", async () => {
    const result = await list({ searchKey: prefix }, undefined, t.appB);
    assert.equal(result.data.length, 0);
  });

  for (const [what, query, onBehalfOf] of [
    ['an unknown type', { type: 'secret' }, undefined],
    ['an unknown sortBy', { sortBy: 'size' }, undefined],
    ['hasJoined without onBehalfOf', { hasJoined: 'true' }, undefined],
    ['affix without updatedAt', { affix: 'append' }, undefined],
    ['perPage 0', { perPage: '0' }, undefined],
  ] as const) {
    it(`refuses ${what} with ERR_BAD_REQUEST`, async () => {
      const response = await t.call(t.appA, '/v3/groups', { query: { ...query }, ...(onBehalfOf ? { onBehalfOf } : {}) });
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
    });
  }

  it('refuses an unknown onBehalfOf', async () => {
    assert.equal(errorCode(await t.call(t.appA, '/v3/groups', { onBehalfOf: uniqueId() })), 'ERR_UID_NOT_FOUND');
  });
});

describe('get-group', () => {
  it('gets a group by guid in any case, with the viewer’s membership', async () => {
    const owner = await newUser(t, t.appA);
    const outsider = await newUser(t, t.appA);
    const group = await newGroup(t, t.appA, { tags: ['t'] }, owner.uid);
    const plain = body(await t.call(t.appA, `/v3/groups/${group.guid.toUpperCase()}`)).data;
    assert.equal(plain.guid, group.guid);
    assert.deepEqual(plain.tags, ['t']);
    assert.equal(plain.hasJoined, undefined);
    const asOwner = body(await t.call(t.appA, `/v3/groups/${group.guid}`, { onBehalfOf: owner.uid })).data;
    assert.equal(asOwner.scope, 'admin');
    const asOutsider = body(await t.call(t.appA, `/v3/groups/${group.guid}`, { onBehalfOf: outsider.uid })).data;
    assert.equal(asOutsider.hasJoined, false);
    assert.equal(asOutsider.scope, undefined);
  });

  it("answers ERR_GUID_NOT_FOUND for an unknown guid and another app's group", async () => {
    const response = await t.call(t.appA, `/v3/groups/${uniqueId()}`);
    assert.equal(response.statusCode, 404);
    assert.equal(errorCode(response), 'ERR_GUID_NOT_FOUND');
    const group = await newGroup(t, t.appA);
    assert.equal(errorCode(await t.call(t.appB, `/v3/groups/${group.guid}`)), 'ERR_GUID_NOT_FOUND');
  });
});

describe('update-group', () => {
  it('updates fields, unsets others, and sets updatedAt', async () => {
    const group = await newGroup(t, t.appA, { icon: 'https://example.com/i.png', description: 'd', metadata: { k: 1 }, tags: ['x'] });
    const response = await t.call(t.appA, `/v3/groups/${group.guid}`, {
      method: 'PUT',
      body: { name: 'Renamed', tags: ['y'], unset: ['icon', 'description', 'metadata'] },
    });
    assert.equal(response.statusCode, 200, response.body);
    const updated = body(response).data;
    assert.equal(updated.name, 'Renamed');
    assert.deepEqual(updated.tags, ['y']);
    for (const field of ['icon', 'description', 'metadata']) assert.equal(updated[field], undefined, field);
    assert.equal(typeof updated.updatedAt, 'number');
  });

  it('changes the type: to password needs a password, and back clears it', async () => {
    const group = await newGroup(t, t.appA);
    assert.equal(errorCode(await t.call(t.appA, `/v3/groups/${group.guid}`, { method: 'PUT', body: { type: 'password' } })), 'ERR_EMPTY_GROUP_PASS');
    const protectedGroup = body(await t.call(t.appA, `/v3/groups/${group.guid}`, { method: 'PUT', body: { type: 'password', password: 'pw' } })).data;
    assert.equal(protectedGroup.type, 'password');
    await t.call(t.appA, `/v3/groups/${group.guid}`, { method: 'PUT', body: { type: 'public' } });
    const row = await t.database.db.selectFrom('groups').select('password_hash').where('app_id', '=', t.appA.appId).where('guid', '=', group.guid).executeTakeFirstOrThrow();
    assert.equal(row.password_hash, null);
  });

  it('hands the ownership on: only the owner may, and the new owner becomes an admin', async () => {
    const owner = await newUser(t, t.appA);
    const admin = await newUser(t, t.appA);
    const heir = await newUser(t, t.appA);
    const group = await newGroup(t, t.appA, { members: { admins: [admin.uid], participants: [heir.uid] } }, owner.uid);
    const byAdmin = await t.call(t.appA, `/v3/groups/${group.guid}`, { method: 'PUT', onBehalfOf: admin.uid, body: { owner: admin.uid } });
    assert.equal(byAdmin.statusCode, 403);
    assert.equal(errorCode(byAdmin), 'ERR_GROUP_NO_CLEARANCE');
    const byOwner = await t.call(t.appA, `/v3/groups/${group.guid}`, { method: 'PUT', onBehalfOf: owner.uid, body: { owner: heir.uid } });
    assert.equal(body(byOwner).data.owner, heir.uid);
    const scopes = Object.fromEntries((await members(group.guid)).map((m) => [m.uid, m.scope]));
    assert.equal(scopes[heir.uid], 'admin');
    assert.equal(errorCode(await t.call(t.appA, `/v3/groups/${group.guid}`, { method: 'PUT', body: { owner: uniqueId() } })), 'ERR_UID_NOT_FOUND');
  });

  it('lets only admins update with onBehalfOf', async () => {
    const owner = await newUser(t, t.appA);
    const moderator = await newUser(t, t.appA);
    const outsider = await newUser(t, t.appA);
    const group = await newGroup(t, t.appA, { members: { moderators: [moderator.uid] } }, owner.uid);
    const byModerator = await t.call(t.appA, `/v3/groups/${group.guid}`, { method: 'PUT', onBehalfOf: moderator.uid, body: { name: 'x' } });
    assert.equal(byModerator.statusCode, 403);
    assert.equal(errorCode(byModerator), 'ERR_GROUP_NO_ADMIN_SCOPE');
    assert.equal(errorCode(await t.call(t.appA, `/v3/groups/${group.guid}`, { method: 'PUT', onBehalfOf: outsider.uid, body: { name: 'x' } })), 'ERR_GROUP_NOT_JOINED');
    assert.equal((await t.call(t.appA, `/v3/groups/${group.guid}`, { method: 'PUT', onBehalfOf: owner.uid, body: { name: 'ok' } })).statusCode, 200);
  });

  it("answers ERR_GUID_NOT_FOUND for another app's group and refuses bad input", async () => {
    const group = await newGroup(t, t.appA);
    assert.equal(errorCode(await t.call(t.appB, `/v3/groups/${group.guid}`, { method: 'PUT', body: { name: 'x' } })), 'ERR_GUID_NOT_FOUND');
    for (const payload of [{ name: '' }, { type: 'secret' }, { unset: ['name'] }, { tags: 'x' }]) {
      assert.equal(errorCode(await t.call(t.appA, `/v3/groups/${group.guid}`, { method: 'PUT', body: payload })), 'ERR_BAD_REQUEST', JSON.stringify(payload));
    }
    assert.equal(body(await t.call(t.appA, `/v3/groups/${group.guid}`)).data.name, group.name);
  });
});

describe('delete-group', () => {
  it('deletes a group with its members and bans', async () => {
    const [a, b] = [await newUser(t, t.appA), await newUser(t, t.appA)];
    const group = await newGroup(t, t.appA, { members: { participants: [a.uid], usersToBan: [b.uid] } });
    const response = await t.call(t.appA, `/v3/groups/${group.guid}`, { method: 'DELETE' });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(body(response).data, { success: true, message: `Group with guid ${group.guid} has been deleted successfully.` });
    assert.equal(errorCode(await t.call(t.appA, `/v3/groups/${group.guid}`)), 'ERR_GUID_NOT_FOUND');
    for (const table of ['group_members', 'group_bans'] as const) {
      const rows = await t.database.db.selectFrom(table).selectAll().where('app_id', '=', t.appA.appId).where('guid', '=', group.guid).execute();
      assert.equal(rows.length, 0, table);
    }
    // The guid is free again.
    assert.equal((await t.call(t.appA, '/v3/groups', { method: 'POST', body: { guid: group.guid, name: 'again', type: 'public' } })).statusCode, 200);
  });

  it('lets only admins delete with onBehalfOf, and not another app', async () => {
    const owner = await newUser(t, t.appA);
    const participant = await newUser(t, t.appA);
    const group = await newGroup(t, t.appA, { members: { participants: [participant.uid] } }, owner.uid);
    assert.equal(errorCode(await t.call(t.appA, `/v3/groups/${group.guid}`, { method: 'DELETE', onBehalfOf: participant.uid })), 'ERR_GROUP_NO_ADMIN_SCOPE');
    assert.equal(errorCode(await t.call(t.appB, `/v3/groups/${group.guid}`, { method: 'DELETE' })), 'ERR_GUID_NOT_FOUND');
    assert.equal((await t.call(t.appA, `/v3/groups/${group.guid}`, { method: 'DELETE', onBehalfOf: owner.uid })).statusCode, 200);
    assert.equal(errorCode(await t.call(t.appA, `/v3/groups/${group.guid}`, { method: 'DELETE' })), 'ERR_GUID_NOT_FOUND');
  });
});

describe('users and their groups', () => {
  it('deleting a user permanently removes their memberships and leaves their groups ownerless', async () => {
    const owner = await newUser(t, t.appA);
    const member = await newUser(t, t.appA);
    const group = await newGroup(t, t.appA, { members: { participants: [member.uid] } }, owner.uid);
    await t.call(t.appA, `/v3/users/${owner.uid}`, { method: 'DELETE', body: { permanent: true } });
    const after = body(await t.call(t.appA, `/v3/groups/${group.guid}`)).data;
    assert.equal(after.owner, undefined);
    assert.equal(after.membersCount, 1);
    assert.deepEqual(
      (await members(group.guid)).map((m) => m.uid),
      [member.uid],
    );
  });

  it('keeps the memberships of a deactivated user', async () => {
    const member = await newUser(t, t.appA);
    const group = await newGroup(t, t.appA, { members: { participants: [member.uid] } });
    await t.call(t.appA, `/v3/users/${member.uid}`, { method: 'DELETE' });
    const listed = await members(group.guid);
    assert.equal(listed.length, 1);
    assert.equal(typeof (listed[0] as any).deactivatedAt, 'number');
  });
});
