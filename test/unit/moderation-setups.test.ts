/**
 * ModerationSetups (services/moderation/setups.ts): each app's compiled moderation set-up, kept
 * by a node. Compiled once, dropped by a change on this node, checked against its version when
 * another node may have changed it or when it is older than recheckMs, never kept when a change
 * raced its load, and bounded by the bytes of its matchers.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ModerationMatcher } from '../../src/domain/moderation/matcher.js';
import type { KeywordList, ModerationRule } from '../../src/domain/moderation/rules.js';
import { ModerationSetups, type StoredSetup } from '../../src/services/moderation/setups.js';

/** A store of versions per app, counting what the cache asks of it. */
function fakeStore(bytes = 100) {
  const versions = new Map<string, number>();
  const calls = { loads: 0, versions: 0, compiles: 0 };
  let gate: Promise<void> | undefined;
  const store = {
    versions,
    calls,
    /** Holds every load until the returned function is called. */
    hold(): () => void {
      let open!: () => void;
      gate = new Promise((resolve) => (open = resolve));
      return () => {
        gate = undefined;
        open();
      };
    },
    load: async (appId: string): Promise<StoredSetup> => {
      calls.loads++;
      const version = String(versions.get(appId) ?? 0);
      if (gate) await gate;
      return { version, rules: [] as ModerationRule[], lists: [] as KeywordList[], hook: undefined };
    },
    version: async (appId: string) => {
      calls.versions++;
      return String(versions.get(appId) ?? 0);
    },
    compile: (): ModerationMatcher => {
      calls.compiles++;
      return { evaluates: false, bytes, evaluate: () => ({ action: undefined, matches: [] }) };
    },
  };
  return store;
}

function setupsOf(store: ReturnType<typeof fakeStore>, options: { maxBytes?: number; recheckMs?: number; now?: () => number } = {}) {
  return new ModerationSetups({
    load: store.load,
    version: store.version,
    compile: store.compile,
    maxBytes: options.maxBytes ?? 1_000_000,
    recheckMs: options.recheckMs ?? 10_000,
    now: options.now ?? (() => 0),
  });
}

describe('ModerationSetups', () => {
  it('compiles an app once, then answers without reading anything', async () => {
    const store = fakeStore();
    const setups = setupsOf(store);
    await setups.get('a');
    await setups.get('a');
    await setups.get('a');
    assert.deepEqual(store.calls, { loads: 1, versions: 0, compiles: 1 });
  });

  it('shares one load among concurrent misses of an app', async () => {
    const store = fakeStore();
    const setups = setupsOf(store);
    const open = store.hold();
    const pending = [setups.get('a'), setups.get('a'), setups.get('a')];
    open();
    const got = await Promise.all(pending);
    assert.equal(store.calls.loads, 1);
    assert.ok(got.every((setup) => setup === got[0]));
  });

  it('compiles again after a change on this node (invalidate)', async () => {
    const store = fakeStore();
    const setups = setupsOf(store);
    await setups.get('a');
    store.versions.set('a', 1);
    setups.invalidate('a');
    assert.equal((await setups.get('a')).version, '1');
    assert.equal(store.calls.loads, 2);
  });

  it('checks the version once another node may have changed it, and compiles again only if it moved', async () => {
    const store = fakeStore();
    const setups = setupsOf(store);
    await setups.get('a');
    setups.suspectAll();
    await setups.get('a');
    assert.deepEqual(store.calls, { loads: 1, versions: 1, compiles: 1 }, 'the same version: the copy is kept');
    await setups.get('a');
    assert.equal(store.calls.versions, 1, 'trusted again after the check');
    store.versions.set('a', 2);
    setups.suspectAll();
    assert.equal((await setups.get('a')).version, '2');
    assert.deepEqual(store.calls, { loads: 2, versions: 2, compiles: 2 });
  });

  it('trusts a copy recheckMs at most, should a NOTIFY be lost', async () => {
    const store = fakeStore();
    let now = 0;
    const setups = setupsOf(store, { recheckMs: 1_000, now: () => now });
    await setups.get('a');
    now = 999;
    await setups.get('a');
    assert.equal(store.calls.versions, 0);
    now = 1_000;
    store.versions.set('a', 5);
    assert.equal((await setups.get('a')).version, '5');
    assert.deepEqual(store.calls, { loads: 2, versions: 1, compiles: 2 });
  });

  it('does not keep a load that a change raced: the next call compiles again', async () => {
    const store = fakeStore();
    const setups = setupsOf(store);
    const open = store.hold();
    const racing = setups.get('a');
    store.versions.set('a', 1);
    setups.invalidate('a');
    open();
    assert.equal((await racing).version, '0', 'the call that began before the change gets what it read');
    assert.equal((await setups.get('a')).version, '1');
    assert.equal(store.calls.loads, 2);
  });

  it('keeps at most maxBytes of compiled matchers, the least recently used out', async () => {
    const store = fakeStore(400);
    const setups = setupsOf(store, { maxBytes: 1_000 });
    await setups.get('a');
    await setups.get('b');
    await setups.get('a');
    await setups.get('c');
    assert.deepEqual(setups.size, { apps: 2, bytes: 800 });
    await setups.get('a');
    assert.equal(store.calls.loads, 3, 'a was used last: kept');
    await setups.get('b');
    assert.equal(store.calls.loads, 4, 'b was the least recently used: compiled again');
  });
});
