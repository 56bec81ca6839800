import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ConfigError, loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { DEFAULT_PGLITE_SETTINGS } from '../../src/db/pglite-start.js';
import { silentLogger } from '../../src/domain/context.js';
import { TEST_ENGINE } from '../helpers/db.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-pglite-settings-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

describe('PARLEY_PGLITE_SETTINGS', () => {
  it('reads name=value pairs separated by commas or spaces, and refuses anything else, naming it', () => {
    assert.deepEqual(loadConfig({}).pgliteSettings, []);
    assert.deepEqual(loadConfig({ PARLEY_PGLITE_SETTINGS: 'shared_buffers=128MB, work_mem=8MB  temp_buffers=2MB' }).pgliteSettings, ['shared_buffers=128MB', 'work_mem=8MB', 'temp_buffers=2MB']);
    for (const value of ['shared_buffers', 'shared_buffers=1MB;drop', '=1MB', 'Shared_Buffers=1MB', 'x=a b=']) {
      assert.throws(
        () => loadConfig({ PARLEY_PGLITE_SETTINGS: value }),
        (error: Error) => error instanceof ConfigError && /PARLEY_PGLITE_SETTINGS/.test(error.message),
        value,
      );
    }
  });
});

describe('the embedded database’s settings', { skip: TEST_ENGINE !== 'pglite' && 'the embedded engine is tested in the PGlite run' }, () => {
  const show = async (database: Awaited<ReturnType<typeof openDatabase>>, name: 'shared_buffers' | 'maintenance_work_mem' | 'temp_buffers') =>
    (await sql<Record<string, string>>`select current_setting(${name}) as value`.execute(database.db)).rows[0]!.value;

  it('creates a new data dir’s cluster, starts with Parley’s settings and the deployment’s over them, at every start', async () => {
    assert.ok(DEFAULT_PGLITE_SETTINGS.includes('shared_buffers=32MB'));
    const dir = path.join(root, 'new');
    const first = await openDatabase({ engine: 'pglite', dataDir: dir, settings: ['shared_buffers=24MB'], log: silentLogger });
    try {
      assert.ok(fs.existsSync(path.join(dir, 'pglite', 'PG_VERSION')));
      assert.equal(await show(first, 'shared_buffers'), '24MB');
      assert.equal(await show(first, 'maintenance_work_mem'), '16MB');
      // Not migrated here: a table of its own shows the data is kept.
      await sql`create table kept (n int)`.execute(first.db);
      await sql`insert into kept values (7)`.execute(first.db);
    } finally {
      await first.close();
    }
    const second = await openDatabase({ engine: 'pglite', dataDir: dir, log: silentLogger });
    try {
      assert.equal(await show(second, 'shared_buffers'), '32MB', 'the defaults again, with no settings given');
      assert.equal(await show(second, 'temp_buffers'), '1MB');
      assert.deepEqual((await sql<{ n: number }>`select n from kept`.execute(second.db)).rows, [{ n: 7 }]);
    } finally {
      await second.close();
    }
  });

  it('refuses a setting PostgreSQL refuses on a new data dir, saying why, and lets go of the dir', async () => {
    const dir = path.join(root, 'refused');
    await assert.rejects(
      openDatabase({ engine: 'pglite', dataDir: dir, settings: ['shared_buffers=banana'], log: silentLogger }),
      /did not start: invalid value for parameter "shared_buffers": "banana"/,
    );
    assert.ok(!fs.existsSync(path.join(dir, 'parley.lock')), 'lock released');
  });
});
