/**
 * The management API's apps (docs/management-api.md): create-app makes a real Parley app,
 * list-apps lists the deployment's apps, delete-app deletes an app and all its data, and
 * fetch-multi-tenant-usage counts what an app did in a calendar month.
 */
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../../src/domain/context.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, errorCode, managementCall, newManagementCredential, uniqueId, type ManagementCredential, type TestApp } from '../helpers/app.js';
import { newGroup, newUids } from '../helpers/factories.js';
import { newMarker, readCatalogue, seedTenant, sharedIds, snapshot } from '../helpers/tenant-data.js';

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

/** create-app, and the app as the test helpers know apps. */
async function createApp(name = uniqueId('App')): Promise<{ data: any; app: CreatedApp }> {
  const response = await call('/apps', { method: 'POST', body: { name, region: 'us' } });
  assert.equal(response.statusCode, 200, response.body);
  const data = body(response).data;
  const keys = Object.values(data.apiKeys) as Array<{ apiKey: string; scope: string }>;
  const app: CreatedApp = {
    appId: data.id,
    name: data.name,
    region: data.region,
    createdAt: data.createdAt,
    apiKey: keys.find((k) => k.scope === 'fullAccess')!.apiKey,
    authKey: keys.find((k) => k.scope === 'authOnly')!.apiKey,
  };
  return { data, app };
}

describe('create-app', () => {
  it("answers the vendor's app object with both keys in plain text, once", async () => {
    const before = Math.floor(Date.now() / 1000);
    const { data, app } = await createApp('Acme support');
    assert.deepEqual(Object.keys(data), ['id', 'name', 'region', 'state', 'createdAt', 'appRegion', 'apiKeys']);
    assert.match(data.id, /^[0-9a-f]{16}$/);
    assert.equal(data.name, 'Acme support');
    assert.equal(data.region, 'us');
    assert.equal(data.state, 'active');
    assert.ok(data.createdAt >= before);
    assert.deepEqual(Object.keys(data.appRegion), ['id', 'name', 'description']);
    assert.equal(data.appRegion.id, 'us');
    assert.equal(data.appRegion.name, 'USA');
    assert.deepEqual(data.apiKeys, {
      [app.apiKey]: { apiKey: app.apiKey, name: 'Rest API Key', scope: 'fullAccess', createdBy: 'app_system' },
      [app.authKey]: { apiKey: app.authKey, name: 'Auth Key', scope: 'authOnly', createdBy: 'app_system' },
    });
    assert.match(app.apiKey, /^[0-9a-f]{40}$/);
  });

  it('makes a real Parley app: its keys work on the v3 API, with their scopes', async () => {
    const { app } = await createApp();
    const created = await t.call(app, '/v3/users', { method: 'POST', key: 'auth', body: { uid: 'first', name: 'First' } });
    assert.equal(created.statusCode, 200, created.body);
    const listed = await t.call(app, '/v3/users');
    assert.equal(listed.statusCode, 200, listed.body);
    assert.deepEqual(
      body(listed).data.map((u: { uid: string }) => u.uid),
      ['first'],
    );
    assert.equal((await t.call(app, '/v3/users', { key: 'auth' })).statusCode, 403, 'the auth key is authOnly');
    const roles = body(await t.call(app, '/v3/roles')).data.map((r: { role: string }) => r.role);
    assert.ok(roles.includes('default'), 'with its default role');
  });

  it('accepts the vendor’s version and skipSampleData, and adds no sample data', async () => {
    const response = await call('/apps', { method: 'POST', body: { name: 'Versioned', region: 'us', version: '3', skipSampleData: false } });
    assert.equal(response.statusCode, 200, response.body);
    const appId = body(response).data.id;
    const users = await t.database.db.selectFrom('users').select('uid').where('app_id', '=', appId).execute();
    assert.deepEqual(users, []);
  });

  for (const [what, payload, field] of [
    ['no name', { region: 'us' }, 'name'],
    ['no region', { name: 'x' }, 'region'],
    ['an empty name', { name: '', region: 'us' }, 'name'],
    ['a blank name', { name: '   ', region: 'us' }, 'name'],
    ['a name of 101 characters', { name: 'n'.repeat(101), region: 'us' }, 'name'],
    ['an unknown region', { name: 'x', region: 'mars' }, 'region'],
    ["another region than the deployment's", { name: 'x', region: 'eu' }, 'region'],
    ['a version other than 3', { name: 'x', region: 'us', version: '2' }, 'version'],
    ['skipSampleData as a string', { name: 'x', region: 'us', skipSampleData: 'yes' }, 'skipSampleData'],
  ] as const) {
    it(`refuses ${what} with ERR_BAD_REQUEST naming ${field}, creating nothing`, async () => {
      const count = async () =>
        Number(
          (
            await t.database.db
              .selectFrom('apps')
              .select((eb) => eb.fn.countAll<string>().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      const before = await count();
      const response = await call('/apps', { method: 'POST', body: payload });
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
      assert.ok(field in (body(response).error.details ?? {}), response.body);
      assert.equal(await count(), before);
    });
  }
});

describe('list-apps', () => {
  it('lists the apps oldest first with their keys masked, searches ids and names, and pages', async () => {
    const marker = newMarker();
    const made = [];
    for (const name of [`${marker} one`, `${marker} two`, `${marker.toUpperCase()} three`]) made.push((await createApp(name)).app);
    const search = await call('/apps', { query: { searchKey: marker } });
    assert.equal(search.statusCode, 200, search.body);
    const found = body(search);
    assert.deepEqual(
      found.data.map((a: { id: string }) => a.id),
      made.map((a) => a.appId),
    );
    assert.deepEqual(found.meta, { pagination: { total: 3, count: 3, per_page: 25, current_page: 1, total_pages: 1 } });
    const first = found.data[0];
    assert.equal(first.state, 'active');
    const keys = Object.values(first.apiKeys) as Array<{ apiKey: string; name: string; scope: string }>;
    assert.deepEqual(
      keys.map((k) => [k.name, k.scope]),
      [
        ['Rest API Key', 'fullAccess'],
        ['Auth Key', 'authOnly'],
      ],
    );
    for (const key of keys) assert.match(key.apiKey, /^[0-9a-f]{8}\*{28}[0-9a-f]{4}$/);
    assert.ok(!search.body.includes(made[0]!.apiKey), 'keys are listed masked');
    const byId = body(await call('/apps', { query: { searchKey: made[1]!.appId.toUpperCase() } }));
    assert.deepEqual(
      byId.data.map((a: { id: string }) => a.id),
      [made[1]!.appId],
    );
    const page = body(await call('/apps', { query: { searchKey: marker, perPage: '2', page: '2' } }));
    assert.deepEqual(
      page.data.map((a: { id: string }) => a.id),
      [made[2]!.appId],
    );
    assert.deepEqual(page.meta.pagination, { total: 3, count: 1, per_page: 2, current_page: 2, total_pages: 2 });
  });

  it('lists the apps made outside the management API too', async () => {
    const listed = body(await call('/apps', { query: { perPage: '1000' } }));
    const ids = listed.data.map((a: { id: string }) => a.id);
    assert.ok(ids.includes(t.appA.appId) && ids.includes(t.appB.appId));
  });

  it('refuses a perPage or page out of range', async () => {
    for (const query of [{ perPage: '0' }, { perPage: '1001' }, { page: '0' }, { page: 'x' }] as Array<Record<string, string>>) {
      const response = await call('/apps', { query });
      assert.equal(response.statusCode, 400, JSON.stringify(query));
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
    }
  });
});

describe('delete-app', () => {
  it('deletes the app and every row of it in every table, its keys at once, and nothing of other apps', async () => {
    const { app } = await createApp('Doomed');
    const tenant = await seedTenant(t, app, sharedIds(), newMarker());
    assert.equal((await call(`/apps/${app.appId}/webhooks`, { method: 'POST', body: { id: 'hook', name: 'hook', webhookURL: 'https://example.com/h' } })).statusCode, 200);
    assert.equal((await call(`/apps/${app.appId}/settings`, { method: 'POST', body: { settings: { 'core.x': true } } })).statusCode, 200);
    await t.services.apps.setRateLimits({ appId: app.appId, requestId: 't', log: silentLogger }, { core: 50 });
    // More rows than one batch holds (5,000 per statement).
    await sql`insert into users (app_id, uid, name) select ${app.appId}, 'bulk-' || n, 'Bulk ' || n from generate_series(1, 12001) as n`.execute(t.database.db);
    const catalogue = await readCatalogue(t);
    const seeded = await snapshot(t, catalogue, app.appId);
    for (const table of ['users', 'groups', 'messages', 'message_reactions', 'conversations', 'api_keys', 'webhooks', 'app_settings', 'roles', 'auth_tokens']) {
      assert.ok((seeded.get(table) ?? []).length > 0, `the app has ${table} rows before the delete`);
    }
    const others = await snapshot(t, catalogue, t.appB.appId);

    const response = await call(`/apps/${app.appId}`, { method: 'DELETE' });
    assert.equal(response.statusCode, 200, response.body);
    const data = body(response).data;
    assert.deepEqual(Object.keys(data), ['success', 'scheduledToDeleteAt']);
    assert.equal(data.success, true);
    assert.ok(Math.abs(data.scheduledToDeleteAt - Date.now() / 1000) < 60);

    const left = await snapshot(t, catalogue, app.appId);
    assert.deepEqual(
      [...left.entries()].filter(([, rows]) => rows.length > 0),
      [],
      'no row of the app is left in any table',
    );
    assert.deepEqual(await snapshot(t, catalogue, t.appB.appId), others, "another app's rows are untouched");
    const v3 = await t.call(app, '/v3/users');
    assert.equal(v3.statusCode, 401);
    assert.equal(errorCode(v3), 'AUTH_ERR_INVALID_APPID');
    assert.ok(tenant.secrets.length > 0);
    const listed = body(await call('/apps', { query: { searchKey: app.appId } }));
    assert.deepEqual(listed.data, []);
    const again = await call(`/apps/${app.appId}`, { method: 'DELETE' });
    assert.equal(again.statusCode, 404);
    assert.equal(errorCode(again), 'ERR_APP_NOT_FOUND');
  });

  it('finishes a delete that was interrupted; meanwhile the app is listed as deleting and its settings and webhooks are not found', async () => {
    const { app } = await createApp('Interrupted');
    await newUids(t, app, 3);
    // What a delete stopped after its first step leaves: the mark, and no keys.
    await t.database.db.insertInto('app_deletions').values({ app_id: app.appId }).execute();
    await t.database.db.deleteFrom('api_keys').where('app_id', '=', app.appId).execute();
    const listed = body(await call('/apps', { query: { searchKey: app.appId } }));
    assert.equal(listed.data[0].state, 'deleting');
    assert.deepEqual(listed.data[0].apiKeys, {});
    for (const path of [`/apps/${app.appId}/settings`, `/apps/${app.appId}/webhooks`]) {
      const response = await call(path);
      assert.equal(response.statusCode, 404, path);
      assert.equal(errorCode(response), 'ERR_APP_NOT_FOUND');
    }
    const response = await call(`/apps/${app.appId}`, { method: 'DELETE' });
    assert.equal(response.statusCode, 200, response.body);
    const users = await t.database.db.selectFrom('users').select('uid').where('app_id', '=', app.appId).execute();
    assert.deepEqual(users, []);
    assert.equal(await t.database.db.selectFrom('apps').select('id').where('id', '=', app.appId).executeTakeFirst(), undefined);
  });

  it('answers ERR_APP_NOT_FOUND for an app that does not exist', async () => {
    for (const appId of ['no-such-app', 'BAD_ID!', 'x'.repeat(100)]) {
      const response = await call(`/apps/${encodeURIComponent(appId)}`, { method: 'DELETE' });
      assert.equal(response.statusCode, 404, appId);
      assert.equal(errorCode(response), 'ERR_APP_NOT_FOUND');
    }
  });
});

describe('fetch-multi-tenant-usage', () => {
  it('counts the users and groups created and the messages sent, this month so far or last month', async () => {
    const { app } = await createApp('Usage');
    const [alice, bob, carol] = (await newUids(t, app, 3)) as [string, string, string];
    const group = await newGroup(t, app, { members: { participants: [bob, carol] } }, alice);
    for (const [receiver, receiverType] of [
      [bob, 'user'],
      [group.guid, 'group'],
      [carol, 'user'],
    ] as const) {
      const sent = await t.call(app, '/v3/messages', { method: 'POST', onBehalfOf: alice, body: { receiver, receiverType, category: 'message', type: 'text', data: { text: 'hi' } } });
      assert.equal(sent.statusCode, 200, sent.body);
    }
    const actions = await t.database.db.selectFrom('messages').select('id').where('app_id', '=', app.appId).where('category', '=', 'action').execute();
    assert.ok(actions.length > 0, 'the group made action messages, which are not counted');

    const now = await call(`/apps/${app.appId}/usage`, { method: 'POST', body: {} });
    assert.equal(now.statusCode, 200, now.body);
    const current = body(now).data;
    assert.equal(current.success, true);
    assert.deepEqual([current.usage.newUsers, current.usage.newGroups, current.usage.messages], [3, 1, 3]);
    const monthStart = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1));
    assert.equal(current.usage.from, monthStart.getTime() / 1000);
    assert.ok(current.usage.to >= current.usage.from);
    assert.match(current.message, /3 users and 1 groups created, 3 messages sent/);

    // One user, and one message, of last month.
    const lastMonth = new Date(Date.UTC(monthStart.getUTCFullYear(), monthStart.getUTCMonth() - 1, 15));
    await t.database.db.updateTable('users').set({ created_at: lastMonth }).where('app_id', '=', app.appId).where('uid', '=', carol).execute();
    await sql`update messages set sent_at = ${lastMonth} where app_id = ${app.appId} and receiver = ${carol}`.execute(t.database.db);
    const previous = body(await call(`/apps/${app.appId}/usage`, { method: 'POST', body: { usePreviousBillingCycle: true } })).data;
    assert.deepEqual([previous.usage.newUsers, previous.usage.newGroups, previous.usage.messages], [1, 0, 1]);
    assert.equal(previous.usage.from, Date.UTC(monthStart.getUTCFullYear(), monthStart.getUTCMonth() - 1, 1) / 1000);
    assert.equal(previous.usage.to, monthStart.getTime() / 1000);
    const after = body(await call(`/apps/${app.appId}/usage`, { method: 'POST', body: { usePreviousBillingCycle: false } })).data;
    assert.deepEqual([after.usage.newUsers, after.usage.newGroups, after.usage.messages], [2, 1, 2]);
    // Another app's figures are its own.
    const other = body(await call(`/apps/${t.appB.appId}/usage`, { method: 'POST', body: {} })).data;
    assert.deepEqual([other.usage.newUsers, other.usage.newGroups, other.usage.messages], [0, 0, 0]);
  });

  it('refuses a usePreviousBillingCycle that is not a boolean, and an unknown app', async () => {
    const bad = await call(`/apps/${t.appA.appId}/usage`, { method: 'POST', body: { usePreviousBillingCycle: 'yes' } });
    assert.equal(bad.statusCode, 400);
    assert.equal(errorCode(bad), 'ERR_BAD_REQUEST');
    const unknown = await call('/apps/no-such-app/usage', { method: 'POST', body: {} });
    assert.equal(unknown.statusCode, 404);
    assert.equal(errorCode(unknown), 'ERR_APP_NOT_FOUND');
  });
});
