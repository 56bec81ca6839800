/**
 * Database.listen (PostgreSQL): the connection a feed hears other processes' NOTIFY on
 * (docs/events.md) comes back after its backend is terminated, and says so by calling its
 * listener (a signal may have been missed meanwhile); once stopped, it hears nothing.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import { after, before, describe, it } from 'node:test';
import { openDatabase, type Database } from '../../src/db/database.js';
import { silentLogger } from '../../src/domain/context.js';
import { createPostgresDatabase, TEST_ENGINE } from '../helpers/db.js';

describe('the LISTEN connection', { skip: TEST_ENGINE !== 'postgres' && 'PostgreSQL only: PGlite is one process' }, () => {
  let created: { url: string; drop(): Promise<void> };
  let database: Database;
  let admin: pg.Client;
  before(async () => {
    created = await createPostgresDatabase();
    database = await openDatabase({ engine: 'postgres', url: created.url, poolSize: 1, log: silentLogger });
    admin = new pg.Client({ connectionString: created.url });
    await admin.connect();
  });
  after(async () => {
    await admin?.end();
    await database?.close();
    await created?.drop();
  });

  /** Resolves once `count()` reaches `n` (fails after 10 s). */
  const reach = async (count: () => number, n: number) => {
    const deadline = Date.now() + 10_000;
    while (count() < n) {
      if (Date.now() > deadline) assert.fail(`heard ${count()} signals, not ${n}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  it('hears a NOTIFY, reconnects after its backend is terminated, hears the next, and nothing once stopped', async () => {
    let heard = 0;
    const stop = await database.listen!('parley_test_signals', () => heard++, silentLogger);
    try {
      await reach(() => heard, 1); // connected
      await admin.query(`select pg_notify('parley_test_signals', '')`);
      await reach(() => heard, 2);
      const terminated = await admin.query(
        `select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query ilike 'listen %'`,
      );
      assert.equal(terminated.rowCount, 1);
      await reach(() => heard, 3); // connected again
      await admin.query(`select pg_notify('parley_test_signals', '')`);
      await reach(() => heard, 4);
    } finally {
      await stop();
    }
    const before = heard;
    await admin.query(`select pg_notify('parley_test_signals', '')`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(heard, before);
  });
});
