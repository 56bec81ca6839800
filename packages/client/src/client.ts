import { type ReconnectCause, type ResolvedBackoff, reconnectDelay, resolveBackoff } from './backoff.js';
import { Emitter } from './emitter.js';
import type { ClientEvents, ClientOptions, ConnectionState, StateDetail, WebSocketConstructor } from './options.js';
import { type ClientFrame, CloseCode, type Conversation, type ErrorFrame, type EventFrame, type HelloFrame, type PresenceFrame, parseFrame, SUBPROTOCOL, type TypingFrame } from './protocol.js';
import { type FetchLike, ParleyRest, platformFetch, type SendMessageInput } from './rest.js';
import { SseSocket } from './sse.js';
import { EventSequence } from './sequence.js';
import { platformTimers, Timer, type Timers } from './timers.js';
import { TypingThrottle } from './typing.js';
import { addresses } from './urls.js';

/** The socket as the client drives it. */
interface Socket {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  terminate?: () => void;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
}
const OPEN = 1;
/** Pings no more often than this, whatever a hello says. */
const MIN_HEARTBEAT_MS = 1_000;

/**
 * A user's connection to Parley's gateway (README.md): authenticates with the first frame,
 * resumes from the last event it delivered, keeps the connection alive with pings, reconnects
 * with jittered backoff, refreshes a refused token once and stops on a dead one.
 */
export class ParleyClient {
  /** The REST calls of a chat page, with this client's appId and (refreshed) token. */
  readonly rest: ParleyRest;
  private readonly emitter: Emitter<ClientEvents>;
  private readonly onListenerError: (error: unknown) => void;
  private readonly socketUrl: string;
  private readonly backoff: ResolvedBackoff;
  private readonly WebSocketClass: WebSocketConstructor | undefined;
  private readonly fetch: FetchLike | undefined;
  private readonly random: () => number;
  private readonly timers: Timers;
  private readonly typingThrottle: TypingThrottle;
  private readonly sequence: EventSequence;
  private token: string;
  private currentState: ConnectionState = 'idle';
  private socket: Socket | undefined;
  private greeted = false;
  private heartbeatMs = 0;
  private attempt = 0;
  /** getToken() was called since the last connection that worked. */
  private tokenRefreshed = false;
  private tokenRefresh: Promise<string> | undefined;
  private readonly reconnectTimer: Timer;
  private readonly helloTimer: Timer;
  private readonly pingTimer: Timer;
  private readonly silenceTimer: Timer;

  constructor(private readonly options: ClientOptions) {
    if (!options.appId) throw new TypeError('appId is required');
    if (!options.authToken) throw new TypeError('authToken is required');
    const WebSocketClass = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (!WebSocketClass && options.transport !== 'sse') throw new TypeError('No global WebSocket here (Node 20): pass one, e.g. `WebSocket` from the ws package');
    this.WebSocketClass = WebSocketClass;
    const { socketUrl, restBase } = addresses(options.appId, options);
    this.socketUrl = options.transport === 'sse' ? `${restBase}/v3/me/events` : socketUrl;
    this.fetch = options.fetch ?? platformFetch();
    this.backoff = resolveBackoff(options.backoff);
    this.random = options.random ?? Math.random;
    this.timers = options.timers ?? platformTimers;
    this.token = options.authToken;
    this.onListenerError = options.onListenerError ?? ((error) => console.error('@parley/client: a listener threw', error));
    this.emitter = new Emitter(this.onListenerError);
    this.sequence = new EventSequence(options.lastEventId, (event) => this.emitter.emit('event', event));
    this.typingThrottle = new TypingThrottle((frame) => this.send(frame), this.timers, options.typing);
    [this.reconnectTimer, this.helloTimer, this.pingTimer, this.silenceTimer] = [0, 1, 2, 3].map(() => new Timer(this.timers)) as [Timer, Timer, Timer, Timer];
    this.rest = new ParleyRest({
      baseUrl: restBase,
      appId: options.appId,
      authToken: () => this.token,
      refreshToken: options.getToken ? () => this.refreshToken() : undefined,
      fetch: this.fetch,
    });
  }

  get state(): ConnectionState {
    return this.currentState;
  }

  /** The id of the last durable event handed to the listeners: keep it to resume a later session. */
  get lastEventId(): string | undefined {
    return this.sequence.lastDelivered;
  }

  /** What the client connects to: the gateway's url with the appId (never the token), or the SSE stream's. */
  get url(): string {
    return this.socketUrl;
  }

  on<K extends keyof ClientEvents>(name: K, listener: (...args: ClientEvents[K]) => void): () => void {
    return this.emitter.on(name, listener);
  }

  off<K extends keyof ClientEvents>(name: K, listener: (...args: ClientEvents[K]) => void): void {
    this.emitter.off(name, listener);
  }

  /** Opens the connection (again, after close() or a fatal 'unauthorized'); watch 'state' and 'hello'. */
  connect(): void {
    if (this.currentState === 'connecting' || this.currentState === 'open' || this.currentState === 'reconnecting') return;
    this.attempt = 0;
    this.tokenRefreshed = false;
    this.open();
  }

  /** Ends the connection and every timer; nothing reconnects until connect(). */
  close(): void {
    this.reconnectTimer.stop();
    this.detach(1000, 'client closed');
    this.sequence.discardHeld();
    if (this.currentState !== 'closed') this.setState('closed', {});
  }

  /** A keystroke in the draft of a conversation: `typing_started`, at most once per 3 s. */
  typing(conversation: Conversation): void {
    this.typingThrottle.keystroke(conversation);
  }

  /** The draft was sent or emptied: `typing_ended` if a start was sent. */
  stopTyping(conversation: Conversation): void {
    this.typingThrottle.stop(conversation);
  }

  /** Sends a message by REST (POST /v3/messages), ending the typing indicator of its conversation first. */
  sendMessage(input: SendMessageInput): Promise<Record<string, unknown>> {
    this.typingThrottle.stop(input);
    return this.rest.sendMessage(input);
  }

  /** Sends a frame now if the socket is open (answers false otherwise, and on SSE; frames are not queued). */
  send(frame: ClientFrame): boolean {
    if (!this.socket || !this.greeted || this.socket.readyState !== OPEN || this.socket instanceof SseSocket) return false;
    this.socket.send(JSON.stringify(frame));
    return true;
  }

  /** One getToken() at a time, shared by the socket and the REST calls. */
  private refreshToken(): Promise<string> {
    if (!this.options.getToken) return Promise.reject(new Error('no getToken() to refresh the token with'));
    this.tokenRefresh ??= Promise.resolve()
      .then(() => this.options.getToken!())
      .then((token) => {
        if (typeof token !== 'string' || token === '') throw new TypeError('getToken() gave no token');
        this.token = token;
        return token;
      })
      .finally(() => (this.tokenRefresh = undefined));
    return this.tokenRefresh;
  }

  private open(): void {
    this.greeted = false;
    this.setState('connecting', {});
    let socket: Socket;
    try {
      socket = this.options.transport === 'sse' ? this.openStream() : (new this.WebSocketClass!(this.socketUrl, [SUBPROTOCOL]) as unknown as Socket);
    } catch (error) {
      this.scheduleReconnect('failure', { reason: String(error) });
      return;
    }
    this.socket = socket;
    socket.onopen = () => {
      if (this.socket !== socket) return;
      // The stream took the token and the resume id in its request: its 200 is the hello.
      if (socket instanceof SseSocket) {
        this.greet({ type: 'hello', connectionId: '', heartbeatMs: this.options.sseHeartbeatMs ?? 25_000 });
        return;
      }
      const resumeFrom = this.sequence.resumeFrom;
      socket.send(JSON.stringify(resumeFrom === undefined ? { type: 'auth', authToken: this.token } : { type: 'auth', authToken: this.token, resume: { lastEventId: resumeFrom } }));
      this.helloTimer.start(this.options.helloTimeoutMs ?? 10_000, () => this.drop('no hello from the server'));
    };
    socket.onmessage = (event) => {
      if (this.socket === socket && typeof event.data === 'string') this.receive(event.data);
    };
    socket.onclose = (event) => {
      if (this.socket === socket) this.closed(event.code, event.reason);
    };
    // A close follows every error; ws throws an 'error' that no one listens to, so one listens.
    socket.onerror = () => {};
  }

  private openStream(): SseSocket {
    if (!this.fetch) throw new TypeError('No global fetch here: pass one');
    return new SseSocket({ url: this.socketUrl, appId: this.options.appId, authToken: this.token, lastEventId: this.sequence.resumeFrom, fetch: this.fetch });
  }

  private receive(text: string): void {
    if (this.greeted) this.silenceTimer.start(this.heartbeatMs + (this.options.heartbeatGraceMs ?? 10_000), () => this.drop('heartbeat: the server went silent'));
    const frame = parseFrame(text);
    if (!frame) return;
    this.emitter.emit('frame', frame as { type: string });
    switch (frame.type) {
      case 'hello':
        this.greet(frame as HelloFrame);
        break;
      case 'event':
        this.sequence.accept(frame as EventFrame);
        break;
      case 'resumed':
        this.emitter.emit('resumed');
        break;
      case 'resync_required':
        this.emitter.emit('resync_required');
        this.sequence.resync(this.options.onResync, this.onListenerError);
        break;
      case 'typing_started':
      case 'typing_ended':
        this.emitter.emit('typing', frame as TypingFrame);
        break;
      case 'presence':
        this.emitter.emit('presence', frame as PresenceFrame);
        break;
      case 'error':
        this.emitter.emit('server_error', frame as ErrorFrame);
        break;
    }
  }

  private greet(hello: HelloFrame): void {
    if (this.greeted) return;
    this.greeted = true;
    this.helloTimer.stop();
    this.attempt = 0;
    this.tokenRefreshed = false;
    this.heartbeatMs = Math.max(MIN_HEARTBEAT_MS, hello.heartbeatMs);
    const ping = () =>
      this.pingTimer.start(this.heartbeatMs, () => {
        this.send({ type: 'ping' });
        ping();
      });
    ping();
    this.silenceTimer.start(this.heartbeatMs + (this.options.heartbeatGraceMs ?? 10_000), () => this.drop('heartbeat: the server went silent'));
    this.setState('open', {});
    this.emitter.emit('hello', hello);
  }

  /** The server (or the network) closed the socket. */
  private closed(code: number, reason: string): void {
    this.detach();
    if (code === CloseCode.BadToken || code === CloseCode.TokenExpired) {
      this.refused(code, reason);
      return;
    }
    const cause: ReconnectCause = code === CloseCode.RateLimited ? 'rate_limited' : code === CloseCode.Restarting ? 'restarting' : 'failure';
    this.scheduleReconnect(cause, { code, reason });
  }

  /** 4001 or 4002: one fresh token from getToken(), and a fatal 'unauthorized' if that is refused too. */
  private refused(code: number, reason: string): void {
    if (!this.options.getToken || this.tokenRefreshed) {
      this.setState('unauthorized', { code, reason });
      return;
    }
    this.tokenRefreshed = true;
    this.setState('reconnecting', { code, reason, attempt: this.attempt, delayMs: 0 });
    this.refreshToken().then(
      () => {
        if (this.currentState === 'reconnecting') this.open();
      },
      (error: unknown) => {
        if (this.currentState === 'reconnecting') this.setState('unauthorized', { code, reason, error });
      },
    );
  }

  /** Ends a connection that went quiet or never said hello, without waiting for a close handshake. */
  private drop(reason: string): void {
    this.detach(4000, reason);
    this.scheduleReconnect('failure', { reason });
  }

  private scheduleReconnect(cause: ReconnectCause, detail: StateDetail): void {
    if (this.currentState === 'closed' || this.currentState === 'unauthorized') return;
    const delayMs = reconnectDelay(this.backoff, this.attempt, cause, this.random);
    this.attempt += 1;
    this.setState('reconnecting', { code: detail.code, reason: detail.reason, attempt: this.attempt, delayMs });
    this.reconnectTimer.start(delayMs, () => this.open());
  }

  /** Forgets the socket (closing it if `code` is given) and the timers and typing that were its. */
  private detach(code?: number, reason?: string): void {
    const socket = this.socket;
    this.socket = undefined;
    this.greeted = false;
    for (const timer of [this.helloTimer, this.pingTimer, this.silenceTimer]) timer.stop();
    this.typingThrottle.reset();
    if (!socket) return;
    socket.onopen = socket.onmessage = socket.onclose = null;
    if (code === undefined) return;
    try {
      if (socket.terminate && code !== 1000) socket.terminate();
      else socket.close(code, reason);
    } catch {
      // Already closing: nothing more to end.
    }
  }

  private setState(state: ConnectionState, detail: StateDetail): void {
    this.currentState = state;
    this.emitter.emit('state', state, detail);
  }
}
