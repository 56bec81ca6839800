import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import type { AppWithKey } from '../../src/repositories/apps.repository.js';
import { CredentialCache } from '../../src/repositories/credential-cache.js';

const entry = (appId: string, name = 'x'): AppWithKey => ({
  app: { id: appId, name, region: 'us', created_at: new Date() },
  key: { key_hash: 'h', scope: 'fullAccess' },
});

/** A lookup that counts its calls and answers when told to (or at once). */
function loader(answer: (call: number) => AppWithKey | undefined | Error) {
  const pending: Array<() => void> = [];
  let calls = 0;
  const load = () => {
    const call = ++calls;
    return new Promise<AppWithKey | undefined>((resolve, reject) => {
      pending.push(() => {
        const value = answer(call);
        if (value instanceof Error) reject(value);
        else resolve(value);
      });
    });
  };
  return {
    load,
    get calls() {
      return calls;
    },
    /** Answers every lookup waiting. */
    settle: async () => {
      for (const answer of pending.splice(0)) answer();
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

/** Looks up and answers at once. */
async function lookupNow(cache: CredentialCache, appId: string, keyHash: string, value: AppWithKey | undefined) {
  return cache.lookup(appId, keyHash, async () => value);
}

describe('CredentialCache', () => {
  beforeEach(() => mock.timers.enable({ apis: ['Date'], now: 1_000_000 }));
  afterEach(() => mock.timers.reset());

  it('answers a hit from the cache until the TTL passes', async () => {
    const cache = new CredentialCache(5_000);
    const source = loader(() => entry('a'));
    const first = cache.lookup('a', 'h', source.load);
    await source.settle();
    assert.equal((await first)?.app.id, 'a');
    assert.equal((await cache.lookup('a', 'h', source.load))?.app.id, 'a');
    assert.equal(source.calls, 1);
    mock.timers.tick(5_001);
    const again = cache.lookup('a', 'h', source.load);
    assert.equal(source.calls, 2, 'expired: looked up again');
    await source.settle();
    assert.equal((await again)?.app.id, 'a');
  });

  it('keeps pairs apart: another key or app is its own lookup', async () => {
    const cache = new CredentialCache(5_000);
    await lookupNow(cache, 'a', 'h', entry('a'));
    assert.equal(await lookupNow(cache, 'a', 'other', undefined), undefined);
    assert.equal((await lookupNow(cache, 'b', 'h', entry('b')))?.app.id, 'b');
    assert.equal((await lookupNow(cache, 'a', 'h', undefined))?.app.id, 'a', 'still cached');
  });

  it('shares one lookup among concurrent misses of a pair, and a failure among them', async () => {
    const cache = new CredentialCache(5_000);
    const source = loader((call) => (call === 1 ? new Error('down') : entry('a')));
    const failing = Promise.allSettled(Array.from({ length: 10 }, () => cache.lookup('a', 'h', source.load)));
    assert.equal(source.calls, 1);
    await source.settle();
    for (const result of await failing) assert.equal(result.status, 'rejected');
    const next = Array.from({ length: 10 }, () => cache.lookup('a', 'h', source.load));
    assert.equal(source.calls, 2, 'a failure is not cached');
    await source.settle();
    for (const value of await Promise.all(next)) assert.equal(value?.app.id, 'a');
  });

  it('refreshes an entry in its last fifth in the background, answering from it meanwhile', async () => {
    const cache = new CredentialCache(5_000);
    const source = loader((call) => entry('a', `v${call}`));
    const first = cache.lookup('a', 'h', source.load);
    await source.settle();
    assert.equal((await first)?.app.name, 'v1');
    mock.timers.tick(3_999);
    assert.equal((await cache.lookup('a', 'h', source.load))?.app.name, 'v1');
    assert.equal(source.calls, 1, 'not yet due');
    mock.timers.tick(2);
    assert.equal((await cache.lookup('a', 'h', source.load))?.app.name, 'v1', 'answered at once, not after the refresh');
    assert.equal((await cache.lookup('a', 'h', source.load))?.app.name, 'v1');
    assert.equal(source.calls, 2, 'one refresh');
    await source.settle();
    mock.timers.tick(3_999);
    assert.equal((await cache.lookup('a', 'h', source.load))?.app.name, 'v2', 'the refreshed entry lives a full TTL');
    assert.equal(source.calls, 2);
  });

  it('keeps an entry whose refresh failed until it expires', async () => {
    const cache = new CredentialCache(5_000);
    const source = loader((call) => (call === 2 ? new Error('down') : entry('a', `v${call}`)));
    const first = cache.lookup('a', 'h', source.load);
    await source.settle();
    await first;
    mock.timers.tick(4_500);
    assert.equal((await cache.lookup('a', 'h', source.load))?.app.name, 'v1');
    await source.settle();
    assert.equal((await cache.lookup('a', 'h', source.load))?.app.name, 'v1', 'still served');
    assert.equal(source.calls, 3, 'and refreshed again');
    await source.settle();
    mock.timers.tick(600);
    assert.equal((await cache.lookup('a', 'h', source.load))?.app.name, 'v3');
  });

  it('remembers refusals (a pair without a key, or no app) until the TTL passes, apart from the hits', async () => {
    const cache = new CredentialCache(5_000, 2);
    const noKey: AppWithKey = { app: entry('a').app, key: undefined };
    let calls = 0;
    const load = async () => (++calls, noKey);
    assert.equal((await cache.lookup('a', 'h', load))?.key, undefined);
    assert.equal((await cache.lookup('a', 'h', load))?.app.id, 'a', 'the same answer, from the cache');
    assert.equal(await cache.lookup('b', 'h', async () => (++calls, undefined)), undefined);
    assert.equal(await cache.lookup('b', 'h', async () => (++calls, undefined)), undefined);
    assert.equal(calls, 2);
    assert.equal(cache.knownValid('a', 'h'), false, 'a refusal is not a valid key');
    mock.timers.tick(5_001);
    await cache.lookup('a', 'h', load);
    assert.equal(calls, 3, 'expired: looked up again');
    // A flood of distinct wrong keys drops only refusals: the hits stay.
    await lookupNow(cache, 'a', 'good', entry('a'));
    for (const key of ['w1', 'w2', 'w3', 'w4']) await lookupNow(cache, 'a', key, noKey);
    assert.ok(cache.knownValid('a', 'good'));
    assert.equal((await lookupNow(cache, 'a', 'w4', entry('a')))?.key, undefined, 'the newest refusal is kept');
    assert.ok(await lookupNow(cache, 'a', 'w1', entry('a')).then((found) => found?.key), 'the oldest refusal was dropped');
  });

  it('forgets a refusal when the key or its app is created or changed (an invalidation), and stores none a change overtook', async () => {
    const cache = new CredentialCache(5_000);
    assert.equal(await lookupNow(cache, 'a', 'h', undefined), undefined);
    cache.invalidate('a', 'h');
    assert.ok(await lookupNow(cache, 'a', 'h', entry('a')), 'the new key is found at once');
    assert.equal(await lookupNow(cache, 'b', 'h', undefined), undefined);
    cache.invalidate('b');
    assert.ok(await lookupNow(cache, 'b', 'h', entry('b')), 'the new app is found at once');
    const source = loader(() => undefined);
    const racing = cache.lookup('c', 'h', source.load);
    cache.invalidate('c', 'h');
    await source.settle();
    assert.equal(await racing, undefined);
    assert.ok(await lookupNow(cache, 'c', 'h', entry('c')), 'the refusal found before the change was not stored');
  });

  it('ends a hit whose refresh finds the key gone', async () => {
    const cache = new CredentialCache(5_000);
    await lookupNow(cache, 'a', 'h', entry('a'));
    mock.timers.tick(4_500);
    const source = loader(() => undefined);
    assert.ok(await cache.lookup('a', 'h', source.load), 'answered from the entry while it refreshes');
    await source.settle();
    assert.equal(await lookupNow(cache, 'a', 'h', entry('a')), undefined, 'refused from the cache');
  });

  it('forgets one key, or all keys of an app', async () => {
    const cache = new CredentialCache();
    await lookupNow(cache, 'a', 'h1', entry('a'));
    await lookupNow(cache, 'a', 'h2', entry('a'));
    await lookupNow(cache, 'b', 'h1', entry('b'));
    cache.invalidate('a', 'h1');
    assert.equal(await lookupNow(cache, 'a', 'h1', undefined), undefined);
    assert.ok(await lookupNow(cache, 'a', 'h2', undefined));
    cache.invalidate('a');
    assert.equal(await lookupNow(cache, 'a', 'h2', undefined), undefined);
    assert.ok(await lookupNow(cache, 'b', 'h1', undefined), "another app's entry stays");
  });

  it('neither stores nor shares a lookup that an invalidation overtook', async () => {
    const cache = new CredentialCache(5_000);
    const source = loader((call) => entry('a', `v${call}`));
    const before = cache.lookup('a', 'h', source.load);
    cache.invalidate('a', 'h');
    const after = cache.lookup('a', 'h', source.load);
    assert.equal(source.calls, 2, 'a caller after the invalidation looks up anew');
    await source.settle();
    assert.equal((await before)?.app.name, 'v1');
    assert.equal((await after)?.app.name, 'v2');
    assert.equal((await cache.lookup('a', 'h', source.load))?.app.name, 'v2', 'only the later lookup was stored');
    // An invalidation of another key also keeps a running lookup out of the cache.
    cache.invalidate('a', 'h');
    const racing = cache.lookup('a', 'h', source.load);
    cache.invalidate('b', 'x');
    await source.settle();
    assert.equal((await racing)?.app.name, 'v3');
    assert.equal(await lookupNow(cache, 'a', 'h', undefined), undefined, 'not stored');
  });

  it('holds at most maxEntries, dropping the oldest', async () => {
    const cache = new CredentialCache(60_000, 2);
    for (const key of ['1', '2', '3']) await lookupNow(cache, 'a', key, entry('a'));
    assert.equal(await lookupNow(cache, 'a', '1', undefined), undefined);
    assert.ok((await lookupNow(cache, 'a', '2', undefined)) && (await lookupNow(cache, 'a', '3', undefined)));
  });

  it('caches nothing with a TTL of 0', async () => {
    const cache = new CredentialCache(0);
    await lookupNow(cache, 'a', 'h', entry('a'));
    assert.equal(await lookupNow(cache, 'a', 'h', undefined), undefined);
  });
});
