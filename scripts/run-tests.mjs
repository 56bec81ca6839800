// Runs the test files under test/ with node's test runner.
// Usage: node scripts/run-tests.mjs [path-fragment ...]   (e.g. users, test/api)
// The database engine comes from PARLEY_TEST_DB: pglite (default) or postgres.
//
// The sources (src, test, bench, scripts) are compiled first, once, into .build/ (tsc with
// tsconfig.test.json, incremental: a second run recompiles only what changed), and the compiled
// test files run on plain node. Loading TypeScript through an ESM loader hook (tsx) cost each
// test process ~2 s of CPU (the hook mechanism alone ~1 s), a third of the suite's time on a
// two-core machine. `npm run typecheck` writes the same build.
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

const filters = process.argv.slice(2);
const sources = walk('test')
  .filter((file) => file.endsWith('.test.ts'))
  .filter((file) => filters.length === 0 || filters.some((filter) => file.includes(filter)))
  .sort();
if (sources.length === 0) {
  console.error(`No test files match ${filters.join(' ')}`);
  process.exit(1);
}
const compiled = (file) => path.join(BUILD, file.replace(/\.ts$/, '.js'));

/** tsc over tsconfig.test.json; with `fresh`, without its incremental record (outputs missing). */
function compile(fresh) {
  if (fresh) fs.rmSync(path.join(BUILD, '.tsbuildinfo'), { force: true });
  const tsc = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.test.json'], { stdio: 'inherit' });
  // Type errors still emit: the tests run, and `npm run typecheck` (CI) fails on them.
  if (tsc.status !== 0) console.error('tsc reported errors (above); running the tests anyway');
}
compile(false);
if (sources.some((file) => !fs.existsSync(compiled(file)))) compile(true);
// What the code reads beside itself: the migrations (as for dist/), and the package.json that
// src/version.ts reads from the directory above src/.
if (spawnSync(process.execPath, ['scripts/copy-assets.mjs', path.join(BUILD, 'src')], { stdio: 'inherit' }).status !== 0) process.exit(1);
fs.copyFileSync('package.json', path.join(BUILD, 'package.json'));

const engine = process.env.PARLEY_TEST_DB || 'pglite';
const concurrency = process.env.PARLEY_TEST_CONCURRENCY || String(Math.max(2, os.availableParallelism()));
console.log(`Running ${sources.length} test files on ${engine} (concurrency ${concurrency})`);
const child = spawn(process.execPath, ['--enable-source-maps', '--test', `--test-concurrency=${concurrency}`, '--test-timeout=300000', ...sources.map(compiled)], {
  stdio: 'inherit',
  env: { ...process.env, PARLEY_TEST_DB: engine },
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
