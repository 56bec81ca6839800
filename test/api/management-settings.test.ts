/**
 * The management API's settings (docs/management-api.md): map-settings, list-settings and
 * unmap-settings, their errors, and isolation between apps.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SETTINGS_PER_APP } from '../../src/services/management.service.js';
import { body, createTestApp, errorCode, managementCall, newManagementCredential, type ManagementCredential, type TestApp } from '../helpers/app.js';
import { newApp } from '../helpers/tenant-data.js';

let t: TestApp;
let cred: ManagementCredential;
before(async () => {
  t = await createTestApp();
  cred = await newManagementCredential(t);
});
after(async () => {
  await t?.close();
});

const call = (path: string, options: Parameters<typeof managementCall>[3] = {}) => managementCall(t, cred, path, options);
const settings = (app: { appId: string }) => `/apps/${app.appId}/settings`;

describe('map-settings and list-settings', () => {
  it('maps settings with an answer per key, and lists them by key', async () => {
    const app = await newApp(t, 'Settings');
    const empty = await call(settings(app));
    assert.equal(empty.statusCode, 200, empty.body);
    assert.deepEqual(body(empty), { data: {} });
    const mapped = await call(settings(app), {
      method: 'POST',
      body: { settings: { 'core.conversations.updateOnGroupActions': true, 'core.threads.updateOnMessageActions': false } },
    });
    assert.equal(mapped.statusCode, 200, mapped.body);
    assert.deepEqual(body(mapped), {
      data: {
        'core.conversations.updateOnGroupActions': { success: true, message: 'Added setting(s) successfully.' },
        'core.threads.updateOnMessageActions': { success: true, message: 'Added setting(s) successfully.' },
      },
    });
    // Mapping a key again changes its value.
    await call(settings(app), { method: 'POST', body: { settings: { 'core.threads.updateOnMessageActions': true, 'core.conversations.updateOnReplies': true } } });
    const listed = await call(settings(app));
    assert.deepEqual(body(listed), {
      data: {
        'core.conversations.updateOnGroupActions': true,
        'core.conversations.updateOnReplies': true,
        'core.threads.updateOnMessageActions': true,
      },
    });
    assert.deepEqual(Object.keys(body(listed).data), Object.keys(body(listed).data).sort(), 'in key order');
  });

  for (const [what, payload, field] of [
    ['no settings', {}, 'settings'],
    ['an empty settings object', { settings: {} }, 'settings'],
    ['a value that is not a boolean', { settings: { 'core.x': 'true' } }, 'settings.core.x'],
    ['settings as a list', { settings: ['core.x'] }, 'settings'],
    ['a key with a space', { settings: { 'core x': true } }, 'settings.core x'],
    ['a key of 101 characters', { settings: { ['k'.repeat(101)]: true } }, `settings.${'k'.repeat(100)}`],
    ['more than 100 keys in one call', { settings: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, true])) }, 'settings'],
  ] as const) {
    it(`refuses ${what} with ERR_BAD_REQUEST naming ${field.slice(0, 20)}, mapping nothing`, async () => {
      const response = await call(settings(t.appA), { method: 'POST', body: payload });
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
      assert.ok(field in (body(response).error.details ?? {}), response.body);
      assert.deepEqual(body(await call(settings(t.appA))).data, {});
    });
  }

  it(`keeps to ${SETTINGS_PER_APP} settings per app (ERR_PLAN_QUOTA_RESTRICTION beyond), counting only new keys`, async () => {
    const app = await newApp(t, 'Settings quota');
    for (let batch = 0; batch < SETTINGS_PER_APP / 100; batch++) {
      const some = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`key.${batch}.${i}`, true]));
      assert.equal((await call(settings(app), { method: 'POST', body: { settings: some } })).statusCode, 200);
    }
    const more = await call(settings(app), { method: 'POST', body: { settings: { 'one.more': true } } });
    assert.equal(more.statusCode, 403);
    assert.equal(errorCode(more), 'ERR_PLAN_QUOTA_RESTRICTION');
    const again = await call(settings(app), { method: 'POST', body: { settings: { 'key.0.0': false } } });
    assert.equal(again.statusCode, 200, 'changing a mapped key adds none');
  });
});

describe('unmap-settings', () => {
  it('unmaps the named keys (a list or an object of them), and without a body all of them', async () => {
    const app = await newApp(t, 'Unmap');
    await call(settings(app), { method: 'POST', body: { settings: { a: true, b: false, c: true, d: true } } });
    const one = await call(settings(app), { method: 'DELETE', body: { settings: ['a', 'not-mapped'] } });
    assert.equal(one.statusCode, 200, one.body);
    assert.deepEqual(body(one), { data: { success: true, message: 'Removed 1 setting(s) successfully.' } });
    await call(settings(app), { method: 'DELETE', body: { settings: { b: true } } });
    assert.deepEqual(body(await call(settings(app))).data, { c: true, d: true });
    const all = await call(settings(app), { method: 'DELETE' });
    assert.equal(all.statusCode, 200, all.body);
    assert.equal(body(all).data.success, true);
    assert.deepEqual(body(await call(settings(app))).data, {});
  });

  it('refuses settings that are neither a list nor an object', async () => {
    const response = await call(settings(t.appA), { method: 'DELETE', body: { settings: 'a' } });
    assert.equal(response.statusCode, 400, response.body);
    assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
  });
});

describe('isolation between apps', () => {
  it("app B's path never sees, maps over or unmaps app A's settings", async () => {
    const a = await newApp(t, 'Settings A');
    const b = await newApp(t, 'Settings B');
    await call(settings(a), { method: 'POST', body: { settings: { shared: true, 'only.a': true } } });
    assert.deepEqual(body(await call(settings(b))).data, {});
    await call(settings(b), { method: 'POST', body: { settings: { shared: false } } });
    await call(settings(b), { method: 'DELETE', body: { settings: ['only.a'] } });
    await call(settings(b), { method: 'DELETE' });
    assert.deepEqual(body(await call(settings(a))).data, { 'only.a': true, shared: true });
  });

  it('answers ERR_APP_NOT_FOUND for the settings of an app that does not exist', async () => {
    for (const [method, payload] of [
      ['GET', undefined],
      ['POST', { settings: { x: true } }],
      ['DELETE', undefined],
    ] as const) {
      const response = await call('/apps/no-such-app/settings', { method, ...(payload ? { body: payload } : {}) });
      assert.equal(response.statusCode, 404, method);
      assert.equal(errorCode(response), 'ERR_APP_NOT_FOUND');
    }
  });
});
