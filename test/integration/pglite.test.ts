import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { sql } from 'kysely';
import { DataDirLockedError } from '../../src/db/data-dir-lock.js';
import { openDatabase } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { silentLogger } from '../../src/domain/context.js';
import { createTestDatabase, seedPgliteDataDir, TEST_ENGINE } from '../helpers/db.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-pglite-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

describe('embedded database', { skip: TEST_ENGINE !== 'pglite' && 'the embedded engine is tested in the PGlite run' }, () => {
  it('creates its data dir recursively, keeps data across restarts, and releases its lock', async () => {
    const dir = path.join(root, 'a', 'b', 'c');
    // Filled with the migrated template (opened and closed there) rather than migrated here (the
    // prebuilt cluster and the migrations of a new data dir: pglite-cluster.test.ts).
    await seedPgliteDataDir(dir);
    assert.ok(!fs.existsSync(path.join(dir, 'parley.lock')), 'lock released on close');
    const first = await openDatabase({ engine: 'pglite', dataDir: dir, log: silentLogger });
    assert.deepEqual(await migrate(first, silentLogger), []);
    await first.db.insertInto('apps').values({ id: 'kept', name: 'Kept', region: 'us' }).execute();
    assert.ok(fs.existsSync(path.join(dir, 'parley.lock')));
    await first.close();
    assert.ok(!fs.existsSync(path.join(dir, 'parley.lock')), 'lock released again');

    const second = await openDatabase({ engine: 'pglite', dataDir: dir, log: silentLogger });
    try {
      assert.deepEqual(await migrate(second, silentLogger), []);
      const app = await second.db.selectFrom('apps').select('name').where('id', '=', 'kept').executeTakeFirst();
      assert.equal(app?.name, 'Kept');

      // A second process on the same data dir is refused with a clear message.
      await assert.rejects(openDatabase({ engine: 'pglite', dataDir: dir, log: silentLogger }), (error: unknown) => {
        assert.ok(error instanceof DataDirLockedError);
        assert.match(error.message, new RegExp(`in use by a running Parley process \\(pid ${process.pid}\\)`));
        return true;
      });
    } finally {
      await second.close();
    }
  });

  it('takes over a lock left by a process that is gone', async () => {
    const dir = path.join(root, 'stale');
    // The migrated template, not a new cluster.
    await seedPgliteDataDir(dir);
    const child = spawn(process.execPath, ['-e', '0']);
    const deadPid = await new Promise<number>((resolve) => child.on('exit', () => resolve(child.pid!)));
    fs.writeFileSync(path.join(dir, 'parley.lock'), `${deadPid}\n`);
    const database = await openDatabase({ engine: 'pglite', dataDir: dir, log: silentLogger });
    assert.equal(fs.readFileSync(path.join(dir, 'parley.lock'), 'utf8').trim(), String(process.pid));
    await database.close();
  });

  it('runs VACUUM ANALYZE after bulk writes', async () => {
    const { database } = await createTestDatabase();
    try {
      const analyzed = async () => (await sql<{ last_analyze: Date | null }>`select last_analyze from pg_stat_user_tables where relname = 'apps'`.execute(database.db)).rows[0]?.last_analyze ?? null;
      assert.equal(await analyzed(), null);
      database.noteBulkWrite(100);
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(await analyzed(), null, 'a small write does not vacuum');
      database.noteBulkWrite(10_000);
      for (let i = 0; i < 100 && (await analyzed()) === null; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.notEqual(await analyzed(), null);
    } finally {
      await database.close();
    }
  });

  it('queues concurrent transactions on its single connection', async () => {
    const { database } = await createTestDatabase();
    try {
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          database.db
            .transaction()
            .execute(async (tx) => {
              await tx
                .insertInto('apps')
                .values({ id: `app${i}`, name: 'x', region: 'us' })
                .execute();
              await new Promise((resolve) => setTimeout(resolve, 1));
              if (i % 2) throw new Error('roll back');
            })
            .catch(() => undefined),
        ),
      );
      const count = await database.db
        .selectFrom('apps')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(Number(count.n), 10);
    } finally {
      await database.close();
    }
  });
});
