/**
 * Refused credentials cost one cached lookup each, and are limited (docs/security.md,
 * docs/rate-limits.md): a wrong apiKey or management secret sent again is refused from the
 * cache without a query; failed authentications past their minute's limit per client address
 * or per app answer 429 with Retry-After, without a lookup; a key or app created is usable at
 * once on this node. The database work is counted as the statements that read credentials.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Redis } from 'ioredis';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { silentLogger } from '../../src/domain/context.js';
import { body, createTestApp, errorCode, hostOf, newManagementCredential, type ManagementCredential, type TestApp } from '../helpers/app.js';

const PER_ADDRESS = 40;
const PER_APP = 60;

let t: TestApp;
let management: ManagementCredential;
before(async () => {
  // Limits that never bind but for the failed authentications.
  // The rate-limit windows' clock stands still: a run that crossed a minute's end would start a new
  // window of failures part-way through a test (a flake, not what the tests are about).
  const now = Date.now();
  t = await createTestApp({ authFailureLimits: { perAddress: PER_ADDRESS, perApp: PER_APP }, rateLimits: { core: 0, standard: 0, import: 0 }, clock: () => now });
  management = await newManagementCredential(t);
});
after(async () => {
  await t.close();
});

/** Counts the statements run that read API keys or management credentials, until `stop`. */
function countCredentialReads(): { readonly count: number; stop(): void } {
  const executor = t.database.db.getExecutor();
  let owner: any = Object.getPrototypeOf(executor);
  while (owner && !Object.hasOwn(owner, 'executeQuery')) owner = Object.getPrototypeOf(owner);
  const original = owner.executeQuery;
  let count = 0;
  owner.executeQuery = function (this: unknown, compiled: { sql: string }, ...rest: unknown[]) {
    if (/"api_keys"|"management_keys"/.test(compiled.sql)) count++;
    return original.call(this, compiled, ...rest);
  };
  return {
    get count() {
      return count;
    },
    stop() {
      owner.executeQuery = original;
    },
  };
}

/** An app of its own for each test (the limits count per app). */
function newApp(name = 'Target') {
  return t.services.apps.create({ appId: '', requestId: 'test', log: silentLogger }, { name });
}

let addresses = 0;
/** A client address of its own for each test (the limits count per address). */
function newAddress(): string {
  addresses++;
  return `198.51.100.${addresses}`;
}

function withKey(appId: string, apiKey: string, address: string, url = '/v3/users'): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'GET', url, headers: { host: hostOf({ appId }), apikey: apiKey }, remoteAddress: address });
}

function managementGet(credential: ManagementCredential, address: string, options: { host?: string; url?: string } = {}): Promise<LightMyRequestResponse> {
  const request: InjectOptions = {
    method: 'GET',
    url: options.url ?? '/mgmt/apps',
    headers: { host: options.host ?? 'localhost', key: credential.key, secret: credential.secret },
    remoteAddress: address,
  };
  return t.app.inject(request);
}

async function statuses(responses: Array<Promise<LightMyRequestResponse>> | LightMyRequestResponse[]): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  for (const response of await Promise.all(responses)) counts.set(response.statusCode, (counts.get(response.statusCode) ?? 0) + 1);
  return counts;
}

describe('refused credentials', () => {
  it('refuses a wrong apiKey sent again from the cache: one lookup, then none', async () => {
    const app = await newApp();
    const address = newAddress();
    const reads = countCredentialReads();
    try {
      for (let i = 0; i < 30; i++) {
        const response = await withKey(app.appId, 'wrong-key-sent-again', address);
        assert.equal(response.statusCode, 401);
        assert.equal(errorCode(response), 'AUTH_ERR_APIKEY_NOT_FOUND');
      }
      // So is a request for an app that does not exist.
      for (let i = 0; i < 10; i++) assert.equal(errorCode(await withKey('no-such-app', 'any', address)), 'AUTH_ERR_INVALID_APPID');
      assert.equal(reads.count, 2, 'one lookup per refused pair');
    } finally {
      reads.stop();
    }
    assert.equal((await withKey(app.appId, app.apiKey, newAddress())).statusCode, 200, 'the right key still works');
  });

  it('answers 429 with Retry-After past the failures allowed per client address, looking nothing up', async () => {
    const [app, other] = [await newApp(), await newApp()];
    // The app's key, used once from the address before: known valid on this node.
    const address = newAddress();
    assert.equal((await withKey(app.appId, app.apiKey, address)).statusCode, 200);
    const reads = countCredentialReads();
    const answers: LightMyRequestResponse[] = [];
    try {
      for (let i = 0; i < 100; i++) answers.push(await withKey(i % 2 ? app.appId : other.appId, `distinct-wrong-key-${i}`, address));
    } finally {
      reads.stop();
    }
    assert.deepEqual([...(await statuses(answers))].sort(), [
      [401, PER_ADDRESS],
      [429, 100 - PER_ADDRESS],
    ]);
    assert.equal(reads.count, PER_ADDRESS, 'a lookup for each refusal within the limit, none after it');
    const refused = answers.at(-1)!;
    assert.equal(errorCode(refused), 'ERR_TOO_MANY_REQUESTS');
    assert.match(body(refused).error.message, /failed authentications/);
    const wait = Number(refused.headers['retry-after']);
    assert.ok(wait >= 1 && wait <= 60, `Retry-After ${refused.headers['retry-after']}`);
    // Even a wrong key cached as refused, and a key never seen, from that address.
    assert.equal((await withKey(other.appId, 'distinct-wrong-key-0', address)).statusCode, 429);
    assert.equal((await withKey('no-such-app', 'any', address)).statusCode, 429);
    // A key known valid still works from it, unlike one not looked up before; another address is not limited.
    assert.equal((await withKey(app.appId, app.apiKey, address)).statusCode, 200);
    assert.equal((await withKey(other.appId, other.apiKey, address)).statusCode, 429);
    assert.equal((await withKey(other.appId, other.apiKey, newAddress())).statusCode, 200);
    assert.equal((await withKey(app.appId, 'another-wrong-key', newAddress())).statusCode, 401);
  });

  it('counts an IPv6 client by its /64, and an IPv4-mapped address as the IPv4 one', async () => {
    const app = await newApp();
    for (let i = 0; i < PER_ADDRESS; i++) assert.equal((await withKey(app.appId, `v6-wrong-${i}`, `2001:db8:7:7::${(i + 1).toString(16)}`)).statusCode, 401);
    assert.equal((await withKey(app.appId, 'v6-wrong', '2001:0db8:0007:0007:ffff:1:2:3')).statusCode, 429, 'the same /64');
    assert.equal((await withKey(app.appId, 'v6-wrong', '2001:db8:7:8::1')).statusCode, 401, 'another /64');
    // Another app, so that the per-app limit is not the one reached.
    const [second, v4] = [await newApp(), newAddress()];
    for (let i = 0; i < PER_ADDRESS; i++) assert.equal((await withKey(second.appId, `v4-wrong-${i}`, v4)).statusCode, 401);
    assert.equal((await withKey(second.appId, 'v4-wrong', `::ffff:${v4}`)).statusCode, 429);
  });

  it('answers 429 past the failures allowed per app, whatever the addresses, and leaves other apps alone', async () => {
    const app = await newApp();
    assert.equal((await withKey(app.appId, app.apiKey, newAddress())).statusCode, 200, "the backend's key, in use before");
    const reads = countCredentialReads();
    const answers: LightMyRequestResponse[] = [];
    try {
      for (let i = 0; i < 100; i++) answers.push(await withKey(app.appId, `spread-wrong-key-${i}`, newAddress()));
    } finally {
      reads.stop();
    }
    assert.deepEqual([...(await statuses(answers))].sort(), [
      [401, PER_APP],
      [429, 100 - PER_APP],
    ]);
    assert.equal(reads.count, PER_APP);
    assert.equal((await withKey(t.appB.appId, 'wrong-for-b', newAddress())).statusCode, 401, 'another app counts its own');
    assert.equal((await withKey(app.appId, app.apiKey, newAddress())).statusCode, 200, 'a key known valid on this node still works');
    // A key of the app not looked up on this node before waits for the minute, as the wrong ones.
    assert.equal((await withKey(app.appId, app.authKey, newAddress())).statusCode, 429);
  });

  it('uses a key created, or an app created, at once, though refused a moment before', async () => {
    const address = newAddress();
    // A key made now works on its first request.
    const app = await newApp();
    const created = await t.app.inject({ method: 'POST', url: '/v3/apikeys', headers: { host: hostOf(app), apikey: app.apiKey }, payload: { name: 'New', scope: 'fullAccess' } });
    assert.equal(created.statusCode, 200, created.body);
    assert.equal((await withKey(app.appId, body(created).data.apiKey, address)).statusCode, 200);
    // An app refused (no such app, remembered) is found once it is created, with the same request.
    const appId = `fresh-${process.pid}-${Date.now() % 100000}`;
    const rules = () => t.app.inject({ method: 'GET', url: '/v3/moderation/rules', headers: { host: hostOf({ appId }), key: management.key, secret: management.secret }, remoteAddress: address });
    assert.equal(errorCode(await rules()), 'AUTH_ERR_INVALID_APPID');
    assert.equal(errorCode(await rules()), 'AUTH_ERR_INVALID_APPID');
    await t.services.apps.create({ appId: '', requestId: 'test', log: silentLogger }, { name: 'Fresh', appId });
    const after = await rules();
    assert.equal(after.statusCode, 200, after.body);
  });
});

describe('refused management credentials', () => {
  it('refuses a wrong secret sent again from the cache, and 429 past the failures allowed per address', async () => {
    const address = newAddress();
    const wrong = { key: management.key, secret: 'f'.repeat(64) };
    const reads = countCredentialReads();
    const answers: LightMyRequestResponse[] = [];
    try {
      for (let i = 0; i < 20; i++) answers.push(await managementGet(wrong, address));
      assert.equal(reads.count, 1, 'one lookup for the pair sent twenty times');
      for (let i = 0; i < 40; i++) answers.push(await managementGet({ key: 'ab'.repeat(16), secret: `${i}` }, address));
    } finally {
      reads.stop();
    }
    assert.deepEqual([...(await statuses(answers))].sort(), [
      [401, PER_ADDRESS],
      [429, 60 - PER_ADDRESS],
    ]);
    assert.equal(reads.count, 1 + (PER_ADDRESS - 20), 'no lookup past the limit');
    assert.equal(errorCode(answers.at(-1)!), 'ERR_TOO_MANY_REQUESTS');
    assert.ok(Number(answers.at(-1)!.headers['retry-after']) >= 1);
    // The right credential works from another address, and a new credential at once.
    assert.equal((await managementGet(management, newAddress())).statusCode, 200);
    const fresh = await newManagementCredential(t);
    assert.equal((await managementGet(fresh, newAddress())).statusCode, 200);
  });

  it('revokes a credential at once though its refusals are cached', async () => {
    const credential = await newManagementCredential(t);
    const address = newAddress();
    assert.equal((await managementGet(credential, address)).statusCode, 200);
    await t.services.management.revokeKey({ appId: '', requestId: 'test', log: silentLogger }, credential.key);
    assert.equal((await managementGet(credential, address)).statusCode, 401);
  });
});

describe('failed authentications counted in Redis', () => {
  // Redis as the Redis integration test finds it (CI starts one).
  const url = process.env.PARLEY_REDIS_URL || 'redis://127.0.0.1:6379';
  const prefix = `parley-test-${crypto.randomBytes(4).toString('hex')}:`;
  let nodes: TestApp[] = [];
  before(async () => {
    const config = { authFailureLimits: { perAddress: PER_ADDRESS, perApp: PER_APP }, redisUrl: url, redisKeyPrefix: prefix };
    nodes = [await createTestApp(config), await createTestApp(config)];
  });
  after(async () => {
    for (const node of nodes) await node.close();
    const redis = new Redis(url);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });

  it('shares the failures of an address between the nodes', async () => {
    const address = '203.0.113.7';
    const answers: LightMyRequestResponse[] = [];
    for (let i = 0; i < 60; i++) {
      const node = nodes[i % 2]!;
      answers.push(await node.app.inject({ method: 'GET', url: '/v3/users', headers: { host: hostOf(node.appA), apikey: `wrong-${i}` }, remoteAddress: address }));
    }
    assert.deepEqual([...(await statuses(answers))].sort(), [
      [401, PER_ADDRESS],
      [429, 60 - PER_ADDRESS],
    ]);
    // Another client is not held up.
    const other = await nodes[0]!.app.inject({ method: 'GET', url: '/v3/users', headers: { host: hostOf(nodes[0]!.appA), apikey: 'wrong' }, remoteAddress: '2001:db8::1' });
    assert.equal(other.statusCode, 401);
  });
});
