// Runs the test files under test/ with node's test runner.
// Usage: node scripts/run-tests.mjs [--skip=path-fragment ...] [path-fragment ...]   (e.g. users, test/api)
// The database engine comes from PARLEY_TEST_DB: pglite (default) or postgres. --skip leaves out
// the files whose path contains it (CI runs test/unit, which uses no database, on PGlite only).
//
// The sources (src, test, bench, scripts) are compiled first, once, into .build/ (tsc with
// tsconfig.test.json, incremental: a second run recompiles only what changed), and the compiled
// test files run on plain node. Loading TypeScript through an ESM loader hook (tsx) cost each
// test process ~2 s of CPU (the hook mechanism alone ~1 s), a third of the suite's time on a
// two-core machine. `npm run typecheck` writes the same build. When no source is newer than the
// build, tsc does not run at all: even with nothing to do it reads and parses every file (~5 s of
// CPU), which CI paid at each of its two runs right after its typecheck had built the same.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

const BUILD = '.build';
const require = createRequire(import.meta.url);

function walk(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? walk(full) : [full];
  });
}

const args = process.argv.slice(2);
const skips = args.filter((arg) => arg.startsWith('--skip=')).map((arg) => arg.slice('--skip='.length));
const filters = args.filter((arg) => !arg.startsWith('--skip='));
const sources = walk('test')
  .filter((file) => file.endsWith('.test.ts'))
  .filter((file) => filters.length === 0 || filters.some((filter) => file.includes(filter)))
  .filter((file) => !skips.some((skip) => file.includes(skip)))
  .sort();
if (sources.length === 0) {
  console.error(`No test files match ${filters.join(' ')}`);
  process.exit(1);
}
const compiled = (file) => path.join(BUILD, file.replace(/\.ts$/, '.js'));

const BUILD_INFO = path.join(BUILD, '.tsbuildinfo');
/** What tsconfig.test.json compiles (its include), and what changes how: the configs, the installed packages. */
const INPUTS = ['src', 'test', 'bench', 'scripts', 'packages/client/src', 'tsconfig.json', 'tsconfig.check.json', 'tsconfig.test.json', 'package-lock.json'];

/** Whether tsc's last run (ours or `npm run typecheck`) is newer than every input file. */
function buildIsFresh() {
  let built;
  try {
    built = fs.statSync(BUILD_INFO).mtimeMs;
  } catch {
    return false;
  }
  const newer = (entry) => {
    const stat = fs.statSync(entry);
    if (!stat.isDirectory()) return stat.mtimeMs >= built;
    // A directory's own time changes when a file in it is added, removed or renamed.
    return stat.mtimeMs >= built || fs.readdirSync(entry).some((name) => newer(path.join(entry, name)));
  };
  return !INPUTS.some((input) => fs.existsSync(input) && newer(input));
}

/** tsc over tsconfig.test.json; with `fresh`, without its incremental record (outputs missing). */
function compile(fresh) {
  if (fresh) fs.rmSync(BUILD_INFO, { force: true });
  const started = new Date();
  const tsc = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.test.json'], { stdio: 'inherit' });
  // Type errors still emit: the tests run, and `npm run typecheck` (CI) fails on them.
  if (tsc.status !== 0) console.error('tsc reported errors (above); running the tests anyway');
  // tsc leaves its record as it was when nothing changed (a file touched, not edited): mark the
  // build as checked as of tsc's start (a file edited while it ran is newer), so the next run does
  // not run tsc again for the touched file.
  if (fs.existsSync(BUILD_INFO)) fs.utimesSync(BUILD_INFO, started, started);
}
if (!buildIsFresh()) compile(false);
if (sources.some((file) => !fs.existsSync(compiled(file)))) compile(true);
// What the code reads beside itself: the migrations (as for dist/), and the package.json that
// src/version.ts reads from the directory above src/.
if (spawnSync(process.execPath, ['scripts/copy-assets.mjs', path.join(BUILD, 'src')], { stdio: 'inherit' }).status !== 0) process.exit(1);
fs.copyFileSync('package.json', path.join(BUILD, 'package.json'));

const engine = process.env.PARLEY_TEST_DB || 'pglite';
const concurrency = process.env.PARLEY_TEST_CONCURRENCY || String(Math.max(2, os.availableParallelism()));
console.log(`Running ${sources.length} test files on ${engine} (concurrency ${concurrency})`);
// --liftoff-only: V8's baseline WebAssembly compiler only. A test process lives seconds, and
// optimising PGlite's 9 MB of WebAssembly in the background cost more CPU than the faster code
// gave back (measured on test files of both kinds, few queries and many); the processes the
// tests start get it too (test/helpers/cli.ts).
const child = spawn(process.execPath, ['--liftoff-only', '--enable-source-maps', '--test', `--test-concurrency=${concurrency}`, '--test-timeout=300000', ...sources.map(compiled)], {
  stdio: 'inherit',
  env: { ...process.env, PARLEY_TEST_DB: engine },
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
