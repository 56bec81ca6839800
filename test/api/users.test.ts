import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { body, createTestApp, errorCode, uniqueId, type TestApp } from '../helpers/app.js';
import { newRole, newUser } from '../helpers/factories.js';
import { DEEP_PAGE_OFFSET } from '../../src/repositories/users.repository.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
  // Users may only hold roles of their app.
  await newRole(t, t.appA, { role: 'moderator' });
  await newRole(t, t.appA, { role: 'admin' });
});
after(async () => {
  await t.close();
});

describe('create-user', () => {
  it('creates a user with every field, lower-casing the uid', async () => {
    const uid = uniqueId('Mixed-Case');
    const response = await t.call(t.appA, '/v3/users', {
      method: 'POST',
      body: {
        uid,
        name: 'Zoë 🎉 مرحبا',
        avatar: 'https://example.com/a.png',
        link: 'https://example.com/u',
        role: 'Moderator',
        statusMessage: 'Away',
        metadata: { z: 1, a: { nested: [1, 2] }, '@private': { email: 'x@example.com' } },
        tags: ['one', 'two', 'one'],
      },
    });
    assert.equal(response.statusCode, 200, response.body);
    const user = body(response).data;
    assert.equal(user.uid, uid.toLowerCase());
    assert.equal(user.name, 'Zoë 🎉 مرحبا');
    assert.equal(user.avatar, 'https://example.com/a.png');
    assert.equal(user.link, 'https://example.com/u');
    assert.equal(user.role, 'moderator');
    assert.equal(user.statusMessage, 'Away');
    assert.equal(user.status, 'offline');
    assert.deepEqual(user.metadata, { z: 1, a: { nested: [1, 2] } });
    assert.deepEqual(Object.keys(user.metadata), ['z', 'a'], 'metadata keeps its key order');
    assert.deepEqual(user.tags, ['one', 'two']);
    assert.equal(typeof user.createdAt, 'number');
    assert.ok(Math.abs(user.createdAt - Date.now() / 1000) < 60);
    assert.equal(user.authToken, undefined);
  });

  it('stores @private metadata without ever returning it', async () => {
    const user = await newUser(t, t.appA, { metadata: { '@private': { email: 'hidden@example.com' }, shown: true } });
    const row = await t.database.db.selectFrom('users').select('metadata').where('app_id', '=', t.appA.appId).where('uid', '=', user.uid).executeTakeFirstOrThrow();
    assert.deepEqual(row.metadata, { '@private': { email: 'hidden@example.com' }, shown: true });
    const fetched = body(await t.call(t.appA, `/v3/users/${user.uid}`)).data;
    assert.deepEqual(fetched.metadata, { shown: true });
  });

  it('returns an auth token withAuthToken, one that names the user', async () => {
    const uid = uniqueId();
    const response = await t.call(t.appA, '/v3/users', { method: 'POST', body: { uid, name: 'Tok', withAuthToken: true } });
    const user = body(response).data;
    assert.match(user.authToken, new RegExp(`^${uid}_\\d{10}[0-9a-f]{40}$`));
    const token = await t.call(t.appA, `/v3/users/${uid}/auth_tokens/${user.authToken}`);
    assert.equal(token.statusCode, 200, token.body);
  });

  it('accepts an authOnly key', async () => {
    const response = await t.call(t.appA, '/v3/users', { method: 'POST', key: 'auth', body: { uid: uniqueId(), name: 'Via auth key' } });
    assert.equal(response.statusCode, 200, response.body);
  });

  it('refuses an existing uid, whatever its case, with ERR_UID_ALREADY_EXISTS', async () => {
    const user = await newUser(t, t.appA);
    for (const uid of [user.uid, user.uid.toUpperCase()]) {
      const response = await t.call(t.appA, '/v3/users', { method: 'POST', body: { uid, name: 'Again' } });
      assert.equal(response.statusCode, 400);
      assert.equal(errorCode(response), 'ERR_UID_ALREADY_EXISTS');
    }
  });

  it('refuses a role the app does not have with ERR_ROLE_NOT_FOUND, creating nothing', async () => {
    const role = await newRole(t, t.appB);
    for (const unknown of [uniqueId('role'), role.role]) {
      const uid = uniqueId();
      const response = await t.call(t.appA, '/v3/users', { method: 'POST', body: { uid, name: 'x', role: unknown } });
      assert.equal(response.statusCode, 404, response.body);
      assert.equal(errorCode(response), 'ERR_ROLE_NOT_FOUND');
      assert.equal(errorCode(await t.call(t.appA, `/v3/users/${uid}`)), 'ERR_UID_NOT_FOUND');
    }
    assert.equal((await newUser(t, t.appA, { role: 'DEFAULT' })).role, 'default');
    assert.equal((await newUser(t, t.appB, { role: role.role.toUpperCase() })).role, role.role);
  });

  it('refuses a uid that is deactivated but still exists', async () => {
    const user = await newUser(t, t.appA);
    await t.call(t.appA, `/v3/users/${user.uid}`, { method: 'DELETE' });
    const response = await t.call(t.appA, '/v3/users', { method: 'POST', body: { uid: user.uid, name: 'Again' } });
    assert.equal(errorCode(response), 'ERR_UID_ALREADY_EXISTS');
  });

  it('gives one user when the same uid is created concurrently', async () => {
    const uid = uniqueId('race');
    const responses = await Promise.all(Array.from({ length: 8 }, () => t.call(t.appA, '/v3/users', { method: 'POST', body: { uid, name: 'Race' } })));
    assert.equal(responses.filter((r) => r.statusCode === 200).length, 1);
    assert.ok(responses.filter((r) => r.statusCode !== 200).every((r) => errorCode(r) === 'ERR_UID_ALREADY_EXISTS'));
  });

  it('lets another app use the same uid', async () => {
    const user = await newUser(t, t.appA);
    const response = await t.call(t.appB, '/v3/users', { method: 'POST', body: { uid: user.uid, name: 'Same uid, app B' } });
    assert.equal(response.statusCode, 200, response.body);
    const inA = body(await t.call(t.appA, `/v3/users/${user.uid}`)).data;
    assert.equal(inA.name, user.name, "app B's user does not touch app A's");
  });

  const invalid: Array<[string, unknown, string]> = [
    ['no uid', { name: 'x' }, 'uid'],
    ['no name', { uid: 'abc' }, 'name'],
    ['an empty name', { uid: 'abc', name: '' }, 'name'],
    ['a uid with a space', { uid: 'a b', name: 'x' }, 'uid'],
    ['a uid with @', { uid: 'a@b', name: 'x' }, 'uid'],
    ['a uid of 101 characters', { uid: 'a'.repeat(101), name: 'x' }, 'uid'],
    ['a name of 101 characters', { uid: 'abc', name: 'n'.repeat(101) }, 'name'],
    ['a number as name', { uid: 'abc', name: 5 }, 'name'],
    ['an avatar that is not a URL', { uid: 'abc', name: 'x', avatar: 'not a url' }, 'avatar'],
    ['26 tags', { uid: 'abc', name: 'x', tags: Array.from({ length: 26 }, (_, i) => `t${i}`) }, 'tags'],
    ['a tag of 101 characters', { uid: 'abc', name: 'x', tags: ['t'.repeat(101)] }, 'tags.0'],
    ['metadata that is a string', { uid: 'abc', name: 'x', metadata: 'x' }, 'metadata'],
    ['metadata over 5 KB', { uid: 'abc', name: 'x', metadata: { big: 'x'.repeat(6000) } }, 'metadata'],
    ['withAuthToken that is not a boolean', { uid: 'abc', name: 'x', withAuthToken: 'maybe' }, 'withAuthToken'],
  ];
  for (const [what, payload, field] of invalid) {
    it(`refuses ${what} with ERR_BAD_REQUEST naming the field`, async () => {
      const response = await t.call(t.appA, '/v3/users', { method: 'POST', body: payload });
      assert.equal(response.statusCode, 400, response.body);
      const error = body(response).error;
      assert.equal(error.code, 'ERR_BAD_REQUEST');
      assert.ok(field in error.details, `details ${JSON.stringify(error.details)} name ${field}`);
    });
  }

  it('refuses a body that is not an object, and malformed JSON', async () => {
    for (const payload of [[{ uid: 'a', name: 'b' }], '"text"']) {
      const response = await t.call(t.appA, '/v3/users', { method: 'POST', body: JSON.stringify(payload), headers: { 'content-type': 'application/json' } });
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
    }
    const response = await t.call(t.appA, '/v3/users', { method: 'POST', body: '{"uid": "a", ', headers: { 'content-type': 'application/json' } });
    assert.equal(response.statusCode, 400);
    assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
  });

  it('writes nothing when the body is refused', async () => {
    const uid = uniqueId();
    await t.call(t.appA, '/v3/users', { method: 'POST', body: { uid, name: 'x', metadata: { big: 'x'.repeat(6000) } } });
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${uid}`)), 'ERR_UID_NOT_FOUND');
  });
});

describe('list-users', () => {
  let tag: string;
  let prefix: string;
  const made: Record<string, any>[] = [];
  before(async () => {
    tag = uniqueId('tag');
    prefix = uniqueId('list');
    // Names sort differently from uids, to see the order.
    for (const [suffix, name, role] of [
      ['c', 'Alpha', 'default'],
      ['a', 'charlie', 'admin'],
      ['b', 'Bravo', 'default'],
    ] as const) {
      made.push(await newUser(t, t.appA, { uid: `${prefix}-${suffix}`, name: `${prefix} ${name}`, role, tags: [tag, suffix] }));
    }
  });

  const list = async (query: Record<string, string | string[]>, app = t.appA) => {
    const response = await t.call(app, '/v3/users', { query });
    assert.equal(response.statusCode, 200, response.body);
    return body(response);
  };

  it('lists users sorted by name, with the vendor pagination meta', async () => {
    const result = await list({ searchKey: prefix });
    assert.deepEqual(
      result.data.map((u: any) => u.uid),
      [`${prefix}-c`, `${prefix}-b`, `${prefix}-a`],
    );
    assert.deepEqual(result.meta, { pagination: { total: 3, count: 3, per_page: 100, current_page: 1, total_pages: 1 } });
    assert.equal(result.data[0].tags, undefined, 'tags only withTags');
  });

  it("with onBehalfOf, names that user's conversation with each listed user; refuses an unknown one", async () => {
    const viewer = made[1]!.uid as string;
    const seen = await t.call(t.appA, '/v3/users', { query: { searchKey: prefix }, onBehalfOf: viewer });
    assert.equal(seen.statusCode, 200, seen.body);
    const ids = Object.fromEntries(body(seen).data.map((u: any) => [u.uid, u.conversationId]));
    // <uidA>_user_<uidB>, the uids in byte order, whichever is the viewer.
    assert.deepEqual(ids, {
      [`${prefix}-a`]: `${prefix}-a_user_${prefix}-a`,
      [`${prefix}-b`]: `${prefix}-a_user_${prefix}-b`,
      [`${prefix}-c`]: `${prefix}-a_user_${prefix}-c`,
    });
    assert.ok(
      (await list({ searchKey: prefix })).data.every((u: any) => u.conversationId === undefined),
      'only with onBehalfOf',
    );
    assert.equal(errorCode(await t.call(t.appA, '/v3/users', { query: { searchKey: prefix }, onBehalfOf: uniqueId() })), 'ERR_UID_NOT_FOUND');
  });

  it('pages with perPage and page', async () => {
    const first = await list({ searchKey: prefix, perPage: '2', page: '1' });
    const second = await list({ searchKey: prefix, perPage: '2', page: '2' });
    assert.deepEqual(first.meta.pagination, { total: 3, count: 2, per_page: 2, current_page: 1, total_pages: 2 });
    assert.deepEqual(second.meta.pagination, { total: 3, count: 1, per_page: 2, current_page: 2, total_pages: 2 });
    const seen = [...first.data, ...second.data].map((u: any) => u.uid);
    assert.equal(new Set(seen).size, 3);
    const beyond = await list({ searchKey: prefix, perPage: '2', page: '3' });
    assert.equal(beyond.data.length, 0);
  });

  it('searches by prefix of name or uid, and searchIn narrows the fields', async () => {
    const byName = await list({ searchKey: `${prefix} br` });
    assert.deepEqual(
      byName.data.map((u: any) => u.uid),
      [`${prefix}-b`],
    );
    const byUid = await list({ searchKey: `${prefix}-a` });
    assert.deepEqual(
      byUid.data.map((u: any) => u.uid),
      [`${prefix}-a`],
    );
    assert.equal((await list({ searchKey: `${prefix}-a`, searchIn: 'name' })).data.length, 0);
    assert.equal((await list({ searchKey: `${prefix} br`, searchIn: 'uid' })).data.length, 0);
    assert.equal((await list({ searchKey: `${prefix} br`, searchIn: 'uid,name' })).data.length, 1);
    assert.equal((await list({ searchKey: '%' })).data.length, 0, 'LIKE wildcards match literally');
  });

  it('filters by role and roles', async () => {
    assert.deepEqual(
      (await list({ searchKey: prefix, role: 'admin' })).data.map((u: any) => u.uid),
      [`${prefix}-a`],
    );
    assert.equal((await list({ searchKey: prefix, roles: ['admin', 'default'] })).data.length, 3);
    assert.equal((await list({ searchKey: prefix, roles: 'admin,default' })).data.length, 3);
  });

  it('filters by tags (any of them) and shows tags withTags', async () => {
    const result = await list({ tags: `${'a'},${tag}`, withTags: 'true' });
    assert.equal(result.data.length, 3);
    assert.ok(result.data.every((u: any) => u.tags.includes(tag)));
    assert.deepEqual(
      (await list({ searchKey: prefix, tags: ['b', 'nope'] })).data.map((u: any) => u.uid),
      [`${prefix}-b`],
    );
  });

  it('filters by status', async () => {
    assert.equal((await list({ searchKey: prefix, status: 'offline' })).data.length, 3);
    assert.equal((await list({ searchKey: prefix, status: 'available' })).data.length, 0);
  });

  it('hides deactivated users unless asked', async () => {
    const gone = await newUser(t, t.appA, { uid: `${prefix}-z`, name: `${prefix} Zulu` });
    await t.call(t.appA, '/v3/users', { method: 'DELETE', body: { uidsToDeactivate: [gone.uid] } });
    assert.equal((await list({ searchKey: prefix })).data.length, 3);
    const all = await list({ searchKey: prefix, withDeactivated: 'true' });
    assert.equal(all.data.length, 4);
    const only = await list({ searchKey: prefix, onlyDeactivated: 'true' });
    assert.deepEqual(
      only.data.map((u: any) => u.uid),
      [gone.uid],
    );
    assert.equal(typeof only.data[0].deactivatedAt, 'number');
  });

  it("does not show another app's users", async () => {
    const result = await list({ searchKey: prefix }, t.appB);
    assert.equal(result.data.length, 0);
    assert.equal(result.meta.pagination.total, 0);
  });

  for (const [what, query] of [
    ['perPage 0', { perPage: '0' }],
    ['perPage 1001', { perPage: '1001' }],
    ['page 0', { page: '0' }],
    ['a page that is not a number', { page: 'two' }],
    ['an unknown status', { status: 'busy' }],
    ['an unknown searchIn field', { searchIn: 'email' }],
    ['withTags that is not a boolean', { withTags: 'perhaps' }],
  ] as const) {
    it(`refuses ${what} with ERR_BAD_REQUEST`, async () => {
      const response = await t.call(t.appA, '/v3/users', { query: { ...query } });
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
    });
  }

  it('refuses an authOnly key with AUTH_ERR_NO_ACCESS', async () => {
    const response = await t.call(t.appA, '/v3/users', { key: 'auth' });
    assert.equal(response.statusCode, 403);
    assert.equal(errorCode(response), 'AUTH_ERR_NO_ACCESS');
  });
});

describe('get-user', () => {
  it('gets a user by uid, in any case', async () => {
    const user = await newUser(t, t.appA, { tags: ['x'] });
    for (const uid of [user.uid, user.uid.toUpperCase()]) {
      const response = await t.call(t.appA, `/v3/users/${uid}`);
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual(body(response).data, user);
    }
  });

  it('answers ERR_UID_NOT_FOUND for an unknown or deactivated uid', async () => {
    const response = await t.call(t.appA, `/v3/users/${uniqueId()}`);
    assert.equal(response.statusCode, 404);
    assert.equal(errorCode(response), 'ERR_UID_NOT_FOUND');
    const user = await newUser(t, t.appA);
    await t.call(t.appA, `/v3/users/${user.uid}`, { method: 'DELETE' });
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${user.uid}`)), 'ERR_UID_NOT_FOUND');
  });

  it('accepts onBehalfOf naming a user of the app, and refuses an unknown one', async () => {
    const user = await newUser(t, t.appA);
    const viewer = await newUser(t, t.appA);
    assert.equal((await t.call(t.appA, `/v3/users/${user.uid}`, { onBehalfOf: viewer.uid.toUpperCase() })).statusCode, 200);
    const unknown = await t.call(t.appA, `/v3/users/${user.uid}`, { onBehalfOf: uniqueId() });
    assert.equal(unknown.statusCode, 404);
    assert.equal(errorCode(unknown), 'ERR_UID_NOT_FOUND');
    const otherApp = await newUser(t, t.appB);
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${user.uid}`, { onBehalfOf: otherApp.uid })), 'ERR_UID_NOT_FOUND');
  });

  it("does not find another app's user", async () => {
    const user = await newUser(t, t.appA);
    assert.equal(errorCode(await t.call(t.appB, `/v3/users/${user.uid}`)), 'ERR_UID_NOT_FOUND');
  });

  it('refuses an authOnly key', async () => {
    const user = await newUser(t, t.appA);
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${user.uid}`, { key: 'auth' })), 'AUTH_ERR_NO_ACCESS');
  });
});

describe('update-user', () => {
  it('updates fields and sets updatedAt', async () => {
    const user = await newUser(t, t.appA, { avatar: 'https://example.com/old.png' });
    const response = await t.call(t.appA, `/v3/users/${user.uid}`, {
      method: 'PUT',
      body: { name: 'New name', avatar: 'https://example.com/new.png', role: 'Admin', metadata: { k: 'v' }, tags: ['t'], statusMessage: 'Busy' },
    });
    assert.equal(response.statusCode, 200, response.body);
    const updated = body(response).data;
    assert.equal(updated.name, 'New name');
    assert.equal(updated.avatar, 'https://example.com/new.png');
    assert.equal(updated.role, 'admin');
    assert.deepEqual(updated.metadata, { k: 'v' });
    assert.deepEqual(updated.tags, ['t']);
    assert.equal(updated.statusMessage, 'Busy');
    assert.equal(typeof updated.updatedAt, 'number');
    assert.deepEqual(body(await t.call(t.appA, `/v3/users/${user.uid}`)).data, updated);
  });

  it('leaves fields that are not sent', async () => {
    const user = await newUser(t, t.appA, { avatar: 'https://example.com/a.png', metadata: { keep: 1 } });
    const updated = body(await t.call(t.appA, `/v3/users/${user.uid}`, { method: 'PUT', body: { name: 'Only name' } })).data;
    assert.equal(updated.avatar, 'https://example.com/a.png');
    assert.deepEqual(updated.metadata, { keep: 1 });
  });

  it('unsets avatar, link, metadata, statusMessage and tags', async () => {
    const user = await newUser(t, t.appA, {
      avatar: 'https://example.com/a.png',
      link: 'https://example.com/l',
      metadata: { a: 1 },
      statusMessage: 's',
      tags: ['x'],
    });
    const response = await t.call(t.appA, `/v3/users/${user.uid}`, {
      method: 'PUT',
      body: { unset: ['avatar', 'link', 'metadata', 'statusMessage', 'tags'] },
    });
    const updated = body(response).data;
    for (const field of ['avatar', 'link', 'metadata', 'statusMessage', 'tags']) assert.equal(updated[field], undefined, field);
  });

  it('refuses a role the app does not have with ERR_ROLE_NOT_FOUND, changing nothing', async () => {
    const user = await newUser(t, t.appA);
    const other = await newRole(t, t.appB);
    for (const unknown of [uniqueId('role'), other.role]) {
      const response = await t.call(t.appA, `/v3/users/${user.uid}`, { method: 'PUT', body: { name: 'changed', role: unknown } });
      assert.equal(response.statusCode, 404, response.body);
      assert.equal(errorCode(response), 'ERR_ROLE_NOT_FOUND');
    }
    assert.deepEqual(body(await t.call(t.appA, `/v3/users/${user.uid}`)).data, user);
    const role = await newRole(t, t.appA);
    assert.equal(body(await t.call(t.appA, `/v3/users/${user.uid}`, { method: 'PUT', body: { role: role.role } })).data.role, role.role);
  });

  it('answers ERR_UID_NOT_FOUND for unknown, deactivated and other apps’ users', async () => {
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${uniqueId()}`, { method: 'PUT', body: { name: 'x' } })), 'ERR_UID_NOT_FOUND');
    const user = await newUser(t, t.appA);
    assert.equal(errorCode(await t.call(t.appB, `/v3/users/${user.uid}`, { method: 'PUT', body: { name: 'x' } })), 'ERR_UID_NOT_FOUND');
    assert.equal(body(await t.call(t.appA, `/v3/users/${user.uid}`)).data.name, user.name);
    await t.call(t.appA, `/v3/users/${user.uid}`, { method: 'DELETE' });
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${user.uid}`, { method: 'PUT', body: { name: 'x' } })), 'ERR_UID_NOT_FOUND');
  });

  for (const [what, payload] of [
    ['an empty name', { name: '' }],
    ['an invalid link', { link: 'nope' }],
    ['an unknown unset field', { unset: ['name'] }],
    ['metadata over 5 KB', { metadata: { big: 'x'.repeat(6000) } }],
    ['tags that are not an array', { tags: 'x' }],
  ] as const) {
    it(`refuses ${what} with ERR_BAD_REQUEST and changes nothing`, async () => {
      const user = await newUser(t, t.appA);
      const response = await t.call(t.appA, `/v3/users/${user.uid}`, { method: 'PUT', body: payload });
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
      assert.deepEqual(body(await t.call(t.appA, `/v3/users/${user.uid}`)).data, user);
    });
  }
});

describe('delete-user', () => {
  it('deactivates by default: the user is gone from get and list but kept', async () => {
    const user = await newUser(t, t.appA);
    const response = await t.call(t.appA, `/v3/users/${user.uid}`, { method: 'DELETE' });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(body(response).data, { success: true, message: `User with ${user.uid} has been deleted successfully.` });
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${user.uid}`)), 'ERR_UID_NOT_FOUND');
    const listed = body(await t.call(t.appA, '/v3/users', { query: { searchKey: user.uid, onlyDeactivated: 'true' } })).data;
    assert.deepEqual(
      listed.map((u: any) => u.uid),
      [user.uid],
    );
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${user.uid}`, { method: 'DELETE' })), 'ERR_UID_NOT_FOUND');
  });

  it('accepts a JSON content type with an empty body', async () => {
    const user = await newUser(t, t.appA);
    const response = await t.call(t.appA, `/v3/users/${user.uid}`, { method: 'DELETE', headers: { 'content-type': 'application/json' } });
    assert.equal(response.statusCode, 200, response.body);
  });

  it('deletes permanently with permanent: true, with the auth tokens; the uid is free again', async () => {
    const user = await newUser(t, t.appA, { withAuthToken: true });
    const response = await t.call(t.appA, `/v3/users/${user.uid}`, { method: 'DELETE', body: { permanent: true } });
    assert.equal(response.statusCode, 200, response.body);
    const listed = body(await t.call(t.appA, '/v3/users', { query: { searchKey: user.uid, withDeactivated: 'true' } })).data;
    assert.equal(listed.length, 0);
    const tokens = await t.database.db.selectFrom('auth_tokens').selectAll().where('app_id', '=', t.appA.appId).where('uid', '=', user.uid).execute();
    assert.equal(tokens.length, 0);
    assert.equal((await t.call(t.appA, '/v3/users', { method: 'POST', body: { uid: user.uid, name: 'Reborn' } })).statusCode, 200);
  });

  it('deletes a deactivated user permanently', async () => {
    const user = await newUser(t, t.appA);
    await t.call(t.appA, `/v3/users/${user.uid}`, { method: 'DELETE' });
    const response = await t.call(t.appA, `/v3/users/${user.uid}`, { method: 'DELETE', body: { permanent: true } });
    assert.equal(response.statusCode, 200, response.body);
  });

  it('answers ERR_UID_NOT_FOUND for unknown uids and for another app', async () => {
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${uniqueId()}`, { method: 'DELETE', body: { permanent: true } })), 'ERR_UID_NOT_FOUND');
    const user = await newUser(t, t.appA);
    assert.equal(errorCode(await t.call(t.appB, `/v3/users/${user.uid}`, { method: 'DELETE', body: { permanent: true } })), 'ERR_UID_NOT_FOUND');
    assert.equal((await t.call(t.appA, `/v3/users/${user.uid}`)).statusCode, 200);
  });

  it('refuses a permanent flag that is not a boolean', async () => {
    const user = await newUser(t, t.appA);
    const response = await t.call(t.appA, `/v3/users/${user.uid}`, { method: 'DELETE', body: { permanent: 'yes' } });
    assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
    assert.equal((await t.call(t.appA, `/v3/users/${user.uid}`)).statusCode, 200);
  });
});

describe('deactivate-users and reactivate-users', () => {
  it('deactivates the given users and reports those that exist', async () => {
    const a = await newUser(t, t.appA);
    const b = await newUser(t, t.appA);
    const missing = uniqueId();
    const response = await t.call(t.appA, '/v3/users', { method: 'DELETE', body: { uidsToDeactivate: [a.uid.toUpperCase(), b.uid, missing] } });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(body(response).data.deactivatedUids.sort(), [a.uid, b.uid].sort());
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${a.uid}`)), 'ERR_UID_NOT_FOUND');
    // Again: still reported, as they are deactivated.
    const again = await t.call(t.appA, '/v3/users', { method: 'DELETE', body: { uidsToDeactivate: [a.uid] } });
    assert.deepEqual(body(again).data.deactivatedUids, [a.uid]);
  });

  it('reactivates them', async () => {
    const a = await newUser(t, t.appA);
    await t.call(t.appA, '/v3/users', { method: 'DELETE', body: { uidsToDeactivate: [a.uid] } });
    const response = await t.call(t.appA, '/v3/users', { method: 'PUT', body: { uidsToActivate: [a.uid, uniqueId()] } });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(body(response).data, { nonDeactivatedUids: [a.uid] });
    const user = body(await t.call(t.appA, `/v3/users/${a.uid}`)).data;
    assert.equal(user.deactivatedAt, undefined);
  });

  it("does not touch another app's users", async () => {
    const a = await newUser(t, t.appA);
    const response = await t.call(t.appB, '/v3/users', { method: 'DELETE', body: { uidsToDeactivate: [a.uid] } });
    assert.deepEqual(body(response).data.deactivatedUids, []);
    assert.equal((await t.call(t.appA, `/v3/users/${a.uid}`)).statusCode, 200);
  });

  for (const [method, payload] of [
    ['DELETE', {}],
    ['DELETE', { uidsToDeactivate: [] }],
    ['DELETE', { uidsToDeactivate: 'a' }],
    ['DELETE', { uidsToDeactivate: Array.from({ length: 1001 }, (_, i) => `u${i}`) }],
    ['PUT', {}],
    ['PUT', { uidsToActivate: [5] }],
  ] as const) {
    it(`refuses ${method} /users with ${JSON.stringify(payload).slice(0, 40)}`, async () => {
      const response = await t.call(t.appA, '/v3/users', { method, body: payload });
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
    });
  }
});

describe('list-users, deep pages (found in the name index before their rows are read)', () => {
  let deep: TestApp;
  const total = DEEP_PAGE_OFFSET + 400;
  // Case variants and repeated names: the order is lower(name), then uid.
  const names = ['Ann', 'ann', 'Anne', 'ANNA', 'Bob'];
  const users = Array.from({ length: total }, (_, i) => ({ uid: `deep-${i}`, name: `${names[i % names.length]} ${String(i % 300).padStart(3, '0')}` }));
  const gone = new Set(users.filter((_, i) => i % 41 === 0).map((user) => user.uid));
  const ordered = (list: typeof users) =>
    list
      .map((user) => ({ uid: user.uid, key: user.name.toLowerCase() }))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0))
      .map((user) => user.uid);
  const active = ordered(users.filter((user) => !gone.has(user.uid)));
  const everyone = ordered(users);

  const list = async (query: Record<string, string>) => {
    const response = await deep.call(deep.appA, '/v3/users', { query });
    assert.equal(response.statusCode, 200, response.body);
    return body(response);
  };

  before(async () => {
    deep = await createTestApp();
    const records = Object.fromEntries(users.map((user) => [user.uid, user]));
    const imported = await deep.call(deep.appA, '/v3.0/data_import/users', { method: 'POST', body: { users: records } });
    assert.equal(imported.statusCode, 200, imported.body);
    // Another app's users with the same names never show.
    const other = await deep.call(deep.appB, '/v3.0/data_import/users', { method: 'POST', body: { users: records } });
    assert.equal(other.statusCode, 200, other.body);
    const deactivated = await deep.call(deep.appA, '/v3/users', { method: 'DELETE', body: { uidsToDeactivate: [...gone] } });
    assert.equal(deactivated.statusCode, 200, deactivated.body);
  });
  after(async () => {
    await deep?.close();
  });

  it('pages through every active user once, in order, across the deep-page offset', async () => {
    const seen: string[] = [];
    for (let page = 1; ; page++) {
      const result = await list({ perPage: '100', page: String(page) });
      assert.equal(result.meta.pagination.total, active.length);
      if (result.data.length === 0) break;
      seen.push(...result.data.map((user: any) => user.uid));
    }
    assert.deepEqual(seen, active);
    const second = await list({ perPage: '1000', page: '2' });
    assert.deepEqual(
      second.data.map((user: any) => user.uid),
      active.slice(1000),
    );
    assert.equal(second.data[0].name, users.find((user) => user.uid === active[1000])!.name);
  });

  it('keeps the filters on a deep page: deactivated users, search, and the filters the index lacks', async () => {
    const withDeactivated = await list({ perPage: '500', page: '3', withDeactivated: 'true' });
    assert.deepEqual(
      withDeactivated.data.map((user: any) => user.uid),
      everyone.slice(1000, 1500),
    );
    assert.equal(withDeactivated.data.filter((user: any) => gone.has(user.uid)).length, everyone.slice(1000).filter((uid) => gone.has(uid)).length);
    assert.equal(withDeactivated.meta.pagination.total, total);
    const onlyDeactivated = await list({ perPage: '10', page: '101', onlyDeactivated: 'true' });
    assert.deepEqual(onlyDeactivated.data, []);
    assert.equal(onlyDeactivated.meta.pagination.total, gone.size);
    const searched = await list({ perPage: '500', page: '3', searchKey: 'deep-' });
    assert.deepEqual(
      searched.data.map((user: any) => user.uid),
      active.slice(1000),
    );
    const byName = await list({ perPage: '50', page: '21', searchKey: 'an' });
    const named = active.filter((uid) =>
      users
        .find((user) => user.uid === uid)!
        .name.toLowerCase()
        .startsWith('an'),
    );
    assert.ok(named.length > 1050);
    assert.deepEqual(
      byName.data.map((user: any) => user.uid),
      named.slice(1000, 1050),
    );
    const withStatus = await list({ perPage: '500', page: '3', status: 'offline' });
    assert.deepEqual(
      withStatus.data.map((user: any) => user.uid),
      active.slice(1000),
    );
  });
});
