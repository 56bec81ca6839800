// Copies the files tsc does not emit (SQL migrations, the embedded database's prebuilt empty
// cluster, the demo page with the client library's built modules) beside the compiled sources: `node scripts/copy-assets.mjs [DIR]`, DIR being where
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

// The demo page (docs/demo.md), served from beside src/http/demo/demo.routes.ts: packages/demo's
// files, and the client library's ES modules in client/, where the page imports them from: for
// the test build (.build/src), that build's own compile of packages/client/src beside it, current
// at every run; else packages/client/dist, built before this runs by `npm run build`.
const page = path.join(root, 'http/demo/page');
fs.rmSync(page, { recursive: true, force: true });
fs.mkdirSync(path.join(page, 'client'), { recursive: true });
for (const file of fs.readdirSync('packages/demo')) {
  if (/\.(html|js|css)$/.test(file)) fs.copyFileSync(path.join('packages/demo', file), path.join(page, file));
}
const testBuildClient = path.join(root, '..', 'packages/client/src');
const clientDist = fs.existsSync(path.join(testBuildClient, 'index.js')) ? testBuildClient : 'packages/client/dist';
if (fs.existsSync(clientDist)) {
  for (const file of fs.readdirSync(clientDist)) if (file.endsWith('.js')) fs.copyFileSync(path.join(clientDist, file), path.join(page, 'client', file));
} else {
  console.warn(`copy-assets: ${clientDist} is not built (npm run build builds it): the demo page will not start`);
}
