/**
 * FCM and APNs providers (docs/notifications.md): list, add, update, delete and change the
 * default of each kind; their keys checked with node:crypto, sealed at rest and never answered;
 * exactly one default per kind under concurrent changes; other apps see none of it; and
 * forDelivery, which opens the secrets for the delivery engine. Test keys are made here.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { silentLogger } from '../../src/domain/context.js';
import { checkServiceAccount, providerFor } from '../../src/domain/notifications/push-providers.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, errorCode, type TestApp } from '../helpers/app.js';

const FCM = '/v3/notifications/push/v1/providers/fcm';
const APNS = '/v3/notifications/push/v1/providers/apns';

const pkcs8 = (key: crypto.KeyObject) => key.export({ type: 'pkcs8', format: 'pem' }).toString();
const rsaKey = (bits = 2048) => crypto.generateKeyPairSync('rsa', { modulusLength: bits }).privateKey;
const ecKey = (curve = 'prime256v1') => crypto.generateKeyPairSync('ec', { namedCurve: curve }).privateKey;
/** A PEM's base64 body, as one string: what must never be found in an answer or a table. */
const pemBody = (pem: string) =>
  pem
    .split('\n')
    .filter((line) => line && !line.startsWith('-----'))
    .join('');

/**
 * The PEM with one base64 character of line `index` changed: a key no longer whole (line 2 of an
 * RSA key is in its modulus; line 3 of an EC key in its public point).
 */
function flipped(pem: string, index: number): string {
  const lines = pem.split('\n');
  const middle = index;
  const line = lines[middle]!;
  const at = Math.floor(line.length / 2);
  lines[middle] = line.slice(0, at) + (line[at] === 'A' ? 'B' : 'A') + line.slice(at + 1);
  return lines.join('\n');
}

const RSA = [rsaKey(), rsaKey()];
const RSA_PEM = RSA.map(pkcs8);
const P8 = [ecKey(), ecKey()];
const P8_PEM = P8.map(pkcs8);

function serviceAccount(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'service_account',
    project_id: 'parley-push-test',
    private_key_id: crypto.randomBytes(20).toString('hex'),
    private_key: RSA_PEM[0],
    client_email: 'firebase-adminsdk@parley-push-test.iam.gserviceaccount.com',
    client_id: '112233445566778899',
    auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    token_uri: 'https://oauth2.googleapis.com/token',
    universe_domain: 'googleapis.com',
    ...overrides,
  };
}

const fcmBody = (providerId: string, overrides: Record<string, unknown> = {}) => ({
  providerId,
  serviceAccountFilename: 'service-account.json',
  serviceAccountCreds: serviceAccount(),
  ...overrides,
});

const apnsBody = (providerId: string, overrides: Record<string, unknown> = {}) => ({
  providerId,
  keyId: 'ABC123DEFG',
  teamId: 'TEAM456789',
  bundleId: 'com.example.parley',
  p8KeyFilename: 'AuthKey_ABC123DEFG.p8',
  p8Key: P8_PEM[0],
  ...overrides,
});

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t?.close();
});

const freshApp = () => t.services.apps.create({ appId: '', requestId: 'test', log: silentLogger }, { name: 'Push providers app' });
const ctxOf = (app: CreatedApp) => ({ appId: app.appId, requestId: 'test', log: silentLogger });

async function ok(app: CreatedApp, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown): Promise<any> {
  const response = await t.call(app, url, { method, ...(payload !== undefined ? { body: payload } : {}) });
  assert.equal(response.statusCode, 200, `${method} ${url}: ${response.body}`);
  for (const pem of [...RSA_PEM, ...P8_PEM]) assert.ok(!response.body.includes(pemBody(pem).slice(0, 40)), 'a key in an answer');
  assert.ok(!response.body.includes('PRIVATE KEY'), 'a key in an answer');
  return body(response).data;
}

async function refused(app: CreatedApp, method: 'POST' | 'PUT' | 'DELETE', url: string, payload: unknown, status: number, code: string, field?: string) {
  const response = await t.call(app, url, { method, ...(payload !== undefined ? { body: payload } : {}) });
  assert.equal(response.statusCode, status, `${JSON.stringify(payload)?.slice(0, 200)}: ${response.body}`);
  assert.equal(errorCode(response), code, response.body);
  if (field) assert.ok(field in (body(response).error.details ?? {}), `details ${JSON.stringify(body(response).error.details)} do not name ${field}`);
  // The refusal names the rule, never the key sent.
  for (const pem of [...RSA_PEM, ...P8_PEM]) assert.ok(!response.body.includes(pemBody(pem).slice(0, 40)), 'a key in a refusal');
  return body(response).error;
}

const defaults = (providers: Array<{ providerId: string; isDefault: boolean }>) => providers.filter((p) => p.isDefault).map((p) => p.providerId);
const ids = (providers: Array<{ providerId: string }>) => providers.map((p) => p.providerId);

describe('FCM providers', () => {
  it('adds providers (the first becomes the default) and lists them oldest first, without their private keys', async () => {
    const app = await freshApp();
    assert.deepEqual(await ok(app, 'GET', FCM), { pushProviders: [] });
    const before = Math.floor(Date.now() / 1000);
    const added = await ok(app, 'POST', FCM, fcmBody('prod', { notificationInPayload: { android: { chat: true } } }));
    assert.equal(added.success, true);
    assert.deepEqual(ids(added.pushProviders), ['prod']);
    const [prod] = added.pushProviders;
    assert.deepEqual(Object.keys(prod).sort(), ['createdAt', 'isDefault', 'notificationInPayload', 'providerId', 'serviceAccountCreds', 'serviceAccountFilename', 'updatedAt']);
    assert.equal(prod.isDefault, true);
    assert.equal(prod.serviceAccountFilename, 'service-account.json');
    const account = serviceAccount();
    assert.deepEqual(Object.keys(prod.serviceAccountCreds).sort(), ['client_email', 'private_key_id', 'project_id', 'type']);
    assert.equal(prod.serviceAccountCreds.client_email, account.client_email);
    assert.deepEqual(prod.notificationInPayload, { ios: { chat: false, call: false }, android: { chat: true, call: false }, web: { chat: false, call: false } });
    assert.ok(prod.createdAt >= before && prod.updatedAt === prod.createdAt);
    // The service account as the file's text, and a PKCS#1 key, without a file name.
    const pkcs1 = RSA[1]!.export({ type: 'pkcs1', format: 'pem' }).toString();
    const second = await ok(app, 'POST', FCM, { providerId: 'Staging_2', serviceAccountCreds: JSON.stringify(serviceAccount({ private_key: pkcs1 })) });
    assert.deepEqual(ids(second.pushProviders), ['prod', 'Staging_2']);
    assert.deepEqual(defaults(second.pushProviders), ['prod']);
    assert.ok(!('serviceAccountFilename' in second.pushProviders[1]));
    assert.deepEqual(await ok(app, 'GET', FCM), { pushProviders: second.pushProviders });
    // A service account without `type` (the vendor's schema names none) and private_key_id.
    const { type: _type, private_key_id: _id, ...bare } = serviceAccount();
    const third = await ok(app, 'POST', FCM, { providerId: 'bare', serviceAccountCreds: bare });
    assert.deepEqual(third.pushProviders[2].serviceAccountCreds, { type: 'service_account', project_id: bare.project_id, client_email: bare.client_email });
  });

  it('refuses an id the app has (case counts), and more than 25 providers', async () => {
    const app = await freshApp();
    await ok(app, 'POST', FCM, fcmBody('prod'));
    const error = await refused(app, 'POST', FCM, fcmBody('prod'), 400, 'ERR_PUSH_PROVIDER_ALREADY_EXISTS');
    assert.match(error.message, /FCM provider prod already exists/);
    await ok(app, 'POST', FCM, fcmBody('PROD'));
    for (let n = 2; n < 25; n++) await ok(app, 'POST', FCM, fcmBody(`p${n}`));
    await refused(app, 'POST', FCM, fcmBody('one-too-many'), 403, 'ERR_PLAN_QUOTA_RESTRICTION');
    assert.equal((await ok(app, 'GET', FCM)).pushProviders.length, 25);
  });

  it('updates the fields given and keeps the others; a new service account replaces the old', async () => {
    const app = await freshApp();
    await ok(app, 'POST', FCM, fcmBody('prod', { notificationInPayload: { ios: { chat: true, call: true } } }));
    await ok(app, 'POST', FCM, fcmBody('other'));
    const [before] = (await ok(app, 'GET', FCM)).pushProviders;
    const changed = await ok(app, 'PUT', FCM, { providerId: 'prod', notificationInPayload: { ios: { call: false }, web: { chat: true } } });
    const [prod] = changed.pushProviders;
    assert.deepEqual(prod.notificationInPayload, { ios: { chat: true, call: false }, android: { chat: false, call: false }, web: { chat: true, call: false } });
    assert.deepEqual([prod.isDefault, prod.serviceAccountFilename, prod.serviceAccountCreds, prod.createdAt], [true, before.serviceAccountFilename, before.serviceAccountCreds, before.createdAt]);
    const account = serviceAccount({ project_id: 'another-project', private_key: RSA_PEM[1], private_key_id: undefined });
    delete account.private_key_id;
    const replaced = await ok(app, 'PUT', FCM, { providerId: 'prod', serviceAccountCreds: account, serviceAccountFilename: 'new.json' });
    assert.deepEqual(replaced.pushProviders[0].serviceAccountCreds, { type: 'service_account', project_id: 'another-project', client_email: account.client_email });
    assert.equal(replaced.pushProviders[0].serviceAccountFilename, 'new.json');
    const delivery = await t.services.pushProviders.forDelivery(ctxOf(app));
    assert.equal(delivery.fcm.find((p) => p.providerId === 'prod')!.serviceAccount.private_key, RSA_PEM[1]);
    await refused(app, 'PUT', FCM, { providerId: 'nobody', notificationInPayload: { ios: { chat: true } } }, 404, 'ERR_PUSH_PROVIDER_NOT_FOUND');
    await refused(app, 'PUT', FCM, { providerId: 'prod' }, 400, 'ERR_BAD_REQUEST', 'body');
    await refused(app, 'PUT', FCM, { notificationInPayload: {} }, 400, 'ERR_BAD_REQUEST', 'providerId');
  });

  it('deletes providers: the oldest remaining becomes the default when the default goes, none when the last goes', async () => {
    const app = await freshApp();
    for (const id of ['a', 'b', 'c']) await ok(app, 'POST', FCM, fcmBody(id));
    const notDefault = await ok(app, 'DELETE', `${FCM}/b`);
    assert.deepEqual([ids(notDefault.pushProviders), defaults(notDefault.pushProviders)], [['a', 'c'], ['a']]);
    const wasDefault = await ok(app, 'DELETE', `${FCM}/a`);
    assert.deepEqual([ids(wasDefault.pushProviders), defaults(wasDefault.pushProviders)], [['c'], ['c']]);
    assert.deepEqual((await ok(app, 'DELETE', `${FCM}/c`)).pushProviders, []);
    await refused(app, 'DELETE', `${FCM}/c`, undefined, 404, 'ERR_PUSH_PROVIDER_NOT_FOUND');
    // A provider added to an app with none left becomes the default again.
    assert.deepEqual(defaults((await ok(app, 'POST', FCM, fcmBody('d'))).pushProviders), ['d']);
  });

  it('changes the default; an unknown or malformed id is refused', async () => {
    const app = await freshApp();
    for (const id of ['a', 'b']) await ok(app, 'POST', FCM, fcmBody(id));
    assert.deepEqual(defaults((await ok(app, 'PUT', `${FCM}/default/b`)).pushProviders), ['b']);
    assert.deepEqual(defaults((await ok(app, 'PUT', `${FCM}/default/b`)).pushProviders), ['b'], 'again: the same');
    assert.deepEqual(defaults((await ok(app, 'GET', FCM)).pushProviders), ['b']);
    await refused(app, 'PUT', `${FCM}/default/B`, undefined, 404, 'ERR_PUSH_PROVIDER_NOT_FOUND');
    await refused(app, 'PUT', `${FCM}/default/${encodeURIComponent('a b')}`, undefined, 400, 'ERR_BAD_REQUEST', 'providerId');
    await refused(app, 'DELETE', `${FCM}/${'x'.repeat(101)}`, undefined, 400, 'ERR_BAD_REQUEST', 'providerId');
  });

  it('refuses bad service accounts and fields with a 400 naming the field, and writes nothing', async () => {
    const app = await freshApp();
    const pem = RSA_PEM[0]!;
    const cases: Array<[unknown, string]> = [
      ['not json at all', 'serviceAccountCreds'],
      ['{"type": "service_account", "project_id": ', 'serviceAccountCreds'],
      ['[1, 2, 3]', 'serviceAccountCreds'],
      ['"a string in JSON"', 'serviceAccountCreds'],
      [`${'['.repeat(100)}${']'.repeat(100)}`, 'serviceAccountCreds'],
      [JSON.stringify(serviceAccount({ padding: 'x'.repeat(17_000) })), 'serviceAccountCreds'],
      [serviceAccount({ padding: 'x'.repeat(17_000) }), 'serviceAccountCreds'],
      [JSON.stringify(serviceAccount({ client_id: 'a\u0000b' })), 'serviceAccountCreds.client_id'],
      [JSON.stringify(serviceAccount({ client_email: 'a\ud800@example.com' })), 'serviceAccountCreds.client_email'],
      [JSON.stringify(serviceAccount({ nested: { deep: ['x\ud800'] } })), 'serviceAccountCreds.nested.deep.0'],
      [42, 'serviceAccountCreds'],
      [null, 'serviceAccountCreds'],
      [serviceAccount({ type: 'authorized_user' }), 'serviceAccountCreds.type'],
      [serviceAccount({ project_id: undefined }), 'serviceAccountCreds.project_id'],
      [serviceAccount({ project_id: 'has space' }), 'serviceAccountCreds.project_id'],
      [serviceAccount({ client_email: 'not-an-email' }), 'serviceAccountCreds.client_email'],
      [serviceAccount({ client_email: 7 }), 'serviceAccountCreds.client_email'],
      [serviceAccount({ private_key_id: 'bad id!' }), 'serviceAccountCreds.private_key_id'],
      // (http ones are refused unless the deployment allows private addresses, as this test app does: see below.)
      [serviceAccount({ token_uri: 'ftp://169.254.169.254/token' }), 'serviceAccountCreds.token_uri'],
      [serviceAccount({ private_key: undefined }), 'serviceAccountCreds.private_key'],
      [serviceAccount({ private_key: pem.slice(0, pem.length - 60) }), 'serviceAccountCreds.private_key'],
      [serviceAccount({ private_key: pem.slice(0, 200) }), 'serviceAccountCreds.private_key'],
      [serviceAccount({ private_key: pem.replace('MII', 'MIJ') }), 'serviceAccountCreds.private_key'],
      [serviceAccount({ private_key: flipped(pem, 2) }), 'serviceAccountCreds.private_key'],
      [serviceAccount({ private_key: `junk before ${pem}` }), 'serviceAccountCreds.private_key'],
      [serviceAccount({ private_key: pem + pem }), 'serviceAccountCreds.private_key'],
      [serviceAccount({ private_key: pemBody(pem) }), 'serviceAccountCreds.private_key'],
      [serviceAccount({ private_key: RSA[0]!.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'secret' }).toString() }), 'serviceAccountCreds.private_key'],
      [serviceAccount({ private_key: crypto.createPublicKey(RSA[0]!).export({ type: 'spki', format: 'pem' }).toString() }), 'serviceAccountCreds.private_key'],
      [serviceAccount({ private_key: P8_PEM[0] }), 'serviceAccountCreds.private_key'],
      [serviceAccount({ private_key: pkcs8(rsaKey(1024)) }), 'serviceAccountCreds.private_key'],
      [serviceAccount({ private_key: 'x'.repeat(9000) }), 'serviceAccountCreds.private_key'],
      [serviceAccount({ private_key: 12 }), 'serviceAccountCreds.private_key'],
    ];
    for (const [creds, field] of cases) await refused(app, 'POST', FCM, fcmBody('prod', { serviceAccountCreds: creds }), 400, 'ERR_BAD_REQUEST', field);
    // Where private addresses are not allowed (production), an http token_uri is refused too.
    const http = checkServiceAccount(serviceAccount({ token_uri: 'http://169.254.169.254/token' }), 'serviceAccountCreds', false);
    assert.deepEqual('problems' in http && Object.keys(http.problems), ['serviceAccountCreds.token_uri']);
    assert.ok('account' in checkServiceAccount(serviceAccount({ token_uri: 'http://127.0.0.1:9/token' }), 'serviceAccountCreds', true));
    await refused(app, 'POST', FCM, { providerId: 'prod' }, 400, 'ERR_BAD_REQUEST', 'serviceAccountCreds');
    await refused(app, 'POST', FCM, { serviceAccountCreds: serviceAccount() }, 400, 'ERR_BAD_REQUEST', 'providerId');
    for (const providerId of ['', 'has space', 'dots.not', 'x'.repeat(101), 'ü', 7]) {
      await refused(app, 'POST', FCM, fcmBody('p', { providerId }), 400, 'ERR_BAD_REQUEST', 'providerId');
    }
    await refused(app, 'POST', FCM, fcmBody('p', { serviceAccountFilename: 'f'.repeat(256) }), 400, 'ERR_BAD_REQUEST', 'serviceAccountFilename');
    await refused(app, 'POST', FCM, fcmBody('p', { notificationInPayload: { ios: { chat: 'yes' } } }), 400, 'ERR_BAD_REQUEST', 'notificationInPayload.ios.chat');
    await refused(app, 'POST', FCM, fcmBody('p', { notificationInPayload: { ios: 'all' } }), 400, 'ERR_BAD_REQUEST', 'notificationInPayload.ios');
    // The same checks on update, and no change made.
    await ok(app, 'POST', FCM, fcmBody('prod'));
    const before = await ok(app, 'GET', FCM);
    await refused(app, 'PUT', FCM, { providerId: 'prod', serviceAccountCreds: serviceAccount({ private_key: P8_PEM[0] }) }, 400, 'ERR_BAD_REQUEST', 'serviceAccountCreds.private_key');
    await refused(app, 'PUT', FCM, { providerId: 'prod', serviceAccountCreds: 'nope' }, 400, 'ERR_BAD_REQUEST', 'serviceAccountCreds');
    assert.deepEqual(await ok(app, 'GET', FCM), before);
  });

  it('reads a key pasted with its line ends escaped (\\n), and stores it as PKCS#8 PEM', async () => {
    const app = await freshApp();
    const escaped = RSA_PEM[0]!.trim().replaceAll('\n', '\\n');
    await ok(app, 'POST', FCM, fcmBody('p', { serviceAccountCreds: serviceAccount({ private_key: escaped }) }));
    const [provider] = (await t.services.pushProviders.forDelivery(ctxOf(app))).fcm;
    assert.equal(provider!.serviceAccount.private_key, RSA_PEM[0]);
  });
});

describe('APNs providers', () => {
  it('adds, lists, updates, changes the default and deletes, without ever answering the .p8 key', async () => {
    const app = await freshApp();
    assert.deepEqual(await ok(app, 'GET', APNS), { pushProviders: [] });
    const added = await ok(app, 'POST', APNS, apnsBody('ios-prod', { keyId: 'abc123defg', productionMode: true, includeMutableContent: true }));
    assert.equal(added.success, true);
    const [prod] = added.pushProviders;
    assert.deepEqual(Object.keys(prod).sort(), [
      'bundleId',
      'createdAt',
      'includeContentAvailable',
      'includeMutableContent',
      'isDefault',
      'keyId',
      'p8KeyFilename',
      'productionMode',
      'providerId',
      'teamId',
      'updatedAt',
    ]);
    assert.deepEqual(
      [prod.providerId, prod.isDefault, prod.keyId, prod.teamId, prod.bundleId, prod.p8KeyFilename, prod.includeContentAvailable, prod.includeMutableContent, prod.productionMode],
      ['ios-prod', true, 'ABC123DEFG', 'TEAM456789', 'com.example.parley', 'AuthKey_ABC123DEFG.p8', false, true, true],
    );
    const dev = await ok(app, 'POST', APNS, { providerId: 'ios-dev', keyId: 'KEY0000001', teamId: 'TEAM456789', bundleId: 'com.example.parley', p8Key: P8_PEM[1] });
    assert.deepEqual([ids(dev.pushProviders), defaults(dev.pushProviders)], [['ios-prod', 'ios-dev'], ['ios-prod']]);
    assert.deepEqual([dev.pushProviders[1].productionMode, dev.pushProviders[1].includeContentAvailable, 'p8KeyFilename' in dev.pushProviders[1]], [false, false, false]);
    await refused(app, 'POST', APNS, apnsBody('ios-dev'), 400, 'ERR_PUSH_PROVIDER_ALREADY_EXISTS');
    const updated = await ok(app, 'PUT', APNS, { providerId: 'ios-dev', bundleId: 'com.example.parley.dev', includeContentAvailable: true, p8Key: P8_PEM[0] });
    const changed = updated.pushProviders[1];
    assert.deepEqual([changed.bundleId, changed.includeContentAvailable, changed.keyId, changed.productionMode], ['com.example.parley.dev', true, 'KEY0000001', false]);
    assert.equal((await t.services.pushProviders.forDelivery(ctxOf(app))).apns[1]!.p8Key, P8_PEM[0]);
    await refused(app, 'PUT', APNS, { providerId: 'nobody', teamId: 'TEAM000000' }, 404, 'ERR_PUSH_PROVIDER_NOT_FOUND');
    await refused(app, 'PUT', APNS, { providerId: 'ios-dev' }, 400, 'ERR_BAD_REQUEST', 'body');
    assert.deepEqual(defaults((await ok(app, 'PUT', `${APNS}/default/ios-dev`)).pushProviders), ['ios-dev']);
    await refused(app, 'PUT', `${APNS}/default/nobody`, undefined, 404, 'ERR_PUSH_PROVIDER_NOT_FOUND');
    const deleted = await ok(app, 'DELETE', `${APNS}/ios-dev`);
    assert.deepEqual([ids(deleted.pushProviders), defaults(deleted.pushProviders)], [['ios-prod'], ['ios-prod']]);
    await refused(app, 'DELETE', `${APNS}/ios-dev`, undefined, 404, 'ERR_PUSH_PROVIDER_NOT_FOUND');
    // FCM and APNs are apart: an id of one kind names nothing of the other.
    await refused(app, 'DELETE', `${FCM}/ios-prod`, undefined, 404, 'ERR_PUSH_PROVIDER_NOT_FOUND');
  });

  it('refuses bad keys, ids and bundle ids with a 400 naming the field, and writes nothing', async () => {
    const app = await freshApp();
    const p8 = P8_PEM[0]!;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ keyId: 'ABC123DEF' }, 'keyId'],
      [{ keyId: 'ABC123DEFGH' }, 'keyId'],
      [{ keyId: 'ABC-23DEFG' }, 'keyId'],
      [{ keyId: 1234567890 }, 'keyId'],
      [{ teamId: 'TEAM 56789' }, 'teamId'],
      [{ teamId: 'x'.repeat(400) }, 'teamId'],
      [{ bundleId: 'parley' }, 'bundleId'],
      [{ bundleId: 'com.example.' }, 'bundleId'],
      [{ bundleId: 'com.exa mple.app' }, 'bundleId'],
      [{ bundleId: `com.${'a'.repeat(160)}` }, 'bundleId'],
      [{ p8Key: p8.slice(0, p8.length - 40) }, 'p8Key'],
      [{ p8Key: p8.slice(0, 60) }, 'p8Key'],
      [{ p8Key: 'not a key' }, 'p8Key'],
      [{ p8Key: flipped(p8, 3) }, 'p8Key'],
      [{ p8Key: pemBody(p8) }, 'p8Key'],
      [{ p8Key: `${p8}${p8}` }, 'p8Key'],
      [{ p8Key: P8[0]!.export({ type: 'sec1', format: 'pem' }).toString() }, 'p8Key'],
      [{ p8Key: pkcs8(ecKey('secp384r1')) }, 'p8Key'],
      [{ p8Key: pkcs8(crypto.generateKeyPairSync('ed25519').privateKey) }, 'p8Key'],
      [{ p8Key: RSA_PEM[0] }, 'p8Key'],
      [{ p8Key: crypto.createPublicKey(P8[0]!).export({ type: 'spki', format: 'pem' }).toString() }, 'p8Key'],
      [{ p8Key: 'k'.repeat(5000) }, 'p8Key'],
      [{ p8Key: '' }, 'p8Key'],
      [{ productionMode: 'true' }, 'productionMode'],
      [{ includeMutableContent: 1 }, 'includeMutableContent'],
      [{ p8KeyFilename: 'f'.repeat(300) }, 'p8KeyFilename'],
      [{ providerId: 'bad/id' }, 'providerId'],
      [{ keyId: undefined }, 'keyId'],
      [{ p8Key: undefined }, 'p8Key'],
    ];
    for (const [overrides, field] of cases) await refused(app, 'POST', APNS, apnsBody('ios', overrides), 400, 'ERR_BAD_REQUEST', field);
    assert.deepEqual(await ok(app, 'GET', APNS), { pushProviders: [] });
    await ok(app, 'POST', APNS, apnsBody('ios'));
    const before = await ok(app, 'GET', APNS);
    await refused(app, 'PUT', APNS, { providerId: 'ios', p8Key: RSA_PEM[0] }, 400, 'ERR_BAD_REQUEST', 'p8Key');
    await refused(app, 'PUT', APNS, { providerId: 'ios', bundleId: 'nodots', teamId: 'short' }, 400, 'ERR_BAD_REQUEST', 'teamId');
    assert.deepEqual(await ok(app, 'GET', APNS), before);
  });
});

describe('another app', () => {
  it('sees, changes and deletes none of A’s providers, and may use the same ids for its own', async () => {
    const [a, b] = [await freshApp(), await freshApp()];
    await ok(a, 'POST', FCM, fcmBody('shared'));
    await ok(a, 'POST', FCM, fcmBody('a-only'));
    await ok(a, 'POST', APNS, apnsBody('shared'));
    const before = [await ok(a, 'GET', FCM), await ok(a, 'GET', APNS)];
    assert.deepEqual(await ok(b, 'GET', FCM), { pushProviders: [] });
    assert.deepEqual(await ok(b, 'GET', APNS), { pushProviders: [] });
    for (const kind of [FCM, APNS]) {
      await refused(b, 'DELETE', `${kind}/shared`, undefined, 404, 'ERR_PUSH_PROVIDER_NOT_FOUND');
      await refused(b, 'PUT', `${kind}/default/shared`, undefined, 404, 'ERR_PUSH_PROVIDER_NOT_FOUND');
    }
    await refused(b, 'PUT', FCM, { providerId: 'shared', notificationInPayload: { ios: { chat: true } } }, 404, 'ERR_PUSH_PROVIDER_NOT_FOUND');
    await refused(b, 'PUT', APNS, { providerId: 'shared', productionMode: true }, 404, 'ERR_PUSH_PROVIDER_NOT_FOUND');
    // B's own provider with A's id: B's first, so B's default; A's stay as they were.
    const own = await ok(b, 'POST', FCM, fcmBody('shared', { serviceAccountCreds: serviceAccount({ project_id: 'b-project', private_key: RSA_PEM[1] }) }));
    assert.deepEqual([ids(own.pushProviders), defaults(own.pushProviders)], [['shared'], ['shared']]);
    await ok(b, 'PUT', `${FCM}/default/shared`);
    await ok(b, 'DELETE', `${FCM}/shared`);
    assert.deepEqual([await ok(a, 'GET', FCM), await ok(a, 'GET', APNS)], before);
    const delivery = await t.services.pushProviders.forDelivery(ctxOf(b));
    assert.deepEqual([delivery.fcm, delivery.apns], [[], []]);
  });
});

describe('secrets at rest', () => {
  it('stores no key in plain text: the tables hold sealed values bound to their app and provider', async () => {
    const app = await freshApp();
    await ok(app, 'POST', FCM, fcmBody('prod', { serviceAccountCreds: serviceAccount({ private_key: RSA_PEM[1] }) }));
    await ok(app, 'POST', APNS, apnsBody('ios', { p8Key: P8_PEM[1] }));
    const { rows } = await sql<{ row: string }>`
      select row_to_json(f)::text as row from notification_fcm_providers f where app_id = ${app.appId}
      union all select row_to_json(a)::text from notification_apns_providers a where app_id = ${app.appId}`.execute(t.database.db);
    assert.equal(rows.length, 2);
    for (const { row } of rows) {
      for (const pem of [RSA_PEM[1]!, P8_PEM[1]!]) {
        const lines = pemBody(pem).match(/.{1,16}/g)!;
        for (const piece of lines) assert.ok(!row.includes(piece), 'a piece of a key in plain text');
      }
      assert.ok(!/PRIVATE KEY/.test(row));
    }
    const fcm = await t.database.db.selectFrom('notification_fcm_providers').selectAll().where('app_id', '=', app.appId).executeTakeFirstOrThrow();
    const apns = await t.database.db.selectFrom('notification_apns_providers').selectAll().where('app_id', '=', app.appId).executeTakeFirstOrThrow();
    assert.match(fcm.service_account_sealed, /^v1:/);
    assert.match(apns.p8_key_sealed, /^v1:/);
    assert.equal(fcm.project_id, 'parley-push-test');
  });
});

describe('the default under concurrent changes', () => {
  it('is exactly one after concurrent changes of default, adds and deletes', async () => {
    const app = await freshApp();
    for (const id of ['a', 'b', 'c', 'd', 'e']) await ok(app, 'POST', FCM, fcmBody(id));
    const targets = Array.from({ length: 24 }, (_, n) => ['a', 'b', 'c', 'd', 'e'][n % 5]!);
    const answers = await Promise.all(targets.map((id) => t.call(app, `${FCM}/default/${id}`, { method: 'PUT' })));
    for (const answer of answers) {
      assert.equal(answer.statusCode, 200, answer.body);
      assert.equal(defaults(body(answer).data.pushProviders).length, 1, 'each answer shows one default');
    }
    const after = (await ok(app, 'GET', FCM)).pushProviders;
    assert.equal(defaults(after).length, 1);
    // Deletes of the default racing with changes of it, and adds.
    const mixed = await Promise.all([
      ...['a', 'b', 'c'].map((id) => t.call(app, `${FCM}/${id}`, { method: 'DELETE' })),
      ...['c', 'd', 'e', 'a'].map((id) => t.call(app, `${FCM}/default/${id}`, { method: 'PUT' })),
      ...['f', 'g'].map((id) => t.call(app, FCM, { method: 'POST', body: fcmBody(id) })),
    ]);
    for (const answer of mixed) assert.ok([200, 404].includes(answer.statusCode), answer.body);
    const left = (await ok(app, 'GET', FCM)).pushProviders;
    assert.deepEqual(ids(left).sort(), ['d', 'e', 'f', 'g']);
    assert.equal(defaults(left).length, 1);
  });

  it('makes exactly one of concurrent first adds the default', async () => {
    const app = await freshApp();
    const answers = await Promise.all(Array.from({ length: 8 }, (_, n) => t.call(app, APNS, { method: 'POST', body: apnsBody(`ios${n}`) })));
    for (const answer of answers) assert.equal(answer.statusCode, 200, answer.body);
    const all = (await ok(app, 'GET', APNS)).pushProviders;
    assert.equal(all.length, 8);
    assert.equal(defaults(all).length, 1);
    // The same id added at once: one wins, the others are told it exists.
    const same = await Promise.all(Array.from({ length: 4 }, () => t.call(app, APNS, { method: 'POST', body: apnsBody('twice') })));
    assert.deepEqual(same.map((r) => r.statusCode).sort(), [200, 400, 400, 400]);
    assert.ok(same.filter((r) => r.statusCode === 400).every((r) => errorCode(r) === 'ERR_PUSH_PROVIDER_ALREADY_EXISTS'));
  });
});

describe('forDelivery', () => {
  it('answers both kinds with their secrets opened, usable to sign (RS256 for FCM, ES256 for APNs)', async () => {
    const app = await freshApp();
    await ok(app, 'POST', FCM, fcmBody('web', { notificationInPayload: { web: { chat: true } } }));
    await ok(app, 'POST', FCM, fcmBody('android', { serviceAccountCreds: serviceAccount({ private_key: RSA_PEM[1] }) }));
    await ok(app, 'PUT', `${FCM}/default/android`);
    await ok(app, 'POST', APNS, apnsBody('ios', { productionMode: true, includeContentAvailable: true }));
    const delivery = await t.services.pushProviders.forDelivery(ctxOf(app));
    assert.deepEqual(delivery.unopened, []);
    assert.deepEqual(
      delivery.fcm.map((p) => [p.kind, p.providerId, p.isDefault]),
      [
        ['fcm', 'web', false],
        ['fcm', 'android', true],
      ],
    );
    const [web, android] = delivery.fcm as [(typeof delivery.fcm)[number], (typeof delivery.fcm)[number]];
    assert.deepEqual(web.serviceAccount, serviceAccount({ private_key_id: web.serviceAccount.private_key_id }));
    assert.equal(android.serviceAccount.private_key, RSA_PEM[1]);
    assert.equal(web.notificationInPayload.web.chat, true);
    const data = Buffer.from('header.claims');
    const rs256 = crypto.sign('sha256', data, android.serviceAccount.private_key);
    assert.ok(crypto.verify('sha256', data, crypto.createPublicKey(RSA[1]!), rs256));
    const [ios] = delivery.apns;
    assert.deepEqual(
      { ...ios!, p8Key: '' },
      {
        kind: 'apns',
        providerId: 'ios',
        isDefault: true,
        keyId: 'ABC123DEFG',
        teamId: 'TEAM456789',
        bundleId: 'com.example.parley',
        p8Key: '',
        productionMode: true,
        includeContentAvailable: true,
        includeMutableContent: false,
      },
    );
    const es256 = crypto.sign('sha256', data, { key: ios!.p8Key, dsaEncoding: 'ieee-p1363' });
    assert.ok(crypto.verify('sha256', data, { key: crypto.createPublicKey(P8[0]!), dsaEncoding: 'ieee-p1363' }, es256));
    // Which provider a push token uses: the one it names, else the default.
    assert.equal(providerFor(delivery.fcm, 'web')?.providerId, 'web');
    assert.equal(providerFor(delivery.fcm)?.providerId, 'android');
    assert.equal(providerFor(delivery.fcm, 'gone'), undefined);
    assert.equal(providerFor(delivery.apns)?.providerId, 'ios');
  });

  it('leaves out (and names) a provider whose sealed secret does not open, serving the others', async () => {
    const [a, b] = [await freshApp(), await freshApp()];
    await ok(a, 'POST', APNS, apnsBody('moved'));
    await ok(a, 'POST', APNS, apnsBody('kept'));
    await ok(b, 'POST', APNS, apnsBody('moved'));
    await ok(a, 'POST', FCM, fcmBody('moved'));
    await ok(b, 'POST', FCM, fcmBody('moved'));
    // B's sealed values copied into A's rows: bound to B, they do not open for A.
    const db = t.database.db;
    const bApns = await db.selectFrom('notification_apns_providers').select('p8_key_sealed').where('app_id', '=', b.appId).executeTakeFirstOrThrow();
    const bFcm = await db.selectFrom('notification_fcm_providers').select('service_account_sealed').where('app_id', '=', b.appId).executeTakeFirstOrThrow();
    await db.updateTable('notification_apns_providers').set({ p8_key_sealed: bApns.p8_key_sealed }).where('app_id', '=', a.appId).where('provider_id', '=', 'moved').execute();
    await db.updateTable('notification_fcm_providers').set({ service_account_sealed: bFcm.service_account_sealed }).where('app_id', '=', a.appId).execute();
    const delivery = await t.services.pushProviders.forDelivery(ctxOf(a));
    assert.deepEqual(
      delivery.apns.map((p) => p.providerId),
      ['kept'],
    );
    assert.deepEqual(delivery.fcm, []);
    assert.deepEqual(delivery.unopened, [
      { kind: 'fcm', providerId: 'moved' },
      { kind: 'apns', providerId: 'moved' },
    ]);
    // The lists do not open secrets: they still answer.
    assert.equal((await ok(a, 'GET', APNS)).pushProviders.length, 2);
  });
});
