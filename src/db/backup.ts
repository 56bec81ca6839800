import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { sql } from 'kysely';
import type { Logger } from '../domain/context.js';
import { PARLEY_VERSION } from '../version.js';
import { DataDirLock, DataDirLockedError } from './data-dir-lock.js';
import { openDatabase, type Database } from './database.js';
import { loadMigrations } from './migrate.js';

/**
 * A backup of the embedded database (docs/deployment.md#backups): the line `PARLEY BACKUP`, a
 * line of JSON (the manifest), then one gzip stream of the parts the manifest lists, one after
 * the other: PGlite's tarball of its data dir, and the data dir's files kept beside it (the
 * secret key that opens the providers' secrets, the self-signed certificate).
 */
const MAGIC = 'PARLEY BACKUP\n';
const FORMAT = 1;
/** The manifest's line is small; a file whose first 64 KB hold no end of line is not a backup. */
const MAX_MANIFEST_BYTES = 64 * 1024;
/** The files of a data dir a backup carries beside the database (the only part names a manifest may list). */
const SIDE_FILES = ['secret.key', 'tls/cert.pem', 'tls/key.pem'];
const PGLITE_PART = 'pglite';

export interface BackupManifest {
  format: number;
  engine: 'pglite';
  /** The Parley that made it. */
  parley: string;
  /** The database's PostgreSQL version. */
  postgres: string;
  /** The newest migration applied to the database. */
  migration: number;
  createdAt: string;
  parts: { name: string; bytes: number }[];
  /** Of the gzip stream that follows the manifest. */
  sha256: string;
}

export interface BackupSummary {
  file: string;
  /** The file's size. */
  bytes: number;
  migration: number;
  createdAt: string;
}

/** A backup or restore that cannot be done; the message says why, in one line. */
export class BackupError extends Error {
  override name = 'BackupError';
}

const gunzip = promisify(zlib.gunzip);

/**
 * Writes a backup of `database` (the embedded one, opened on `dataDir`) to `file`, atomically: a
 * temporary file beside it, flushed to disk, then renamed over `file`. The dump is taken between
 * two statements, in the database's own line (Database.dumpDataDir), so it is consistent while
 * the server runs; the compression and the writing happen after, while requests run again.
 */
export async function writeBackup(database: Database, dataDir: string, file: string): Promise<BackupSummary> {
  if (!database.dumpDataDir) throw new BackupError('This deployment uses PostgreSQL: back it up with pg_dump (docs/deployment.md#backups).');
  const migration = await migrationLevel(database);
  const version = await sql<{ server_version: string }>`show server_version`.execute(database.db);
  const createdAt = new Date().toISOString();
  const tar = Buffer.from(await (await database.dumpDataDir()).arrayBuffer());
  const parts = [{ name: PGLITE_PART, data: tar }, ...readSideFiles(dataDir)];
  const payload = await gzipAll(parts.map((part) => part.data));
  const manifest: BackupManifest = {
    format: FORMAT,
    engine: 'pglite',
    parley: PARLEY_VERSION,
    postgres: version.rows[0]?.server_version ?? 'unknown',
    migration,
    createdAt,
    parts: parts.map((part) => ({ name: part.name, bytes: part.data.length })),
    sha256: crypto.createHash('sha256').update(payload).digest('hex'),
  };
  const header = Buffer.from(`${MAGIC}${JSON.stringify(manifest)}\n`);
  await writeAtomically(file, [header, payload]);
  return { file, bytes: header.length + payload.length, migration, createdAt };
}

/** The newest migration applied (0 for a database never migrated). */
async function migrationLevel(database: Database): Promise<number> {
  const table = await sql<{ name: string | null }>`select to_regclass('parley_migrations')::text as name`.execute(database.db);
  if (!table.rows[0]?.name) return 0;
  const newest = await sql<{ version: number | null }>`select max(version) as version from parley_migrations`.execute(database.db);
  return Number(newest.rows[0]?.version ?? 0);
}

function readSideFiles(dataDir: string): { name: string; data: Buffer }[] {
  return SIDE_FILES.flatMap((name) => {
    try {
      return [{ name, data: fs.readFileSync(path.join(dataDir, name)) }];
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  });
}

/** One gzip stream of the buffers one after the other (on libuv's pool: the event loop runs on). */
function gzipAll(buffers: Buffer[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const gzip = zlib.createGzip();
    const chunks: Buffer[] = [];
    gzip.on('data', (chunk: Buffer) => chunks.push(chunk));
    gzip.on('end', () => resolve(Buffer.concat(chunks)));
    gzip.on('error', reject);
    for (const buffer of buffers) gzip.write(buffer);
    gzip.end();
  });
}

async function writeAtomically(file: string, chunks: Buffer[]): Promise<void> {
  const dir = path.dirname(file);
  const temporary = path.join(dir, `.${path.basename(file)}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`);
  let handle: fs.promises.FileHandle | undefined;
  try {
    // Owner only: a backup holds every message, and the key to the providers' secrets.
    handle = await fs.promises.open(temporary, 'wx', 0o600);
    for (const chunk of chunks) await handle.write(chunk);
    await handle.sync();
    await handle.close();
    handle = undefined;
    await fs.promises.rename(temporary, file);
  } catch (error) {
    await handle?.close().catch(() => undefined);
    await fs.promises.rm(temporary, { force: true });
    // Without the temporary file's name, which the message of fs names.
    throw new BackupError(`Cannot write ${file}: ${(error as Error).message.replace(/, \w+ '.*'$/, '')}`);
  }
  // The rename itself, on disk.
  const directory = await fs.promises.open(dir, 'r');
  try {
    await directory.sync();
  } finally {
    await directory.close();
  }
}

/** Reads and checks a backup file: its header, its manifest, and its checksum; answers its parts. */
export async function readBackup(file: string): Promise<{ manifest: BackupManifest; parts: Map<string, Buffer> }> {
  let content: Buffer;
  try {
    content = await fs.promises.readFile(file);
  } catch (error) {
    throw new BackupError(`Cannot read ${file}: ${(error as Error).message}`);
  }
  const notBackup = (why: string) => new BackupError(`${file} is not a Parley backup (${why}).`);
  if (!content.subarray(0, MAGIC.length).equals(Buffer.from(MAGIC))) throw notBackup('it does not start with "PARLEY BACKUP"');
  const end = content.indexOf(0x0a, MAGIC.length);
  if (end < 0 || end - MAGIC.length > MAX_MANIFEST_BYTES) throw notBackup('no manifest');
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(content.subarray(MAGIC.length, end).toString('utf8')) as BackupManifest;
  } catch {
    throw notBackup('its manifest is not JSON');
  }
  if (manifest.format !== FORMAT) throw new BackupError(`${file} is a Parley backup of format ${String(manifest.format)}; this Parley reads format ${FORMAT}.`);
  if (!validManifest(manifest)) throw notBackup('its manifest is incomplete');
  const known = loadMigrations().length;
  if (manifest.migration > known) {
    throw new BackupError(`${file} is made by a newer Parley (${manifest.parley}, migration ${manifest.migration}; this one knows ${known}): restore it with a Parley at least as new.`);
  }
  const payload = content.subarray(end + 1);
  if (crypto.createHash('sha256').update(payload).digest('hex') !== manifest.sha256) throw new BackupError(`${file} is damaged or incomplete (its checksum does not match).`);
  let data: Buffer;
  try {
    data = await gunzip(payload);
  } catch (error) {
    throw new BackupError(`${file} is damaged (${(error as Error).message}).`);
  }
  const total = manifest.parts.reduce((sum, part) => sum + part.bytes, 0);
  if (data.length !== total) throw new BackupError(`${file} is damaged (${data.length} bytes of parts, the manifest lists ${total}).`);
  const parts = new Map<string, Buffer>();
  let offset = 0;
  for (const part of manifest.parts) {
    parts.set(part.name, data.subarray(offset, offset + part.bytes));
    offset += part.bytes;
  }
  return { manifest, parts };
}

function validManifest(manifest: BackupManifest): boolean {
  const names = new Set([PGLITE_PART, ...SIDE_FILES]);
  return (
    manifest.engine === 'pglite' &&
    Number.isInteger(manifest.migration) &&
    manifest.migration >= 0 &&
    typeof manifest.createdAt === 'string' &&
    typeof manifest.sha256 === 'string' &&
    Array.isArray(manifest.parts) &&
    manifest.parts.some((part) => part?.name === PGLITE_PART) &&
    manifest.parts.every((part) => names.has(part?.name) && Number.isInteger(part.bytes) && part.bytes >= 0) &&
    new Set(manifest.parts.map((part) => part.name)).size === manifest.parts.length
  );
}

export interface RestoreResult {
  manifest: BackupManifest;
  /** Where the data dir that was there before went (with --force). */
  movedAside: string | undefined;
}

/**
 * Restores `file` into the data dir `dataDir`. Refuses while a process holds it, and when it is
 * not empty unless `force` (then the old one is renamed beside it, never deleted). The database
 * is loaded into a new directory beside `dataDir` first, so a failure leaves `dataDir` as it was.
 */
export async function restoreDataDir(options: { file: string; dataDir: string; force: boolean; log: Logger }): Promise<RestoreResult> {
  const { file, dataDir } = options;
  refuseWhileHeld(dataDir);
  const occupied = fs.existsSync(dataDir) && fs.readdirSync(dataDir).length > 0;
  if (occupied && !options.force) {
    throw new BackupError(`The data dir ${dataDir} is not empty: restore into an empty or new directory, or pass --force to move this one aside (it is kept, renamed).`);
  }
  const { manifest, parts } = await readBackup(file);
  let staging: string;
  try {
    fs.mkdirSync(path.dirname(dataDir), { recursive: true });
    staging = fs.mkdtempSync(`${dataDir}.restoring-`);
  } catch (error) {
    throw new BackupError(`Cannot create a directory beside ${dataDir}: ${(error as Error).message}`);
  }
  try {
    await loadInto(staging, parts.get(PGLITE_PART)!, manifest, options.log);
    for (const name of SIDE_FILES) {
      const data = parts.get(name);
      if (!data) continue;
      fs.mkdirSync(path.dirname(path.join(staging, name)), { recursive: true });
      fs.writeFileSync(path.join(staging, name), data, { mode: 0o600 });
    }
    const movedAside = occupied ? moveAside(dataDir) : undefined;
    try {
      // An empty directory is replaced (rename needs the target gone or empty, and is atomic).
      fs.renameSync(staging, dataDir);
    } catch (error) {
      // The old one back in its place, if nothing took it meanwhile.
      const putBack = movedAside !== undefined && tryRename(movedAside, dataDir);
      const kept = movedAside !== undefined && !putBack ? ` (the old data dir is in ${movedAside})` : '';
      throw new BackupError(`Cannot move the restored data dir into ${dataDir}: ${(error as Error).message}${kept}`);
    }
    return { manifest, movedAside };
  } catch (error) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw error;
  }
}

function tryRename(from: string, to: string): boolean {
  try {
    fs.renameSync(from, to);
    return true;
  } catch {
    return false;
  }
}

function refuseWhileHeld(dataDir: string): void {
  const owner = DataDirLock.runningOwner(dataDir);
  if (owner !== undefined) throw new BackupError(`The data dir ${dataDir} is in use by a running Parley process (pid ${owner}): stop it before restoring.`);
}

/** Loads the database's tarball into the data dir `dir` (new), and checks it opens at the manifest's migration. */
async function loadInto(dir: string, tarball: Buffer, manifest: BackupManifest, log: Logger): Promise<void> {
  const database = await openDatabase({ engine: 'pglite', dataDir: dir, loadDataDir: new Blob([tarball]), log });
  try {
    const migration = await migrationLevel(database);
    if (migration !== manifest.migration) throw new BackupError(`The backup's database is at migration ${migration}, its manifest says ${manifest.migration}: the file is damaged.`);
    // Written to the files now, so the first start reads them as they are.
    await sql`checkpoint`.execute(database.db);
  } finally {
    await database.close();
  }
}

/** Renames the data dir beside itself (`DIR.before-restore-<time>`); answers the new name. */
function moveAside(dataDir: string): string {
  // A process that started on it since refuseWhileHeld holds its lock: this one refuses, and keeps it.
  let lock: DataDirLock;
  try {
    lock = DataDirLock.acquire(dataDir);
  } catch (error) {
    if (error instanceof DataDirLockedError) refuseWhileHeld(dataDir);
    throw error;
  }
  const aside = `${dataDir}.before-restore-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  try {
    fs.renameSync(dataDir, aside);
  } catch (error) {
    lock.release();
    throw new BackupError(`Cannot move ${dataDir} aside to ${aside}: ${(error as Error).message}`);
  }
  // The lock went with the directory: the copy set aside is no process's.
  fs.rmSync(path.join(aside, 'parley.lock'), { force: true });
  return aside;
}
