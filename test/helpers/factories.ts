import assert from 'node:assert/strict';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, uniqueId, type TestApp } from './app.js';

export interface UserFields {
  uid?: string;
  name?: string;
  [field: string]: unknown;
}

/** Creates a user through the API and returns it. */
export async function newUser(t: TestApp, app: CreatedApp, fields: UserFields = {}): Promise<Record<string, any>> {
  const uid = fields.uid ?? uniqueId('user');
  const response = await t.call(app, '/v3/users', { method: 'POST', body: { name: `User ${uid}`, ...fields, uid } });
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
}

/** Creates `n` users through the API and returns their uids. */
export async function newUids(t: TestApp, app: CreatedApp, n: number, fields: UserFields = {}): Promise<string[]> {
  return Promise.all(Array.from({ length: n }, () => newUser(t, app, fields).then((user) => user.uid as string)));
}

export interface GroupFields {
  guid?: string;
  name?: string;
  type?: 'public' | 'private' | 'password';
  [field: string]: unknown;
}

/** Creates a group through the API (as `onBehalfOf` when given) and returns it. */
export async function newGroup(t: TestApp, app: CreatedApp, fields: GroupFields = {}, onBehalfOf?: string): Promise<Record<string, any>> {
  const guid = fields.guid ?? uniqueId('group');
  const response = await t.call(app, '/v3/groups', {
    method: 'POST',
    body: { name: `Group ${guid}`, type: 'public', ...fields, guid },
    ...(onBehalfOf ? { onBehalfOf } : {}),
  });
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
}

export interface RoleFields {
  role?: string;
  name?: string;
  [field: string]: unknown;
}

/** Creates a role through the API and returns it. */
export async function newRole(t: TestApp, app: CreatedApp, fields: RoleFields = {}): Promise<Record<string, any>> {
  const role = fields.role ?? uniqueId('role');
  const response = await t.call(app, '/v3/roles', { method: 'POST', body: { name: `Role ${role}`, ...fields, role } });
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
}
