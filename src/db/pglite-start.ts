import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';

/**
 * The embedded database's PostgreSQL settings (docs/deployment.md#memory), each `name=value`.
 * PGlite is one backend inside this process's WebAssembly memory, and its files sit in the OS's
 * page cache anyway (a page not in shared_buffers is a read from that cache, not from disk), so
 * the buffers are kept small: initdb's 160 MB of shared_buffers was ~110 MB of resident memory
 * that a small deployment never needed. PARLEY_PGLITE_SETTINGS adds to or overrides these.
 */
export const DEFAULT_PGLITE_SETTINGS: readonly string[] = [
  'shared_buffers=32MB',
  // VACUUM (after bulk writes) and CREATE INDEX (migrations); PostgreSQL's default is 64MB.
  'maintenance_work_mem=16MB',
  // Only temporary tables use these; Parley makes none.
  'temp_buffers=1MB',
];

/** PGlite's start parameters with `settings` (later ones win over earlier ones of the same name). */
export function pgliteStartParams(settings: readonly string[]): string[] {
  return [...PGlite.defaultStartParams, ...settings.flatMap((setting) => ['-c', setting])];
}

const PGLITE_MODULE = import.meta.resolve('@electric-sql/pglite');

/**
 * Creates the embedded database's cluster in `pgDir` when it has none, in a process of its own.
 * PGlite's initdb runs a second PostgreSQL beside the first and leaves ~300 MB behind that this
 * process would keep (measured: 855 MB at the peak of a first start, 470 MB after it, against
 * 300 MB reopening the same dir); in a child that exits, all of it goes back to the system and
 * the server starts as it does on every later start.
 */
export async function initdbIfNew(pgDir: string, settings: readonly string[]): Promise<void> {
  if (fs.existsSync(path.join(pgDir, 'PG_VERSION'))) return;
  const script = [
    `const { PGlite } = await import(${JSON.stringify(PGLITE_MODULE)});`,
    'const [dataDir, startParams, initDbStartParams] = process.argv.slice(1);',
    'const pg = new PGlite({ dataDir, startParams: JSON.parse(startParams), initDbStartParams: JSON.parse(initDbStartParams) });',
    'await pg.waitReady;',
    'await pg.close();',
  ].join('\n');
  // initdb's own backend with the same buffers (-c also writes them into postgresql.conf).
  const initdbParams = settings.flatMap((setting) => ['-c', setting]);
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, pgDir, JSON.stringify(pgliteStartParams(settings)), JSON.stringify(initdbParams)], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    child.on('error', reject);
    child.on('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`creating the embedded database in ${pgDir} failed (${signal ?? `exit ${code}`}): ${stderr.trim()}`))));
  });
}
