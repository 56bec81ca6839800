import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PasswordHasher } from '../../src/domain/passwords.js';

describe('PasswordHasher', () => {
  it('hashes and verifies', async () => {
    const hasher = new PasswordHasher(2);
    const stored = await hasher.hash('secret');
    assert.match(stored, /^scrypt\$16384\$8\$1\$/);
    assert.equal(await hasher.verify('secret', stored), true);
    assert.equal(await hasher.verify('wrong', stored), false);
    assert.equal(await hasher.verify('secret', 'not-a-hash'), false);
  });

  it('runs at most its concurrency at once, a request’s own check before a bulk import’s hashes', async () => {
    const hasher = new PasswordHasher(1);
    const stored = await hasher.hash('pw');
    const done: string[] = [];
    const bulk = Array.from({ length: 6 }, (_, n) => hasher.hash(`bulk ${n}`, 'bulk').then(() => done.push(`bulk ${n}`)));
    // Asked after all six, while the first runs: it goes next.
    const join = hasher.verify('pw', stored).then((ok) => done.push(`join ${ok}`));
    await Promise.all([...bulk, join]);
    assert.deepEqual(done.slice(0, 2), ['bulk 0', 'join true']);
    assert.deepEqual(done.slice(2), ['bulk 1', 'bulk 2', 'bulk 3', 'bulk 4', 'bulk 5']);
  });
});
