/**
 * The management API's credentials and bases (docs/management-api.md): every operation takes the
 * vendor's `key` and `secret` headers, a management credential of the deployment, checked before
 * anything else; the vendor's paths answer on apimgmt.<domain> only, `/mgmt/...` on any host; and
 * no input makes an operation answer 5xx.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../../src/domain/context.js';
import { sha256Hex } from '../../src/domain/secrets.js';
import { body, createTestApp, errorCode, hostOf, managementCall, newManagementCredential, TEST_DOMAIN, type ManagementCredential, type TestApp } from '../helpers/app.js';
import { readCatalogue, snapshot, snapshotDiff } from '../helpers/tenant-data.js';

let t: TestApp;
let cred: ManagementCredential;
let webhookId: string;
let operations: Array<{ method: string; path: string; operationId: string; body?: unknown }>;

/** A valid body per operation, so that a refusal can only come from the credential. */
const BODIES: Record<string, unknown> = {
  'create-app': { name: 'Refused app', region: 'us' },
  'fetch-multi-tenant-usage': {},
  'map-settings': { settings: { refused: true } },
  'create-webhook': { id: 'refused-hook', name: 'x', webhookURL: 'https://example.com/x' },
  'update-webhook': { name: 'refused' },
  'add-triggers': { triggerIds: ['message_sent'] },
  'remove-triggers': { triggerIds: ['message_sent'] },
  'redeliver-failed-webhook-deliveries': { since: 0 },
  'rotate-webhook-signing-secret': {},
};

before(async () => {
  t = await createTestApp();
  cred = await newManagementCredential(t);
  const created = await managementCall(t, cred, `/apps/${t.appA.appId}/webhooks`, { method: 'POST', body: { id: 'auth-hook', name: 'x', webhookURL: 'https://example.com/x' } });
  assert.equal(created.statusCode, 200, created.body);
  webhookId = body(created).data.id;
  const doc = body(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
  operations = Object.entries<Record<string, any>>(doc.paths)
    .filter(([path]) => path.startsWith('/apps'))
    .flatMap(([path, methods]) =>
      Object.entries<any>(methods).map(([method, op]) => ({
        method: method.toUpperCase(),
        path: path.replace('{appId}', t.appA.appId).replace('{webhookId}', webhookId).replace('{deliveryId}', '1'),
        operationId: op.operationId as string,
        body: BODIES[op.operationId as string],
      })),
    );
});
after(async () => {
  await t?.close();
});

const send = (credential: ManagementCredential | false, op: (typeof operations)[number], headers: Record<string, string> = {}) =>
  managementCall(t, credential, op.path, { method: op.method as 'GET', headers, ...(op.body !== undefined ? { body: op.body } : {}) });

describe('the management operations', () => {
  it("are the vendor's App, Settings and Webhooks operations and Parley's webhook extensions, documented at its paths with the key and secret headers", () => {
    assert.deepEqual(operations.map((op) => op.operationId).sort(), [
      'add-triggers',
      'create-app',
      'create-webhook',
      'delete-app',
      'delete-webhook',
      'fetch-multi-tenant-usage',
      'get-webhook',
      'list-apps',
      'list-settings',
      'list-triggers',
      'list-webhook-deliveries',
      'list-webhooks',
      'map-settings',
      'redeliver-failed-webhook-deliveries',
      'redeliver-webhook-delivery',
      'remove-triggers',
      'rotate-webhook-signing-secret',
      'unmap-settings',
      'update-webhook',
    ]);
  });

  it('are documented once, at the vendor paths, with both bases as servers', async () => {
    const doc = body(await t.app.inject({ method: 'GET', url: '/openapi.json', headers: { host: 'chat.example.com' } }));
    assert.ok(!Object.keys(doc.paths).some((path) => path.startsWith('/mgmt')), 'the /mgmt copies are not listed again');
    const createApp = doc.paths['/apps'].post;
    // On the scheme and port the page came with (behind a proxy on 80: none), the page's own host first.
    assert.deepEqual(
      createApp.servers.map((s: { url: string }) => s.url),
      ['http://chat.example.com/mgmt', `http://apimgmt.${TEST_DOMAIN}`, `http://${TEST_DOMAIN}/mgmt`],
    );
    // Loaded from the quick start's port: every server keeps it, so "Try it out" reaches this server.
    const local = body(await t.app.inject({ method: 'GET', url: '/docs/json', headers: { host: 'localhost:3000' } }));
    assert.deepEqual(
      local.paths['/apps'].post.servers.map((s: { url: string }) => s.url),
      ['http://localhost:3000/mgmt', `http://apimgmt.${TEST_DOMAIN}:3000`, `http://${TEST_DOMAIN}:3000/mgmt`],
    );
    // The general operations name no servers of their own.
    assert.equal(local.paths['/v3/users'].post.servers, undefined);
    const headers = createApp.parameters.filter((p: { in: string }) => p.in === 'header').map((p: { name: string; required: boolean }) => [p.name, p.required]);
    assert.deepEqual(headers, [
      ['key', true],
      ['secret', true],
    ]);
  });
});

describe('credentials', () => {
  const REFUSALS: Array<[string, (c: ManagementCredential) => { credential: ManagementCredential | false; headers?: Record<string, string> }, number, string]> = [
    ['no key nor secret', () => ({ credential: false }), 401, 'AUTH_ERR_EMPTY_AUTH_HEADER'],
    ['a key without a secret', (c) => ({ credential: false, headers: { key: c.key } }), 401, 'AUTH_ERR_EMPTY_AUTH_HEADER'],
    ['a secret without a key', (c) => ({ credential: false, headers: { secret: c.secret } }), 401, 'AUTH_ERR_EMPTY_AUTH_HEADER'],
    ['a wrong secret', (c) => ({ credential: { key: c.key, secret: crypto.randomBytes(32).toString('hex') } }), 401, 'AUTH_ERR_APIKEY_NOT_FOUND'],
    ['an unknown key', (c) => ({ credential: { key: crypto.randomBytes(16).toString('hex'), secret: c.secret } }), 401, 'AUTH_ERR_APIKEY_NOT_FOUND'],
    ["an app's API key", () => ({ credential: { key: t.appA.apiKey, secret: t.appA.apiKey }, headers: { apikey: t.appA.apiKey, appid: t.appA.appId } }), 401, 'AUTH_ERR_APIKEY_NOT_FOUND'],
    ['the secret in place of the key', (c) => ({ credential: { key: c.secret, secret: c.key } }), 401, 'AUTH_ERR_APIKEY_NOT_FOUND'],
  ];

  it('refuse every operation without a valid credential, before anything is read or written', async () => {
    const catalogue = await readCatalogue(t);
    const before = await snapshot(t, catalogue);
    for (const op of operations) {
      for (const [what, make, status, code] of REFUSALS) {
        const { credential, headers } = make(cred);
        const response = await send(credential, op, headers);
        assert.equal(response.statusCode, status, `${op.operationId}, ${what}: ${response.body}`);
        assert.equal(errorCode(response), code, `${op.operationId}, ${what}`);
      }
    }
    assert.deepEqual(snapshotDiff(before, await snapshot(t, catalogue)), [], 'a refused request changed the database');
  });

  it('are stored as a SHA-256 digest of the secret', async () => {
    const row = await t.database.db.selectFrom('management_keys').selectAll().where('key', '=', cred.key).executeTakeFirstOrThrow();
    assert.equal(row.secret_hash, sha256Hex(cred.secret));
    assert.ok(!JSON.stringify(row).includes(cred.secret));
  });

  it('work at once, and stop working at once when revoked', async () => {
    const own = await newManagementCredential(t);
    assert.equal((await managementCall(t, own, '/apps')).statusCode, 200);
    assert.equal(await t.services.management.revokeKey({ appId: '', requestId: 't', log: silentLogger }, own.key), true);
    const refused = await managementCall(t, own, '/apps');
    assert.equal(refused.statusCode, 401);
    assert.equal(errorCode(refused), 'AUTH_ERR_APIKEY_NOT_FOUND');
    assert.equal((await managementCall(t, cred, '/apps')).statusCode, 200, 'other credentials still work');
  });

  it("are not an app's: an app's key never reaches the management API, nor a management credential the v3 API", async () => {
    const v3 = await t.call(t.appA, '/v3/users', { key: { literal: cred.key }, headers: { secret: cred.secret } });
    assert.equal(v3.statusCode, 401);
    assert.equal(errorCode(v3), 'AUTH_ERR_APIKEY_NOT_FOUND');
  });
});

describe('bases', () => {
  it('serves the vendor paths on apimgmt.<domain>, and /mgmt on any host', async () => {
    const vendor = await managementCall(t, cred, '/apps', { vendorHost: true });
    assert.equal(vendor.statusCode, 200, vendor.body);
    const withPort = await t.app.inject({ method: 'GET', url: '/apps', headers: { host: `APIMGMT.${TEST_DOMAIN}:8443`, key: cred.key, secret: cred.secret } });
    assert.equal(withPort.statusCode, 200, withPort.body);
    for (const host of ['localhost', '127.0.0.1:3000', hostOf(t.appA), `apimgmt.${TEST_DOMAIN}`]) {
      const response = await t.app.inject({ method: 'GET', url: '/mgmt/apps', headers: { host, key: cred.key, secret: cred.secret } });
      assert.equal(response.statusCode, 200, `${host}: ${response.body}`);
      assert.deepEqual(body(response).data, body(vendor).data);
    }
  });

  it('answers ERR_API_NOT_FOUND for the vendor paths on any other host, credential or not', async () => {
    for (const host of ['localhost', hostOf(t.appA), `apimgmt.other.${TEST_DOMAIN}`, `x${TEST_DOMAIN}`]) {
      for (const headers of [{ key: cred.key, secret: cred.secret }, {}]) {
        const response = await t.app.inject({ method: 'GET', url: `/apps/${t.appA.appId}/webhooks`, headers: { host, ...headers } });
        assert.equal(response.statusCode, 404, `${host}: ${response.body}`);
        assert.equal(errorCode(response), 'ERR_API_NOT_FOUND');
      }
    }
  });
});

describe('bad input', () => {
  /** Values of every JSON type, and texts that must be refused at the edge. */
  const VALUES: unknown[] = [null, true, 0, -1, 1e308, '', 'x', 'x'.repeat(5000), '\u0000', 'x\ud800', [], [1, 'a'], {}, { a: { b: [] } }, '../etc', '%', "'; drop table apps; --"];
  const pick = (random: () => number) => VALUES[Math.floor(random() * VALUES.length)];
  /** A path segment; a lone surrogate, which has no UTF-8, as the bytes a client might send for it. */
  const pathValue = (value: string) => (value.includes('\ud800') ? 'x%ED%A0%80' : encodeURIComponent(value));

  it('never answers 5xx, whatever the body, path or query', async () => {
    // A fixed seed: a failure names the request, and runs the same again.
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const failures: string[] = [];
    for (const op of operations) {
      for (let n = 0; n < 40; n++) {
        const fields = [
          'id',
          'name',
          'region',
          'version',
          'skipSampleData',
          'usePreviousBillingCycle',
          'settings',
          'webhookURL',
          'useBasicAuth',
          'username',
          'password',
          'enabled',
          'retryOnFailure',
          'triggerIds',
        ];
        const payload: Record<string, unknown> = {};
        for (const field of fields) if (random() < 0.4) payload[field] = pick(random);
        // delete-app only ever names apps that do not exist: the others' requests need app A.
        const strange = op.operationId === 'delete-app' || random() < 0.3;
        const path = strange ? op.path.replace(t.appA.appId, pathValue(String(pick(random)))) : op.path;
        const query = random() < 0.5 ? { perPage: String(pick(random)), page: String(pick(random)), searchKey: String(pick(random)) } : undefined;
        const response = await managementCall(t, cred, path, {
          method: op.method as 'GET',
          ...(op.method === 'GET' ? {} : { body: random() < 0.1 ? (pick(random) ?? {}) : payload }),
          ...(query ? { query } : {}),
        });
        if (response.statusCode >= 500) failures.push(`${op.method} ${path} ${JSON.stringify(payload).slice(0, 200)}: ${response.statusCode} ${response.body.slice(0, 200)}`);
        else if (response.statusCode >= 400) assert.ok(errorCode(response), `${op.operationId}: an error in the vendor's shape: ${response.body}`);
      }
    }
    assert.deepEqual(failures, []);
  });
});
