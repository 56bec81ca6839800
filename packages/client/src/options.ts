import type { BackoffOptions } from './backoff.js';
import type { ErrorFrame, EventFrame, HelloFrame, PresenceFrame, TypingFrame } from './protocol.js';
import type { FetchLike } from './rest.js';
import type { Timers } from './timers.js';
import type { TypingOptions } from './typing.js';

/**
 * What the client needs of a WebSocket: the browser's, or the `ws` package's in Node 20 (which
 * has no global one). Handlers take `never` so that either library's own event types fit.
 */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: never) => void) | null;
  onmessage: ((event: never) => void) | null;
  onclose: ((event: never) => void) | null;
  onerror: ((event: never) => void) | null;
}
export type WebSocketConstructor = new (url: string, protocols?: string | string[]) => WebSocketLike;

export type ConnectionState = 'idle' | 'connecting' | 'open' | 'reconnecting' | 'unauthorized' | 'closed';

/** What came with a change of state: the close that caused it, and the next attempt's delay. */
export interface StateDetail {
  /** The close code the server (or the platform: 1006) gave, when a close caused the change. */
  code?: number;
  reason?: string;
  /** Reconnecting: attempts failed since the last connection that worked (1 for the first retry). */
  attempt?: number;
  /** Reconnecting: how long until the next attempt. */
  delayMs?: number;
  /** Unauthorized: what getToken() threw, when it threw. */
  error?: unknown;
}

export type ClientEvents = {
  /** A durable event, once, in the log's order, also across reconnects. */
  event: [EventFrame];
  typing: [TypingFrame];
  presence: [PresenceFrame];
  /** The server accepted the token: the connection is open. */
  hello: [HelloFrame];
  /** The events missed while away were all delivered; live ones follow. */
  resumed: [];
  /** Too much was missed to replay: the app refetches by REST (`onResync`); live events follow it. */
  resync_required: [];
  /** The server refused a frame (the connection stays open). */
  server_error: [ErrorFrame];
  state: [ConnectionState, StateDetail];
  /** Every frame the server sent, as parsed (for tools, and frame types newer than this client). */
  frame: [{ type: string; [field: string]: unknown }];
};

export interface ClientOptions {
  appId: string;
  /** A token from POST /v3/users/{uid}/auth_tokens. It goes in the first frame, never in a url. */
  authToken: string;
  /** Parley's base url (https://host), for the REST calls and, unless `url` is given, the gateway. */
  baseUrl?: string;
  /** The gateway's url (wss://host/v3/ws); `appId` is added to its query. */
  url?: string;
  /** Called once when the server refuses the token (4001, 4002, or a REST 401): a fresh one. */
  getToken?: () => string | Promise<string>;
  /**
   * 'websocket' (the default), or 'sse': the read-only fallback GET /v3/me/events, where a socket
   * is not possible (no typing indicators can be sent on it).
   */
  transport?: 'websocket' | 'sse';
  /** SSE: the server sends something (a comment) at least this often; silence beyond it plus the grace reconnects (default 25 s). */
  sseHeartbeatMs?: number;
  /** The WebSocket class: the global one by default (browsers); in Node 20, `ws`'s. */
  WebSocket?: WebSocketConstructor;
  /** Resume after this event id (one the app kept from `client.lastEventId`). */
  lastEventId?: string;
  /** After resync_required: refetch what the app shows. Events that arrive meanwhile wait for it. */
  onResync?: () => void | Promise<void>;
  backoff?: BackoffOptions;
  /** Silence beyond the hello's heartbeatMs plus this ends the connection (default 10 s). */
  heartbeatGraceMs?: number;
  /** An open socket without hello in this long is dropped (default 10 s; the server allows 5 s for auth). */
  helloTimeoutMs?: number;
  typing?: TypingOptions;
  /** For the jitter: Math.random by default. */
  random?: () => number;
  timers?: Timers;
  /** For the REST calls: the global fetch by default. */
  fetch?: FetchLike;
  /** Hears what a listener or onResync throws (console.error by default). */
  onListenerError?: (error: unknown) => void;
}
