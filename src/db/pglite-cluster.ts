import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Logger } from '../domain/context.js';
import { initdbInChild, runInChild } from './pglite-start.js';

/**
 * The prebuilt empty cluster (docs/deployment.md#memory): what PGlite's initdb makes, made once by
 * `npx tsx scripts/pglite-cluster.ts` and kept beside the code as a brotli-compressed tarball of
 * the data dir, with a manifest naming the PGlite that made it. A new data dir is filled from it
 * instead of running initdb, which peaks at ~720 MB for ~20 s; with another PGlite installed than
 * the one that made it (its data dir format may differ), or a file missing or damaged, initdb
 * runs as before, and the log says why.
 */
export interface EmptyClusterManifest {
  format: 1;
  /** The version of @electric-sql/pglite whose initdb made it: the only one that loads it. */
  pglite: string;
  /** Its PG_VERSION, and its control file's versions (pg_control_version, catalog_version_no). */
  postgres: string;
  controlVersion: number;
  catalogVersion: number;
  /** Of the tarball, uncompressed. */
  tarBytes: number;
  sha256: string;
}

/** Where the cluster and its manifest sit (copied beside the compiled code by scripts/copy-assets.mjs). */
export const EMPTY_CLUSTER_DIR = new URL('./pglite-cluster/', import.meta.url);
export const EMPTY_CLUSTER_TARBALL = 'empty-cluster.tar.br';
export const EMPTY_CLUSTER_MANIFEST = 'empty-cluster.json';

/** The version of the PGlite this process loads (its package.json, beside its dist/). */
export function installedPGliteVersion(): string {
  const file = new URL('../package.json', import.meta.resolve('@electric-sql/pglite'));
  return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
}

const brotliDecompress = promisify(zlib.brotliDecompress);

/** The prebuilt cluster's tarball, checked against its manifest and the installed PGlite; or why it cannot be used. */
export async function readEmptyCluster(dir: URL = EMPTY_CLUSTER_DIR): Promise<{ tar: Buffer; manifest: EmptyClusterManifest } | { unusable: string }> {
  let manifest: EmptyClusterManifest;
  let compressed: Buffer;
  try {
    manifest = JSON.parse(fs.readFileSync(new URL(EMPTY_CLUSTER_MANIFEST, dir), 'utf8')) as EmptyClusterManifest;
    compressed = fs.readFileSync(new URL(EMPTY_CLUSTER_TARBALL, dir));
  } catch (error) {
    return { unusable: `the prebuilt empty cluster cannot be read (${(error as Error).message})` };
  }
  const installed = installedPGliteVersion();
  if (manifest.format !== 1 || manifest.pglite !== installed) {
    return { unusable: `the prebuilt empty cluster was made by PGlite ${String(manifest.pglite)}, this is PGlite ${installed} (npx tsx scripts/pglite-cluster.ts makes it anew)` };
  }
  let tar: Buffer;
  try {
    tar = await brotliDecompress(compressed);
  } catch (error) {
    return { unusable: `the prebuilt empty cluster is damaged (${(error as Error).message})` };
  }
  if (tar.length !== manifest.tarBytes || crypto.createHash('sha256').update(tar).digest('hex') !== manifest.sha256) {
    return { unusable: 'the prebuilt empty cluster is damaged (its checksum does not match its manifest)' };
  }
  return { tar, manifest };
}

/** One entry of a tarball (ustar, as PGlite's dumpDataDir writes it). */
export interface TarEntry {
  name: string;
  type: 'file' | 'directory';
  mode: number;
  data: Buffer;
}

const BLOCK = 512;

/** The entries of an uncompressed ustar tarball of regular files and directories; anything else is refused. */
export function readTar(tar: Buffer): TarEntry[] {
  const entries: TarEntry[] = [];
  const text = (from: number, length: number, at: number) => tar.toString('utf8', at + from, at + from + length).replace(/\0.*$/s, '');
  const octal = (from: number, length: number, at: number) => Number.parseInt(text(from, length, at).trim() || '0', 8);
  for (let at = 0; at + BLOCK <= tar.length; ) {
    // The end: a block of zeros (two, written; one is enough to stop).
    if (tar.subarray(at, at + BLOCK).every((byte) => byte === 0)) return entries;
    const prefix = text(345, 155, at);
    const name = (prefix ? `${prefix}/` : '') + text(0, 100, at);
    const size = octal(124, 12, at);
    const flag = String.fromCharCode(tar[at + 156]!);
    const parts = name.split('/').filter((part) => part !== '' && part !== '.');
    if (parts.length === 0 || parts.includes('..') || !Number.isSafeInteger(size) || size < 0) throw new Error(`not a data dir's tarball: entry "${name}"`);
    if (flag !== '0' && flag !== '\0' && flag !== '5') throw new Error(`not a data dir's tarball: "${name}" is neither a file nor a directory`);
    const start = at + BLOCK;
    if (start + size > tar.length) throw new Error(`not a data dir's tarball: "${name}" is cut short`);
    entries.push({ name: parts.join('/'), type: flag === '5' ? 'directory' : 'file', mode: octal(100, 8, at) & 0o777, data: tar.subarray(start, start + size) });
    at = start + Math.ceil(size / BLOCK) * BLOCK;
  }
  throw new Error('not a data dir’s tarball: it has no end');
}

/**
 * The files a data dir's tarball holds that are not the cluster: the pid file of the PostgreSQL
 * that was dumped (PGlite writes its own at every start).
 */
const NOT_THE_CLUSTER = new Set(['postmaster.pid']);

/**
 * Writes the prebuilt empty cluster in `image` into the new directory `dir`, owner-only, each
 * file flushed to disk; or answers why it cannot be used. Its 40 MB of tarball, once freed, were
 * still ~50–75 MB of resident memory in the process that held them (the allocator keeps what it
 * got): createClusterIfNew runs this in a child process.
 */
export async function writeEmptyCluster(dir: string, image: URL = EMPTY_CLUSTER_DIR): Promise<{ made: EmptyClusterManifest } | { unusable: string }> {
  const prebuilt = await readEmptyCluster(image);
  if (!('tar' in prebuilt)) return prebuilt;
  fs.mkdirSync(dir, { mode: 0o700 });
  for (const entry of readTar(prebuilt.tar)) {
    if (NOT_THE_CLUSTER.has(entry.name)) continue;
    const target = path.join(dir, entry.name);
    if (entry.type === 'directory') {
      fs.mkdirSync(target, { recursive: true, mode: 0o700 });
      continue;
    }
    fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
    const fd = fs.openSync(target, 'wx', 0o600);
    try {
      fs.writeSync(fd, entry.data);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }
  return { made: prebuilt.manifest };
}

function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Creates the embedded database's cluster in `pgDir` when it has none: from the prebuilt empty
 * cluster in `image` when it fits the installed PGlite, by initdb in a child process otherwise.
 * Either way it is made in a directory beside `pgDir` and renamed into place, so a start that
 * stops half-way leaves no half-made cluster behind. The caller holds the data dir's lock.
 */
export async function createClusterIfNew(pgDir: string, settings: readonly string[], log: Logger, image: URL = EMPTY_CLUSTER_DIR): Promise<'existing' | 'prebuilt' | 'initdb'> {
  if (fs.existsSync(path.join(pgDir, 'PG_VERSION'))) return 'existing';
  if (fs.existsSync(pgDir) && fs.readdirSync(pgDir).length > 0) {
    throw new Error(`${pgDir} holds files but no database (no PG_VERSION): move it away, and Parley creates a new database there`);
  }
  fs.mkdirSync(path.dirname(pgDir), { recursive: true });
  const staging = `${pgDir}.new`;
  // Left by a start that stopped half-way (this process holds the data dir's lock).
  fs.rmSync(staging, { recursive: true, force: true });
  let made: { made: EmptyClusterManifest } | { unusable: string };
  try {
    const script = [
      `const { writeEmptyCluster } = await import(${JSON.stringify(import.meta.url)});`,
      'const [dir, image] = process.argv.slice(1);',
      'process.stdout.write(JSON.stringify(await writeEmptyCluster(dir, new URL(image))));',
    ];
    made = JSON.parse(await runInChild(script, [staging, image.href], `creating the embedded database in ${pgDir}`)) as typeof made;
    if ('unusable' in made) {
      log.warn({ reason: made.unusable }, 'creating the embedded database with initdb, in a child process (~20 s, ~720 MB at its peak, once per data dir)');
      fs.rmSync(staging, { recursive: true, force: true });
      fs.mkdirSync(staging, { mode: 0o700 });
      await initdbInChild(staging, settings);
    }
    fsyncDir(staging);
    // An empty directory (made by an earlier Parley) gives way; rmdir refuses one with files.
    if (fs.existsSync(pgDir)) fs.rmdirSync(pgDir);
    fs.renameSync(staging, pgDir);
    fsyncDir(path.dirname(pgDir));
  } catch (error) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw error;
  }
  if ('unusable' in made) return 'initdb';
  log.info({ pglite: made.made.pglite, postgres: made.made.postgres }, 'created the embedded database from the prebuilt empty cluster');
  return 'prebuilt';
}
