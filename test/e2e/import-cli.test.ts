import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CLI_ARGS, newDeployment, parseBanner, runCli, startServe, type Deployment, type ServerProcess } from '../helpers/cli.js';

const T0 = 1_600_000_000;

let deployment: Deployment;
let server: ServerProcess;
let ca: string;
let caFile: string;
/** The default app of the server's first start, and its URL. */
let app: { appId: string; apiKey: string; url: string };

before(async () => {
  // This import makes more than the vendor's 60 import calls a minute per app: the default limit
  // would have it wait out 429s (the importer honours Retry-After).
  // Migrated already: the server's first start creates the app to import into.
  deployment = await newDeployment({ PARLEY_RATE_LIMITS: 'import=100000' }, { migrated: true });
  server = await startServe(deployment.env);
  const { appId, apiKey } = parseBanner(server.output());
  app = { appId, apiKey, url: `https://${appId}.api-us.localhost:${server.port}` };
  caFile = path.join(deployment.dataDir, 'tls', 'cert.pem');
  ca = fs.readFileSync(caFile, 'utf8');
});
after(async () => {
  await server?.stop();
  await deployment.destroy();
});

/** GET on the app's host over TLS; the answer's JSON. */
function get(app: { appId: string; apiKey: string }, url: string): Promise<any> {
  return new Promise((resolve, reject) => {
    const host = `${app.appId}.api-us.localhost`;
    const request = https.request({ host: '127.0.0.1', port: server.port, path: url, servername: host, ca, headers: { host, apikey: app.apiKey } }, (response) => {
      let text = '';
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => (response.statusCode === 200 ? resolve(JSON.parse(text)) : reject(new Error(`${url}: ${response.statusCode} ${text}`))));
    });
    request.on('error', reject);
    request.end();
  });
}

/** Runs `parley import`; `onProgress` sees each records count it prints and may signal it. */
function runImport(file: string, app: { url: string; apiKey: string }, extra: string[] = [], onProgress?: (done: number, kill: (signal: NodeJS.Signals) => void) => void) {
  const args = [...CLI_ARGS, 'import', file, '--url', app.url, '--api-key', app.apiKey, '--ca', caFile, ...extra];
  const child = spawn(process.execPath, args, { env: { ...deployment.env, PARLEY_IMPORT_PROGRESS_MS: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk;
    for (const match of chunk.toString().matchAll(/(\d+)\/\d+ records/g)) onProgress?.(Number(match[1]), (signal) => child.kill(signal));
  });
  return new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stderr })));
}

/** A file of mixed records: users, groups (each owned by a user), members and messages, shuffled by kind. */
function writeFile(file: string, sizes: { users: number; groups: number; membersPerGroup: number; messages: number }) {
  const lines: string[] = [];
  const muids: string[] = [];
  // Kinds interleaved in the file: the importer must still send users first.
  for (let m = 0; m < sizes.messages; m++) {
    const muid = `m-${m}`;
    muids.push(muid);
    const group = m % 3 === 0;
    const a = (m * 7) % sizes.users;
    const record = group
      ? { kind: 'message', muid, sender: `u-${a}`, receiverType: 'group', receiver: `g-${m % sizes.groups}`, data: { text: `group message ${m}` }, sentAt: T0 + m }
      : { kind: 'message', muid, sender: `u-${a}`, receiverType: 'user', receiver: `u-${(a + 1) % sizes.users}`, data: { text: `hello ${m} 👋` }, sentAt: T0 + m, readAt: T0 + m + 1 };
    lines.push(JSON.stringify(record));
  }
  for (let u = 0; u < sizes.users; u++) lines.push(JSON.stringify({ kind: 'user', uid: `u-${u}`, name: `User ${u}`, createdAt: T0 - 1000 }));
  for (let g = 0; g < sizes.groups; g++) {
    lines.push(JSON.stringify({ kind: 'group', guid: `g-${g}`, name: `Group ${g}`, type: 'public', owner: `u-${(g * 10) % sizes.users}`, createdAt: T0 - 500 }));
    for (let k = 1; k <= sizes.membersPerGroup; k++) {
      lines.push(JSON.stringify({ kind: 'member', guid: `g-${g}`, uid: `u-${(g * 10 + k) % sizes.users}`, joinedAt: T0 - 100 }));
    }
  }
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
  return { lines: lines.length, muids };
}

async function allMessages(app: { appId: string; apiKey: string }): Promise<any[]> {
  const messages: any[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await get(app, `/v3/messages?limit=1000&affix=append${after ? `&id=${after}` : ''}`);
    messages.push(...page.data);
    if (page.data.length < 1000) return messages;
    after = page.data.at(-1).id;
  }
}

// What the command reports, its report file and its usage errors are tested in process
// (test/api/import-cli.test.ts); here, what needs processes: SIGKILL, Ctrl-C, exit codes, TLS with --ca.
describe('parley import', () => {
  it('imports 10,000 mixed records, killed halfway, interrupted and re-run: the server holds each record exactly once', async () => {
    const file = path.join(deployment.dataDir, 'big.jsonl');
    // Ten batches of 1,000 calls' worth: enough for a kill halfway and an interruption later, each
    // between batches of every kind.
    const sizes = { users: 1_000, groups: 100, membersPerGroup: 20, messages: 6_900 };
    const { lines, muids } = writeFile(file, sizes);
    assert.equal(lines, 10_000);

    let killedAt = 0;
    const first = await runImport(file, app, ['--batch', '400'], (done, kill) => {
      if (!killedAt && done >= 5_000) {
        killedAt = done;
        kill('SIGKILL');
      }
    });
    assert.equal(first.signal, 'SIGKILL', `the first run was killed halfway:\n${first.stderr.slice(-2000)}`);
    assert.ok(killedAt >= 5_000 && killedAt < 10_000, `killed at ${killedAt}`);

    // Ctrl-C: the calls in flight finish, then it says how to resume and exits 130.
    let interrupted = false;
    const stopped = await runImport(file, app, ['--batch', '400'], (done, kill) => {
      if (!interrupted && done >= 8_000) {
        interrupted = true;
        kill('SIGINT');
      }
    });
    assert.equal(stopped.code, 130, stopped.stderr.slice(-2000));
    assert.match(stopped.stderr, /Interrupted\. Run the same command again to finish/);

    const second = await runImport(file, app, ['--batch', '400']);
    assert.equal(second.code, 0, second.stderr.slice(-3000));
    const summary = Object.fromEntries(
      [...second.stderr.matchAll(/^\s+(\w+)\s+(\d+) imported\s+(\d+) already there\s+(\d+) failed/gm)].map((m) => [m[1], { imported: Number(m[2]), skipped: Number(m[3]), failed: Number(m[4]) }]),
    );
    assert.equal(summary.messages!.imported + summary.messages!.skipped, sizes.messages);
    assert.ok(summary.messages!.skipped > 0 && summary.users!.skipped === sizes.users, 'the re-run skipped what the first run stored');

    // Exactly the file's records, through the API.
    assert.equal((await get(app, '/v3/users?perPage=1')).meta.pagination.total, sizes.users);
    const groups: any[] = [];
    for (let page = 1; page <= 2; page++) groups.push(...(await get(app, `/v3/groups?perPage=100&page=${page}`)).data);
    assert.equal(groups.length, sizes.groups);
    // Each group: its owner and its imported members.
    assert.equal(
      groups.reduce((sum, group) => sum + group.membersCount, 0),
      sizes.groups * (sizes.membersPerGroup + 1),
    );
    const messages = await allMessages(app);
    assert.equal(messages.length, sizes.messages);
    assert.deepEqual(new Set(messages.map((message) => message.muid)), new Set(muids));
    // Listed by id, they are in sentAt order: each conversation's messages went in file order.
    for (let i = 1; i < messages.length; i++) {
      if (messages[i].conversationId === messages[i - 1].conversationId) assert.ok(messages[i].sentAt >= messages[i - 1].sentAt);
    }
    const byConversation = new Map<string, number[]>();
    for (const message of messages) byConversation.set(message.conversationId, [...(byConversation.get(message.conversationId) ?? []), message.sentAt]);
    for (const [conversation, times] of byConversation)
      assert.deepEqual(
        times,
        [...times].sort((a, b) => a - b),
        conversation,
      );
  });

  it('exits 1 when the server refuses the key, reporting no record', async () => {
    const report = path.join(deployment.dataDir, 'refused.report.jsonl');
    const run = await runImport(path.resolve('docs/examples/import-example.jsonl'), { url: app.url, apiKey: 'f'.repeat(40) }, ['--report', report]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /refused the key \(AUTH_ERR_APIKEY_NOT_FOUND/);
    assert.equal(fs.readFileSync(report, 'utf8'), '');
  });

  it('exits 2 for bad usage, with the usage', async () => {
    const example = 'docs/examples/import-example.jsonl';
    const cases: Array<[string[], RegExp]> = [
      [['import', example, '--api-key', 'k'], /--url is required/],
      [['import', example, '--url', 'https://a.api-us.localhost', '--api-key', 'k', '--batch', '0'], /--batch must be an integer/],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli(args, deployment.env)));
    results.forEach((result, n) => {
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, cases[n]![1]);
      assert.match(result.stderr, /Usage: parley <command>/);
    });
  });
});
