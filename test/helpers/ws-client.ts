import http from 'node:http';
import WebSocket from 'ws';
import type { TestApp } from './app.js';

// Clients of the gateway (docs/realtime.md) over real sockets on loopback: a WebSocket on
// GET /v3/ws and the SSE fallback GET /v3/me/events. Both keep every frame they got and let a
// test wait for the first frame that matches (a generous deadline fails a hung test).

/** The event feed's pace for gateway tests: events reach sockets within a few milliseconds. */
export const QUICK_FEED = { pollMs: 10, idlePollMs: 50 };

/** Starts the test app listening on a loopback port the OS picks; answers the port. */
export async function listenOnLoopback(t: Pick<TestApp, 'app'>): Promise<number> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return (t.app.server.address() as { port: number }).port;
}

/** How long a wait for a frame (or a close) lasts before the test fails. */
export const FRAME_DEADLINE_MS = 5_000;

type Match = (frame: any) => boolean;

/** The frames a client got, and waits on them. */
class Frames {
  readonly list: any[] = [];
  private readonly waiters: Array<{ match: Match; from: number; resolve: (frame: any) => void }> = [];

  push(frame: any): void {
    this.list.push(frame);
    const index = this.list.length - 1;
    for (const waiter of [...this.waiters]) {
      if (index >= waiter.from && waiter.match(frame)) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve(frame);
      }
    }
  }

  /** The first frame from index `from` on that matches: got already, or the next one. */
  next(match: Match, from = 0, deadlineMs = FRAME_DEADLINE_MS): Promise<any> {
    const found = this.list.slice(from).find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new Error(`no such frame in ${deadlineMs} ms; got ${JSON.stringify(this.list)}`));
      }, deadlineMs);
      const waiter = {
        match,
        from,
        resolve: (frame: any) => {
          clearTimeout(timer);
          resolve(frame);
        },
      };
      this.waiters.push(waiter);
    });
  }
}

export interface GatewayClient {
  /** Every frame got so far, in order (the SSE client's: the parsed `data:` of each). */
  readonly frames: any[];
  /** The first frame (from index `from` on) that matches: got already, or the next one. */
  next(match: Match, from?: number): Promise<any>;
  /** The durable events got so far (optionally of one trigger). */
  events(trigger?: string): any[];
}

export interface WsClient extends GatewayClient {
  ws: WebSocket;
  /** Resolves with the close code. */
  closed: Promise<number>;
  send(frame: unknown): void;
  /** Closes (1000) and waits for the close. */
  close(): Promise<number>;
}

function eventsOf(frames: any[], trigger?: string): any[] {
  return frames.filter((frame) => frame.type === 'event' && (trigger === undefined || frame.trigger === trigger));
}

/** A WebSocket to GET /v3/ws of the app (the appId query parameter), open, not authenticated. */
export function openSocket(port: number, appId: string): Promise<WsClient> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/v3/ws?appId=${encodeURIComponent(appId)}`, 'parley.v1');
    const frames = new Frames();
    const closed = new Promise<number>((done) => ws.on('close', (code) => done(code)));
    ws.on('message', (data) => frames.push(JSON.parse(String(data))));
    ws.on('error', reject);
    ws.on('open', () =>
      resolve({
        ws,
        frames: frames.list,
        closed,
        next: (match, from) => frames.next(match, from),
        events: (trigger) => eventsOf(frames.list, trigger),
        send: (frame) => ws.send(JSON.stringify(frame)),
        close() {
          if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(1000);
          return withDeadline(closed, 'the socket to close');
        },
      }),
    );
  });
}

/** A WebSocket authenticated with `token` (resumed after `lastEventId` if given), once `hello` came. */
export async function openAuthed(port: number, appId: string, token: string, lastEventId?: string): Promise<WsClient> {
  const client = await openSocket(port, appId);
  client.send(lastEventId === undefined ? { type: 'auth', authToken: token } : { type: 'auth', authToken: token, resume: { lastEventId } });
  await client.next((frame) => frame.type === 'hello');
  return client;
}

export interface SseClient extends GatewayClient {
  status: number;
  /** The body of a refused request (not 200), parsed. */
  body: any;
  /** Each SSE frame as sent: its `id`, `event` and raw `data`. */
  raw: Array<{ id?: string; event?: string; data: string }>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/** GET /v3/me/events of the app with these headers (authToken, Last-Event-ID): once its headers came. */
export function openSse(port: number, appId: string, headers: Record<string, string>): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port, path: '/v3/me/events', headers: { appid: appId, accept: 'text/event-stream', ...headers } }, (response) => {
      const frames = new Frames();
      const raw: SseClient['raw'] = [];
      let buffer = '';
      let text = '';
      const ended = new Promise<void>((done) => response.on('close', () => done()));
      response.setEncoding('utf8');
      const status = response.statusCode ?? 0;
      const client: SseClient = {
        status,
        body: undefined,
        raw,
        frames: frames.list,
        ended,
        next: (match, from) => frames.next(match, from),
        events: (trigger) => eventsOf(frames.list, trigger),
        close: () => request.destroy(),
      };
      if (status !== 200) {
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          client.body = text ? JSON.parse(text) : undefined;
          resolve(client);
        });
        return;
      }
      response.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const frame: { id?: string; event?: string; data: string } = { data: '' };
          let hasData = false;
          for (const line of block.split('\n')) {
            if (line.startsWith('id: ')) frame.id = line.slice(4);
            else if (line.startsWith('event: ')) frame.event = line.slice(7);
            else if (line.startsWith('data: ')) {
              frame.data = line.slice(6);
              hasData = true;
            }
          }
          if (!hasData) continue;
          raw.push(frame);
          frames.push(JSON.parse(frame.data));
        }
      });
      resolve(client);
    });
    request.on('error', reject);
  });
}

/** `promise`, or a failure after the frame deadline. */
export function withDeadline<T>(promise: Promise<T>, what: string, deadlineMs = FRAME_DEADLINE_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`waited ${deadlineMs} ms for ${what}`)), deadlineMs);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
