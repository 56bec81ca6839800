import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadMigrations } from '../../src/db/migrate.js';
import { TEST_ENGINE } from '../helpers/db.js';
import { callServer, newDeployment, parseBanner, runCli, startServe, type Deployment, type ServerProcess } from '../helpers/cli.js';

// What needs processes: a backup taken from a running server that keeps writing, and the restore
// of it started as a server. Process starts cost seconds of CPU each (PGlite): this file starts
// two servers, and PGlite in two commands (a backup of a stopped data dir, a restore).

let files: string;
before(() => {
  files = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-backups-'));
});
after(() => {
  fs.rmSync(files, { recursive: true, force: true });
});

describe('parley backup and restore of the embedded database', {
  skip: TEST_ENGINE !== 'pglite' && 'the embedded database only: PostgreSQL is backed up with pg_dump',
}, () => {
  const agent = new http.Agent({ keepAlive: true });
  let source: Deployment;
  let target: Deployment;
  let server: ServerProcess | undefined;
  before(async () => {
    source = await newDeployment({ PARLEY_INSECURE_HTTP: '1' }, { migrated: true });
    target = await newDeployment({ PARLEY_INSECURE_HTTP: '1' });
  });
  after(async () => {
    agent.destroy();
    await server?.stop('SIGKILL');
    await source.destroy();
    await target.destroy();
    for (const entry of fs.readdirSync(path.dirname(target.dataDir))) {
      if (entry.startsWith(`${path.basename(target.dataDir)}.`)) fs.rmSync(path.join(path.dirname(target.dataDir), entry), { recursive: true, force: true });
    }
  });

  it('a backup taken while the server writes restores, into a new data dir, every write answered before it', async () => {
    server = await startServe(source.env);
    const banner = parseBanner(server.output());
    const app = { appId: banner.appId, apiKey: banner.apiKey };
    const call = (method: string, url: string, payload?: unknown, onBehalfOf?: string) => callServer(agent, server!, app, method, url, payload, onBehalfOf);
    for (const uid of ['alice', 'bob']) assert.equal((await call('POST', '/v3/users', { uid, name: uid })).status, 200);
    const send = async (text: string) => {
      const sent = await call('POST', '/v3/messages', { receiver: 'bob', receiverType: 'user', category: 'message', type: 'text', data: { text } }, 'alice');
      assert.equal(sent.status, 200, sent.body);
    };
    for (let n = 0; n < 20; n++) await send(`before ${n}`);
    const socket = fs.statSync(path.join(source.dataDir, 'parley.sock'));
    assert.ok(socket.isSocket());
    assert.equal(socket.mode & 0o777, 0o600);

    // Sends go on, one after another, through the backup and after it.
    const answered: string[] = [];
    let startedAfterBackup = 0;
    let backupDone = false;
    let writing = true;
    // Stops at its first failed send, which `await writer` then throws (the waits below end with it).
    const writer = (async () => {
      try {
        for (let n = 0; writing; n++) {
          const afterBackup = backupDone;
          await send(afterBackup ? `after ${n}` : `during ${n}`);
          answered.push(afterBackup ? `after ${n}` : `during ${n}`);
          if (afterBackup) startedAfterBackup++;
        }
      } finally {
        writing = false;
      }
    })();
    while (answered.length < 5 && writing) await new Promise((resolve) => setTimeout(resolve, 10));
    const answeredBefore = answered.slice();
    const file = path.join(files, 'running.parley-backup');
    const backup = await runCli(['backup', file], source.env);
    backupDone = true;
    assert.equal(backup.code, 0, backup.stderr);
    assert.match(backup.stdout, /^Wrote .*running\.parley-backup \(.+, migration \d+, .+\)\.\n$/);
    while (startedAfterBackup < 5 && writing) await new Promise((resolve) => setTimeout(resolve, 10));
    writing = false;
    await writer;

    // The file: owner only, its manifest at the migration the server runs.
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    const [magic, manifestLine] = fs.readFileSync(file).subarray(0, 4096).toString('latin1').split('\n');
    assert.equal(magic, 'PARLEY BACKUP');
    const manifest = JSON.parse(manifestLine!);
    assert.equal(manifest.migration, loadMigrations().length);
    assert.deepEqual(manifest.parts.map((part: { name: string }) => part.name).sort(), ['pglite', 'secret.key']);
    assert.deepEqual(fs.readdirSync(files), ['running.parley-backup'], 'no temporary file left');

    const unwritable = await runCli(['backup', path.join(files, 'no-such-dir', 'x')], source.env);
    assert.equal(unwritable.code, 1);
    assert.match(unwritable.stderr, /^parley: The server did not write the backup: Cannot write .*no-such-dir\/x: ENOENT: no such file or directory\n$/);

    // A restore refuses a data dir a server holds.
    const held = await runCli(['restore', file], source.env);
    assert.equal(held.code, 1);
    assert.match(held.stderr, new RegExp(`in use by a running Parley process \\(pid ${server.child.pid}\\): stop it before restoring`));
    assert.equal(await server.stop(), 0);
    server = undefined;
    assert.ok(!fs.existsSync(path.join(source.dataDir, 'parley.sock')), 'the socket goes with the server');

    // With no server, the command opens the data dir itself.
    const stopped = await runCli(['backup', path.join(files, 'stopped.parley-backup')], source.env);
    assert.equal(stopped.code, 0, stopped.stderr);

    // What is not a backup, and a data dir with something in it, are refused, and nothing moves.
    fs.writeFileSync(path.join(files, 'not-a-backup'), 'PARLEY BACKUP\n{"format":1}\n');
    const refused = await runCli(['restore', path.join(files, 'not-a-backup')], target.env);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^parley: .*not-a-backup is not a Parley backup \(its manifest is incomplete\)\.\n$/);
    const cut = path.join(files, 'cut-short');
    fs.writeFileSync(cut, fs.readFileSync(file).subarray(0, -100));
    const damaged = await runCli(['restore', cut], target.env);
    assert.equal(damaged.code, 1);
    assert.match(damaged.stderr, /cut-short is damaged or incomplete \(its checksum does not match\)/);
    const newer = path.join(files, 'newer');
    const content = fs.readFileSync(file);
    const payloadAt = content.indexOf(0x0a, content.indexOf(0x0a) + 1) + 1;
    const header = `PARLEY BACKUP\n${JSON.stringify({ ...manifest, parley: '9.0.0', migration: manifest.migration + 1 })}\n`;
    fs.writeFileSync(newer, Buffer.concat([Buffer.from(header), content.subarray(payloadAt)]));
    const tooNew = await runCli(['restore', newer], target.env);
    assert.equal(tooNew.code, 1);
    assert.match(tooNew.stderr, /newer is made by a newer Parley \(9\.0\.0, migration \d+; this one knows \d+\): restore it with a Parley at least as new\./);
    fs.writeFileSync(path.join(target.dataDir, 'old.txt'), 'kept');
    const occupied = await runCli(['restore', file], target.env);
    assert.equal(occupied.code, 1);
    assert.match(occupied.stderr, /is not empty: .* pass --force/);
    assert.deepEqual(fs.readdirSync(target.dataDir), ['old.txt']);

    const restored = await runCli(['restore', file, '--force'], target.env);
    assert.equal(restored.code, 0, restored.stderr);
    const aside = /kept in (.+)\.\n$/.exec(restored.stdout)?.[1];
    assert.ok(aside, restored.stdout);
    assert.equal(fs.readFileSync(path.join(aside, 'old.txt'), 'utf8'), 'kept');
    assert.deepEqual(fs.readFileSync(path.join(target.dataDir, 'secret.key')), fs.readFileSync(path.join(source.dataDir, 'secret.key')));

    // A server on the restored data dir: the same app and keys, every message answered before the
    // backup began, none begun after it ended.
    server = await startServe(target.env);
    assert.doesNotMatch(server.output(), /A default app was created/);
    const listed = await call('GET', '/v3/messages?limit=1000');
    assert.equal(listed.status, 200, listed.body);
    const texts = new Set((JSON.parse(listed.body).data as { data: { text: string } }[]).map((message) => message.data.text));
    for (let n = 0; n < 20; n++) assert.ok(texts.has(`before ${n}`), `before ${n}`);
    for (const text of answeredBefore) assert.ok(texts.has(text), text);
    assert.deepEqual(
      [...texts].filter((text) => text.startsWith('after ')),
      [],
    );
    assert.equal((await call('GET', '/v3/users/bob')).status, 200);
    assert.equal(await server.stop(), 0);
    server = undefined;
  });
});

describe('parley backup on PostgreSQL', () => {
  it('points to pg_dump and exits 2, without connecting', async () => {
    const env = { ...process.env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', PARLEY_DATA_DIR: files };
    const backup = await runCli(['backup', path.join(files, 'pg.parley-backup')], env);
    assert.equal(backup.code, 2);
    assert.match(backup.stderr, /uses PostgreSQL \(DATABASE_URL\): back it up with pg_dump/);
    const usage = await runCli(['backup'], env);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /backup needs a FILE/);
  });
});
