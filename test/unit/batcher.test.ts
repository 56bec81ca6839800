import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Batcher, runApart } from '../../src/db/batcher.js';

describe('Batcher', () => {
  it('sends items submitted together as one batch, and answers each in order', async () => {
    const batches: number[][] = [];
    const batcher = new Batcher<number, number>(
      async (items) => {
        batches.push(items);
        return items.map((item) => item * 10);
      },
      { maxBatch: 100, maxInFlight: 1 },
    );
    const results = await Promise.all([1, 2, 3].map((n) => batcher.submit(n)));
    assert.deepEqual(results, [10, 20, 30]);
    assert.deepEqual(batches, [[1, 2, 3]]);
  });

  it('queues items while a batch is in flight and sends them as the next batch', async () => {
    const batches: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const batcher = new Batcher<number, number>(
      async (items) => {
        batches.push(items);
        if (batches.length === 1) await gate;
        return items;
      },
      { maxBatch: 100, maxInFlight: 1 },
    );
    const first = batcher.submit(1);
    await new Promise((resolve) => setImmediate(resolve));
    const later = [2, 3, 4].map((n) => batcher.submit(n));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(batches, [[1]], 'nothing more is sent while the first batch runs');
    release();
    assert.deepEqual(await Promise.all([first, ...later]), [1, 2, 3, 4]);
    assert.deepEqual(batches, [[1], [2, 3, 4]]);
  });

  it('splits at maxBatch and runs up to maxInFlight batches at once', async () => {
    let running = 0;
    let most = 0;
    const sizes: number[] = [];
    const batcher = new Batcher<number, number>(
      async (items) => {
        running++;
        most = Math.max(most, running);
        sizes.push(items.length);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running--;
        return items;
      },
      { maxBatch: 3, maxInFlight: 2 },
    );
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => batcher.submit(i)));
    assert.deepEqual(
      results,
      Array.from({ length: 10 }, (_, i) => i),
    );
    assert.ok(sizes.every((size) => size <= 3));
    assert.equal(
      sizes.reduce((a, b) => a + b, 0),
      10,
    );
    assert.equal(most, 2);
  });

  it('rejects only the items whose result is an Error, and every item when the batch fails', async () => {
    const batcher = new Batcher<number, number>(async (items) => items.map((n) => (n % 2 ? new Error(`odd ${n}`) : n)), {
      maxBatch: 10,
      maxInFlight: 1,
    });
    const settled = await Promise.allSettled([1, 2, 3].map((n) => batcher.submit(n)));
    assert.deepEqual(
      settled.map((s) => s.status),
      ['rejected', 'fulfilled', 'rejected'],
    );
    const failing = new Batcher<number, number>(
      async () => {
        throw new Error('database down');
      },
      { maxBatch: 10, maxInFlight: 1 },
    );
    const all = await Promise.allSettled([1, 2].map((n) => failing.submit(n)));
    assert.ok(all.every((s) => s.status === 'rejected' && /database down/.test(String(s.reason))));
    // It keeps working after a failed batch.
    assert.equal(await batcher.submit(4), 4);
  });

  it('lets a batch that runs past stalledAfterMs give its place to the next, up to maxStalled at once', async () => {
    const gates = new Map<number, () => void>();
    const started: number[][] = [];
    const batcher = new Batcher<number, number>(
      async (items) => {
        started.push(items);
        // Items below 10 wait until released: batches blocked on a lock.
        if (items[0]! < 10) await new Promise<void>((resolve) => gates.set(items[0]!, resolve));
        return items;
      },
      { maxBatch: 1, maxInFlight: 1, stalledAfterMs: 20, maxStalled: 2 },
    );
    const blocked = [1, 2, 3].map((n) => batcher.submit(n));
    await new Promise((resolve) => setTimeout(resolve, 100));
    // 1 stalled, then 2 stalled; 3 holds the one place, as no more than 2 may be stalled.
    assert.deepEqual(started, [[1], [2], [3]]);
    const next = batcher.submit(11);
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.deepEqual(started.length, 3, 'nothing runs past maxInFlight + maxStalled');
    gates.get(1)!();
    // A stalled batch ending frees a stalled place: 3 becomes stalled, and 11 runs.
    assert.equal(await next, 11);
    gates.get(2)!();
    gates.get(3)!();
    assert.deepEqual(await Promise.all(blocked), [1, 2, 3]);
    // Quick batches keep to maxInFlight.
    let running = 0;
    let most = 0;
    const quick = new Batcher<number, number>(
      async (items) => {
        running++;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 2));
        running--;
        return items;
      },
      { maxBatch: 1, maxInFlight: 2, stalledAfterMs: 1_000, maxStalled: 4 },
    );
    await Promise.all(Array.from({ length: 8 }, (_, i) => quick.submit(i)));
    assert.equal(most, 2);
  });

  it('runs a batch whose data the database refuses in halves, so only the item at fault fails', async () => {
    const statements: number[][] = [];
    // A statement fails as PostgreSQL does for text it cannot store (SQLSTATE 22P05) when it holds item 13.
    const run = async (items: number[]) => {
      statements.push(items);
      if (items.includes(13)) throw Object.assign(new Error('unsupported Unicode escape sequence'), { code: '22P05' });
      return items.map((n) => n * 2);
    };
    const items = Array.from({ length: 32 }, (_, n) => n);
    const results = await runApart(run, items);
    results.forEach((result, n) => (n === 13 ? assert.match(String(result), /Unicode/) : assert.equal(result, n * 2)));
    assert.ok(statements.length <= 1 + 2 * Math.log2(items.length), `${statements.length} statements`);
    // Through a Batcher: every caller gets its own answer.
    const batcher = new Batcher<number, number>(run, { maxBatch: 100, maxInFlight: 1 });
    const settled = await Promise.allSettled(items.map((n) => batcher.submit(n)));
    assert.deepEqual(settled.filter((s) => s.status === 'rejected').length, 1);
    assert.equal(settled[13]!.status, 'rejected');
  });

  it('runs a batch again after a deadlock, and fails a batch at once for a failure that is not about its data', async () => {
    let runs = 0;
    const deadlocked = await runApart(
      async (items: number[]) => {
        if (++runs < 3) throw Object.assign(new Error('deadlock detected'), { code: '40P01' });
        return items;
      },
      [1, 2, 3],
    );
    assert.deepEqual(deadlocked, [1, 2, 3]);
    assert.equal(runs, 3);
    let timedOut = 0;
    await assert.rejects(
      runApart(async () => {
        timedOut++;
        throw Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
      }, [1, 2, 3, 4]),
      /statement timeout/,
    );
    assert.equal(timedOut, 1, 'a timeout is not split: each part would time out alike');
  });
});
