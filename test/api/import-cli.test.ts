/**
 * `parley import` (docs/import.md) run in this process against the test app listening on a port:
 * what it reports, its report file, its exit codes and its usage errors. The command as a process
 * (a large import killed, interrupted with Ctrl-C and re-run, over TLS with --ca; exit codes) is
 * in test/e2e/import-cli.test.ts.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { importCommand, type ImportFlags } from '../../src/cli-import.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliIo, isUsage } from '../helpers/cli-io.js';

const T0 = 1_600_000_000;
const EXAMPLE = 'docs/examples/import-example.jsonl';

let t: TestApp;
let port: number;
let dir: string;
before(async () => {
  // The domain `localhost`: the importer reaches <appId>.api-us.localhost on the loopback.
  t = await createTestApp({ domain: 'localhost' });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-import-cli-'));
});
after(async () => {
  await t?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const io = cliIo;

const urlOf = (app: { appId: string }) => `http://${app.appId}.api-us.localhost:${port}`;

/** Runs `parley import FILE --url <app's> --api-key <app's> ...flags`: its exit code and what it wrote (to stderr). */
async function runImport(file: string, app: CreatedApp, flags: ImportFlags = {}): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      stderr += chunk;
      done();
    },
  });
  const code = await importCommand(io, { url: urlOf(app), 'api-key': app.apiKey, ...flags }, file, [], out);
  return { code, stderr };
}

/** GET on the app's host: the answer's JSON. */
async function get(app: CreatedApp, url: string): Promise<any> {
  const response = await t.app.inject({ method: 'GET', url, headers: { host: `${app.appId}.api-us.localhost`, apikey: app.apiKey } });
  assert.equal(response.statusCode, 200, response.body);
  return response.json();
}

describe('parley import, in process', () => {
  it('reports bad lines and refused records in the report file and returns 1; a re-run of a finished import skips everything', async () => {
    const app = t.appA;
    const file = path.join(dir, 'mixed.jsonl');
    const report = path.join(dir, 'mixed.report.jsonl');
    fs.writeFileSync(
      file,
      [
        JSON.stringify({ kind: 'user', uid: 'ann', name: 'Ann' }),
        'not json',
        JSON.stringify({ kind: 'robot', uid: 'r2' }),
        JSON.stringify({ kind: 'user', name: 'no uid' }),
        JSON.stringify({ kind: 'user', uid: 'bad uid!', name: 'x' }),
        JSON.stringify({ kind: 'message', muid: 'x1', sender: 'ann', receiverType: 'user', receiver: 'nobody', data: { text: 'hi' }, sentAt: T0 }),
        JSON.stringify({ kind: 'message', muid: 'x2', sender: 'ann', receiverType: 'user', receiver: 'ann', data: { text: 'note to self' }, sentAt: T0 }),
        '',
      ].join('\n'),
    );
    const run = await runImport(file, app, { report });
    assert.equal(run.code, 1, run.stderr);
    const failures = fs
      .readFileSync(report, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.deepEqual(
      failures.map((f) => [f.line, f.code]),
      [
        [2, 'ERR_IMPORT_INVALID_LINE'],
        [3, 'ERR_IMPORT_INVALID_LINE'],
        [4, 'ERR_IMPORT_INVALID_LINE'],
        [5, 'ERR_BAD_REQUEST'],
        [6, 'ERR_UID_NOT_FOUND'],
      ],
    );
    assert.equal(failures[4].key, 'x1');
    assert.match(run.stderr, /users\s+1 imported\s+0 already there\s+1 failed/);
    assert.match(run.stderr, /messages\s+1 imported\s+0 already there\s+1 failed/);
    assert.match(run.stderr, /; 3 invalid lines$/m);
    assert.match(run.stderr, new RegExp(`^5 records failed: see ${report.replaceAll('.', '\\.')}$`, 'm'));
    assert.doesNotMatch(run.stderr, /Stopped|Interrupted/);

    const again = await runImport(file, app, { report });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /users\s+0 imported\s+1 already there\s+1 failed/);
    assert.match(again.stderr, /messages\s+0 imported\s+1 already there\s+1 failed/);
    assert.equal(fs.readFileSync(report, 'utf8').trim().split('\n').length, 5, 'the report is rewritten, not appended to');
  });

  it('imports the documented example file cleanly, its report beside the file by default', async () => {
    const app = t.appB;
    const file = path.join(dir, 'example.jsonl');
    fs.copyFileSync(path.resolve(EXAMPLE), file);
    const run = await runImport(file, app, { batch: '2', concurrency: '1' });
    const report = `${file}.failed.jsonl`;
    assert.equal(run.code, 0, `${run.stderr}\n${fs.existsSync(report) ? fs.readFileSync(report, 'utf8') : 'no report'}`);
    assert.equal(fs.readFileSync(report, 'utf8'), '');
    assert.doesNotMatch(run.stderr, /records failed/);
    const history = await get(app, '/v3/messages?limit=100');
    assert.equal(history.data.length, 4);
    assert.deepEqual(history.data.map((message: { muid: string }) => message.muid).sort(), ['src-1001', 'src-1002', 'src-1003', 'src-1004']);
  });

  it('stops at once, reporting no record, when the server refuses the key', async () => {
    const report = path.join(dir, 'refused.report.jsonl');
    const run = await runImport(path.resolve(EXAMPLE), { ...t.appA, apiKey: 'f'.repeat(40) }, { report });
    assert.equal(run.code, 1, run.stderr);
    assert.match(
      run.stderr,
      /^Stopped: the server could not be reached or refused the key \(AUTH_ERR_APIKEY_NOT_FOUND: .*\)\. Run the same command again to finish: records already imported are skipped\.$/m,
    );
    assert.equal(fs.readFileSync(report, 'utf8'), '');
  });

  it('refuses bad usage before it sends anything', async () => {
    const target: ImportFlags = { url: 'https://a.api-us.localhost', 'api-key': 'k' };
    const cases: Array<[string | undefined, ImportFlags, RegExp, string[]?]> = [
      [undefined, target, /^import needs the file to import: parley import FILE\.jsonl --url URL --api-key KEY$/],
      [EXAMPLE, target, /^Unexpected arguments: other\.jsonl$/, ['other.jsonl']],
      [EXAMPLE, { 'api-key': 'k' }, /^--url is required\.$/],
      [EXAMPLE, { url: target.url }, /^--api-key is required\.$/],
      ['missing.jsonl', target, /^No such file: missing\.jsonl$/],
      [EXAMPLE, { ...target, batch: '0' }, /^--batch must be an integer from 1 to 10000\.$/],
      [EXAMPLE, { ...target, batch: '2.5' }, /^--batch must be an integer from 1 to 10000\.$/],
      [EXAMPLE, { ...target, concurrency: '65' }, /^--concurrency must be an integer from 1 to 64\.$/],
      [EXAMPLE, { ...target, retries: 'many' }, /^--retries must be an integer from 1 to 100\.$/],
      [EXAMPLE, { url: 'ftp://a.api-us.localhost', 'api-key': 'k' }, /^--url must be https:/],
      [EXAMPLE, { url: 'not a url', 'api-key': 'k' }, /^--url must be https:/],
      [EXAMPLE, { ...target, report: EXAMPLE }, /^--report must not be the file to import\.$/],
      [EXAMPLE, { ...target, report: path.resolve(EXAMPLE) }, /^--report must not be the file to import\.$/],
      [EXAMPLE, { ...target, ca: 'missing.pem' }, /^No such CA file: missing\.pem$/],
      [EXAMPLE, { ...target, report: 'missing-dir/report.jsonl' }, /^No such directory for the report: missing-dir\/report\.jsonl$/],
    ];
    for (const [file, flags, message, extra] of cases) {
      await assert.rejects(importCommand(io, flags, file, extra ?? [], new Writable({ write: (_chunk, _encoding, done) => done() })), isUsage(message), `${file} ${JSON.stringify(flags)}`);
    }
    assert.ok(!fs.existsSync(`${EXAMPLE}.failed.jsonl`), 'no report was written');
  });
});
