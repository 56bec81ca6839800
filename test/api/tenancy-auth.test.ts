import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../../src/domain/context.js';
import { body, createTestApp, errorCode, hostOf, TEST_DOMAIN, uniqueId, type TestApp } from '../helpers/app.js';
import { newUser } from '../helpers/factories.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

const raw = (headers: Record<string, string>, url = '/v3/users', method: 'GET' | 'POST' = 'GET', payload?: unknown) =>
  t.app.inject({ method, url, headers, ...(payload ? { payload: payload as object } : {}) });

async function userExists(uid: string): Promise<boolean> {
  const row = await t.database.db.selectFrom('users').select('uid').where('uid', '=', uid).executeTakeFirst();
  return row !== undefined;
}

describe('tenancy', () => {
  it('takes the app from the host, with or without a port and in any case', async () => {
    for (const host of [hostOf(t.appA), `${hostOf(t.appA)}:8443`, hostOf(t.appA).toUpperCase()]) {
      const response = await raw({ host, apikey: t.appA.apiKey });
      assert.equal(response.statusCode, 200, `${host}: ${response.body}`);
    }
  });

  it('takes the app from the appId header on any other host', async () => {
    for (const host of ['localhost:3000', '127.0.0.1', 'chat.example.com', `${t.appA.appId}.api-us.other-domain.com`]) {
      const response = await raw({ host, appid: t.appA.appId, apikey: t.appA.apiKey });
      assert.equal(response.statusCode, 200, `${host}: ${response.body}`);
    }
  });

  it('refuses a request that names no app with AUTH_ERR_EMPTY_APPID', async () => {
    const response = await raw({ host: 'localhost:3000', apikey: t.appA.apiKey });
    assert.equal(response.statusCode, 401);
    assert.equal(errorCode(response), 'AUTH_ERR_EMPTY_APPID');
  });

  it('refuses an unknown app with AUTH_ERR_INVALID_APPID, by host or header', async () => {
    const byHost = await raw({ host: `nosuchapp.api-us.${TEST_DOMAIN}`, apikey: t.appA.apiKey });
    assert.equal(byHost.statusCode, 401);
    assert.equal(errorCode(byHost), 'AUTH_ERR_INVALID_APPID');
    const byHeader = await raw({ host: 'localhost', appid: 'nosuchapp', apikey: t.appA.apiKey });
    assert.equal(errorCode(byHeader), 'AUTH_ERR_INVALID_APPID');
  });

  it('refuses an appId that cannot be an app id (NUL, a lone surrogate, huge) with AUTH_ERR_INVALID_APPID, not echoed', async () => {
    // A NUL reached the database's lookup and answered 500 (found by the fuzz test).
    for (const appid of ['a\u0000b', `${t.appA.appId}\u0000`, 'a\ud800', 'x'.repeat(100_000), 'ü漢字', 'a b', '-a', `${t.appA.appId}.x`]) {
      const response = await raw({ host: 'localhost', appid, apikey: t.appA.apiKey });
      assert.equal(response.statusCode, 401, `${JSON.stringify(appid.slice(0, 20))}: ${response.body.slice(0, 200)}`);
      assert.equal(errorCode(response), 'AUTH_ERR_INVALID_APPID');
      assert.ok(response.body.length < 500, 'the value is not echoed back');
    }
    const longHost = await raw({ host: `${'x'.repeat(70_000)}.api-us.${TEST_DOMAIN}`, apikey: t.appA.apiKey });
    assert.equal(errorCode(longHost), 'AUTH_ERR_INVALID_APPID');
    assert.ok(longHost.body.length < 500, 'the host is not echoed back');
  });

  it("refuses another region's host and touches nothing", async () => {
    const uid = uniqueId();
    for (const region of ['eu', 'in', 'xx']) {
      const response = await raw({ host: `${t.appA.appId}.api-${region}.${TEST_DOMAIN}`, apikey: t.appA.apiKey, 'content-type': 'application/json' }, '/v3/users', 'POST', {
        uid,
        name: 'Wrong region',
      });
      assert.equal(response.statusCode, 401, response.body);
      assert.equal(errorCode(response), 'AUTH_ERR_INVALID_APPID');
    }
    assert.equal(await userExists(uid), false);
  });

  it('refuses an app that belongs to another region', async () => {
    await t.database.db.insertInto('apps').values({ id: 'euapp', name: 'EU app', region: 'eu' }).execute();
    const response = await raw({ host: `euapp.api-us.${TEST_DOMAIN}`, apikey: 'x' });
    assert.equal(errorCode(response), 'AUTH_ERR_INVALID_APPID');
  });
});

describe('authentication', () => {
  it('refuses a missing apiKey with AUTH_ERR_EMPTY_APIKEY and touches nothing', async () => {
    const uid = uniqueId();
    const response = await t.call(t.appA, '/v3/users', { method: 'POST', key: 'none', body: { uid, name: 'x' } });
    assert.equal(response.statusCode, 401);
    assert.equal(errorCode(response), 'AUTH_ERR_EMPTY_APIKEY');
    assert.equal(await userExists(uid), false);
  });

  it('refuses an unknown apiKey with AUTH_ERR_APIKEY_NOT_FOUND', async () => {
    for (const literal of ['0'.repeat(40), 'not-a-key', t.appA.apiKey.toUpperCase()]) {
      const response = await t.call(t.appA, '/v3/users', { key: { literal } });
      assert.equal(response.statusCode, 401);
      assert.equal(errorCode(response), 'AUTH_ERR_APIKEY_NOT_FOUND');
    }
  });

  it("treats another app's key as unknown", async () => {
    const response = await t.call(t.appA, '/v3/users', { key: { literal: t.appB.apiKey } });
    assert.equal(errorCode(response), 'AUTH_ERR_APIKEY_NOT_FOUND');
    const viaHeader = await raw({ host: 'localhost', appid: t.appA.appId, apikey: t.appB.apiKey });
    assert.equal(errorCode(viaHeader), 'AUTH_ERR_APIKEY_NOT_FOUND');
  });

  it('lets an authOnly key create users and auth tokens only', async () => {
    const uid = uniqueId();
    assert.equal((await t.call(t.appA, '/v3/users', { method: 'POST', key: 'auth', body: { uid, name: 'x' } })).statusCode, 200);
    assert.equal((await t.call(t.appA, `/v3/users/${uid}/auth_tokens`, { method: 'POST', key: 'auth', body: {} })).statusCode, 200);
    const refused: Array<[string, string, unknown?]> = [
      ['GET', '/v3/users'],
      ['GET', `/v3/users/${uid}`],
      ['PUT', `/v3/users/${uid}`, { name: 'y' }],
      ['DELETE', `/v3/users/${uid}`],
      ['DELETE', '/v3/users', { uidsToDeactivate: [uid] }],
      ['PUT', '/v3/users', { uidsToActivate: [uid] }],
      ['GET', `/v3/users/${uid}/auth_tokens`],
      ['DELETE', `/v3/users/${uid}/auth_tokens`],
      ['GET', '/v3/apikeys'],
      ['POST', '/v3/apikeys', { name: 'x', scope: 'fullAccess' }],
    ];
    for (const [method, url, payload] of refused) {
      const response = await t.call(t.appA, url, { method: method as 'GET', key: 'auth', ...(payload ? { body: payload } : {}) });
      assert.equal(response.statusCode, 403, `${method} ${url}`);
      assert.equal(errorCode(response), 'AUTH_ERR_NO_ACCESS', `${method} ${url}`);
    }
    assert.equal(body(await t.call(t.appA, `/v3/users/${uid}`)).data.name, 'x', 'the refused update changed nothing');
  });

  it('checks the app before the key', async () => {
    const response = await raw({ host: `nosuchapp.api-us.${TEST_DOMAIN}` });
    assert.equal(errorCode(response), 'AUTH_ERR_INVALID_APPID');
  });
});

describe('onBehalfOf', () => {
  it('must name an existing, active user of the same app', async () => {
    const target = await newUser(t, t.appA);
    const actor = await newUser(t, t.appA);
    assert.equal((await t.call(t.appA, `/v3/users/${target.uid}`, { onBehalfOf: actor.uid })).statusCode, 200);
    const inB = await newUser(t, t.appB);
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${target.uid}`, { onBehalfOf: inB.uid })), 'ERR_UID_NOT_FOUND');
    await t.call(t.appA, `/v3/users/${actor.uid}`, { method: 'DELETE' });
    assert.equal(errorCode(await t.call(t.appA, `/v3/users/${target.uid}`, { onBehalfOf: actor.uid })), 'ERR_UID_NOT_FOUND');
  });
});

describe('apps service', () => {
  it('refuses an app id that cannot be a host name label, and a duplicate', async () => {
    const ctx = { appId: '', requestId: 't', log: silentLogger };
    await assert.rejects(t.services.apps.create(ctx, { name: 'x', appId: 'Bad_Id' }), /appId/);
    await assert.rejects(t.services.apps.create(ctx, { name: 'x', appId: '-dash' }), /appId/);
    await assert.rejects(t.services.apps.create(ctx, { name: 'x', appId: t.appA.appId }), /already exists/);
    await assert.rejects(t.services.apps.create(ctx, { name: ' ' }), /name/);
    const named = await t.services.apps.create(ctx, { name: 'Named', appId: 'Named-App' });
    assert.equal(named.appId, 'named-app');
  });
});
