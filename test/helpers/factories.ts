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
