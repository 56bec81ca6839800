import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import { CloseCode, compareEventIds, parseFrame } from '../../packages/client/src/protocol.js';
import { ParleyApiError, ParleyClient, ParleyRest, reconnectDelay, resolveBackoff } from '../../packages/client/src/index.js';
import { addresses } from '../../packages/client/src/urls.js';
import { FakeGateway } from '../helpers/fake-gateway.js';
import { until } from '../helpers/manual-timers.js';
import type { KnownTrigger } from '../../packages/client/src/index.js';
import { TRIGGERS } from '../../src/domain/events.js';

// The client library's REST helper against a real HTTP server on loopback that records what it
// gets (the calls a chat page makes, with the appId and authToken headers), and its pure parts:
// addresses, frame parsing, event id order, backoff.

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
const seen: Seen[] = [];
let answer: (request: Seen) => { status: number; body: unknown } = () => ({ status: 200, body: { data: {} } });
let server: http.Server;
let base: string;

before(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const request = { method: req.method!, url: req.url!, headers: req.headers, body };
      seen.push(request);
      const { status, body: reply } = answer(request);
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/chat/`;
});
after(() => new Promise((resolve) => server.close(resolve)));
beforeEach(() => {
  seen.length = 0;
  answer = () => ({ status: 200, body: { data: {} } });
});

const alice = () => new ParleyRest({ baseUrl: base, appId: 'app1', authToken: 'tok-a' });

describe('client library: REST helper', () => {
  it('sends a text message as the token user: POST /v3/messages with appId and authToken, the message back', async () => {
    answer = () => ({ status: 200, body: { data: { id: '41', data: { text: 'hi' } } } });
    const message = await alice().sendMessage({ receiver: 'bob', receiverType: 'user', text: 'hi', muid: 'm-1' });
    assert.deepEqual(message, { id: '41', data: { text: 'hi' } });
    const [request] = seen;
    assert.equal(request!.method, 'POST');
    assert.equal(request!.url, '/chat/v3/messages');
    assert.equal(request!.headers.appid, 'app1');
    assert.equal(request!.headers.authtoken, 'tok-a');
    assert.equal(request!.headers.apikey, undefined);
    assert.equal(request!.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(request!.body), { receiver: 'bob', receiverType: 'user', category: 'message', type: 'text', data: { text: 'hi' }, muid: 'm-1' });
  });

  it('pages history, lists conversations and marks read and delivered on the vendor paths', async () => {
    answer = (request) => ({ status: 200, body: request.method === 'GET' ? { data: [{ id: '1' }], meta: { next: { id: '1', sentAt: 5, affix: 'append' } } } : { data: { success: true } } });
    const rest = alice();
    const page = await rest.messages({ receiver: 'bob/x', receiverType: 'user' }, { limit: 30, affix: 'prepend', id: '99', unread: undefined });
    assert.deepEqual(page, { data: [{ id: '1' }], meta: { next: { id: '1', sentAt: 5, affix: 'append' } } });
    await rest.messages({ receiver: 'g1', receiverType: 'group' });
    await rest.conversations({ perPage: 20, conversationType: 'group' });
    await rest.markRead({ receiver: 'bob', receiverType: 'user' }, '41');
    await rest.markDelivered({ receiver: 'g1', receiverType: 'group' });
    assert.deepEqual(
      seen.map((request) => `${request.method} ${request.url} ${request.body}`),
      [
        'GET /chat/v3/users/bob%2Fx/messages?limit=30&affix=prepend&id=99 ',
        'GET /chat/v3/groups/g1/messages ',
        'GET /chat/v3/conversations?perPage=20&conversationType=group ',
        'POST /chat/v3/users/bob/conversation/read {"messageId":"41"}',
        'POST /chat/v3/groups/g1/conversation/delivered {}',
      ],
    );
  });

  it('throws the vendor error as ParleyApiError', async () => {
    answer = () => ({ status: 404, body: { error: { code: 'ERR_UID_NOT_FOUND', message: 'no such user', details: { uid: 'zed' } } } });
    await assert.rejects(alice().messages({ receiver: 'zed', receiverType: 'user' }), (error: unknown) => {
      assert.ok(error instanceof ParleyApiError);
      assert.deepEqual([error.status, error.code, error.message, error.details], [404, 'ERR_UID_NOT_FOUND', 'no such user', { uid: 'zed' }]);
      return true;
    });
    await assert.rejects(alice().sendMessage({ receiver: 'bob', receiverType: 'user' }), TypeError);
  });

  it("a 401 for the client's token asks getToken() once, retries once with the fresh token, and refusal stays a refusal", async () => {
    const refusal = { status: 401, body: { error: { code: 'AUTH_ERR_AUTH_TOKEN_NOT_FOUND', message: 'The authToken provided is not valid for this app.' } } };
    answer = (request) => (request.headers.authtoken === 'tok-fresh' ? { status: 200, body: { data: [] } } : refusal);
    let calls = 0;
    const client = new ParleyClient({ appId: 'app1', authToken: 'tok-old', baseUrl: base, WebSocket, getToken: () => (calls++, 'tok-fresh') });
    assert.deepEqual(await client.rest.conversations(), { data: [], meta: {} });
    assert.equal(calls, 1);
    assert.deepEqual(
      seen.map((request) => request.headers.authtoken),
      ['tok-old', 'tok-fresh'],
    );
    await client.rest.conversations();
    assert.equal(calls, 1, 'the fresh token is kept');

    answer = () => refusal;
    seen.length = 0;
    await assert.rejects(client.rest.conversations(), { name: 'ParleyApiError', code: 'AUTH_ERR_AUTH_TOKEN_NOT_FOUND', status: 401 });
    assert.equal(seen.length, 2, 'one retry, not more');
    answer = () => ({ status: 401, body: { error: { code: 'AUTH_ERR_INVALID_APPID', message: 'no app' } } });
    seen.length = 0;
    await assert.rejects(client.rest.conversations(), { code: 'AUTH_ERR_INVALID_APPID' });
    assert.equal(seen.length, 1, 'another 401 is not about the token');
    assert.equal(calls, 2);
  });
});

describe('client library: sending from a connected client', () => {
  it('sendMessage ends the typing indicator on the socket, then sends by REST with the same token', async () => {
    const gateway = await FakeGateway.start({ tokens: { t1: 'alice' } });
    const client = new ParleyClient({ appId: 'app1', authToken: 't1', url: gateway.url, baseUrl: base, WebSocket });
    try {
      client.connect();
      await until(() => client.state === 'open', 'open');
      const bob = { receiver: 'bob', receiverType: 'user' as const };
      client.typing(bob);
      answer = () => ({ status: 200, body: { data: { id: '7' } } });
      assert.deepEqual(await client.sendMessage({ ...bob, text: 'hello' }), { id: '7' });
      await gateway.until(() => gateway.connections[0]!.frames.some((frame) => frame.type === 'typing_ended'), 'typing_ended');
      assert.deepEqual(
        gateway.connections[0]!.frames.map((frame) => frame.type),
        ['auth', 'typing_started', 'typing_ended'],
      );
      assert.equal(seen[0]!.headers.authtoken, 't1');
      assert.deepEqual(JSON.parse(seen[0]!.body).data, { text: 'hello' });
    } finally {
      client.close();
      await gateway.close();
    }
  });
});

describe('client library: addresses, frames, ids, backoff', () => {
  it('derives the gateway url from the base url and back, with the appId and never a token', () => {
    assert.deepEqual(addresses('app1', { baseUrl: 'https://chat.example.com/' }), { socketUrl: 'wss://chat.example.com/v3/ws?appId=app1', restBase: 'https://chat.example.com' });
    assert.deepEqual(addresses('app1', { url: 'ws://127.0.0.1:8080/p/v3/ws' }), { socketUrl: 'ws://127.0.0.1:8080/p/v3/ws?appId=app1', restBase: 'http://127.0.0.1:8080/p' });
    assert.equal(addresses('app1', { url: 'wss://h/v3/ws?appId=other', baseUrl: 'http://h' }).socketUrl, 'wss://h/v3/ws?appId=other');
    assert.throws(() => addresses('app1', { url: 'wss://h/v3/ws?authToken=x' }), /token/);
    assert.throws(() => addresses('app1', { baseUrl: 'ftp://h' }), TypeError);
    assert.throws(() => addresses('app1', {}), TypeError);
  });

  it('parses the frames it knows only with the fields it relies on, and passes others through', () => {
    assert.deepEqual(parseFrame('{"type":"hello","connectionId":"c1","heartbeatMs":25000}'), { type: 'hello', connectionId: 'c1', heartbeatMs: 25000 });
    for (const bad of [
      '',
      'nope',
      '[]',
      '{"type":1}',
      '{"type":"hello","connectionId":"c"}',
      '{"type":"event","id":"","trigger":"x","data":{}}',
      '{"type":"event","id":"1","trigger":"x","data":[]}',
      '{"type":"presence","uid":"u","status":"away"}',
      '{"type":"typing_started","sender":"a","receiver":"b","receiverType":"room"}',
    ]) {
      assert.equal(parseFrame(bad), undefined, bad);
    }
    assert.deepEqual(parseFrame('{"type":"error","code":"ERR_BAD_REQUEST"}'), { type: 'error', code: 'ERR_BAD_REQUEST', message: '' });
    assert.deepEqual(parseFrame('{"type":"future","x":1}'), { type: 'future', x: 1 });
  });

  it('names every trigger the event log records in its KnownTrigger type (checked by tsc: npm run typecheck)', () => {
    const known: readonly KnownTrigger[] = TRIGGERS;
    assert.ok(known.includes('message_sent'));
  });

  it('orders event ids as the numbers they are', () => {
    assert.ok(compareEventIds('10', '9')! > 0);
    assert.ok(compareEventIds('9', '10')! < 0);
    assert.equal(compareEventIds('007', '7'), 0);
    assert.ok(compareEventIds('123456789012345678901', '123456789012345678900')! > 0);
    assert.equal(compareEventIds('a1', '1'), undefined);
  });

  it('computes backoff delays: capped growth, jitter share, 4008 floor, 1012 spread', () => {
    const backoff = resolveBackoff({ initialMs: 100, factor: 3, maxMs: 2_000, jitter: 1, rateLimitedMs: 10_000, restartSpreadMs: 600 });
    assert.deepEqual(
      [0, 1, 2, 3, 4].map((attempt) => reconnectDelay(backoff, attempt, 'failure', () => 0.5)),
      [50, 150, 450, 1_000, 1_000],
    );
    assert.equal(
      reconnectDelay(backoff, 0, 'rate_limited', () => 0.99),
      9_900,
    );
    assert.equal(
      reconnectDelay(backoff, 0, 'restarting', () => 0.5),
      300,
    );
    assert.equal(
      reconnectDelay(backoff, 2, 'restarting', () => 0.5),
      450,
      'a restart that keeps failing backs off as any failure',
    );
    assert.equal(CloseCode.RateLimited, 4008);
    for (const bad of [{ initialMs: -1 }, { factor: 0.5 }, { jitter: 2 }, { maxMs: Number.NaN }]) assert.throws(() => resolveBackoff(bad), RangeError);
  });
});
