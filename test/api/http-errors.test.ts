import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../src/app.js';
import { body, createTestApp, errorCode, hostOf, TEST_DOMAIN, TEST_REGION, type TestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

describe('transport errors', () => {
  it('answers an unknown route with a JSON ERR_API_NOT_FOUND', async () => {
    for (const url of ['/v3/nothing-here', '/nothing', '/v3/users/a/b/c/d']) {
      const response = await t.call(t.appA, url);
      assert.equal(response.statusCode, 404);
      assert.match(response.headers['content-type'] as string, /application\/json/);
      assert.equal(errorCode(response), 'ERR_API_NOT_FOUND');
    }
  });

  it('answers an overlong path value or a malformed URL with ERR_BAD_REQUEST in the vendor shape', async () => {
    for (const url of [`/v3/users/${'a'.repeat(600)}`, '/v3/users/%E0%A4%A']) {
      const response = await t.call(t.appA, url);
      assert.equal(response.statusCode, 400, url);
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
      assert.equal(typeof body(response).error.message, 'string');
    }
  });

  it('routes path values up to 512 characters: a conversation id of two long uids', async () => {
    const [a, b] = ['a'.repeat(100), 'b'.repeat(100)];
    for (const uid of [a, b]) assert.equal((await t.call(t.appA, '/v3/users', { method: 'POST', body: { uid, name: uid } })).statusCode, 200);
    const sent = await t.call(t.appA, '/v3/messages', { method: 'POST', onBehalfOf: a, body: { receiver: b, receiverType: 'user', data: { text: 'hi' } } });
    assert.equal(sent.statusCode, 200, sent.body);
    const conversationId = body(sent).data.conversationId as string;
    assert.equal(conversationId.length, 206);
    const response = await t.call(t.appA, `/v3/conversations/${conversationId}`, { onBehalfOf: a });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(body(response).data.conversationId, conversationId);
  });

  it('refuses a page number too large to page with, rather than failing', async () => {
    for (const page of ['99999999999999999999999', '1e309', '1000001']) {
      const response = await t.call(t.appA, '/v3/users', { query: { page } });
      assert.equal(response.statusCode, 400, page);
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
    }
  });

  it('answers a wrong method with ERR_API_NOT_FOUND', async () => {
    const response = await t.call(t.appA, '/v3/users', { method: 'PATCH', body: {} });
    assert.equal(response.statusCode, 404);
    assert.equal(errorCode(response), 'ERR_API_NOT_FOUND');
  });

  it('answers malformed JSON with ERR_BAD_REQUEST', async () => {
    const response = await t.call(t.appA, '/v3/users', { method: 'POST', body: '{"uid":', headers: { 'content-type': 'application/json' } });
    assert.equal(response.statusCode, 400);
    const error = body(response).error;
    assert.equal(error.code, 'ERR_BAD_REQUEST');
    assert.match(error.message, /JSON/);
  });

  it('refuses prototype poisoning', async () => {
    const response = await t.call(t.appA, '/v3/users', {
      method: 'POST',
      body: '{"uid":"proto","name":"x","__proto__":{"admin":true}}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(response.statusCode, 400);
    assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
  });

  it('answers an oversized body with 413 ERR_PAYLOAD_TOO_LARGE', async () => {
    const response = await t.call(t.appA, '/v3/users', {
      method: 'POST',
      body: JSON.stringify({ uid: 'big', name: 'x', metadata: { blob: 'x'.repeat(2 * 1024 * 1024) } }),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(response.statusCode, 413);
    assert.equal(errorCode(response), 'ERR_PAYLOAD_TOO_LARGE');
  });

  it('answers a body that is not JSON with 415 ERR_UNSUPPORTED_MEDIA_TYPE', async () => {
    const response = await t.call(t.appA, '/v3/users', { method: 'POST', body: 'uid=a&name=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(response.statusCode, 415);
    assert.equal(errorCode(response), 'ERR_UNSUPPORTED_MEDIA_TYPE');
  });

  it('refuses the NUL character in bodies, paths and queries, which PostgreSQL text cannot hold', async () => {
    const json = { 'content-type': 'application/json' };
    const cases = [
      { url: '/v3/users', method: 'POST' as const, body: '{"uid":"nul","name":"a\\u0000b"}', headers: json, field: 'name' },
      { url: '/v3/users', method: 'POST' as const, body: '{"uid":"nul","name":"x","metadata":{"k\\u0000":1}}', headers: json, field: 'metadata.k\u0000' },
      { url: '/v3/users/a%00b', method: 'GET' as const, field: 'uid' },
      { url: '/v3/users?searchKey=a%00', method: 'GET' as const, field: 'searchKey' },
    ];
    for (const { field, ...request } of cases) {
      const response = await t.call(t.appA, request.url, request);
      assert.equal(response.statusCode, 400, response.body);
      const error = body(response).error;
      assert.equal(error.code, 'ERR_BAD_REQUEST');
      assert.ok(field in error.details, JSON.stringify(error.details));
    }
    // A literal backslash-u sequence is text, not NUL.
    const literal = await t.call(t.appA, '/v3/users', { method: 'POST', body: '{"uid":"literal-nul","name":"a\\\\u0000b"}', headers: json });
    assert.equal(literal.statusCode, 200, literal.body);
    assert.equal(body(literal).data.name, 'a\\u0000b');
  });

  it('sends every error in the vendor shape with a request id', async () => {
    const response = await t.call(t.appA, '/v3/users/nobody');
    const error = body(response).error;
    assert.deepEqual(Object.keys(error).sort(), ['code', 'details', 'devMessage', 'message']);
    assert.match(response.headers['x-request-id'] as string, /^[0-9a-f-]{36}$/);
    assert.deepEqual(error.details, { requestId: response.headers['x-request-id'] });
  });

  it('answers /healthz', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/healthz' });
    assert.equal(response.statusCode, 200);
    assert.deepEqual(body(response), { status: 'ok' });
  });
});

describe('server errors', () => {
  it('answers a failure inside with ERR_EXCEPTION, hiding its cause', async () => {
    const testDb = await createTestDatabase();
    const { app, services } = await buildApp({
      config: { region: 'us', domain: 'parley.test', bodyLimit: 1024 * 1024 },
      database: testDb.database,
    });
    const created = await services.apps.create({ appId: '', requestId: 't', log: app.log }, { name: 'Doomed' });
    await testDb.drop(); // the database goes away under the server
    const response = await app.inject({ method: 'GET', url: '/v3/users', headers: { host: hostOf(created), apikey: created.apiKey } });
    await app.close();
    assert.equal(response.statusCode, 500);
    const error = body(response).error;
    assert.equal(error.code, 'ERR_EXCEPTION');
    assert.doesNotMatch(JSON.stringify(error), /destroy|closed|terminat|connection|pglite|postgres/i);
  });
});

describe('OpenAPI', () => {
  const OPERATIONS = [
    'create-user',
    'list-users',
    'get-user',
    'update-user',
    'delete-user',
    'deactivate-users',
    'reactivate-users',
    'create-apikey',
    'list-apikeys',
    'get-apikey',
    'update-apikey',
    'delete-apikey',
    'create-authtoken',
    'list-authtokens',
    'get-authtoken',
    'update-authtoken',
    'delete-authtoken',
    'flush-authtokens',
  ];

  it('serves an OpenAPI 3 document at /openapi.json with the vendor operation ids', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(response.statusCode, 200);
    const doc = body(response);
    assert.match(doc.openapi, /^3\./);
    const ids = Object.values(doc.paths as Record<string, Record<string, { operationId?: string }>>)
      .flatMap((ops) => Object.values(ops).map((op) => op.operationId))
      .filter(Boolean);
    for (const id of OPERATIONS) assert.ok(ids.includes(id), `${id} in /openapi.json`);
    assert.ok(doc.paths['/v3/users/{uid}'], 'path parameters in OpenAPI form');
    assert.deepEqual(doc.components.securitySchemes.apiKey, { type: 'apiKey', in: 'header', name: 'apikey', description: 'An API key of the app.' });
  });

  it('points /docs\'s "Try it out" at the host and port the page came from, the app id asked for', async () => {
    // Loaded from localhost on the quick start's port: that origin first (no cross-origin call
    // from the page), the app id as the appId header; then the app's own host on that port.
    for (const url of ['/openapi.json', '/docs/json']) {
      const doc = body(await t.app.inject({ method: 'GET', url, headers: { host: 'localhost:3000' } }));
      assert.deepEqual(
        doc.servers.map((server: { url: string }) => server.url),
        ['http://localhost:3000', `http://{appId}.api-${TEST_REGION}.${TEST_DOMAIN}:3000`],
        url,
      );
      assert.equal(doc.servers[1].variables.appId.default, 'your-app-id', url);
      assert.match(doc.servers[1].variables.appId.description, /parley apps list/);
      assert.deepEqual(doc.components.securitySchemes.appId, { type: 'apiKey', in: 'header', name: 'appId', description: doc.components.securitySchemes.appId.description });
      assert.deepEqual(doc.security, [{ apiKey: [], appId: [] }, { apiKey: [] }]);
      // The description is Markdown: a raw <appId> renders as an unknown HTML tag and vanishes.
      assert.doesNotMatch(doc.info.description, /<appId>|<region>|<domain>/, url);
      assert.match(doc.info.description, /&lt;appId&gt;\.api-/, url);
    }
    // Loaded from an app's own host: that host alone, its id filled in, the port kept.
    const own = body(await t.app.inject({ method: 'GET', url: '/docs/json', headers: { host: `${hostOf(t.appA)}:8443` } }));
    assert.deepEqual(
      own.servers.map((server: { url: string }) => server.url),
      [`http://{appId}.api-${TEST_REGION}.${TEST_DOMAIN}:8443`],
    );
    assert.equal(own.servers[0].variables.appId.default, t.appA.appId);
    // Behind a proxy on 443: no port; a Host that is not a plain name and port is not echoed.
    const proxied = body(await t.app.inject({ method: 'GET', url: '/openapi.json', headers: { host: 'chat.example.com' } }));
    assert.deepEqual(
      proxied.servers.map((server: { url: string }) => server.url),
      ['http://chat.example.com', `http://{appId}.api-${TEST_REGION}.${TEST_DOMAIN}`],
    );
    const odd = body(await t.app.inject({ method: 'GET', url: '/openapi.json', headers: { host: 'a"b<c>:3000' } }));
    assert.deepEqual(
      odd.servers.map((server: { url: string }) => server.url),
      [`http://{appId}.api-${TEST_REGION}.${TEST_DOMAIN}:3000`],
    );
  });

  it('serves the UI at /docs', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/docs' });
    assert.equal(response.statusCode, 200);
    assert.match(response.headers['content-type'] as string, /text\/html/);
    assert.match(response.body, /swagger-ui/i);
    const initializer = await t.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    assert.equal(initializer.statusCode, 200);
  });
});
