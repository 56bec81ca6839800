import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, type CallOptions, type TestApp } from './app.js';

/** A new auth token of `uid` (POST /v3/users/{uid}/auth_tokens with the app's key). */
export async function newToken(t: TestApp, app: CreatedApp, uid: string): Promise<string> {
  const response = await t.call(app, `/v3/users/${encodeURIComponent(uid)}/auth_tokens`, { method: 'POST', body: {} });
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data.authToken as string;
}

/** A request as a chat app's client sends it: the app's host, the `authToken` header, no apiKey. */
export function asClient(t: TestApp, app: CreatedApp, token: string, url: string, options: Omit<CallOptions, 'key'> = {}): Promise<LightMyRequestResponse> {
  return t.call(app, url, { ...options, key: 'none', headers: { authtoken: token, ...options.headers } });
}
