import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { silentLogger } from '../../src/domain/context.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, errorCode, uniqueId, type TestApp } from '../helpers/app.js';
import { newGroup, newRole, newUser } from '../helpers/factories.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

/** A new app per test: an app holds at most 25 roles. */
let A: CreatedApp;
beforeEach(async () => {
  A = await t.services.apps.create({ appId: '', requestId: 'test', log: silentLogger }, { name: 'RBAC app' });
});

const rolePermissions = (role: string, app = A) => t.call(app, `/v3/roles/${role}/permissions`);
const setRole = (role: string, permissions: unknown, app = A) => t.call(app, `/v3/roles/${role}/permissions`, { method: 'PUT', body: { permissions } });
const permissionValue = async (role: string, id: string, app = A) => body(await rolePermissions(role, app)).data.find((p: any) => p.id === id).value;

describe('list-role-permissions', () => {
  it('lists the 28 role permissions with their defaults for the default role', async () => {
    const response = await rolePermissions('default');
    assert.equal(response.statusCode, 200, response.body);
    const result = body(response);
    assert.equal(result.data.length, 28);
    assert.deepEqual(result.meta, { pagination: { total: 28, count: 28, per_page: 100, current_page: 1, total_pages: 1 } });
    const createGroup = result.data.find((p: any) => p.id === 'createGroup');
    assert.deepEqual(
      { ...createGroup, title: undefined, description: undefined },
      { id: 'createGroup', type: 'role', title: undefined, description: undefined, dataType: 'string', availableValues: ['allow', 'deny'], defaultValue: 'allow', value: 'allow' },
    );
    const types = result.data.find((p: any) => p.id === 'sendMessage.allowedMessageTypes');
    assert.equal(types.dataType, 'stringArray');
    assert.deepEqual(types.availableValues, ['text', 'image', 'audio', 'video', 'file']);
    assert.deepEqual(types.defaultValue, []);
    assert.equal(result.data.find((p: any) => p.id === 'listUsers.mode').defaultValue, 'all');
    assert.equal(result.data.find((p: any) => p.id === 'listUsers.allowedRoles').dataType, 'rolesStringArray');
    assert.ok(
      result.data.every((p: any) => p.createdAt === undefined),
      'nothing set yet',
    );
  });

  it('shows the values set, with their times', async () => {
    const role = await newRole(t, A);
    await setRole(role.role, { createGroup: 'deny' });
    const createGroup = body(await rolePermissions(role.role.toUpperCase())).data.find((p: any) => p.id === 'createGroup');
    assert.equal(createGroup.value, 'deny');
    assert.equal(createGroup.defaultValue, 'allow');
    assert.equal(typeof createGroup.createdAt, 'number');
  });

  it('answers ERR_ROLE_NOT_FOUND for an unknown role and for another app’s role', async () => {
    const role = await newRole(t, A);
    for (const [app, id] of [
      [A, uniqueId()],
      [t.appB, role.role],
    ] as const) {
      const response = await rolePermissions(id, app);
      assert.equal(response.statusCode, 404);
      assert.equal(errorCode(response), 'ERR_ROLE_NOT_FOUND');
    }
  });

  it('keeps each app’s default role permissions apart', async () => {
    await setRole('default', { sendMessage: 'deny' });
    assert.equal(await permissionValue('default', 'sendMessage'), 'deny');
    assert.equal(await permissionValue('default', 'sendMessage', t.appB), 'allow');
  });
});

describe('set-role-permissions', () => {
  it('sets permissions, answering per key and with every permission set', async () => {
    const role = await newRole(t, A);
    await setRole(role.role, { editMessage: 'deny' });
    const response = await setRole(role.role, { createGroup: 'allow', 'listUsers.mode': 'friends', 'createGroup.allowedGroupTypes': ['public'] });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(body(response).data, {
      createGroup: { success: true, message: `Permission with id createGroup have been mapped successfully to role ${role.role}.` },
      'listUsers.mode': { success: true, message: `Permission with id listUsers.mode have been mapped successfully to role ${role.role}.` },
      'createGroup.allowedGroupTypes': {
        success: true,
        message: `Permission with id createGroup.allowedGroupTypes have been mapped successfully to role ${role.role}.`,
      },
      permissions: { createGroup: 'allow', 'createGroup.allowedGroupTypes': ['public'], editMessage: 'deny', 'listUsers.mode': 'friends' },
    });
  });

  it('replaces a value set before, normalises role ids and de-duplicates arrays', async () => {
    const role = await newRole(t, A);
    await setRole(role.role, { 'sendMessage.allowedMessageTypes': ['text'] });
    const response = await setRole(role.role, {
      'sendMessage.allowedMessageTypes': ['image', 'text', 'image'],
      'listUsers.allowedRoles': ['Default', 'MANAGER'],
      'sendMessage.allowedMimeTypes': ['image/png'],
    });
    assert.deepEqual(body(response).data.permissions, {
      'listUsers.allowedRoles': ['default', 'manager'],
      'sendMessage.allowedMessageTypes': ['image', 'text'],
      'sendMessage.allowedMimeTypes': ['image/png'],
    });
    const listed = body(await rolePermissions(role.role)).data.find((p: any) => p.id === 'sendMessage.allowedMessageTypes');
    assert.deepEqual(listed.value, ['image', 'text']);
    assert.equal(typeof listed.updatedAt, 'number');
  });

  const invalid: Array<[string, unknown, string]> = [
    ['an unknown permission', { createGroup: 'deny', flyToTheMoon: 'allow' }, 'permissions.flyToTheMoon'],
    ['a scope-only permission', { sendThreadedMessage: 'deny' }, 'permissions.sendThreadedMessage'],
    ['a value outside allow/deny', { createGroup: 'maybe' }, 'permissions.createGroup'],
    ['a mode outside all/friends', { 'listUsers.mode': 'some' }, 'permissions.listUsers.mode'],
    ['an array value that is not allowed', { 'createGroup.allowedGroupTypes': ['secret'] }, 'permissions.createGroup.allowedGroupTypes'],
    ['a number', { createGroup: 1 }, 'permissions.createGroup'],
    ['a bad role id', { 'listUsers.allowedRoles': ['a b'] }, 'permissions.listUsers.allowedRoles'],
    ['no permissions', {}, 'permissions'],
  ];
  for (const [what, permissions, field] of invalid) {
    it(`refuses ${what} with ERR_BAD_REQUEST, setting nothing`, async () => {
      const role = await newRole(t, A);
      const response = await setRole(role.role, permissions);
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
      assert.ok(field in body(response).error.details, JSON.stringify(body(response).error.details));
      assert.equal(await permissionValue(role.role, 'createGroup'), 'allow');
    });
  }

  it('refuses a body without permissions, or with permissions that are not an object', async () => {
    for (const payload of [{}, { permissions: ['createGroup'] }, { permissions: 'x' }]) {
      const response = await t.call(A, '/v3/roles/default/permissions', { method: 'PUT', body: payload });
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST', JSON.stringify(payload));
    }
  });

  it('answers ERR_ROLE_NOT_FOUND for an unknown role and for another app’s role, setting nothing', async () => {
    const role = await newRole(t, A);
    for (const [app, id] of [
      [A, uniqueId()],
      [t.appB, role.role],
    ] as const) {
      const response = await setRole(id, { createGroup: 'deny' }, app);
      assert.equal(response.statusCode, 404);
      assert.equal(errorCode(response), 'ERR_ROLE_NOT_FOUND');
    }
    assert.equal(await permissionValue(role.role, 'createGroup'), 'allow');
  });
});

describe('unset-role-permissions', () => {
  it('unsets a permission: its default applies again', async () => {
    const role = await newRole(t, A);
    await setRole(role.role, { createGroup: 'deny', editMessage: 'deny' });
    const response = await t.call(A, `/v3/roles/${role.role}/permissions/createGroup`, { method: 'DELETE' });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(body(response).data, { permissions: { editMessage: 'deny' } });
    assert.equal(await permissionValue(role.role, 'createGroup'), 'allow');
  });

  it('succeeds for a permission that is not set', async () => {
    const response = await t.call(A, '/v3/roles/default/permissions/listUsers.mode', { method: 'DELETE' });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(body(response).data, { permissions: {} });
  });

  it('refuses an unknown permission with ERR_BAD_REQUEST', async () => {
    const response = await t.call(A, '/v3/roles/default/permissions/flyToTheMoon', { method: 'DELETE' });
    assert.equal(response.statusCode, 400);
    assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
  });

  it('answers ERR_ROLE_NOT_FOUND for an unknown role and for another app’s role, unsetting nothing', async () => {
    const role = await newRole(t, A);
    await setRole(role.role, { createGroup: 'deny' });
    for (const [app, id] of [
      [A, uniqueId()],
      [t.appB, role.role],
    ] as const) {
      const response = await t.call(app, `/v3/roles/${id}/permissions/createGroup`, { method: 'DELETE' });
      assert.equal(errorCode(response), 'ERR_ROLE_NOT_FOUND');
    }
    assert.equal(await permissionValue(role.role, 'createGroup'), 'deny');
  });
});

const scopePermissions = (guid: string, scope: string, app = A) => t.call(app, `/v3/groups/${guid}/scopes/${scope}/permissions`);
const setScope = (guid: string, scope: string, permissions: unknown, app = A) => t.call(app, `/v3/groups/${guid}/scopes/${scope}/permissions`, { method: 'PUT', body: { permissions } });

describe('list-scope-permissions', () => {
  it('lists the 11 scope permissions with their defaults', async () => {
    const group = await newGroup(t, A);
    const response = await scopePermissions(group.guid, 'admin');
    assert.equal(response.statusCode, 200, response.body);
    const result = body(response);
    assert.equal(result.data.length, 11);
    assert.equal(result.meta.pagination.total, 11);
    assert.ok(result.data.every((p: any) => p.type === 'scope'));
    const callType = result.data.find((p: any) => p.id === 'initiateCall.allowedType');
    assert.deepEqual([callType.dataType, callType.availableValues, callType.defaultValue], ['stringArray', ['audio', 'video'], []]);
    assert.equal(result.data.find((p: any) => p.id === 'addReaction').value, 'allow');
  });

  it('keeps each scope and each group apart', async () => {
    const [one, two] = [await newGroup(t, A), await newGroup(t, A)];
    await setScope(one.guid, 'participant', { sendMessage: 'deny' });
    const value = async (guid: string, scope: string) => body(await scopePermissions(guid, scope)).data.find((p: any) => p.id === 'sendMessage').value;
    assert.equal(await value(one.guid, 'participant'), 'deny');
    assert.equal(await value(one.guid, 'moderator'), 'allow');
    assert.equal(await value(two.guid, 'participant'), 'allow');
  });

  it('answers ERR_GUID_NOT_FOUND for an unknown group and for another app’s group', async () => {
    const group = await newGroup(t, A);
    for (const [app, guid] of [
      [A, uniqueId()],
      [t.appB, group.guid],
    ] as const) {
      const response = await scopePermissions(guid, 'admin', app);
      assert.equal(response.statusCode, 404);
      assert.equal(errorCode(response), 'ERR_GUID_NOT_FOUND');
    }
  });

  it('refuses an unknown scope with ERR_BAD_REQUEST', async () => {
    const group = await newGroup(t, A);
    const response = await scopePermissions(group.guid, 'owner');
    assert.equal(response.statusCode, 400);
    assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
  });
});

describe('set-scope-permissions', () => {
  it('sets permissions, answering per key and with every permission set; array permissions take a single string', async () => {
    const group = await newGroup(t, A);
    const response = await setScope(group.guid.toUpperCase(), 'admin', { sendMessage: 'deny', 'listMembers.allowedScopes': 'participant' });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(body(response).data, {
      sendMessage: { success: true, message: `Permission with id sendMessage have been mapped successfully to scope admin on group ${group.guid}.` },
      'listMembers.allowedScopes': {
        success: true,
        message: `Permission with id listMembers.allowedScopes have been mapped successfully to scope admin on group ${group.guid}.`,
      },
      permissions: { 'listMembers.allowedScopes': 'participant', sendMessage: 'deny' },
    });
  });

  for (const [what, permissions] of [
    ['a role-only permission', { createGroup: 'deny' }],
    ['a mode where allow/deny is expected (the vendor example)', { sendMessage: 'deny', initiateCall: 'friends' }],
    ['an unknown scope in an array', { 'listMembers.allowedScopes': ['owner'] }],
    ['no permissions', {}],
  ] as const) {
    it(`refuses ${what} with ERR_BAD_REQUEST, setting nothing`, async () => {
      const group = await newGroup(t, A);
      const response = await setScope(group.guid, 'admin', permissions);
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
      assert.ok(body(await scopePermissions(group.guid, 'admin')).data.every((p: any) => p.createdAt === undefined));
    });
  }

  it('refuses an unknown scope with ERR_BAD_REQUEST', async () => {
    const group = await newGroup(t, A);
    assert.equal(errorCode(await setScope(group.guid, 'owner', { sendMessage: 'deny' })), 'ERR_BAD_REQUEST');
  });

  it('answers ERR_GUID_NOT_FOUND for an unknown group and for another app’s group', async () => {
    const group = await newGroup(t, A);
    for (const [app, guid] of [
      [A, uniqueId()],
      [t.appB, group.guid],
    ] as const) {
      assert.equal(errorCode(await setScope(guid, 'admin', { sendMessage: 'deny' }, app)), 'ERR_GUID_NOT_FOUND');
    }
    assert.ok(body(await scopePermissions(group.guid, 'admin')).data.every((p: any) => p.createdAt === undefined));
  });

  it('forgets a deleted group’s scope permissions', async () => {
    const group = await newGroup(t, A);
    await setScope(group.guid, 'admin', { sendMessage: 'deny' });
    await t.call(A, `/v3/groups/${group.guid}`, { method: 'DELETE' });
    await newGroup(t, A, { guid: group.guid });
    assert.equal(body(await scopePermissions(group.guid, 'admin')).data.find((p: any) => p.id === 'sendMessage').value, 'allow');
  });
});

describe('unset-scope-permissions', () => {
  it('unsets a permission, answering the permissions still set', async () => {
    const group = await newGroup(t, A);
    await setScope(group.guid, 'moderator', { sendMessage: 'deny', addReaction: 'deny' });
    const response = await t.call(A, `/v3/groups/${group.guid}/scopes/moderator/permissions/sendMessage`, { method: 'DELETE' });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(body(response).data, { permissions: { addReaction: 'deny' } });
  });

  it('refuses an unknown permission or scope with ERR_BAD_REQUEST', async () => {
    const group = await newGroup(t, A);
    for (const url of [`/v3/groups/${group.guid}/scopes/admin/permissions/createGroup`, `/v3/groups/${group.guid}/scopes/owner/permissions/sendMessage`]) {
      assert.equal(errorCode(await t.call(A, url, { method: 'DELETE' })), 'ERR_BAD_REQUEST', url);
    }
  });

  it('answers ERR_GUID_NOT_FOUND for an unknown group and for another app’s group, unsetting nothing', async () => {
    const group = await newGroup(t, A);
    await setScope(group.guid, 'admin', { sendMessage: 'deny' });
    for (const [app, guid] of [
      [A, uniqueId()],
      [t.appB, group.guid],
    ] as const) {
      const response = await t.call(app, `/v3/groups/${guid}/scopes/admin/permissions/sendMessage`, { method: 'DELETE' });
      assert.equal(errorCode(response), 'ERR_GUID_NOT_FOUND');
    }
    assert.equal(body(await scopePermissions(group.guid, 'admin')).data.find((p: any) => p.id === 'sendMessage').value, 'deny');
  });
});

describe('enforcement', () => {
  const createGroup = (type: string, onBehalfOf?: string) =>
    t.call(A, '/v3/groups', { method: 'POST', body: { guid: uniqueId('g'), name: 'g', type, ...(type === 'password' ? { password: 'pw' } : {}) }, ...(onBehalfOf ? { onBehalfOf } : {}) });

  it('createGroup deny refuses create-group for the role’s users with ERR_PERMISSION_DENIED, not for the app or other roles', async () => {
    const role = await newRole(t, A);
    const [held, other] = [await newUser(t, A, { role: role.role }), await newUser(t, A)];
    await setRole(role.role, { createGroup: 'deny' });
    const denied = await createGroup('public', held.uid);
    assert.equal(denied.statusCode, 403, denied.body);
    assert.equal(errorCode(denied), 'ERR_PERMISSION_DENIED');
    assert.equal((await createGroup('public', other.uid)).statusCode, 200);
    assert.equal((await createGroup('public')).statusCode, 200);
    await t.call(A, `/v3/roles/${role.role}/permissions/createGroup`, { method: 'DELETE' });
    assert.equal((await createGroup('public', held.uid)).statusCode, 200);
  });

  it('createGroup.allowedGroupTypes limits the types the role’s users create', async () => {
    const role = await newRole(t, A);
    const user = await newUser(t, A, { role: role.role });
    await setRole(role.role, { 'createGroup.allowedGroupTypes': ['public', 'password'] });
    assert.equal((await createGroup('public', user.uid)).statusCode, 200);
    assert.equal((await createGroup('password', user.uid)).statusCode, 200);
    assert.equal(errorCode(await createGroup('private', user.uid)), 'ERR_PERMISSION_DENIED');
  });

  it('joinGroup and joinGroup.allowedGroupTypes govern joining', async () => {
    const role = await newRole(t, A);
    const user = await newUser(t, A, { role: role.role });
    const [open, locked] = [await newGroup(t, A), await newGroup(t, A, { type: 'password', password: 'pw' })];
    const join = (guid: string, extra: Record<string, unknown> = {}) => t.call(A, `/v3/groups/${guid}/members`, { method: 'POST', onBehalfOf: user.uid, body: { participants: [user.uid], ...extra } });
    await setRole(role.role, { 'joinGroup.allowedGroupTypes': ['public'] });
    const refused = await join(locked.guid, { password: 'pw' });
    assert.equal(refused.statusCode, 403, refused.body);
    assert.equal(errorCode(refused), 'ERR_PERMISSION_DENIED');
    await setRole(role.role, { joinGroup: 'deny' });
    assert.equal(errorCode(await join(open.guid)), 'ERR_PERMISSION_DENIED');
    assert.equal(body(await t.call(A, `/v3/groups/${open.guid}`)).data.membersCount, 0);
    // The app may still add the user.
    const added = await t.call(A, `/v3/groups/${open.guid}/members`, { method: 'POST', body: { participants: [user.uid] } });
    assert.equal(body(added).data.participants[user.uid].success, true, added.body);
  });

  it('permissions of a role in another app do not apply', async () => {
    const role = await newRole(t, A);
    await newRole(t, t.appB, { role: role.role });
    await setRole(role.role, { createGroup: 'deny' });
    const user = await newUser(t, t.appB, { role: role.role });
    const response = await t.call(t.appB, '/v3/groups', { method: 'POST', onBehalfOf: user.uid, body: { guid: uniqueId(), name: 'g', type: 'public' } });
    assert.equal(response.statusCode, 200, response.body);
  });
});
