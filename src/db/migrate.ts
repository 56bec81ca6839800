import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import type { Logger } from '../domain/context.js';
import type { Database } from './database.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** An arbitrary constant: the advisory lock that serialises migrations across processes. */
const MIGRATION_LOCK_KEY = 7_254_190_113;
const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

/** The numbered SQL files in db/migrations, in order. Numbers must run 1, 2, 3, ... */
export function loadMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  const migrations = fs
    .readdirSync(dir)
    .filter((file) => file.endsWith('.sql'))
    .sort()
    .map((file) => {
      const match = /^(\d{4})_([a-z0-9_]+)\.sql$/.exec(file);
      if (!match) throw new Error(`Migration file ${file} must be named NNNN_name.sql`);
      return { version: Number(match[1]), name: match[2]!, sql: fs.readFileSync(`${dir}/${file}`, 'utf8') };
    });
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new Error(`Migrations must be numbered without gaps; expected ${index + 1}, found ${migration.version}`);
    }
  });
  return migrations;
}

/**
 * Applies the migrations the database lacks, each in its own transaction, while holding an
 * advisory lock so that several nodes starting at once apply each migration exactly once.
 */
export async function migrate(database: Database, log: Logger, migrations = loadMigrations()): Promise<number[]> {
  const applied: number[] = [];
  await database.db.connection().execute(async (conn) => {
    // A migration (or the wait for another node's) may take longer than a request's statement.
    await sql`set statement_timeout = 0`.execute(conn);
    await sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`.execute(conn);
    try {
      await sql`create table if not exists parley_migrations (
        version integer primary key,
        name text not null,
        applied_at timestamptz not null default now()
      )`.execute(conn);
      const rows = await sql<{ version: number }>`select version from parley_migrations`.execute(conn);
      const done = new Set(rows.rows.map((row) => Number(row.version)));
      const newest = Math.max(0, ...done);
      if (newest > migrations.length) {
        throw new Error(
          `The database is at migration ${newest}, newer than this Parley knows (${migrations.length}). Migrations are forward-only: run a Parley at least as new as the one that migrated it.`,
        );
      }
      for (const migration of migrations) {
        if (done.has(migration.version)) continue;
        await conn.transaction().execute(async (tx) => {
          await sql.raw(migration.sql).execute(tx);
          await sql`insert into parley_migrations (version, name) values (${migration.version}, ${migration.name})`.execute(tx);
        });
        log.info({ version: migration.version, name: migration.name }, 'applied migration');
        applied.push(migration.version);
      }
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`.execute(conn);
      await sql`reset statement_timeout`.execute(conn);
    }
  });
  return applied;
}
