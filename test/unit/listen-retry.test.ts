/** How the LISTEN connection tries again after failures (src/db/database.ts, docs/events.md). */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { listenRetry } from '../../src/db/database.js';

it('waits 1 s after the first failure, doubles the wait with each failure up to 30 s, and warns only on the first', () => {
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 7, 100, 10_000].map((failures) => listenRetry(failures).delayMs),
    [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000, 30_000],
  );
  assert.deepEqual(
    [1, 2, 50].map((failures) => listenRetry(failures).level),
    ['warn', 'debug', 'debug'],
  );
});
