// Copies the files tsc does not emit (SQL migrations, the embedded database's prebuilt empty
// cluster) beside the compiled sources: `node scripts/copy-assets.mjs [DIR]`, DIR being where
// src/ is compiled to (dist/ by default; .build/src for the test build, see run-tests.mjs).
import fs from 'node:fs';
import path from 'node:path';

const root = process.argv[2] ?? 'dist';
const assets = [
  ['db/migrations', (file) => file.endsWith('.sql')],
  ['db/pglite-cluster', (file) => file.startsWith('empty-cluster.')],
];
for (const [dir, wanted] of assets) {
  const out = path.join(root, dir);
  fs.mkdirSync(out, { recursive: true });
  for (const file of fs.readdirSync(path.join('src', dir))) {
    if (wanted(file)) fs.copyFileSync(path.join('src', dir, file), path.join(out, file));
  }
}
