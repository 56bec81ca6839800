import assert from 'node:assert/strict';
import WebSocket from 'ws';
import type { CreatedApp } from '../../src/services/apps.service.js';
import type { TestApp } from './app.js';

/** A deadline that fails a hung wait, far above what any step takes. */
const WAIT_MS = 10_000;

/** A gateway client over a real socket (the limits' tests): every frame it received, parsed, and its close code. */
export interface LimitsClient {
  ws: WebSocket;
  frames: any[];
  /** The close code once the socket closed (1006 when it was dropped without a close frame). */
  closed: Promise<number>;
  /** Whether the socket has closed. */
  isClosed(): boolean;
  /** The first frame (received already or to come) that matches. */
  next(match: (frame: any) => boolean): Promise<any>;
  send(frame: unknown): void;
}

/** Opens `GET /v3/ws` for the app (subprotocol parley.v1) and resolves once the socket is open. */
export function openSocket(port: number, app: { appId: string }): Promise<LimitsClient> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/v3/ws?appId=${app.appId}`, 'parley.v1');
    const frames: any[] = [];
    const waiters = new Set<{ match: (frame: any) => boolean; resolve: (frame: any) => void }>();
    let isClosed = false;
    const closed = new Promise<number>((done) =>
      ws.on('close', (code) => {
        isClosed = true;
        done(code);
      }),
    );
    ws.on('message', (data) => {
      const frame = JSON.parse(String(data));
      frames.push(frame);
      for (const waiter of [...waiters])
        if (waiter.match(frame)) {
          waiters.delete(waiter);
          waiter.resolve(frame);
        }
    });
    ws.on('error', reject);
    ws.on('open', () =>
      resolve({
        ws,
        frames,
        closed,
        isClosed: () => isClosed,
        send: (frame) => ws.send(JSON.stringify(frame)),
        next(match) {
          const found = frames.find(match);
          if (found) return Promise.resolve(found);
          return new Promise((ok, fail) => {
            const waiter = {
              match,
              resolve: (frame: any) => {
                clearTimeout(timer);
                ok(frame);
              },
            };
            const timer = setTimeout(() => {
              waiters.delete(waiter);
              fail(new Error(`no such frame; got ${JSON.stringify(frames.map((frame) => [frame.type, frame.id ?? frame.code]))}${isClosed ? ' (closed)' : ''}`));
            }, WAIT_MS);
            waiters.add(waiter);
          });
        },
      }),
    );
  });
}

/** A new auth token of the user. */
export async function tokenOf(t: TestApp, app: CreatedApp, uid: string): Promise<string> {
  const response = await t.call(app, `/v3/users/${uid}/auth_tokens`, { method: 'POST', body: {} });
  assert.equal(response.statusCode, 200, response.body);
  return response.json().data.authToken;
}

/** Opens a socket and sends the user's auth frame (resuming after `lastEventId`, when given); resolves once the server said hello or refused. */
export async function authenticate(t: TestApp, port: number, app: CreatedApp, uid: string, lastEventId?: string): Promise<LimitsClient> {
  const authToken = await tokenOf(t, app, uid);
  const client = await openSocket(port, app);
  client.send(lastEventId === undefined ? { type: 'auth', authToken } : { type: 'auth', authToken, resume: { lastEventId } });
  await Promise.race([client.next((frame) => frame.type === 'hello' || frame.type === 'error'), client.closed]);
  return client;
}

/** Like authenticate, and the server must have said hello. */
export async function connected(t: TestApp, port: number, app: CreatedApp, uid: string, lastEventId?: string): Promise<LimitsClient> {
  const client = await authenticate(t, port, app, uid, lastEventId);
  assert.ok(
    client.frames.some((frame) => frame.type === 'hello'),
    `no hello: ${JSON.stringify(client.frames)}`,
  );
  return client;
}

/** Closes the clients and waits until the server has seen them go (their places given back). */
export async function closeAll(clients: Iterable<LimitsClient>): Promise<void> {
  await Promise.all(
    [...clients].map((client) => {
      if (!client.isClosed()) client.ws.close();
      return client.closed;
    }),
  );
}

/** Waits until `check` holds, polling (a generous deadline fails a hung test). */
export async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
