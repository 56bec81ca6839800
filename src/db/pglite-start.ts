import { spawn } from 'node:child_process';
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
 * Runs PGlite's initdb into the new, empty directory `pgDir`, in a process of its own: used when
 * the prebuilt empty cluster does not fit the installed PGlite (pglite-cluster.ts). PGlite's
 * initdb runs a second PostgreSQL beside the first and peaks at ~720 MB; it also leaves ~300 MB
 * behind that this process would keep (measured: 855 MB at the peak of a first start, 470 MB
 * after it, against 300 MB reopening the same dir). In a child that exits, all of it goes back
 * to the system.
 */
export async function initdbInChild(pgDir: string, settings: readonly string[]): Promise<void> {
  const script = [
    `const { PGlite } = await import(${JSON.stringify(PGLITE_MODULE)});`,
    'const [dataDir, startParams, initDbStartParams] = process.argv.slice(1);',
    'const pg = new PGlite({ dataDir, startParams: JSON.parse(startParams), initDbStartParams: JSON.parse(initDbStartParams) });',
    'await pg.waitReady;',
    'await pg.close();',
  ];
  // initdb's own backend with the same buffers (-c also writes them into postgresql.conf).
  const initdbParams = settings.flatMap((setting) => ['-c', setting]);
  await runInChild(script, [pgDir, JSON.stringify(pgliteStartParams(settings)), JSON.stringify(initdbParams)], `creating the embedded database in ${pgDir}`);
}

/**
 * Runs the lines of an ES module in a new Node process with `args` (its process.argv.slice(1));
 * answers what it wrote to its standard output. The loaders this process runs under (tsx's, in
 * the benches) go with it, so it can import this code's own modules. `what` names the work in
 * the error of a child that fails, with the end of its standard error.
 */
export function runInChild(lines: string[], args: string[], what: string): Promise<string> {
  const loaders = process.execArgv.flatMap((arg, i, all) => (/^--(import|require|loader|experimental-loader)$/.test(arg) && all[i + 1] ? [arg, all[i + 1]!] : []));
  return new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [...loaders, '--input-type=module', '-e', lines.join('\n'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    child.on('error', reject);
    child.on('exit', (code, signal) => (code === 0 ? resolve(stdout) : reject(new Error(`${what} failed (${signal ?? `exit ${code}`}): ${stderr.trim()}`))));
  });
}
