import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import {
  createClusterIfNew,
  EMPTY_CLUSTER_DIR,
  EMPTY_CLUSTER_MANIFEST,
  EMPTY_CLUSTER_TARBALL,
  type EmptyClusterManifest,
  installedPGliteVersion,
  readEmptyCluster,
} from '../../src/db/pglite-cluster.js';
import { type Logger, silentLogger } from '../../src/domain/context.js';
import { TEST_ENGINE } from '../helpers/db.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-pglite-cluster-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

/** A logger that keeps its warnings and infos as [message, fields]. */
function recordingLogger(): Logger & { lines: Array<[string, Record<string, unknown>]> } {
  const lines: Array<[string, Record<string, unknown>]> = [];
  const keep = (obj: object | string, msg?: string) => lines.push(typeof obj === 'string' ? [obj, {}] : [msg ?? '', obj as Record<string, unknown>]);
  const log = { lines, debug() {}, info: keep, warn: keep, error: keep, child: () => log };
  return log;
}

/** A copy of the prebuilt cluster's folder, its manifest changed by `edit`. */
function imageWith(name: string, edit: (manifest: EmptyClusterManifest) => void, tarball?: Buffer): URL {
  const dir = path.join(root, name);
  fs.mkdirSync(dir);
  const manifest = JSON.parse(fs.readFileSync(new URL(EMPTY_CLUSTER_MANIFEST, EMPTY_CLUSTER_DIR), 'utf8')) as EmptyClusterManifest;
  edit(manifest);
  fs.writeFileSync(path.join(dir, EMPTY_CLUSTER_MANIFEST), JSON.stringify(manifest));
  fs.writeFileSync(path.join(dir, EMPTY_CLUSTER_TARBALL), tarball ?? fs.readFileSync(new URL(EMPTY_CLUSTER_TARBALL, EMPTY_CLUSTER_DIR)));
  return pathToFileURL(`${dir}/`);
}

describe('the prebuilt empty cluster', { skip: TEST_ENGINE !== 'pglite' && 'the embedded engine is tested in the PGlite run' }, () => {
  it('was made by the installed PGlite and is whole (after upgrading PGlite: npx tsx scripts/pglite-cluster.ts)', async () => {
    const prebuilt = await readEmptyCluster();
    assert.ok('tar' in prebuilt, 'unusable' in prebuilt ? prebuilt.unusable : '');
    assert.equal(prebuilt.manifest.pglite, installedPGliteVersion());
  });

  it('fills a new data dir, owner-only and renamed into place, that opens with its catalogue and migrates', async () => {
    const dataDir = path.join(root, 'new');
    const pgDir = path.join(dataDir, 'pglite');
    // An empty directory, as an earlier Parley left before its initdb, gives way.
    fs.mkdirSync(pgDir, { recursive: true });
    const log = recordingLogger();
    assert.equal(await createClusterIfNew(pgDir, [], log), 'prebuilt');
    assert.ok(log.lines.some(([message, fields]) => /from the prebuilt empty cluster/.test(message) && fields.pglite === installedPGliteVersion()));
    assert.ok(!fs.existsSync(`${pgDir}.new`), 'nothing left beside it');
    assert.ok(!fs.existsSync(path.join(pgDir, 'postmaster.pid')), 'not the pid file of the PostgreSQL that was dumped');
    assert.equal(fs.statSync(path.join(pgDir, 'PG_VERSION')).mode & 0o077, 0);
    assert.equal(fs.statSync(path.join(pgDir, 'base')).mode & 0o077, 0);
    assert.equal(await createClusterIfNew(pgDir, [], log), 'existing');

    const database = await openDatabase({ engine: 'pglite', dataDir, log: silentLogger });
    try {
      const manifest = JSON.parse(fs.readFileSync(new URL(EMPTY_CLUSTER_MANIFEST, EMPTY_CLUSTER_DIR), 'utf8')) as EmptyClusterManifest;
      const control = (await sql<{ catalog_version_no: number }>`select catalog_version_no from pg_control_system()`.execute(database.db)).rows[0]!;
      assert.equal(control.catalog_version_no, manifest.catalogVersion);
      assert.ok((await migrate(database, silentLogger)).length > 0);
    } finally {
      await database.close();
    }
  });

  it('is not used when another PGlite made it, nor when it is damaged: initdb runs, and the log says why', async () => {
    const other = await readEmptyCluster(imageWith('other', (manifest) => (manifest.pglite = '0.0.1')));
    assert.ok('unusable' in other && other.unusable.includes('PGlite 0.0.1') && other.unusable.includes(`PGlite ${installedPGliteVersion()}`));
    const damaged = await readEmptyCluster(imageWith('damaged', (manifest) => (manifest.sha256 = '0'.repeat(64))));
    assert.ok('unusable' in damaged && /damaged/.test(damaged.unusable));
    const notBrotli = await readEmptyCluster(imageWith('not-brotli', () => {}, Buffer.from('not brotli')));
    assert.ok('unusable' in notBrotli && /damaged/.test(notBrotli.unusable));

    // initdb refuses this setting at once (a successful initdb takes ~20 s): its failure shows it ran.
    const pgDir = path.join(root, 'fallback', 'pglite');
    const log = recordingLogger();
    await assert.rejects(
      createClusterIfNew(
        pgDir,
        ['shared_buffers=banana'],
        log,
        imageWith('fallback-image', (manifest) => (manifest.pglite = '0.0.1')),
      ),
      /creating the embedded database in .* failed/,
    );
    assert.ok(log.lines.some(([message, fields]) => /with initdb/.test(message) && String(fields.reason).includes('PGlite 0.0.1')));
    assert.ok(!fs.existsSync(`${pgDir}.new`) && !fs.existsSync(path.join(pgDir, 'PG_VERSION')), 'no half-made cluster');
  });

  it('refuses a directory that holds files but no database, and leaves them', async () => {
    const pgDir = path.join(root, 'stray', 'pglite');
    fs.mkdirSync(pgDir, { recursive: true });
    fs.writeFileSync(path.join(pgDir, 'notes.txt'), 'mine');
    await assert.rejects(createClusterIfNew(pgDir, [], silentLogger), /holds files but no database \(no PG_VERSION\)/);
    assert.equal(fs.readFileSync(path.join(pgDir, 'notes.txt'), 'utf8'), 'mine');
  });
});
