import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import { ParleyClient } from '../../packages/client/src/index.js';
import { EventStreamParser } from '../../packages/client/src/sse.js';
import { ManualTimers, until } from '../helpers/manual-timers.js';

// The client library's SSE transport (GET /v3/me/events) against a real HTTP server on loopback
// that serves a log as text/event-stream: the token and the resume id in headers, replay after
// Last-Event-ID, the statuses of a refused stream, comments as the keep-alive.
const SILENCE = 11_000; // sseHeartbeatMs 1000 + grace 10000
const FIRST_RETRY = 75;

const log: { id: string; trigger: string }[] = [];
const requests: http.IncomingMessage[] = [];
const streams = new Set<http.ServerResponse>();
const tokens = new Set(['t1', 't2']);
let server: http.Server;
let base: string;

const write = (res: http.ServerResponse, event: { id: string; trigger: string }) =>
  res.write(`id: ${event.id}\nevent: ${event.trigger}\ndata: {"trigger":"${event.trigger}","data":{"n":${event.id}},"appId":"app1"}\n\n`);

before(async () => {
  server = http.createServer((req, res) => {
    requests.push(req);
    if (req.url !== '/v3/me/events' || req.headers.appid !== 'app1') return void res.writeHead(404).end();
    if (!tokens.has(String(req.headers.authtoken))) return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":{"code":"AUTH_ERR_AUTH_TOKEN_NOT_FOUND","message":"no"}}');
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const after = Number(req.headers['last-event-id'] ?? log.length);
    for (const event of log.slice(Math.max(0, after - 1))) write(res, event); // one repeat, dropped by the client
    res.write('data: {"type":"resumed"}\n\n');
    streams.add(res);
    res.on('close', () => streams.delete(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(resolve));
});

const clients: ParleyClient[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.close();
  log.length = requests.length = 0;
  for (const res of streams) res.destroy();
});

function publish(trigger = 'message_sent'): void {
  const event = { id: String(log.length + 1), trigger };
  log.push(event);
  for (const res of streams) write(res, event);
}

function sseClient(getToken?: () => string, authToken = 't1') {
  const timers = new ManualTimers();
  const client = new ParleyClient({ appId: 'app1', authToken, baseUrl: base, transport: 'sse', sseHeartbeatMs: 1_000, timers, random: () => 0.5, getToken, backoff: { initialMs: 100 } });
  clients.push(client);
  const events: string[] = [];
  client.on('event', (event) => events.push(`${event.id} ${event.trigger}`));
  return { client, timers, events };
}

describe('client library: SSE transport', () => {
  it('streams the events with the token in a header, and resumes by Last-Event-ID: each once, in order', async () => {
    const { client, timers, events } = sseClient();
    client.connect();
    await until(() => client.state === 'open' && streams.size === 1, 'open');
    assert.equal(requests[0]!.headers.authtoken, 't1');
    assert.equal(requests[0]!.headers['last-event-id'], undefined);
    assert.ok(!requests[0]!.url!.includes('t1'));
    publish();
    publish('message_edited');
    await until(() => events.length === 2, 'two events');
    for (const res of streams) res.end(); // the stream ends: the client comes back
    await until(() => client.state === 'reconnecting', 'reconnecting');
    publish('message_deleted');
    timers.fire(FIRST_RETRY);
    await until(() => events.length === 3, 'the event missed');
    publish();
    await until(() => events.length === 4, 'live again');
    assert.deepEqual(events, ['1 message_sent', '2 message_edited', '3 message_deleted', '4 message_sent']);
    assert.equal(requests[1]!.headers['last-event-id'], '2');
    assert.equal(client.send({ type: 'ping' }), false, 'nothing is sent on a stream');
  });

  it('a comment keeps the stream alive; silence reconnects', async () => {
    const { client, timers } = sseClient();
    client.connect();
    await until(() => client.state === 'open' && streams.size === 1, 'open');
    const armed = timers.timesSet(SILENCE);
    for (const res of streams) res.write(': keep-alive\n\n');
    await until(() => timers.timesSet(SILENCE) === armed + 1, 'the comment moved the silence bound on');
    timers.fire(SILENCE);
    assert.equal(client.state, 'reconnecting');
    await until(() => streams.size === 0, 'the silent stream aborted');
  });

  it('a 401 asks getToken() once; a fresh token refused too stops it', async () => {
    const first = sseClient(() => 't2', 'expired');
    first.client.connect();
    await until(() => first.client.state === 'open', 'open with the fresh token');
    assert.deepEqual(
      requests.map((req) => req.headers.authtoken),
      ['expired', 't2'],
    );
    requests.length = 0;
    const second = sseClient(() => 'dead', 'expired');
    second.client.connect();
    await until(() => second.client.state === 'unauthorized', 'unauthorized');
    assert.deepEqual(
      requests.map((req) => req.headers.authtoken),
      ['expired', 'dead'],
    );
    assert.deepEqual(second.timers.delays, [], 'no attempt can follow');
  });

  it('parses text/event-stream split anywhere, with CRLF and multi-line data', () => {
    const stream =
      'id: 7\r\nevent: message_sent\r\ndata: {"trigger":"message_sent",\r\ndata:  "data":{}}\r\n\r\n: ping\n\ndata: {"type":"resync_required"}\n\nid: 9\ndata: {"type":"event","trigger":"x","data":{}}\n\ndata: not json\n\n';
    for (let size = 1; size <= 7; size++) {
      const frames: any[] = [];
      const parser = new EventStreamParser((text) => frames.push(JSON.parse(text)));
      for (let at = 0; at < stream.length; at += size) parser.push(stream.slice(at, at + size));
      assert.deepEqual(
        frames,
        [{ type: 'event', id: '7', trigger: 'message_sent', data: {} }, { type: 'pong' }, { type: 'resync_required' }, { id: '9', type: 'event', trigger: 'x', data: {} }],
        `in pieces of ${size}`,
      );
    }
  });
});
