import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { silentLogger } from '../../src/domain/context.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, errorCode, uniqueId, type TestApp } from '../helpers/app.js';
import { newRole, newUser } from '../helpers/factories.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

/** A new app: an app holds at most 25 roles, so each test starts with one of its own. */
const freshApp = () => t.services.apps.create({ appId: '', requestId: 'test', log: silentLogger }, { name: 'Fresh app' });
let A: CreatedApp;
beforeEach(async () => {
  A = await freshApp();
});

const listRoles = async (app = A, query: Record<string, string> = {}) => {
  const response = await t.call(app, '/v3/roles', { query });
  assert.equal(response.statusCode, 200, response.body);
  return body(response);
};

describe('create-role', () => {
  it('creates a role with every field, lower-casing its id', async () => {
    const id = uniqueId('Manager');
    const response = await t.call(A, '/v3/roles', {
      method: 'POST',
      body: {
        role: id,
        name: 'Manager 🎯',
        description: 'This role gives an update access',
        metadata: { b: 1, a: ['x'] },
        settings: { listUsers: 'all', sendMessagesTo: 'friendsOnly' },
      },
    });
    assert.equal(response.statusCode, 200, response.body);
    const role = body(response).data;
    assert.equal(role.role, id.toLowerCase());
    assert.equal(role.name, 'Manager 🎯');
    assert.equal(role.description, 'This role gives an update access');
    assert.deepEqual(Object.keys(role.metadata), ['b', 'a']);
    assert.deepEqual(role.settings, { listUsers: 'all', sendMessagesTo: 'friendsOnly' });
    assert.equal(typeof role.createdAt, 'number');
    assert.equal(role.updatedAt, undefined);
    assert.deepEqual(body(await t.call(A, `/v3/roles/${id}`)).data, role);
  });

  it('creates a role with only an id and a name', async () => {
    const role = await newRole(t, A, { name: 'Plain' });
    assert.deepEqual(Object.keys(role).sort(), ['createdAt', 'name', 'role']);
  });

  it('refuses an existing id, whatever its case, with ERR_ROLE_ALREADY_EXISTS; another app may use it', async () => {
    const role = await newRole(t, A);
    for (const id of [role.role, role.role.toUpperCase(), 'default', 'Default']) {
      const response = await t.call(A, '/v3/roles', { method: 'POST', body: { role: id, name: 'Again' } });
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(errorCode(response), 'ERR_ROLE_ALREADY_EXISTS');
    }
    assert.equal(body(await t.call(A, `/v3/roles/${role.role}`)).data.name, role.name);
    assert.equal((await newRole(t, t.appB, { role: role.role })).role, role.role);
  });

  it('gives one role when the same id is created concurrently', async () => {
    const id = uniqueId('race');
    const responses = await Promise.all(Array.from({ length: 6 }, () => t.call(A, '/v3/roles', { method: 'POST', body: { role: id, name: 'Race' } })));
    assert.equal(responses.filter((r) => r.statusCode === 200).length, 1);
    assert.ok(responses.every((r) => r.statusCode === 200 || errorCode(r) === 'ERR_ROLE_ALREADY_EXISTS'));
    assert.equal((await listRoles()).data.filter((r: any) => r.role === id).length, 1);
  });

  it('allows 25 roles per app, the default role included, also when created concurrently', async () => {
    const app = await freshApp();
    const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => t.call(app, '/v3/roles', { method: 'POST', body: { role: `r${i}`, name: `R${i}` } })));
    assert.equal(responses.filter((r) => r.statusCode === 200).length, 24);
    const refused = responses.filter((r) => r.statusCode !== 200);
    assert.ok(
      refused.every((r) => r.statusCode === 403 && errorCode(r) === 'ERR_PLAN_QUOTA_RESTRICTION'),
      refused[0]?.body,
    );
    assert.equal((await listRoles(app)).meta.pagination.total, 25);
    // Deleting one makes room again.
    const kept = body(await t.call(app, '/v3/roles')).data.find((r: any) => r.role !== 'default').role;
    assert.equal((await t.call(app, `/v3/roles/${kept}`, { method: 'DELETE' })).statusCode, 200);
    assert.equal((await newRole(t, app)).name.startsWith('Role '), true);
  });

  it('needs a fullAccess key', async () => {
    const response = await t.call(A, '/v3/roles', { method: 'POST', key: 'auth', body: { role: uniqueId(), name: 'x' } });
    assert.equal(errorCode(response), 'AUTH_ERR_NO_ACCESS');
  });

  const invalid: Array<[string, Record<string, unknown>, string]> = [
    ['no role', { name: 'x' }, 'role'],
    ['no name', { role: 'r' }, 'name'],
    ['an empty name', { role: 'r', name: '' }, 'name'],
    ['a role id with a space', { role: 'a b', name: 'x' }, 'role'],
    ['a role id of 101 characters', { role: 'r'.repeat(101), name: 'x' }, 'role'],
    ['a name of 101 characters', { role: 'r', name: 'n'.repeat(101) }, 'name'],
    ['a description of 256 characters', { role: 'r', name: 'x', description: 'd'.repeat(256) }, 'description'],
    ['metadata that is not an object', { role: 'r', name: 'x', metadata: 'x' }, 'metadata'],
    ['metadata over 5 KB', { role: 'r', name: 'x', metadata: { big: 'x'.repeat(6000) } }, 'metadata'],
    ['an unknown settings value', { role: 'r', name: 'x', settings: { listUsers: 'some' } }, 'settings.listUsers'],
    ['an unknown settings key', { role: 'r', name: 'x', settings: { other: 'all' } }, 'settings'],
  ];
  for (const [what, payload, field] of invalid) {
    it(`refuses ${what} with ERR_BAD_REQUEST, creating nothing`, async () => {
      const id = uniqueId('bad');
      const response = await t.call(A, '/v3/roles', { method: 'POST', body: { ...payload, ...(payload.role === 'r' ? { role: id } : {}) } });
      assert.equal(response.statusCode, 400, response.body);
      const error = body(response).error;
      assert.equal(error.code, 'ERR_BAD_REQUEST');
      assert.ok(
        Object.keys(error.details).some((key) => key.startsWith(field)),
        JSON.stringify(error.details),
      );
      assert.equal(errorCode(await t.call(A, `/v3/roles/${id}`)), 'ERR_ROLE_NOT_FOUND');
    });
  }
});

describe('list-roles', () => {
  it('lists the default role of a new app, which nobody created', async () => {
    const app = await freshApp();
    const result = await listRoles(app);
    assert.equal(result.data.length, 1);
    assert.equal(result.data[0].role, 'default');
    assert.equal(result.data[0].name, 'Default Role');
    assert.equal(typeof result.data[0].createdAt, 'number');
    assert.deepEqual(result.meta, { pagination: { total: 1, count: 1, per_page: 100, current_page: 1, total_pages: 1 } });
  });

  it('lists roles in id order and pages with perPage and page', async () => {
    const app = await freshApp();
    for (const id of ['b-role', 'a-role', 'c-role']) await newRole(t, app, { role: id });
    assert.deepEqual(
      (await listRoles(app)).data.map((r: any) => r.role),
      ['a-role', 'b-role', 'c-role', 'default'],
    );
    const second = await listRoles(app, { perPage: '3', page: '2' });
    assert.deepEqual(
      second.data.map((r: any) => r.role),
      ['default'],
    );
    assert.deepEqual(second.meta.pagination, { total: 4, count: 1, per_page: 3, current_page: 2, total_pages: 2 });
  });

  it('shows another app none of this app’s roles', async () => {
    const role = await newRole(t, A);
    assert.ok((await listRoles(A)).data.some((r: any) => r.role === role.role));
    assert.ok(!(await listRoles(t.appB)).data.some((r: any) => r.role === role.role));
  });

  it('refuses a perPage of 0 with ERR_BAD_REQUEST', async () => {
    assert.equal(errorCode(await t.call(A, '/v3/roles', { query: { perPage: '0' } })), 'ERR_BAD_REQUEST');
  });
});

describe('get-role', () => {
  it('returns a role, matching its id in any case, and the default role', async () => {
    const role = await newRole(t, A, { description: 'd' });
    assert.deepEqual(body(await t.call(A, `/v3/roles/${role.role.toUpperCase()}`)).data, role);
    assert.equal(body(await t.call(A, '/v3/roles/default')).data.role, 'default');
  });

  it('answers ERR_ROLE_NOT_FOUND for an unknown role and for another app’s role', async () => {
    const role = await newRole(t, A);
    for (const [app, id] of [
      [A, uniqueId('role')],
      [t.appB, role.role],
    ] as const) {
      const response = await t.call(app, `/v3/roles/${id}`);
      assert.equal(response.statusCode, 404);
      assert.equal(errorCode(response), 'ERR_ROLE_NOT_FOUND');
    }
  });
});

describe('update-role', () => {
  it('updates fields and sets updatedAt, leaving the fields not sent', async () => {
    const role = await newRole(t, A, { description: 'old', metadata: { keep: 1 } });
    const response = await t.call(A, `/v3/roles/${role.role}`, {
      method: 'PUT',
      body: { name: 'New name', settings: { sendMessagesTo: 'all' } },
    });
    assert.equal(response.statusCode, 200, response.body);
    const updated = body(response).data;
    assert.equal(updated.name, 'New name');
    assert.equal(updated.description, 'old');
    assert.deepEqual(updated.metadata, { keep: 1 });
    assert.deepEqual(updated.settings, { sendMessagesTo: 'all' });
    assert.equal(typeof updated.updatedAt, 'number');
    assert.deepEqual(body(await t.call(A, `/v3/roles/${role.role}`)).data, updated);
  });

  it('unsets settings, description and metadata', async () => {
    const role = await newRole(t, A, { description: 'd', metadata: { a: 1 }, settings: { listUsers: 'friendsOnly' } });
    const updated = body(await t.call(A, `/v3/roles/${role.role}`, { method: 'PUT', body: { unset: ['settings', 'description', 'metadata'] } })).data;
    for (const field of ['settings', 'description', 'metadata']) assert.equal(updated[field], undefined, field);
  });

  it('updates the default role', async () => {
    const app = await freshApp();
    const updated = body(await t.call(app, '/v3/roles/default', { method: 'PUT', body: { name: 'Everyone' } })).data;
    assert.equal(updated.name, 'Everyone');
  });

  it('answers ERR_ROLE_NOT_FOUND for an unknown role and for another app’s role, changing nothing', async () => {
    const role = await newRole(t, A);
    assert.equal(errorCode(await t.call(A, `/v3/roles/${uniqueId()}`, { method: 'PUT', body: { name: 'x' } })), 'ERR_ROLE_NOT_FOUND');
    assert.equal(errorCode(await t.call(t.appB, `/v3/roles/${role.role}`, { method: 'PUT', body: { name: 'x' } })), 'ERR_ROLE_NOT_FOUND');
    assert.deepEqual(body(await t.call(A, `/v3/roles/${role.role}`)).data, role);
  });

  for (const [what, payload] of [
    ['an empty name', { name: '' }],
    ['an unknown unset field', { unset: ['name'] }],
    ['a description of 256 characters', { description: 'd'.repeat(256) }],
    ['metadata over 5 KB', { metadata: { big: 'x'.repeat(6000) } }],
    ['an unknown settings value', { settings: { sendMessagesTo: 'nobody' } }],
  ] as const) {
    it(`refuses ${what} with ERR_BAD_REQUEST and changes nothing`, async () => {
      const role = await newRole(t, A);
      const response = await t.call(A, `/v3/roles/${role.role}`, { method: 'PUT', body: payload });
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
      assert.deepEqual(body(await t.call(A, `/v3/roles/${role.role}`)).data, role);
    });
  }
});

describe('delete-role', () => {
  it('deletes a role with its restricted features and permissions', async () => {
    const role = await newRole(t, A);
    await t.call(A, `/v3/roles/${role.role}/restrictedfeatures`, { method: 'POST', body: { featuresToRestrict: ['listUsers'] } });
    await t.call(A, `/v3/roles/${role.role}/permissions`, { method: 'PUT', body: { permissions: { createGroup: 'deny' } } });
    const response = await t.call(A, `/v3/roles/${role.role.toUpperCase()}`, { method: 'DELETE' });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(body(response).data, { success: true, message: `Role ${role.role} has been deleted successfully.` });
    assert.equal(errorCode(await t.call(A, `/v3/roles/${role.role}`)), 'ERR_ROLE_NOT_FOUND');
    await newRole(t, A, { role: role.role });
    assert.deepEqual(body(await t.call(A, `/v3/roles/${role.role}/restrictedfeatures`)).data, []);
    const permissions = body(await t.call(A, `/v3/roles/${role.role}/permissions`)).data;
    assert.equal(permissions.find((p: any) => p.id === 'createGroup').value, 'allow');
  });

  it('never deletes the default role: ERR_ROLE_DELETE_DENIED', async () => {
    for (const id of ['default', 'DEFAULT']) {
      const response = await t.call(A, `/v3/roles/${id}`, { method: 'DELETE' });
      assert.equal(response.statusCode, 403);
      assert.equal(errorCode(response), 'ERR_ROLE_DELETE_DENIED');
    }
    assert.equal(body(await t.call(A, '/v3/roles/default')).data.role, 'default');
  });

  it('refuses a role that users hold, deactivated ones included, with ERR_ROLE_DELETE_FAILED', async () => {
    const role = await newRole(t, A);
    const active = await newUser(t, A, { role: role.role });
    const deactivated = await newUser(t, A, { role: role.role });
    await t.call(A, `/v3/users/${deactivated.uid}`, { method: 'DELETE' });
    const response = await t.call(A, `/v3/roles/${role.role}`, { method: 'DELETE' });
    assert.equal(response.statusCode, 400, response.body);
    assert.equal(errorCode(response), 'ERR_ROLE_DELETE_FAILED');
    assert.match(body(response).error.message, /held by 2 user/);
    assert.equal(body(await t.call(A, `/v3/roles/${role.role}`)).data.role, role.role);
    // Once nobody holds it, it goes.
    await t.call(A, `/v3/users/${active.uid}`, { method: 'PUT', body: { role: 'default' } });
    await t.call(A, `/v3/users/${deactivated.uid}`, { method: 'DELETE', body: { permanent: true } });
    assert.equal((await t.call(A, `/v3/roles/${role.role}`, { method: 'DELETE' })).statusCode, 200);
  });

  it('answers ERR_ROLE_NOT_FOUND for an unknown role and for another app’s role, deleting nothing', async () => {
    const role = await newRole(t, A);
    assert.equal(errorCode(await t.call(A, `/v3/roles/${uniqueId()}`, { method: 'DELETE' })), 'ERR_ROLE_NOT_FOUND');
    const response = await t.call(t.appB, `/v3/roles/${role.role}`, { method: 'DELETE' });
    assert.equal(response.statusCode, 404);
    assert.equal(errorCode(response), 'ERR_ROLE_NOT_FOUND');
    assert.equal(body(await t.call(A, `/v3/roles/${role.role}`)).data.role, role.role);
  });
});

const features = (role: string, app = A) => t.call(app, `/v3/roles/${role}/restrictedfeatures`);

describe('restrict-features', () => {
  it('restricts features given with or without the u. prefix, answering per key', async () => {
    const role = await newRole(t, A);
    const response = await t.call(A, `/v3/roles/${role.role}/restrictedfeatures`, {
      method: 'POST',
      body: { featuresToRestrict: ['u.listUsers', 'deleteGroup', 'listUsers'] },
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(body(response).data, {
      'u.listUsers': { success: true, message: 'The feature u.listUsers has been restricted successfully.' },
      'u.deleteGroup': { success: true, message: 'The feature u.deleteGroup has been restricted successfully.' },
    });
    assert.deepEqual(
      body(await features(role.role)).data.map((f: any) => f.key),
      ['u.deleteGroup', 'u.listUsers'],
    );
  });

  it('restricts a restricted feature again without error, keeping its time', async () => {
    const role = await newRole(t, A);
    await t.call(A, `/v3/roles/${role.role}/restrictedfeatures`, { method: 'POST', body: { featuresToRestrict: ['createGroup'] } });
    const first = body(await features(role.role)).data;
    const again = await t.call(A, `/v3/roles/${role.role}/restrictedfeatures`, { method: 'POST', body: { featuresToRestrict: ['u.createGroup'] } });
    assert.equal(again.statusCode, 200);
    assert.deepEqual(body(await features(role.role)).data, first);
  });

  for (const [what, payload] of [
    ['an unknown feature', { featuresToRestrict: ['listUsers', 'flyToTheMoon'] }],
    ['an empty list', { featuresToRestrict: [] }],
    ['no list', {}],
    ['a list that is not an array', { featuresToRestrict: 'listUsers' }],
  ] as const) {
    it(`refuses ${what} with ERR_BAD_REQUEST, restricting nothing`, async () => {
      const role = await newRole(t, A);
      const response = await t.call(A, `/v3/roles/${role.role}/restrictedfeatures`, { method: 'POST', body: payload });
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
      assert.ok('featuresToRestrict' in body(response).error.details);
      assert.deepEqual(body(await features(role.role)).data, []);
    });
  }

  it('answers ERR_ROLE_NOT_FOUND for an unknown role and for another app’s role', async () => {
    const role = await newRole(t, A);
    for (const [app, id] of [
      [A, uniqueId()],
      [t.appB, role.role],
    ] as const) {
      const response = await t.call(app, `/v3/roles/${id}/restrictedfeatures`, { method: 'POST', body: { featuresToRestrict: ['listUsers'] } });
      assert.equal(errorCode(response), 'ERR_ROLE_NOT_FOUND');
    }
    assert.deepEqual(body(await features(role.role)).data, []);
  });
});

describe('get-restrictedfeatures', () => {
  it('lists the restricted features with the vendor’s fields and meta', async () => {
    const role = await newRole(t, A);
    assert.deepEqual(body(await features(role.role)).data, []);
    await t.call(A, `/v3/roles/${role.role}/restrictedfeatures`, { method: 'POST', body: { featuresToRestrict: ['deleteGroup', 'listUsers'] } });
    const result = body(await features(role.role));
    assert.deepEqual(
      result.data.map(({ createdAt, ...rest }: any) => (assert.equal(typeof createdAt, 'number'), rest)),
      [
        { title: 'Delete Group', description: 'Allows logged-in user to delete a group.', key: 'u.deleteGroup', path: '/v3/groups/{{guid}}' },
        { title: 'List Users', description: 'Allows logged-in user to fetch the user list.', key: 'u.listUsers', path: '/v3/users' },
      ],
    );
    assert.deepEqual(result.meta, { pagination: { total: 2, count: 2, per_page: 100, current_page: 1, total_pages: 1 } });
  });

  it('keeps each app’s and each role’s features apart', async () => {
    const role = await newRole(t, A);
    await newRole(t, t.appB, { role: role.role });
    await t.call(A, `/v3/roles/${role.role}/restrictedfeatures`, { method: 'POST', body: { featuresToRestrict: ['listUsers'] } });
    assert.deepEqual(body(await features(role.role, t.appB)).data, []);
    assert.deepEqual(body(await features('default')).data, []);
  });

  it('answers ERR_ROLE_NOT_FOUND for an unknown role and for another app’s role', async () => {
    const role = await newRole(t, A);
    assert.equal(errorCode(await features(uniqueId())), 'ERR_ROLE_NOT_FOUND');
    assert.equal(errorCode(await features(role.role, t.appB)), 'ERR_ROLE_NOT_FOUND');
  });
});

describe('allow-features', () => {
  const restrict = (role: string, list: string[]) => t.call(A, `/v3/roles/${role}/restrictedfeatures`, { method: 'POST', body: { featuresToRestrict: list } });

  it('allows the given features again', async () => {
    const role = await newRole(t, A);
    await restrict(role.role, ['listUsers', 'createGroup', 'joinGroup']);
    const response = await t.call(A, `/v3/roles/${role.role}/restrictedfeatures`, {
      method: 'DELETE',
      body: { featuresToAllow: ['u.listUsers', 'createGroup', 'ban'] },
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(body(response).data, { success: true, message: 'The feature has been allowed successfully.' });
    assert.deepEqual(
      body(await features(role.role)).data.map((f: any) => f.key),
      ['u.joinGroup'],
    );
  });

  it('allows every feature with allowAll', async () => {
    const role = await newRole(t, A);
    await restrict(role.role, ['listUsers', 'createGroup']);
    assert.equal((await t.call(A, `/v3/roles/${role.role}/restrictedfeatures`, { method: 'DELETE', body: { allowAll: true } })).statusCode, 200);
    assert.deepEqual(body(await features(role.role)).data, []);
  });

  for (const [what, payload] of [
    ['neither features nor allowAll', {}],
    ['allowAll false and no features', { allowAll: false }],
    ['an unknown feature', { featuresToAllow: ['listUsers', 'nope'] }],
    ['allowAll that is not a boolean', { allowAll: 'yes' }],
  ] as const) {
    it(`refuses ${what} with ERR_BAD_REQUEST, allowing nothing`, async () => {
      const role = await newRole(t, A);
      await restrict(role.role, ['listUsers']);
      const response = await t.call(A, `/v3/roles/${role.role}/restrictedfeatures`, { method: 'DELETE', body: payload });
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
      assert.deepEqual(
        body(await features(role.role)).data.map((f: any) => f.key),
        ['u.listUsers'],
      );
    });
  }

  it('answers ERR_ROLE_NOT_FOUND for an unknown role and for another app’s role, allowing nothing', async () => {
    const role = await newRole(t, A);
    await restrict(role.role, ['listUsers']);
    for (const [app, id] of [
      [A, uniqueId()],
      [t.appB, role.role],
    ] as const) {
      const response = await t.call(app, `/v3/roles/${id}/restrictedfeatures`, { method: 'DELETE', body: { allowAll: true } });
      assert.equal(errorCode(response), 'ERR_ROLE_NOT_FOUND');
    }
    assert.equal(body(await features(role.role)).data.length, 1);
  });
});
