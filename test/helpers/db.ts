import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { loadConfig, type Config, type DatabaseTimeouts } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { loadMigrations, migrate } from '../../src/db/migrate.js';
import { readEmptyCluster } from '../../src/db/pglite-cluster.js';
import { silentLogger } from '../../src/domain/context.js';

/** The engine under test: PARLEY_TEST_DB=postgres, or the embedded PGlite (default). */
export const TEST_ENGINE: 'postgres' | 'pglite' = process.env.PARLEY_TEST_DB === 'postgres' ? 'postgres' : 'pglite';

/** A server database where tests may create and drop databases. */
export const ADMIN_URL = process.env.PARLEY_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  database: Database;
  /** The connection string, on PostgreSQL. */
  url: string | undefined;
  /** Closes the database and, on PostgreSQL, drops it. */
  drop(): Promise<void>;
}

/** Runs `statement` on the admin database. */
async function adminQuery(statement: string): Promise<void> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(statement);
  } finally {
    await admin.end();
  }
}

/**
 * A fresh PostgreSQL database, dropped by the returned function: empty, or with `{ migrated: true }`
 * a copy of a migrated template database (made once per server and migration set, as PGlite's
 * template is), which costs the server less than running the migrations.
 */
export async function createPostgresDatabase({ migrated = false } = {}): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `parley_test_${process.pid}_${crypto.randomBytes(4).toString('hex')}`;
  const template = migrated ? await postgresTemplate() : undefined;
  await adminQuery(`create database ${name}${template ? ` template ${template}` : ''}`);
  return { url: databaseUrl(name), drop: () => adminQuery(`drop database if exists ${name} with (force)`) };
}

function databaseUrl(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** The migrated template database's name; no one connects to it once made (CREATE DATABASE ... TEMPLATE needs that). */
let postgresTemplateName: Promise<string> | undefined;
function postgresTemplate(): Promise<string> {
  postgresTemplateName ??= (async () => {
    const name = `parley_template_${templateKey()}`;
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    try {
      if ((await admin.query('select 1 from pg_database where datname = $1', [name])).rowCount) return name;
    } finally {
      await admin.end();
    }
    // Made under a name of its own, then renamed: a process that finds the name taken drops its copy.
    const own = `${name}_${process.pid}_${crypto.randomBytes(4).toString('hex')}`;
    await adminQuery(`create database ${own}`);
    try {
      const database = await openDatabase({ engine: 'postgres', url: databaseUrl(own), poolSize: 1, log: silentLogger });
      try {
        await migrate(database, silentLogger);
      } finally {
        await database.close();
      }
      await adminQuery(`alter database ${own} rename to ${name}`);
    } catch (error) {
      await adminQuery(`drop database if exists ${own} with (force)`);
      if ((error as { code?: string }).code !== '42P04') throw error; // duplicate_database: another process made it first
    }
    return name;
  })();
  return postgresTemplateName;
}

/** The migrated template's name: the installed PGlite and the migrations (a change to either makes a new one). */
function templateKey(): string {
  const migrations = loadMigrations();
  const pkg = JSON.parse(fs.readFileSync(path.resolve('node_modules/@electric-sql/pglite/package.json'), 'utf8')) as { version: string };
  return crypto.createHash('sha256').update(pkg.version).update(JSON.stringify(migrations)).digest('hex').slice(0, 16);
}

/**
 * A migrated PGlite dump, made once per machine and migration set, so each test file starts
 * from it in under a second instead of migrating; read once per process.
 */
let templateBytes: Promise<Uint8Array> | undefined;
function pgliteTemplate(): Promise<Uint8Array> {
  templateBytes ??= makePgliteTemplate();
  return templateBytes;
}

async function makePgliteTemplate(): Promise<Uint8Array> {
  const file = path.join(os.tmpdir(), `parley-pglite-template-${templateKey()}.tar`);
  if (fs.existsSync(file)) return fs.readFileSync(file);
  // From the prebuilt empty cluster, as a new data dir is (initdb in memory if it does not fit this PGlite).
  const prebuilt = await readEmptyCluster();
  const database = await openDatabase({ engine: 'pglite', ...('tar' in prebuilt ? { loadDataDir: new Blob([prebuilt.tar]) } : {}), log: silentLogger });
  await migrate(database, silentLogger);
  const dump = new Uint8Array(await (await database.dumpDataDir!()).arrayBuffer());
  await database.close();
  const temporary = `${file}.${process.pid}`;
  fs.writeFileSync(temporary, dump);
  fs.renameSync(temporary, file);
  return dump;
}

/**
 * The template as the Blob PGlite loads, a copy of its bytes for each database (PGlite's files
 * may keep pieces of the buffer it reads). A Blob of the bytes would do, but Node reads a Blob
 * back in small chunks: ~0.3 s of CPU for the 40 MB template, at every database.
 */
class TemplateBlob extends Blob {
  readonly #bytes: Uint8Array;
  constructor(bytes: Uint8Array) {
    super([]);
    this.#bytes = bytes;
  }
  override arrayBuffer(): Promise<ArrayBuffer> {
    return Promise.resolve(this.#bytes.slice().buffer);
  }
}

/**
 * A data dir's `pglite` directory filled with the migrated template and closed, made once per
 * machine and migration set (as the template is): copying it costs a fraction of loading the
 * template into PGlite (~1 s of CPU, more at a process's first PGlite).
 */
let seededDir: Promise<string> | undefined;
function seededPgliteDir(): Promise<string> {
  seededDir ??= (async () => {
    const dir = path.join(os.tmpdir(), `parley-pglite-seeded-${templateKey()}`);
    if (fs.existsSync(path.join(dir, 'pglite', 'PG_VERSION'))) return dir;
    const temporary = fs.mkdtempSync(`${dir}.`);
    const database = await openDatabase({ engine: 'pglite', dataDir: temporary, loadDataDir: new TemplateBlob(await pgliteTemplate()), log: silentLogger });
    // A statement before closing: PGlite closed right after loading a dump keeps the process from
    // exiting (seen with 0.5).
    await sql`checkpoint`.execute(database.db);
    await database.close();
    try {
      fs.renameSync(temporary, dir);
    } catch (error) {
      // Another process made it first.
      fs.rmSync(temporary, { recursive: true, force: true });
      if (!fs.existsSync(path.join(dir, 'pglite', 'PG_VERSION'))) throw error;
    }
    return dir;
  })();
  return seededDir;
}

/**
 * Fills an empty data dir with the migrated template, so that `parley serve` on it starts without
 * creating and migrating a cluster: as a first start, it then creates the default app.
 */
export async function seedPgliteDataDir(dataDir: string): Promise<void> {
  fs.cpSync(path.join(await seededPgliteDir(), 'pglite'), path.join(dataDir, 'pglite'), { recursive: true });
}

/** Settings a test may give its database: a small pool, short timeouts. */
export interface TestDatabaseOptions {
  poolSize?: number;
  timeouts?: DatabaseTimeouts;
}

export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  if (TEST_ENGINE === 'postgres') {
    const created = await createPostgresDatabase({ migrated: true });
    const database = await openDatabase({ engine: 'postgres', url: created.url, poolSize: options.poolSize ?? 10, timeouts: options.timeouts, log: silentLogger });
    await migrate(database, silentLogger);
    return {
      database,
      url: created.url,
      async drop() {
        await database.close();
        await created.drop();
      },
    };
  }
  const database = await openDatabase({ engine: 'pglite', loadDataDir: new TemplateBlob(await pgliteTemplate()), timeouts: options.timeouts, log: silentLogger });
  await migrate(database, silentLogger);
  return { database, url: undefined, drop: () => database.close() };
}

/**
 * The configuration of an in-process server (startServer) on a deployment of its own: a fresh
 * data dir, filled with the migrated template on PGlite, or a fresh PostgreSQL database copied from
 * the migrated template (either way its start skips the migrations), plain HTTP on loopback, with `env` over that. Cleanups go to `cleanups`.
 */
export async function serverDeployment(prefix: string, env: Record<string, string>, cleanups: Array<() => unknown>): Promise<{ config: Config; dataDir: string; url: string | undefined }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
  cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const pg = TEST_ENGINE === 'postgres' ? await createPostgresDatabase({ migrated: true }) : undefined;
  if (pg) cleanups.push(() => pg.drop());
  else await seedPgliteDataDir(dataDir);
  const config = loadConfig({
    PARLEY_PORT: '0',
    PARLEY_HOST: '127.0.0.1',
    PARLEY_DATA_DIR: dataDir,
    PARLEY_INSECURE_HTTP: '1',
    ...(pg ? { DATABASE_URL: pg.url } : {}),
    ...env,
  });
  return { config, dataDir, url: pg?.url };
}
