// A consumer's fan-out runs (src/services/events/fan-out-runs.ts): gathered, one at a time, and a
// second beside a run that takes long, so one app's huge fan-out does not hold up the others.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fanOutRuns } from '../../src/services/events/fan-out-runs.js';

async function until(predicate: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const options = { stopped: () => false, failed: (error: unknown) => assert.fail(String(error)) };

describe('fan-out runs', () => {
  it('starts a second run beside one that takes long, and no third', async () => {
    let started = 0;
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const runs = fanOutRuns(
      async () => {
        started++;
        // The first run holds (an app's huge fan-out); the others end at once.
        if (started === 1) await blocked;
      },
      { ...options, spareAfterMs: 20 },
    );
    runs.now();
    await until(() => started === 2, 'the second run');
    runs.now();
    runs.now();
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Calls while the first holds go to it (once more after it), not to new runs.
    assert.ok(started <= 3, `at most the two runs and the spare's own: ${started}`);
    release();
    await runs.idle();
    const after = started;
    assert.ok(after >= 3, 'the calls made while it held are run once more');
  });

  it('without spareAfterMs, one run at a time whatever it takes', async () => {
    let running = 0;
    let most = 0;
    let n = 0;
    const runs = fanOutRuns(async () => {
      running++;
      most = Math.max(most, running);
      n++;
      await new Promise((resolve) => setTimeout(resolve, 30));
      running--;
    }, options);
    runs.now();
    runs.now();
    runs.now();
    await runs.idle();
    assert.equal(most, 1);
    assert.equal(n, 2, 'the calls made during the first make one more run');
  });

  it('gathers the calls of gatherMs into one run, and drops a gather on cancel', async () => {
    let n = 0;
    const runs = fanOutRuns(async () => void n++, { ...options, gatherMs: 30 });
    for (let i = 0; i < 10; i++) runs.soon();
    assert.equal(n, 0, 'nothing runs at once');
    await until(() => n === 1, 'the gathered run');
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.equal(n, 1, 'one run for the ten calls');
    runs.soon();
    runs.cancel();
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.equal(n, 1, 'a cancelled gather runs nothing');
  });
});
