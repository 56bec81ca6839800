// Makes the prebuilt empty cluster anew (src/db/pglite-cluster/): PGlite's initdb, run in memory
// by the installed PGlite, dumped as a tarball of its data dir, compressed with brotli, with a
// manifest naming that PGlite. Run it after upgrading @electric-sql/pglite (the test
// test/integration/pglite-cluster.test.ts fails until then, and Parley runs initdb at a first
// start meanwhile):
//
//   npx tsx scripts/pglite-cluster.ts
//
// It peaks at ~1 GB for ~10 s (initdb), then compresses for ~30-60 s: run it on a development box.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { PGlite } from '@electric-sql/pglite';
import { EMPTY_CLUSTER_DIR, EMPTY_CLUSTER_MANIFEST, EMPTY_CLUSTER_TARBALL, type EmptyClusterManifest, installedPGliteVersion, readTar } from '../src/db/pglite-cluster.js';

const pg = new PGlite();
await pg.waitReady;
const control = (await pg.query<{ pg_control_version: number; catalog_version_no: number }>('select pg_control_version, catalog_version_no from pg_control_system()')).rows[0]!;
// Every page on disk, so the tarball needs no WAL replay.
await pg.query('checkpoint');
const tar = Buffer.from(await (await pg.dumpDataDir('none')).arrayBuffer());
await pg.close();

const version = readTar(tar).find((entry) => entry.name === 'PG_VERSION');
if (!version) throw new Error('the dump has no PG_VERSION');
const manifest: EmptyClusterManifest = {
  format: 1,
  pglite: installedPGliteVersion(),
  postgres: version.data.toString('utf8').trim(),
  controlVersion: control.pg_control_version,
  catalogVersion: control.catalog_version_no,
  tarBytes: tar.length,
  sha256: crypto.createHash('sha256').update(tar).digest('hex'),
};
// Brotli's best (quality 11, a 16 MB window): 1.4 MB where gzip -9 makes 4.4 MB; ~0.1 s to decompress.
const compressed = zlib.brotliCompressSync(tar, {
  params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_LGWIN]: 24, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: tar.length },
});
const dir = fileURLToPath(EMPTY_CLUSTER_DIR);
fs.mkdirSync(dir, { recursive: true });
fs.writeFileSync(new URL(EMPTY_CLUSTER_TARBALL, EMPTY_CLUSTER_DIR), compressed);
fs.writeFileSync(new URL(EMPTY_CLUSTER_MANIFEST, EMPTY_CLUSTER_DIR), `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`PGlite ${manifest.pglite} (PostgreSQL ${manifest.postgres}, catalog ${manifest.catalogVersion}): ${tar.length} bytes of tarball, ${compressed.length} compressed, in ${dir}`);
