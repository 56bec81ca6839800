/**
 * The live event stream's bounds (docs/events.md), over real sockets: a catch-up from an old
 * Last-Event-ID holds at most about a page rendered and unsent (it reads the next page once the
 * socket has taken the last), and stops as soon as its client hangs up; open streams are capped
 * per app and per node, 429 ERR_TOO_MANY_REQUESTS with Retry-After beyond, a closed stream's
 * place given back.
 */
import assert from 'node:assert/strict';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { CreatedApp } from '../../src/services/apps.service.js';
import type { EventPayloads } from '../../src/services/event-payloads.js';
import type { EventsRepository } from '../../src/repositories/events.repository.js';
import { createTestApp, hostOf, type TestApp } from '../helpers/app.js';

interface Opened {
  request: http.ClientRequest;
  response: IncomingMessage;
  /** The whole body of an answer that ends (not a stream). */
  text(): Promise<string>;
}

/** GET /v3/events on a real socket; answers once the response headers are in (the body unread). */
function openRaw(port: number, app: CreatedApp, lastEventId?: string): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host: hostOf(app), apikey: app.apiKey, accept: 'text/event-stream' };
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    const request = http.get({ host: '127.0.0.1', port, path: '/v3/events', headers }, (response) => {
      response.pause();
      resolve({
        request,
        response,
        text: () =>
          new Promise((done, failed) => {
            let text = '';
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => (text += chunk));
            response.on('end', () => done(text));
            response.on('error', failed);
            response.resume();
          }),
      });
    });
    request.on('error', reject);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `value()` has not changed for `stillMs` (at most `maxMs`); answers it. */
async function settled(value: () => number, stillMs = 600, maxMs = 20_000): Promise<number> {
  let last = value();
  let since = Date.now();
  for (const start = Date.now(); Date.now() - start < maxMs; await sleep(50)) {
    const now = value();
    if (now !== last) {
      last = now;
      since = Date.now();
    } else if (Date.now() - since >= stillMs) {
      return now;
    }
  }
  return last;
}

async function until(condition: () => boolean, what: string, maxMs = 10_000): Promise<void> {
  for (const start = Date.now(); !condition(); await sleep(20)) {
    if (Date.now() - start > maxMs) assert.fail(`waited for ${what}`);
  }
}

describe('a catch-up from an old Last-Event-ID', () => {
  /** Events in the log, each ~3 KB rendered: twelve pages of the catch-up, ~18 MB in all. */
  const EVENTS = 6_000;
  let t: TestApp;
  let port: number;
  const reads = { listAfter: 0, rendered: 0, maxUnsentAtRead: 0 };
  const responses = new Set<ServerResponse>();
  let firstId: bigint;

  before(async () => {
    t = await createTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as { port: number }).port;
    // The server's responses of the streams, to see what each holds unsent.
    t.app.server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      if (request.url?.startsWith('/v3/events')) {
        responses.add(response);
        response.on('close', () => responses.delete(response));
      }
    });
    // The feed's reads and renders of app A's events, counted.
    const deps = (t.services.eventFeed as unknown as { deps: { events: EventsRepository; payloads: EventPayloads } }).deps;
    const listAfter = deps.events.listAfter.bind(deps.events);
    deps.events.listAfter = async (appId, ...rest) => {
      if (appId === t.appA.appId) {
        reads.listAfter++;
        for (const response of responses) reads.maxUnsentAtRead = Math.max(reads.maxUnsentAtRead, response.writableLength);
      }
      return listAfter(appId, ...rest);
    };
    const render = deps.payloads.render.bind(deps.payloads);
    deps.payloads.render = async (rows) => {
      reads.rendered += rows.filter((row) => row.app_id === t.appA.appId).length;
      return render(rows);
    };
    const inserted = await sql<{ id: string }>`
      insert into events (app_id, trigger, data)
      select ${t.appA.appId}, 'user_blocked', json_build_object('n', g, 'pad', repeat('x', 3000)) from generate_series(1, ${EVENTS}) g
      returning id`.execute(t.database.db);
    firstId = BigInt(inserted.rows[0]!.id);
  });
  after(async () => {
    await t?.close();
  });

  const reset = () => Object.assign(reads, { listAfter: 0, rendered: 0, maxUnsentAtRead: 0 });

  it('reads its next page only once the socket has taken the last: a client that reads nothing holds a few pages, not the log', async () => {
    reset();
    const stream = await openRaw(port, t.appA, String(firstId - 1n));
    try {
      assert.equal(stream.response.statusCode, 200);
      const rendered = await settled(() => reads.rendered);
      // The kernel's socket buffers take a few pages; the rest waits for the client.
      assert.ok(rendered <= EVENTS / 2, `rendered ${rendered} of ${EVENTS} events for a client that read none`);
      assert.ok(reads.maxUnsentAtRead <= 64 * 1024, `a page was read with ${reads.maxUnsentAtRead} bytes still unsent`);
      const unsent = Math.max(...[...responses].map((response) => response.writableLength));
      assert.ok(unsent <= 4 * 1024 * 1024, `${unsent} bytes rendered and unsent`);
      // Read on: every event comes, in order, once.
      const ids: bigint[] = [];
      let buffer = '';
      stream.response.setEncoding('utf8');
      stream.response.on('data', (chunk: string) => {
        buffer += chunk;
        // Whole lines only: the last may be cut in two.
        const end = buffer.lastIndexOf('\n') + 1;
        for (const match of buffer.slice(0, end).matchAll(/^id: (\d+)$/gm)) ids.push(BigInt(match[1]!));
        buffer = buffer.slice(end);
      });
      stream.response.resume();
      await until(() => ids.length >= EVENTS, `${EVENTS} events (got ${ids.length})`, 60_000);
      assert.equal(ids.length, EVENTS);
      assert.ok(
        ids.every((id, n) => id === firstId + BigInt(n)),
        'every event once, in order',
      );
      assert.equal(reads.rendered, EVENTS, 'each event rendered once');
    } finally {
      stream.request.destroy();
    }
  });

  it('stops reading the log as soon as its client hangs up', async () => {
    await until(() => responses.size === 0, 'the last test’s stream to close');
    reset();
    const feed = t.services.eventFeed as unknown as { subscriptions: Set<unknown> };
    const stream = await openRaw(port, t.appA, String(firstId - 1n));
    assert.equal(stream.response.statusCode, 200);
    await settled(() => reads.listAfter);
    assert.ok(reads.rendered < EVENTS, 'the catch-up is still under way when the client goes');
    const readsBefore = reads.listAfter;
    stream.request.destroy();
    await until(() => feed.subscriptions.size === 0 && responses.size === 0, 'the stream to be removed');
    await sleep(500);
    // At most the read in flight when the client went.
    assert.ok(reads.listAfter - readsBefore <= 1, `${reads.listAfter - readsBefore} reads of the log after the client went`);
    assert.ok(reads.rendered < EVENTS, `${reads.rendered} of ${EVENTS} rendered for a client that left`);
  });

  it('stops at once for a client that hangs up while it catches up at full speed', async () => {
    await until(() => responses.size === 0, 'the last test’s stream to close');
    reset();
    const feed = t.services.eventFeed as unknown as { subscriptions: Set<unknown> };
    const stream = await openRaw(port, t.appA, String(firstId - 1n));
    stream.response.resume();
    // Gone after its first page.
    await until(() => reads.listAfter >= 1, 'the first read');
    stream.request.destroy();
    await until(() => feed.subscriptions.size === 0, 'the stream to be removed');
    const atRemoval = reads.listAfter;
    await sleep(500);
    assert.equal(reads.listAfter, atRemoval, 'no read of the log once the stream is removed');
    assert.ok(reads.listAfter < EVENTS / 500, `${reads.listAfter} pages read, the log is ${EVENTS / 500}`);
  });
});

describe('caps on open streams', () => {
  let t: TestApp;
  let port: number;
  before(async () => {
    t = await createTestApp({ eventStreams: { perApp: 2, perNode: 3 } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as { port: number }).port;
  });
  after(async () => {
    await t?.close();
  });

  const refusal = async (stream: Opened) => {
    assert.equal(stream.response.statusCode, 429);
    assert.equal(stream.response.headers['retry-after'], '5');
    const answer = JSON.parse(await stream.text()) as { error: { code: string; message: string } };
    assert.equal(answer.error.code, 'ERR_TOO_MANY_REQUESTS');
    return answer.error.message;
  };

  it('refuses a stream beyond the app’s cap or the node’s with 429 and Retry-After, one app’s cap leaving the others’ streams, and gives a closed stream’s place back', async () => {
    const open: Opened[] = [];
    try {
      for (let n = 0; n < 2; n++) open.push(await openRaw(port, t.appA));
      assert.deepEqual(
        open.map((s) => s.response.statusCode),
        [200, 200],
      );
      assert.match(await refusal(await openRaw(port, t.appA)), /at most 2 per app/);
      // App A at its cap: app B still opens one, the node's third.
      const b = await openRaw(port, t.appB);
      open.push(b);
      assert.equal(b.response.statusCode, 200);
      assert.match(await refusal(await openRaw(port, t.appB)), /at most 3 on this server/);
      assert.match(await refusal(await openRaw(port, t.appA)), /at most 2 per app/);
      // A refused stream took no place; a closed one gives its place back.
      open.shift()!.request.destroy();
      let again: Opened | undefined;
      for (const start = Date.now(); Date.now() - start < 10_000; await sleep(50)) {
        const tried = await openRaw(port, t.appA);
        if (tried.response.statusCode === 200) {
          again = tried;
          break;
        }
        await refusal(tried);
      }
      assert.ok(again, 'app A opens a stream again once one of its streams closed');
      open.push(again);
      assert.match(await refusal(await openRaw(port, t.appA)), /at most 2 per app/);
    } finally {
      for (const stream of open) stream.request.destroy();
    }
  });
});
