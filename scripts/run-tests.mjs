// Runs the test files under test/ with node's test runner, through tsx.
// Usage: node scripts/run-tests.mjs [path-fragment ...]   (e.g. users, test/api)
// The database engine comes from PARLEY_TEST_DB: pglite (default) or postgres.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

function walk(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? walk(full) : [full];
  });
}

const filters = process.argv.slice(2);
const files = walk('test')
  .filter((file) => file.endsWith('.test.ts'))
  .filter((file) => filters.length === 0 || filters.some((filter) => file.includes(filter)))
  .sort();
if (files.length === 0) {
  console.error(`No test files match ${filters.join(' ')}`);
  process.exit(1);
}

const engine = process.env.PARLEY_TEST_DB || 'pglite';
const concurrency = process.env.PARLEY_TEST_CONCURRENCY || String(Math.max(2, os.availableParallelism()));
console.log(`Running ${files.length} test files on ${engine} (concurrency ${concurrency})`);
const child = spawn(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-timeout=300000', ...files],
  { stdio: 'inherit', env: { ...process.env, PARLEY_TEST_DB: engine } },
);
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
