import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';

/**
 * A gateway on loopback that speaks parley.v1 as docs/realtime.md gives it, for the client
 * library's tests (test/client/): the auth frame within a bound, hello, durable events with ids,
 * replay after `resume.lastEventId` then `resumed`, `resync_required` past its retention,
 * ping/pong, and the close codes. Each test scripts the refusals and drops it needs.
 */

export interface GatewayEvent {
  id: string;
  trigger: string;
  data: Record<string, unknown>;
}

/** A socket the gateway accepted, with what its client sent. */
export interface GatewayConnection {
  url: string;
  /** The subprotocol agreed ('' when none). */
  protocol: string;
  socket: WebSocket;
  /** Every frame the client sent, parsed. */
  frames: any[];
  auth?: any;
  uid?: string;
  /** The close code and reason, once closed. */
  closed?: { code: number; reason: string };
}

export interface FakeGatewayOptions {
  heartbeatMs?: number;
  /** Tokens the gateway accepts, and the uid of each. */
  tokens?: Record<string, string>;
  authTimeoutMs?: number;
}

export class FakeGateway {
  readonly connections: GatewayConnection[] = [];
  readonly log: GatewayEvent[] = [];
  readonly tokens: Map<string, string>;
  /** Tokens refused with 4002 (expired or revoked) rather than 4001. */
  readonly expired = new Set<string>();
  heartbeatMs: number;
  /** While true, pings get no pong (a server gone quiet). */
  silent = false;
  /** A resume after an id below this answers resync_required (events before it are past retention). */
  retainedFrom = 1;
  /** Replays this many events before the resume id as well (a sloppy server: the client drops the repeats). */
  replayOverlap = 0;
  /** While true, an auth frame gets no answer at all (a gateway that hangs). */
  withholdHello = false;
  /** The next accepted auth is answered with this close instead (then cleared). */
  refuseNext: { code: number; reason: string } | undefined;
  private readonly server: WebSocketServer;
  private readonly authTimeoutMs: number;
  private nextConnection = 1;
  private readonly waiters = new Set<() => void>();

  private constructor(server: WebSocketServer, options: FakeGatewayOptions) {
    this.server = server;
    this.heartbeatMs = options.heartbeatMs ?? 25_000;
    this.tokens = new Map(Object.entries(options.tokens ?? {}));
    this.authTimeoutMs = options.authTimeoutMs ?? 5_000;
    server.on('connection', (socket, request) => this.accept(socket, request.url ?? ''));
  }

  static async start(options: FakeGatewayOptions = {}): Promise<FakeGateway> {
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0, handleProtocols: (protocols) => (protocols.has('parley.v1') ? 'parley.v1' : false) });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    return new FakeGateway(server, options);
  }

  /** The gateway's url, as a client is given it (no appId: the client adds it). */
  get url(): string {
    return `ws://127.0.0.1:${(this.server.address() as AddressInfo).port}/v3/ws`;
  }

  /** The sockets authenticated and open. */
  get open(): GatewayConnection[] {
    return this.connections.filter((c) => c.uid !== undefined && !c.closed);
  }

  /** Appends an event to the log and sends it to every open socket. */
  publish(trigger: string, data: Record<string, unknown> = {}): GatewayEvent {
    const event = { id: String(this.log.length + 1), trigger, data };
    this.log.push(event);
    for (const connection of this.open) this.sendEvent(connection, event);
    return event;
  }

  /** Sends a frame as it is to every open socket (typing, presence, errors, frames of any type). */
  broadcast(frame: Record<string, unknown>): void {
    for (const connection of this.open) connection.socket.send(JSON.stringify(frame));
  }

  /** Closes every open socket with a close frame. */
  closeAll(code: number, reason = ''): void {
    for (const connection of this.open) connection.socket.close(code, reason);
  }

  /** Cuts every socket without a close frame (the client sees 1006). */
  dropAll(): void {
    for (const connection of this.connections) if (!connection.closed) connection.socket.terminate();
  }

  /** Resolves once `predicate` holds (checked on every frame, connection and close; rejects after `timeoutMs`). */
  until(predicate: () => boolean, what: string, timeoutMs = 3_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!predicate()) return;
        this.waiters.delete(check);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`not within ${timeoutMs} ms: ${what}`));
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  async close(): Promise<void> {
    for (const connection of this.connections) connection.socket.terminate();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private changed(): void {
    for (const check of [...this.waiters]) check();
  }

  private accept(socket: WebSocket, url: string): void {
    const connection: GatewayConnection = { url, protocol: socket.protocol, socket, frames: [] };
    this.connections.push(connection);
    const authTimer = setTimeout(() => socket.close(4001, 'no auth frame'), this.authTimeoutMs);
    socket.on('message', (data, isBinary) => {
      let frame: any;
      try {
        frame = JSON.parse(isBinary ? '' : data.toString());
      } catch {
        socket.send(JSON.stringify({ type: 'error', code: 'ERR_BAD_REQUEST', message: 'not JSON' }));
        return;
      }
      connection.frames.push(frame);
      if (connection.uid === undefined) {
        clearTimeout(authTimer);
        this.authenticate(connection, frame);
      } else if (frame.type === 'ping' && !this.silent) {
        socket.send('{"type":"pong"}');
      }
      this.changed();
    });
    socket.on('close', (code, reason) => {
      clearTimeout(authTimer);
      connection.closed = { code, reason: reason.toString() };
      this.changed();
    });
    this.changed();
  }

  private authenticate(connection: GatewayConnection, frame: any): void {
    const { socket } = connection;
    connection.auth = frame;
    const refusal = this.refusal(frame);
    if (refusal) {
      socket.close(refusal.code, refusal.reason);
      return;
    }
    if (this.withholdHello) return;
    connection.uid = this.tokens.get(frame.authToken);
    socket.send(JSON.stringify({ type: 'hello', connectionId: `c${this.nextConnection++}`, heartbeatMs: this.heartbeatMs }));
    const after = frame.resume?.lastEventId;
    if (after === undefined) return;
    if (Number(after) + 1 < this.retainedFrom) {
      socket.send('{"type":"resync_required"}');
      return;
    }
    for (const event of this.log.slice(Math.max(0, Number(after) - this.replayOverlap))) this.sendEvent(connection, event);
    socket.send('{"type":"resumed"}');
  }

  /** The close an auth frame gets, if it is refused. */
  private refusal(frame: any): { code: number; reason: string } | undefined {
    if (frame.type !== 'auth') return { code: 4001, reason: 'the first frame must be auth' };
    if (this.refuseNext) {
      const refusal = this.refuseNext;
      this.refuseNext = undefined;
      return refusal;
    }
    if (this.expired.has(frame.authToken)) return { code: 4002, reason: 'token expired' };
    if (!this.tokens.has(frame.authToken)) return { code: 4001, reason: 'bad token' };
    return undefined;
  }

  private sendEvent(connection: GatewayConnection, event: GatewayEvent): void {
    connection.socket.send(JSON.stringify({ type: 'event', id: event.id, trigger: event.trigger, data: event.data, appId: 'app1', region: 'us' }));
  }
}
