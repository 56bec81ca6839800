/**
 * Database.listen (PostgreSQL): the connection a feed hears other processes' NOTIFY on
 * (docs/events.md) comes back after its backend is terminated, and says so by calling its
 * listener (a signal may have been missed meanwhile); once stopped, it hears nothing. While the
 * database refuses it, it tries again less and less often and warns once per outage.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import { after, before, describe, it } from 'node:test';
import { openDatabase, type Database } from '../../src/db/database.js';
import { silentLogger, type Logger } from '../../src/domain/context.js';
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
      const terminated = await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query ilike 'listen %'`);
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

  it('warns once while the database refuses it, tries again less often, and says when it listens again', async () => {
    const logged: Array<{ level: string; msg: string }> = [];
    const record = (level: string) => (obj: object | string, msg?: string) => void logged.push({ level, msg: msg ?? String(obj) });
    const log: Logger = { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error'), child: () => log };
    const database = (await admin.query('select current_database() as name')).rows[0].name as string;
    // A database's connections are allowed or refused from another one.
    const other = new URL(created.url);
    other.pathname = '/postgres';
    const outside = new pg.Client({ connectionString: other.toString() });
    await outside.connect();
    let heard = 0;
    const stop = await database_listen(log, () => heard++);
    try {
      await reach(() => heard, 1);
      // An outage: the backend ends and the database takes no new connections for a while.
      await outside.query(`alter database "${database}" allow_connections false`);
      await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query ilike 'listen %'`);
      const failures = () => logged.filter((entry) => /failed|could not LISTEN/.test(entry.msg)).length;
      await reach(failures, 2); // the loss, and a first try refused a second later
      await outside.query(`alter database "${database}" allow_connections true`);
      await reach(() => heard, 2); // the next try (two seconds after the refused one) listens again
      assert.deepEqual(
        logged.map((entry) => entry.level),
        ['warn', 'debug', 'info'],
        JSON.stringify(logged),
      );
      assert.match(logged[2]!.msg, /listening on parley_test_outage again/);
    } finally {
      await outside.query(`alter database "${database}" allow_connections true`);
      await outside.end();
      await stop();
    }
  });

  const database_listen = (log: Logger, onNotify: () => void) => database.listen!('parley_test_outage', onNotify, log);
});
