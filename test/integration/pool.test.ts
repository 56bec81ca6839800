import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase, POOL_IDLE_TIMEOUT_MS } from '../../src/db/database.js';
import { silentLogger } from '../../src/domain/context.js';
import { createPostgresDatabase, TEST_ENGINE } from '../helpers/db.js';

describe('the PostgreSQL pool', { skip: TEST_ENGINE !== 'postgres' && 'PostgreSQL only' }, () => {
  it('keeps an idle connection past pg’s 10 s default, so a quiet spell does not cost new backends', async () => {
    assert.ok(POOL_IDLE_TIMEOUT_MS > 60_000);
    const created = await createPostgresDatabase();
    const database = await openDatabase({ engine: 'postgres', url: created.url, log: silentLogger });
    try {
      const backend = async () => (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(database.db)).rows[0]!.pid;
      const before = await backend();
      await new Promise((resolve) => setTimeout(resolve, 11_000));
      assert.equal(await backend(), before);
    } finally {
      await database.close();
      await created.drop();
    }
  });

  it('runs without JIT compilation, which a coalesced statement’s estimates would otherwise trigger', async () => {
    // A statement over json_to_recordset (SqlParams.rowsOfEach) is costed for 100 records, so a
    // page costed over 1,000 passes jit_above_cost; compiling it took 50–800 ms (docs/performance-log.md, "JIT compilation, turned off").
    const created = await createPostgresDatabase();
    const database = await openDatabase({ engine: 'postgres', url: created.url, log: silentLogger });
    try {
      const jit = await Promise.all([1, 2, 3].map(async () => (await sql<{ jit: string }>`select current_setting('jit') as jit, pg_sleep(0.01)`.execute(database.db)).rows[0]!.jit));
      assert.deepEqual(jit, ['off', 'off', 'off']);
    } finally {
      await database.close();
      await created.drop();
    }
  });
});
