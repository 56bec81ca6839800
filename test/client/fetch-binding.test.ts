import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import { type FetchLike, ParleyClient, ParleyRest } from '../../packages/client/src/index.js';
import { until } from '../helpers/manual-timers.js';

// A browser's fetch must be called with the window, or nothing, as `this`: called as another
// object's method (`this.fetch(...)`, `options.fetch(...)`) it throws "Illegal invocation". Node's
// fetch does not check, so these tests stand in a fetch that checks as a browser's does, both as
// the global fetch (what a page gets by default) and as the `fetch` option.

let server: http.Server;
let base: string;
const realFetch = globalThis.fetch;

before(async () => {
  server = http.createServer((req, res) => {
    if (req.url?.endsWith('/v3/me/events')) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('id: 7\ndata: {"trigger":"message_sent","data":{"message":{"id":"1"}}}\n\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: [{ id: '1' }], meta: {} }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(resolve));
});
afterEach(() => {
  globalThis.fetch = realFetch;
});

/** A fetch that refuses, as a browser's does, to run as a method of anything but the global object. */
function browserLikeFetch(calls: { count: number }): FetchLike {
  return function (this: unknown, url, init) {
    if (this !== undefined && this !== globalThis) throw new TypeError("Failed to execute 'fetch' on 'Window': Illegal invocation");
    calls.count++;
    return realFetch(url, init);
  } as FetchLike;
}

describe('client library: fetch is called unbound, as a browser requires', () => {
  it('REST calls through the global fetch', async () => {
    const calls = { count: 0 };
    globalThis.fetch = browserLikeFetch(calls) as unknown as typeof fetch;
    const rest = new ParleyRest({ baseUrl: base, appId: 'app1', authToken: 'tok' });
    const page = await rest.conversations();
    assert.deepEqual(page.data, [{ id: '1' }]);
    await rest.markRead({ receiver: 'bob', receiverType: 'user' }, '1');
    assert.equal(calls.count, 2);
  });

  it('REST calls through a fetch given as an option, alone and by the client', async () => {
    const calls = { count: 0 };
    const fetch = browserLikeFetch(calls);
    await new ParleyRest({ baseUrl: base, appId: 'app1', authToken: 'tok', fetch }).messages({ receiver: 'bob', receiverType: 'user' });
    const client = new ParleyClient({ baseUrl: base, appId: 'app1', authToken: 'tok', fetch, WebSocket: class {} as never });
    await client.rest.conversations();
    assert.equal(calls.count, 2);
  });

  it('the SSE transport through the global fetch', async () => {
    const calls = { count: 0 };
    globalThis.fetch = browserLikeFetch(calls) as unknown as typeof fetch;
    const client = new ParleyClient({ baseUrl: base, appId: 'app1', authToken: 'tok', transport: 'sse', onListenerError: (error) => assert.fail(error as Error) });
    const events: string[] = [];
    client.on('event', (event) => events.push(event.id));
    client.connect();
    try {
      await until(() => events.length === 1, 'the event read from the stream');
      assert.equal(client.state, 'open');
      assert.equal(calls.count, 1);
    } finally {
      client.close();
    }
  });
});
