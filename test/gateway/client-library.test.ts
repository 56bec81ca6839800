import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { createClient, type EventFrame, type ParleyClient } from '../../packages/client/src/index.js';
import { DEFAULT_GATEWAY } from '../../src/config.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newToken } from '../helpers/client.js';
import { newUids } from '../helpers/factories.js';
import { listenOnLoopback, QUICK_FEED } from '../helpers/ws-client.js';

// @parley/client against the real gateway on loopback: live events, and a dropped connection
// resumed with every event sent meanwhile delivered once, in order.

let t: TestApp;
let baseUrl: string;
before(async () => {
  t = await createTestApp({ gateway: { ...DEFAULT_GATEWAY, presenceGraceMs: 50 }, eventFeedPace: QUICK_FEED });
  baseUrl = `http://127.0.0.1:${await listenOnLoopback(t)}`;
});
after(() => t.close());

/** The ws class, keeping the sockets it made so that a test can drop one as a network would. */
const made: WebSocket[] = [];
class TrackedWebSocket extends WebSocket {
  constructor(url: string, protocols?: string | string[]) {
    super(url, protocols);
    made.push(this);
  }
}

function until(check: () => boolean, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const timer = setInterval(() => {
      if (check()) return (clearInterval(timer), resolve());
      if (Date.now() - started > 5_000) return (clearInterval(timer), reject(new Error(`timed out waiting for ${what}`)));
    }, 10);
  });
}

describe('the client library on the gateway', () => {
  it('hands live events, then resumes a dropped connection with every event sent meanwhile, once and in order', async () => {
    const [alice, bob] = (await newUids(t, t.appA, 2)) as [string, string];
    const client: ParleyClient = createClient({
      baseUrl,
      appId: t.appA.appId,
      authToken: await newToken(t, t.appA, alice),
      WebSocket: TrackedWebSocket as never,
      backoff: { initialMs: 10, maxMs: 50 },
    });
    const texts: string[] = [];
    let resumed = 0;
    client.on('event', (event: EventFrame) => {
      const text = (event.data as { message?: { data?: { text?: string } } }).message?.data?.text;
      if (event.trigger === 'message_sent' && text) texts.push(text);
    });
    client.on('resumed', () => resumed++);
    let hellos = 0;
    client.on('hello', () => hellos++);
    client.connect();
    await until(() => hellos === 1, 'the hello');
    const send = async (text: string) => {
      const response = await t.call(t.appA, '/v3/messages', { method: 'POST', onBehalfOf: bob, body: { receiver: alice, receiverType: 'user', category: 'message', type: 'text', data: { text } } });
      assert.equal(response.statusCode, 200, response.body);
    };
    await send('live 1');
    await until(() => texts.length === 1, 'the live event');
    made.at(-1)!.terminate();
    for (const text of ['away 1', 'away 2', 'away 3']) await send(text);
    await until(() => resumed >= 1 && texts.length === 4, 'the resumed events');
    await send('live 2');
    await until(() => texts.length === 5, 'the next live event');
    assert.deepEqual(texts, ['live 1', 'away 1', 'away 2', 'away 3', 'live 2']);
    assert.equal(hellos, 2);
    client.close();
  });
});
