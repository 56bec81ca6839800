import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import type { AppWithKey } from '../../src/repositories/apps.repository.js';
import { CredentialCache } from '../../src/repositories/credential-cache.js';

const entry = (appId: string): AppWithKey => ({
  app: { id: appId, name: 'x', region: 'us', created_at: new Date() },
  key: { key_hash: 'h', scope: 'fullAccess' },
});

describe('CredentialCache', () => {
  it('returns what was set until the TTL passes', () => {
    mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
    try {
      const cache = new CredentialCache(5_000);
      cache.set('a', 'h', entry('a'));
      assert.equal(cache.get('a', 'h')?.app.id, 'a');
      assert.equal(cache.get('a', 'other'), undefined);
      assert.equal(cache.get('b', 'h'), undefined);
      mock.timers.tick(5_001);
      assert.equal(cache.get('a', 'h'), undefined);
    } finally {
      mock.timers.reset();
    }
  });

  it('forgets one key, or all keys of an app', () => {
    const cache = new CredentialCache();
    cache.set('a', 'h1', entry('a'));
    cache.set('a', 'h2', entry('a'));
    cache.set('b', 'h1', entry('b'));
    cache.invalidate('a', 'h1');
    assert.equal(cache.get('a', 'h1'), undefined);
    assert.ok(cache.get('a', 'h2'));
    cache.invalidate('a');
    assert.equal(cache.get('a', 'h2'), undefined);
    assert.ok(cache.get('b', 'h1'), "another app's entry stays");
  });

  it('holds at most maxEntries, dropping the oldest', () => {
    const cache = new CredentialCache(60_000, 2);
    cache.set('a', '1', entry('a'));
    cache.set('a', '2', entry('a'));
    cache.set('a', '3', entry('a'));
    assert.equal(cache.get('a', '1'), undefined);
    assert.ok(cache.get('a', '2') && cache.get('a', '3'));
  });

  it('caches nothing with a TTL of 0', () => {
    const cache = new CredentialCache(0);
    cache.set('a', 'h', entry('a'));
    assert.equal(cache.get('a', 'h'), undefined);
  });
});
