import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, beforeEach, describe, it } from 'node:test';
import { runImport, type ImportOptions } from '../../src/import/importer.js';
import { conversationKey, KINDS, type RecordKind } from '../../src/import/jsonl-source.js';

/**
 * A stand-in for the data import API: stores keys per kind, answers "already exists" for a key
 * it holds, refuses records that carry `refuse`, and records every call (when it started and
 * answered, relative to the others) so the tests can check order and concurrency.
 */
const PATHS: Record<string, RecordKind> = { users: 'user', groups: 'group', members: 'member', messages: 'message' };
const EXISTS: Record<RecordKind, string> = {
  user: 'ERR_UID_ALREADY_EXISTS',
  group: 'ERR_GUID_ALREADY_EXISTS',
  member: 'ERR_ALREADY_JOINED',
  message: 'ERR_IMPORT_MUID_ALREADY_EXISTS',
};

interface Call {
  kind: RecordKind;
  records: Array<[string, Record<string, any>]>;
  started: number;
  answered?: number;
}

let server: http.Server;
let url: string;
let stored: Record<RecordKind, Set<string>>;
let calls: Call[];
let clock: number;
let inFlight: number;
let maxInFlight: number;
/** Called with each call before it is answered; may answer it itself (returns true) or hold it. */
let intercept: ((call: Call, response: http.ServerResponse) => boolean | Promise<boolean>) | undefined;

before(async () => {
  server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', async () => {
      const kind = PATHS[request.url!.replace('/v3.0/data_import/', '')]!;
      const wrapper = JSON.parse(body)[`${kind}s`] as Record<string, Record<string, any>>;
      const call: Call = { kind, records: Object.entries(wrapper), started: clock++ };
      calls.push(call);
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      response.on('close', () => inFlight--);
      if (await intercept?.(call, response)) return;
      // A little latency, so that calls overlap when the importer lets them.
      await new Promise((resolve) => setTimeout(resolve, 3));
      const data: Record<string, unknown> = {};
      for (const [key, record] of call.records) {
        if (stored[kind].has(key)) data[key] = { success: false, error: { code: EXISTS[kind], message: 'already there' } };
        else if (record.refuse) data[key] = { success: false, error: { code: 'ERR_REFUSED', message: `refused ${key}` } };
        else {
          stored[kind].add(key);
          data[key] = { success: true, data: record };
        }
      }
      call.answered = clock++;
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://app.api-us.localhost:${(server.address() as AddressInfo).port}`;
});
after(() => server.close());
beforeEach(() => {
  stored = { user: new Set(), group: new Set(), member: new Set(), message: new Set() };
  calls = [];
  clock = 0;
  inFlight = 0;
  maxInFlight = 0;
  intercept = undefined;
});

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-import-unit-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

function writeFile(name: string, lines: unknown[]): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `${lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n')}\n`);
  return file;
}

function run(file: string, options: Partial<ImportOptions> = {}) {
  let output = '';
  const out = new Writable({
    write(chunk, _encoding, callback) {
      output += chunk;
      callback();
    },
  });
  const reportFile = `${file}.failed.jsonl`;
  const summary = runImport({ file, url, apiKey: 'key', batch: 7, concurrency: 3, attempts: 3, reportFile, out, progressEveryMs: 0, retryBaseDelayMs: 1, ...options });
  return summary.then((result) => ({
    summary: result,
    output,
    report: fs
      .readFileSync(reportFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line)),
  }));
}

/** Users, groups, members and messages, kinds interleaved, with 6 conversations of various case. */
function mixedFile(): { lines: unknown[]; messages: Array<Record<string, any>> } {
  const lines: unknown[] = [];
  const messages: Array<Record<string, any>> = [];
  const conversations = [
    { receiverType: 'user', pair: ['u0', 'U1'] },
    { receiverType: 'user', pair: ['u2', 'u3'] },
    { receiverType: 'user', pair: ['u4', 'u0'] },
    { receiverType: 'group', pair: ['u1', 'g0'] },
    { receiverType: 'group', pair: ['u2', 'G1'] },
    { receiverType: 'user', pair: ['u5', 'u6'] },
  ];
  for (let m = 0; m < 90; m++) {
    const { receiverType, pair } = conversations[(m * 5) % conversations.length]!;
    // Both directions of a 1:1 conversation: u0→U1 and u1→u0 are one conversation.
    const [sender, receiver] = receiverType === 'user' && m % 2 ? [pair[1]!.toLowerCase(), pair[0]!] : pair;
    const message = { kind: 'message', muid: `m${m}`, sender, receiverType, receiver, data: { text: `${m}` }, sentAt: 1_600_000_000 + m };
    messages.push(message);
    lines.push(message);
    if (m % 9 === 0) lines.push({ kind: 'user', uid: `u${m / 9}`, name: `User ${m / 9}` });
    if (m % 30 === 0) lines.push({ kind: 'group', guid: `g${m / 30}`, name: `Group ${m / 30}`, type: 'public' });
    if (m % 5 === 0) lines.push({ kind: 'member', guid: `g${m % 2}`, uid: `u${m / 5}` });
  }
  return { lines, messages };
}

describe('runImport', () => {
  it('imports kind by kind, in batches from several workers, each conversation in file order one call at a time', async () => {
    const { lines, messages } = mixedFile();
    const file = writeFile('mixed.jsonl', lines);
    // 4 workers, 6 conversations in turn: dealt out in turn, a conversation would span workers.
    const { summary, report } = await run(file, { concurrency: 4 });

    assert.deepEqual(report, []);
    assert.deepEqual(summary.totals, {
      user: { imported: 10, skipped: 0, failed: 0 },
      group: { imported: 3, skipped: 0, failed: 0 },
      member: { imported: 18, skipped: 0, failed: 0 },
      message: { imported: 90, skipped: 0, failed: 0 },
    });
    // Each phase ends before the next starts.
    for (let k = 1; k < KINDS.length; k++) {
      const lastOfPrevious = Math.max(...calls.filter((call) => call.kind === KINDS[k - 1]).map((call) => call.answered!));
      const firstOfThis = Math.min(...calls.filter((call) => call.kind === KINDS[k]).map((call) => call.started));
      assert.ok(lastOfPrevious < firstOfThis, `${KINDS[k]}s started before the ${KINDS[k - 1]}s were done`);
    }
    assert.ok(calls.every((call) => call.records.length <= 7));
    assert.ok(maxInFlight > 1 && maxInFlight <= 4, `calls in flight at once: ${maxInFlight}`);
    // Members get their key filled in.
    assert.ok(stored.member.has('g0_member_u0') && stored.member.has('g1_member_u1'));

    // A conversation's messages reach the server in file order, and never in two calls at once.
    const received = new Map<string, string[]>();
    for (const call of calls.filter((call) => call.kind === 'message').sort((a, b) => a.started - b.started)) {
      for (const [key, record] of call.records) received.set(conversationKey(record), [...(received.get(conversationKey(record)) ?? []), key]);
    }
    const expected = new Map<string, string[]>();
    for (const message of messages) expected.set(conversationKey(message), [...(expected.get(conversationKey(message)) ?? []), message.muid]);
    assert.equal(expected.size, 6);
    assert.deepEqual(received, expected);
    const messageCalls = calls.filter((call) => call.kind === 'message');
    for (const a of messageCalls) {
      for (const b of messageCalls) {
        if (a === b || !(a.started < b.started && b.started < a.answered!)) continue;
        const overlap = a.records.some(([, x]) => b.records.some(([, y]) => conversationKey(x) === conversationKey(y)));
        assert.ok(!overlap, 'two calls with the same conversation in flight at once');
      }
    }
  });

  it('sends a key repeated within a batch in a later call instead of merging it; a re-run skips everything', async () => {
    const file = writeFile('repeats.jsonl', [
      { kind: 'user', uid: 'a', name: 'A' },
      { kind: 'user', uid: 'b', name: 'B' },
      { kind: 'user', uid: 'a', name: 'A again' },
    ]);
    const first = await run(file, { concurrency: 1 });
    assert.deepEqual(
      calls.map((call) => call.records.map(([key, record]) => `${key}:${record.name}`)),
      [['a:A', 'b:B'], ['a:A again']],
    );
    assert.deepEqual(first.summary.totals.user, { imported: 2, skipped: 1, failed: 0 });

    const again = await run(file, { concurrency: 1 });
    assert.deepEqual(again.summary.totals.user, { imported: 0, skipped: 3, failed: 0 });
    assert.equal(again.summary.failed, 0);
    assert.deepEqual(again.report, []);
  });

  it('reports invalid lines, refused records and refused calls with their line, and goes on', async () => {
    intercept = (call, response) => {
      if (call.kind !== 'group') return false;
      response.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"code":"ERR_IMPORT_INVALID_GROUP_FORMAT","message":"bad groups"}}');
      return true;
    };
    const file = writeFile('bad.jsonl', [
      { kind: 'user', uid: 'a', name: 'A' },
      'not json',
      '["an array"]',
      { kind: 'robot', uid: 'r' },
      { kind: 'user', name: 'no uid' },
      { kind: 'user', uid: 'b', name: 'B', refuse: true },
      { kind: 'group', guid: 'g', name: 'G', type: 'public' },
      { kind: 'member', guid: 'g', uid: 'a' },
      '',
    ]);
    const { summary, report } = await run(file);
    assert.deepEqual(
      report.map((line) => [line.line, line.kind, line.key, line.code]),
      [
        [2, null, null, 'ERR_IMPORT_INVALID_LINE'],
        [3, null, null, 'ERR_IMPORT_INVALID_LINE'],
        [4, 'robot', null, 'ERR_IMPORT_INVALID_LINE'],
        [5, 'user', null, 'ERR_IMPORT_INVALID_LINE'],
        [6, 'user', 'b', 'ERR_REFUSED'],
        [7, 'group', 'g', 'ERR_IMPORT_INVALID_GROUP_FORMAT'],
      ],
    );
    assert.equal(report[5].message, 'bad groups');
    assert.equal(summary.invalidLines, 4);
    assert.equal(summary.failed, 6);
    // The members went on after the groups' call was refused.
    assert.deepEqual(summary.totals.member, { imported: 1, skipped: 0, failed: 0 });
  });

  it('splits a batch the server finds too large, keeping its order', async () => {
    intercept = (call, response) => {
      if (call.records.length <= 2) return false;
      response.writeHead(413, { 'content-type': 'application/json' }).end('{"error":{"code":"ERR_PAYLOAD_TOO_LARGE","message":"too large"}}');
      return true;
    };
    const file = writeFile(
      'large.jsonl',
      [1, 2, 3, 4, 5].map((n) => ({ kind: 'message', muid: `m${n}`, sender: 'a', receiverType: 'user', receiver: 'b', sentAt: n })),
    );
    const { summary, report } = await run(file);
    assert.deepEqual(report, []);
    assert.deepEqual(summary.totals.message, { imported: 5, skipped: 0, failed: 0 });
    const sent = calls.filter((call) => call.records.length <= 2).map((call) => call.records.map(([key]) => key));
    assert.deepEqual(sent, [['m1', 'm2'], ['m3'], ['m4', 'm5']]);
  });

  it('on a stop, starts no new call and lets the call in flight finish and count', async () => {
    const stop = new AbortController();
    intercept = (call) => {
      if (call.started === 0) stop.abort();
      return false;
    };
    const file = writeFile('stop.jsonl', mixedFile().lines);
    const { summary } = await run(file, { concurrency: 1, signal: stop.signal });
    assert.equal(summary.interrupted, true);
    assert.equal(calls.length, 1);
    assert.deepEqual(summary.totals.user, { imported: 7, skipped: 0, failed: 0 });
    assert.equal(summary.totals.message.imported, 0);
  });

  it('abandons a call in flight the grace period after a stop', async () => {
    const stop = new AbortController();
    intercept = () => {
      stop.abort();
      return true; // never answered
    };
    const file = writeFile('hang.jsonl', [{ kind: 'user', uid: 'a', name: 'A' }]);
    const started = Date.now();
    const { summary, report } = await run(file, { signal: stop.signal, stopGraceMs: 100 });
    assert.ok(Date.now() - started < 5_000);
    assert.equal(summary.interrupted, true);
    assert.deepEqual(summary.totals.user, { imported: 0, skipped: 0, failed: 0 });
    assert.deepEqual(report, []);
  });

  it('stops when the server cannot be reached, without reporting the records as refused', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const file = writeFile('unreachable.jsonl', mixedFile().lines);
    const { summary, report } = await run(file, { url: `http://app.api-us.localhost:${port}`, attempts: 2 });
    assert.equal(summary.unreachable?.code, 'ECONNREFUSED');
    assert.match(summary.unreachable!.message, /gave up after 2 attempts/);
    assert.equal(summary.interrupted, false);
    assert.equal(summary.totals.group.imported + summary.totals.user.imported, 0);
    assert.deepEqual(report, []);
  });

  it('retries a 503 and a dropped connection within a run, and imports everything once', async () => {
    let failures = 0;
    intercept = (call, response) => {
      if (call.kind !== 'user' || failures >= 2) return false;
      if (failures++ === 0) response.writeHead(503).end();
      else response.socket!.destroy();
      return true;
    };
    const file = writeFile('flaky.jsonl', [
      { kind: 'user', uid: 'a', name: 'A' },
      { kind: 'user', uid: 'b', name: 'B' },
    ]);
    const { summary, output } = await run(file, { concurrency: 1 });
    assert.deepEqual(summary.totals.user, { imported: 2, skipped: 0, failed: 0 });
    assert.equal(summary.failed, 0);
    assert.match(output, /retrying after HTTP 503/);
    assert.match(output, /2\/2 records \(100%\)/);
  });
});
