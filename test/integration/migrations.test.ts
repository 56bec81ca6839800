import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.js';
import { loadMigrations, migrate } from '../../src/db/migrate.js';
import { silentLogger } from '../../src/domain/context.js';
import { createPostgresDatabase, createTestDatabase, TEST_ENGINE, type TestDatabase } from '../helpers/db.js';

let testDb: TestDatabase;
before(async () => {
  testDb = await createTestDatabase();
});
after(async () => {
  await testDb.drop();
});

/** Tables that are not per app: the tenants themselves and the migration ledger. */
const DEPLOYMENT_TABLES = new Set(['apps', 'parley_migrations']);

describe('migrations', () => {
  it('are numbered without gaps', () => {
    const migrations = loadMigrations();
    assert.ok(migrations.length >= 1);
    migrations.forEach((migration, index) => assert.equal(migration.version, index + 1));
  });

  it('apply once: a second run applies nothing', async () => {
    assert.deepEqual(await migrate(testDb.database, silentLogger), []);
    const rows = await sql<{ version: number }>`select version from parley_migrations order by version`.execute(testDb.database.db);
    assert.deepEqual(rows.rows.map((row) => Number(row.version)), loadMigrations().map((m) => m.version));
  });

  it('refuse a database migrated by a newer Parley', async () => {
    await sql`insert into parley_migrations (version, name) values (999, 'future')`.execute(testDb.database.db);
    try {
      await assert.rejects(migrate(testDb.database, silentLogger), /newer than this Parley/);
    } finally {
      await sql`delete from parley_migrations where version = 999`.execute(testDb.database.db);
    }
  });

  it('refuse files that are misnamed or leave a gap', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-migrations-'));
    try {
      fs.writeFileSync(path.join(dir, '0001_first.sql'), 'select 1;');
      fs.writeFileSync(path.join(dir, '0003_third.sql'), 'select 1;');
      assert.throws(() => loadMigrations(dir), /without gaps/);
      fs.writeFileSync(path.join(dir, '2-bad.sql'), 'select 1;');
      assert.throws(() => loadMigrations(dir), /NNNN_name/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('put app_id first in every key and index of every per-app table', async () => {
    const indexes = await sql<{ table: string; index: string; first: string }>`
      select t.relname as table, i.relname as index, a.attname as first
      from pg_index x
      join pg_class t on t.oid = x.indrelid
      join pg_class i on i.oid = x.indexrelid
      join pg_namespace n on n.oid = t.relnamespace
      left join pg_attribute a on a.attrelid = t.oid and a.attnum = x.indkey[0]
      where n.nspname = current_schema()`.execute(testDb.database.db);
    const perApp = indexes.rows.filter((row) => !DEPLOYMENT_TABLES.has(row.table));
    assert.ok(perApp.length >= 4);
    for (const row of perApp) assert.equal(row.first, 'app_id', `${row.table}.${row.index} starts with ${row.first}`);
  });
});

describe('migrations under concurrency', { skip: TEST_ENGINE !== 'postgres' && 'PostgreSQL only: PGlite is one process' }, () => {
  it('several nodes starting at once apply each migration exactly once', async () => {
    const created = await createPostgresDatabase();
    const nodes = await Promise.all(
      Array.from({ length: 4 }, () => openDatabase({ engine: 'postgres', url: created.url, poolSize: 2, log: silentLogger })),
    );
    try {
      const applied = await Promise.all(nodes.map((node) => migrate(node, silentLogger)));
      assert.deepEqual(applied.flat().sort((a, b) => a - b), loadMigrations().map((m) => m.version));
    } finally {
      await Promise.all(nodes.map((node) => node.close()));
      await created.drop();
    }
  });
});

describe('both engines', () => {
  it('read bigint as a string of digits', async () => {
    const row = await sql<{ n: unknown }>`select 9007199254740993::bigint as n`.execute(testDb.database.db);
    assert.equal(row.rows[0]!.n, '9007199254740993');
  });
});
