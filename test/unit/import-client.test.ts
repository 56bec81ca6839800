import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { backoffMs, ImportClient, retryAfterMs, UnreachableError } from '../../src/import/import-client.js';
import { conversationKey, conversationWorker, parseLine } from '../../src/import/jsonl-source.js';

/** A local server whose answers the tests script, one per request, in order. */
let server: http.Server;
let script: Array<(request: http.IncomingMessage, response: http.ServerResponse) => void> = [];
const seen: Array<{ path: string; apikey: string | undefined; body: string }> = [];

before(async () => {
  server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      seen.push({ path: request.url!, apikey: request.headers.apikey as string | undefined, body });
      const answer = script.shift();
      if (answer) answer(request, response);
      else response.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
after(() => server.close());

const ok = (data: unknown) => (_: http.IncomingMessage, response: http.ServerResponse) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }));

function client(retries: string[] = [], signal?: AbortSignal) {
  const { port } = server.address() as AddressInfo;
  // .localhost names resolve to the loopback without DNS.
  return new ImportClient({ url: `http://app.api-us.localhost:${port}`, apiKey: 'key', attempts: 4, baseDelayMs: 5, signal, onRetry: (reason) => retries.push(reason) });
}

describe('ImportClient', () => {
  it('posts the wrapper to /v3.0/data_import/<kind> with the key, and answers the per-record results', async () => {
    seen.length = 0;
    script = [ok({ a: { success: true, data: {} } })];
    const answer = await client().post('users', 'users', { a: { uid: 'a', name: 'A' } });
    assert.deepEqual(answer, { results: { a: { success: true, data: {} } } });
    assert.deepEqual(seen, [{ path: '/v3.0/data_import/users', apikey: 'key', body: '{"users":{"a":{"uid":"a","name":"A"}}}' }]);
  });

  it('retries 5xx, 429 (after Retry-After) and dropped connections, then succeeds', async () => {
    const retries: string[] = [];
    script = [
      (_, response) => response.writeHead(503).end(),
      (_, response) => response.writeHead(429, { 'retry-after': '0' }).end('{"error":{"code":"ERR_TOO_MANY_REQUESTS"}}'),
      (request) => request.socket.destroy(),
      ok({ a: { success: true } }),
    ];
    const answer = await client(retries).post('users', 'users', { a: {} });
    assert.deepEqual(answer, { results: { a: { success: true } } });
    assert.equal(retries.length, 3);
    assert.match(retries[0]!, /HTTP 503/);
    assert.match(retries[1]!, /HTTP 429/);
  });

  it('gives up after the last attempt', async () => {
    script = [0, 1, 2, 3].map(() => (_: http.IncomingMessage, response: http.ServerResponse) => response.writeHead(502).end());
    await assert.rejects(client().post('users', 'users', {}), (error) => error instanceof UnreachableError && error.code === 'HTTP_502' && /gave up after 4 attempts/.test(error.message));
  });

  it('waits as long as a 429 says, in seconds or as a date', async () => {
    const retries: number[] = [];
    script = [(_, response) => response.writeHead(429, { 'retry-after': '1' }).end(), ok({ a: { success: true } })];
    const { port } = server.address() as AddressInfo;
    const started = Date.now();
    const answer = await new ImportClient({ url: `http://127.0.0.1:${port}`, apiKey: 'key', attempts: 2, baseDelayMs: 5, onRetry: (_, delay) => retries.push(delay) }).post('users', 'users', {
      a: {},
    });
    assert.deepEqual(answer, { results: { a: { success: true } } });
    assert.deepEqual(retries, [1000]);
    assert.ok(Date.now() - started >= 990);
    assert.equal(retryAfterMs(new Date(10_000).toUTCString(), 4_000), 6_000);
    assert.equal(retryAfterMs('soon'), undefined);
  });

  it('backs off exponentially up to the maximum, with jitter', () => {
    assert.deepEqual(
      [1, 2, 3, 8, 20].map((attempt) => backoffMs(attempt, 250, 30_000, () => 1)),
      [250, 500, 1000, 30_000, 30_000],
    );
    assert.deepEqual(
      [1, 2, 3].map((attempt) => backoffMs(attempt, 250, 30_000, () => 0)),
      [125, 250, 500],
    );
  });

  it('does not retry once stopped', async () => {
    const stop = new AbortController();
    script = [
      (_, response) => {
        stop.abort();
        response.writeHead(503).end();
      },
    ];
    await assert.rejects(client([], stop.signal).post('users', 'users', {}), /not retried: stopping/);
  });

  it('does not retry a 4xx: it answers the call’s error', async () => {
    script = [(_, response) => response.writeHead(400).end('{"error":{"code":"ERR_IMPORT_INVALID_USER_FORMAT","message":"bad"}}')];
    assert.deepEqual(await client().post('users', 'users', {}), { status: 400, error: { code: 'ERR_IMPORT_INVALID_USER_FORMAT', message: 'bad' } });
  });
});

describe('import lines', () => {
  it('parses records, fills a member’s memberId, and explains lines that are not records', () => {
    assert.deepEqual(parseLine('{"kind":"user","uid":"a","name":"A"}', 1), { line: 1, kind: 'user', key: 'a', record: { uid: 'a', name: 'A' } });
    assert.deepEqual(parseLine('{"kind":"member","guid":"g","uid":"u"}', 2), {
      line: 2,
      kind: 'member',
      key: 'g_member_u',
      record: { guid: 'g', uid: 'u', memberId: 'g_member_u' },
    });
    assert.equal(parseLine('   ', 3), undefined);
    assert.match((parseLine('{nope', 4) as { invalid: string }).invalid, /not JSON/);
    assert.match((parseLine('[1]', 5) as { invalid: string }).invalid, /not a JSON object/);
    assert.match((parseLine('{"kind":"bot","uid":"a"}', 6) as { invalid: string }).invalid, /kind must be one of/);
    assert.match((parseLine('{"kind":"message","sender":"a"}', 7) as { invalid: string }).invalid, /needs muid/);
  });

  it('sends every message of a conversation through the same worker, whoever sends it', () => {
    const worker = (sender: string, receiver: string, receiverType = 'user') => conversationWorker({ sender, receiver, receiverType }, 4);
    assert.equal(worker('Alice', 'bob'), worker('bob', 'alice'));
    assert.equal(conversationKey({ sender: 'Bob', receiver: 'alice', receiverType: 'user' }), 'alice_user_bob');
    assert.equal(conversationKey({ sender: 'bob', receiver: 'Team', receiverType: 'group' }), 'group_team');
    const groups = new Set(Array.from({ length: 20 }, (_, i) => conversationWorker({ sender: `u${i}`, receiver: 'g', receiverType: 'group' }, 4)));
    assert.equal(groups.size, 1);
    const spread = new Set(Array.from({ length: 100 }, (_, i) => worker(`u${i}`, `v${i}`)));
    assert.equal(spread.size, 4, 'conversations spread over the workers');
  });
});
