import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../../src/domain/context.js';
import { body, createTestApp, errorCode, uniqueId, type TestApp } from '../helpers/app.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

const MASKED = /^[0-9a-f]{8}\*{28}[0-9a-f]{4}$/;

async function createKey(scope: 'fullAccess' | 'authOnly' = 'authOnly', app = t.appA) {
  const response = await t.call(app, '/v3/apikeys', { method: 'POST', body: { name: uniqueId('key'), scope } });
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data as { apiKey: string; name: string; scope: string; createdAt: number };
}

describe('create-apikey', () => {
  it('creates a key, shows it in plain text once, and the key works', async () => {
    const key = await createKey('fullAccess');
    assert.match(key.apiKey, /^[0-9a-f]{40}$/);
    assert.equal(key.scope, 'fullAccess');
    assert.equal(typeof key.createdAt, 'number');
    const call = await t.call(t.appA, '/v3/users', { key: { literal: key.apiKey } });
    assert.equal(call.statusCode, 200, call.body);
  });

  it('stores only a SHA-256 hash of the key', async () => {
    const key = await createKey();
    const rows = await t.database.db.selectFrom('api_keys').selectAll().where('app_id', '=', t.appA.appId).execute();
    assert.ok(rows.every((row) => row.key_hash !== key.apiKey && /^[0-9a-f]{64}$/.test(row.key_hash)));
    assert.ok(!JSON.stringify(rows).includes(key.apiKey));
  });

  it('takes only the name and the scope from the body: extra fields never choose the app, hash or hint', async () => {
    // A body's keyHash chose the stored hash (found by the fuzz test): only name and scope may reach the row.
    const chosen = 'f'.repeat(64);
    const response = await t.call(t.appA, '/v3/apikeys', {
      method: 'POST',
      body: { name: uniqueId('key'), scope: 'fullAccess', app_id: t.appB.appId, appId: t.appB.appId, keyHash: chosen, key_hash: chosen, keyHint: 'chosen', key_hint: 'chosen' },
    });
    assert.equal(response.statusCode, 200, response.body);
    const key = body(response).data.apiKey as string;
    assert.equal((await t.call(t.appA, '/v3/users', { key: { literal: key } })).statusCode, 200, 'the key works on its own app');
    assert.equal((await t.call(t.appB, '/v3/users', { key: { literal: key } })).statusCode, 401, 'and not on the other');
    const rows = await t.database.db.selectFrom('api_keys').select(['app_id', 'key_hint']).where('key_hash', '=', chosen).execute();
    assert.deepEqual(rows, [], 'no key with the hash the body chose');
  });

  it('refuses more than 25 keys per app with ERR_PLAN_QUOTA_RESTRICTION', async () => {
    const own = await t.services.apps.create({ appId: '', requestId: 't', log: silentLogger }, { name: 'Quota' });
    // The app starts with two keys.
    for (let i = 0; i < 23; i++) await createKey('authOnly', own);
    const response = await t.call(own, '/v3/apikeys', { method: 'POST', body: { name: 'one too many', scope: 'authOnly' } });
    assert.equal(response.statusCode, 403);
    assert.equal(errorCode(response), 'ERR_PLAN_QUOTA_RESTRICTION');
  });

  it('keeps to 25 keys per app when keys are created concurrently', async () => {
    const own = await t.services.apps.create({ appId: '', requestId: 't', log: silentLogger }, { name: 'Race' });
    const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => t.call(own, '/v3/apikeys', { method: 'POST', body: { name: `race ${i}`, scope: 'authOnly' } })));
    assert.equal(responses.filter((r) => r.statusCode === 200).length, 23, 'the app started with two keys');
    assert.ok(responses.every((r) => r.statusCode === 200 || errorCode(r) === 'ERR_PLAN_QUOTA_RESTRICTION'));
    const count = await t.database.db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('app_id', '=', own.appId)
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 25);
  });

  for (const [what, payload] of [
    ['no scope', { name: 'x' }],
    ['no name', { scope: 'authOnly' }],
    ['an unknown scope', { name: 'x', scope: 'root' }],
    ['a name of 101 characters', { name: 'n'.repeat(101), scope: 'authOnly' }],
  ] as const) {
    it(`refuses ${what} with ERR_BAD_REQUEST`, async () => {
      const response = await t.call(t.appA, '/v3/apikeys', { method: 'POST', body: payload });
      assert.equal(response.statusCode, 400);
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
    });
  }

  it('refuses an authOnly key', async () => {
    const response = await t.call(t.appA, '/v3/apikeys', { method: 'POST', key: 'auth', body: { name: 'x', scope: 'fullAccess' } });
    assert.equal(errorCode(response), 'AUTH_ERR_NO_ACCESS');
  });
});

describe('list-apikeys', () => {
  it('lists keys masked, filtered by scope and name', async () => {
    const key = await createKey('authOnly');
    const all = body(await t.call(t.appA, '/v3/apikeys'));
    assert.ok(all.data.length >= 3);
    assert.ok(
      all.data.every((k: any) => MASKED.test(k.apiKey)),
      'every key is masked',
    );
    assert.equal(all.meta.pagination.total, all.data.length);
    const mine = all.data.find((k: any) => k.name === key.name);
    assert.equal(mine.apiKey, `${key.apiKey.slice(0, 8)}${'*'.repeat(28)}${key.apiKey.slice(-4)}`);
    const full = body(await t.call(t.appA, '/v3/apikeys', { query: { scope: 'fullAccess' } })).data;
    assert.ok(full.length >= 1 && full.every((k: any) => k.scope === 'fullAccess'));
    const searched = body(await t.call(t.appA, '/v3/apikeys', { query: { searchKey: key.name.slice(4).toUpperCase() } })).data;
    assert.deepEqual(
      searched.map((k: any) => k.name),
      [key.name],
    );
  });

  it("shows none of another app's keys", async () => {
    const key = await createKey('authOnly', t.appA);
    const inB = body(await t.call(t.appB, '/v3/apikeys')).data;
    assert.ok(!inB.some((k: any) => k.name === key.name));
    assert.equal(inB.length, 2);
  });

  it('refuses an unknown scope filter', async () => {
    assert.equal(errorCode(await t.call(t.appA, '/v3/apikeys', { query: { scope: 'everything' } })), 'ERR_BAD_REQUEST');
  });
});

describe('get-apikey', () => {
  it('gets a key by its value or its masked form', async () => {
    const key = await createKey();
    for (const ref of [key.apiKey, `${key.apiKey.slice(0, 8)}${'*'.repeat(28)}${key.apiKey.slice(-4)}`]) {
      const response = await t.call(t.appA, `/v3/apikeys/${encodeURIComponent(ref)}`);
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(body(response).data.name, key.name);
      assert.match(body(response).data.apiKey, MASKED);
    }
  });

  it("answers ERR_APIKEY_NOT_FOUND for an unknown key and another app's key", async () => {
    const response = await t.call(t.appA, `/v3/apikeys/${'0'.repeat(40)}`);
    assert.equal(response.statusCode, 404);
    assert.equal(errorCode(response), 'ERR_APIKEY_NOT_FOUND');
    const other = await createKey('authOnly', t.appB);
    assert.equal(errorCode(await t.call(t.appA, `/v3/apikeys/${other.apiKey}`)), 'ERR_APIKEY_NOT_FOUND');
  });
});

describe('update-apikey', () => {
  it('renames a key and changes its scope', async () => {
    const key = await createKey('authOnly');
    const response = await t.call(t.appA, `/v3/apikeys/${key.apiKey}`, { method: 'PUT', body: { name: 'Renamed', scope: 'fullAccess' } });
    assert.equal(response.statusCode, 200, response.body);
    const updated = body(response).data;
    assert.equal(updated.name, 'Renamed');
    assert.equal(updated.scope, 'fullAccess');
    assert.equal(typeof updated.updatedAt, 'number');
    assert.equal((await t.call(t.appA, '/v3/apikeys', { key: { literal: key.apiKey } })).statusCode, 200, 'now fullAccess');
  });

  it('changes only the name and the scope: a body naming another app does not move the key there', async () => {
    // SECURITY: a body's app_id moved the key into another app, where it then authenticated
    // (found by the fuzz test).
    const key = await createKey('fullAccess');
    const before = await t.database.db.selectFrom('api_keys').selectAll().where('app_id', '=', t.appA.appId).where('name', '=', key.name).executeTakeFirstOrThrow();
    const response = await t.call(t.appA, `/v3/apikeys/${key.apiKey}`, {
      method: 'PUT',
      body: { name: 'renamed', app_id: t.appB.appId, key_hash: 'f'.repeat(64), key_hint: 'chosen', created_at: '2000-01-01T00:00:00Z', keyHash: 'f'.repeat(64) },
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(body(response).data.name, 'renamed');
    assert.equal((await t.call(t.appB, '/v3/users', { key: { literal: key.apiKey } })).statusCode, 401, 'the key does not work on the other app');
    assert.equal((await t.call(t.appA, '/v3/users', { key: { literal: key.apiKey } })).statusCode, 200, 'and still works on its own');
    const after = await t.database.db.selectFrom('api_keys').selectAll().where('key_hash', '=', before.key_hash).executeTakeFirstOrThrow();
    assert.deepEqual([after.app_id, after.key_hint, after.created_at], [before.app_id, before.key_hint, before.created_at]);
  });

  it('takes a scope change into account at once, though keys are cached for authentication', async () => {
    const key = await createKey('authOnly');
    const asKey = () => t.call(t.appA, '/v3/users', { key: { literal: key.apiKey } });
    assert.equal(errorCode(await asKey()), 'AUTH_ERR_NO_ACCESS');
    await t.call(t.appA, `/v3/apikeys/${key.apiKey}`, { method: 'PUT', body: { scope: 'fullAccess' } });
    assert.equal((await asKey()).statusCode, 200);
    await t.call(t.appA, `/v3/apikeys/${key.apiKey}`, { method: 'PUT', body: { scope: 'authOnly' } });
    assert.equal(errorCode(await asKey()), 'AUTH_ERR_NO_ACCESS');
  });

  it('refuses to change the key making the request with ERR_APIKEY_NO_SELF_ACTION', async () => {
    const response = await t.call(t.appA, `/v3/apikeys/${t.appA.apiKey}`, { method: 'PUT', body: { scope: 'authOnly' } });
    assert.equal(response.statusCode, 403);
    assert.equal(errorCode(response), 'ERR_APIKEY_NO_SELF_ACTION');
  });

  it("answers ERR_APIKEY_NOT_FOUND for another app's key, and changes nothing", async () => {
    const other = await createKey('authOnly', t.appB);
    assert.equal(errorCode(await t.call(t.appA, `/v3/apikeys/${other.apiKey}`, { method: 'PUT', body: { name: 'Hijack' } })), 'ERR_APIKEY_NOT_FOUND');
    assert.equal(body(await t.call(t.appB, `/v3/apikeys/${other.apiKey}`)).data.name, other.name);
  });

  it('refuses an unknown scope', async () => {
    const key = await createKey();
    assert.equal(errorCode(await t.call(t.appA, `/v3/apikeys/${key.apiKey}`, { method: 'PUT', body: { scope: 'root' } })), 'ERR_BAD_REQUEST');
  });
});

describe('delete-apikey', () => {
  it('deletes a key, which then no longer authenticates', async () => {
    const key = await createKey('fullAccess');
    const response = await t.call(t.appA, `/v3/apikeys/${key.apiKey}`, { method: 'DELETE' });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(body(response).data, { success: true, message: `The Api Key ${key.apiKey} has been deleted successfully.` });
    const after = await t.call(t.appA, '/v3/users', { key: { literal: key.apiKey } });
    assert.equal(after.statusCode, 401);
    assert.equal(errorCode(after), 'AUTH_ERR_APIKEY_NOT_FOUND');
    assert.equal(errorCode(await t.call(t.appA, `/v3/apikeys/${key.apiKey}`, { method: 'DELETE' })), 'ERR_APIKEY_NOT_FOUND');
  });

  it('deletes a key named by its masked form', async () => {
    const key = await createKey();
    const masked = `${key.apiKey.slice(0, 8)}${'*'.repeat(28)}${key.apiKey.slice(-4)}`;
    assert.equal((await t.call(t.appA, `/v3/apikeys/${encodeURIComponent(masked)}`, { method: 'DELETE' })).statusCode, 200);
    assert.equal(errorCode(await t.call(t.appA, `/v3/apikeys/${key.apiKey}`)), 'ERR_APIKEY_NOT_FOUND');
  });

  it('refuses to delete the key making the request', async () => {
    assert.equal(errorCode(await t.call(t.appA, `/v3/apikeys/${t.appA.apiKey}`, { method: 'DELETE' })), 'ERR_APIKEY_NO_SELF_ACTION');
    assert.equal((await t.call(t.appA, '/v3/users')).statusCode, 200);
  });

  it("cannot delete another app's key", async () => {
    const other = await createKey('authOnly', t.appB);
    assert.equal(errorCode(await t.call(t.appA, `/v3/apikeys/${other.apiKey}`, { method: 'DELETE' })), 'ERR_APIKEY_NOT_FOUND');
    assert.equal((await t.call(t.appB, `/v3/apikeys/${other.apiKey}`)).statusCode, 200);
  });
});
