// Copies the files tsc does not emit (SQL migrations) beside the compiled sources:
// `node scripts/copy-assets.mjs [DIR]`, DIR being where src/ is compiled to (dist/ by default;
// .build/src for the test build, see run-tests.mjs).
import fs from 'node:fs';
import path from 'node:path';

const out = path.join(process.argv[2] ?? 'dist', 'db/migrations');
fs.mkdirSync(out, { recursive: true });
for (const file of fs.readdirSync('src/db/migrations')) {
  if (file.endsWith('.sql')) fs.copyFileSync(path.join('src/db/migrations', file), path.join(out, file));
}
