/**
 * Data import places over real sockets (docs/import.md, "Calls in flight"): a body trickled to
 * hold a place is cut with 400 once it falls below the minimum rate, its connection closed and
 * its place given back; and one app holding every place does not starve another: once it has
 * given one back, it may not take it again while the other app waits.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createTestApp, hostOf, uniqueId, type TestApp } from '../helpers/app.js';

const MIN_RATE = 4 * 1024;
const GRACE_MS = 600;

let t: TestApp;
let port: number;
before(async () => {
  t = await createTestApp({
    importConcurrency: { perServer: 2, perApp: 2 },
    importUploadRate: { minBytesPerSecond: MIN_RATE, graceMs: GRACE_MS },
    rateLimits: { core: 0, standard: 0, import: 0 },
  });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as net.AddressInfo).port;
});
after(async () => {
  await t.close();
});

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: any;
  /** The server closed the connection after answering. */
  closed: Promise<void>;
}

/**
 * A data import call over a socket of its own: the headers at once, then the body as the test
 * sends it. `response` resolves once the whole answer has arrived.
 */
function upload(app: TestApp['appA'], length: number) {
  const socket = net.connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => {});
  socket.write(`POST /v3/data_import/users HTTP/1.1\r\nhost: ${hostOf(app)}\r\napikey: ${app.apiKey}\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n`);
  const response = new Promise<RawResponse>((resolve, reject) => {
    let received = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine, ...lines] = received.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
      const bodyLength = Number(headers['content-length'] ?? 0);
      if (received.length < end + 4 + bodyLength) return;
      socket.off('data', onData);
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(received.subarray(end + 4, end + 4 + bodyLength).toString('utf8')), closed });
    };
    socket.on('data', onData);
    closed.then(() => reject(new Error(`closed before an answer: ${received.toString('latin1').slice(0, 200)}`)));
  });
  response.catch(() => {});
  return {
    response,
    send(bytes: string | Buffer): boolean {
      return !socket.destroyed && socket.write(bytes);
    },
    destroy(): void {
      socket.destroy();
    },
  };
}

/** A body of exactly `length` bytes importing one user: the record, then spaces (JSON allows them). */
function usersBody(uid: string, length: number): Buffer {
  const record = JSON.stringify({ users: { [uid]: { uid, name: 'Imported' } } });
  assert.ok(record.length <= length);
  return Buffer.from(record.padEnd(length, ' '));
}

/** Sends `body` in pieces of `bytes` every `everyMs` until stopped, the body ends or the socket closes. */
function trickle(call: ReturnType<typeof upload>, body: Buffer, bytes: number, everyMs: number) {
  let offset = 0;
  const timer = setInterval(() => {
    // Always keep the last bytes back: the test decides when the body ends.
    const piece = body.subarray(offset, Math.min(offset + bytes, body.length - 16));
    if (piece.length === 0 || !call.send(piece)) return;
    offset += piece.length;
  }, everyMs);
  return {
    /** Sends the rest at once. */
    finish(): void {
      clearInterval(timer);
      call.send(body.subarray(offset));
    },
    stop(): void {
      clearInterval(timer);
    },
  };
}

/** A whole import call sent at once (fetch, keep-alive). */
async function importNow(app: TestApp['appA'], uid: string): Promise<{ status: number; retryAfter: string | null; body: any }> {
  const response = await fetch(`http://127.0.0.1:${port}/v3/data_import/users`, {
    method: 'POST',
    // fetch sends its own Host: the app goes in the appId header.
    headers: { appid: app.appId, apikey: app.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ users: { [uid]: { uid, name: 'Imported' } } }),
  });
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.json() };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('data import uploads over sockets', () => {
  it('cuts a body trickled below the minimum rate with 400, closes its connection and gives its place back', async () => {
    const started = Date.now();
    const slow = upload(t.appA, 100_000);
    const dripping = trickle(slow, usersBody(uniqueId('slow'), 100_000), 20, 100);
    // The other place: taken by a fast call of the same app meanwhile.
    assert.equal((await importNow(t.appA, uniqueId('fast'))).status, 200);
    const answer = await slow.response;
    dripping.stop();
    const took = Date.now() - started;
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error.code, 'ERR_BAD_REQUEST');
    assert.match(answer.body.error.message, /arrived too slowly/);
    assert.equal(answer.headers.connection, 'close');
    await answer.closed;
    // Cut at the bound (past the grace), well before the request timeout.
    assert.ok(took >= GRACE_MS && took < 10_000, `cut after ${took} ms`);
    // Both places are free again.
    const both = await Promise.all([importNow(t.appA, uniqueId('again')), importNow(t.appA, uniqueId('again'))]);
    assert.deepEqual(
      both.map((call) => call.status),
      [200, 200],
    );
  });

  it('answers a body of a type it does not read (415) and goes on serving the connection and the places', async () => {
    const socket = net.connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (chunk) => received.push(chunk));
    const request = (type: string, body: string) =>
      `POST /v3/data_import/users HTTP/1.1\r\nhost: ${hostOf(t.appA)}\r\napikey: ${t.appA.apiKey}\r\ncontent-type: ${type}\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
    const uid = uniqueId('after415');
    socket.write(request('application/octet-stream', 'x'.repeat(50_000)));
    await sleep(GRACE_MS + 400);
    socket.write(request('application/json', JSON.stringify({ users: { [uid]: { uid, name: 'Imported' } } })));
    await sleep(500);
    socket.destroy();
    const text = Buffer.concat(received).toString('latin1');
    assert.match(text, /^HTTP\/1\.1 415/);
    assert.match(text, /HTTP\/1\.1 200[\s\S]*"success":true/, 'the next request on the connection is answered');
    assert.doesNotMatch(text, /too slowly/);
  });

  it('lets a body that keeps arriving above the rate finish, however long it takes', async () => {
    const uid = uniqueId('steady');
    const length = 12_000;
    const steady = upload(t.appB, length);
    const body = usersBody(uid, length);
    // 1 KiB every 100 ms: 10 KiB/s, above the 4 KiB/s minimum, for about a second.
    const sending = trickle(steady, body, 1024, 100);
    await sleep(1_300);
    sending.finish();
    const answer = await steady.response;
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.data[uid].success, true);
    steady.destroy();
  });

  it('does not let app A, holding every place, starve app B: a place A gives back is kept for B', async () => {
    const length = 40_000;
    // A holds both places with bodies that keep arriving (above the minimum rate).
    const [a1, a2] = [upload(t.appA, length), upload(t.appA, length)];
    const [body1, body2] = [usersBody(uniqueId('a1'), length), usersBody(uniqueId('a2'), length)];
    const [sending1, sending2] = [trickle(a1, body1, 1024, 100), trickle(a2, body2, 1024, 100)];
    await sleep(200);
    try {
      const refusedB = await importNow(t.appB, uniqueId('b'));
      assert.equal(refusedB.status, 429, JSON.stringify(refusedB.body));
      assert.equal(refusedB.retryAfter, '1');
      assert.match(refusedB.body.error.message, /at most 2 on this server/);
      // A gives one place back...
      sending1.finish();
      assert.equal((await a1.response).status, 200);
      // ...and may not take it again while B waits, though the place is free.
      const refusedA = await importNow(t.appA, uniqueId('a3'));
      assert.equal(refusedA.status, 429, JSON.stringify(refusedA.body));
      assert.match(refusedA.body.error.message, /at most 1 per app while other apps wait/);
      // B, retrying after its Retry-After, gets it.
      await sleep(1_000);
      const uid = uniqueId('b');
      const retriedB = await importNow(t.appB, uid);
      assert.equal(retriedB.status, 200, JSON.stringify(retriedB.body));
      assert.equal(retriedB.body.data[uid].success, true);
    } finally {
      sending1.stop();
      sending2.finish();
    }
    assert.equal((await a2.response).status, 200);
    a1.destroy();
    a2.destroy();
    // Nobody waits any more: A alone may use both places again.
    await sleep(5_100);
    const alone = await Promise.all([importNow(t.appA, uniqueId('a')), importNow(t.appA, uniqueId('a'))]);
    assert.deepEqual(
      alone.map((call) => call.status),
      [200, 200],
    );
  });
});
