/**
 * @parley/client: a user's real-time connection to Parley (the parley.v1 protocol) and the REST
 * calls of a chat page. No dependencies; runs in browsers and in Node (given a WebSocket class).
 */
export { type BackoffOptions, reconnectDelay, resolveBackoff } from './backoff.js';
export { ParleyClient } from './client.js';
export type { ClientEvents, ClientOptions, ConnectionState, StateDetail, WebSocketConstructor, WebSocketLike } from './options.js';
export {
  type ClientFrame,
  CloseCode,
  type Conversation,
  type ErrorFrame,
  type EventFrame,
  type HelloFrame,
  type KnownTrigger,
  type PresenceFrame,
  parseFrame,
  type ReceiverType,
  SUBPROTOCOL,
  type ServerFrame,
  type TypingFrame,
} from './protocol.js';
export { type FetchLike, type FetchResponse, type Page, ParleyApiError, ParleyRest, type Query, type RestOptions, type SendMessageInput } from './rest.js';
export type { Timers } from './timers.js';
export type { TypingOptions } from './typing.js';

import { ParleyClient } from './client.js';
import type { ClientOptions } from './options.js';

/** A client, not yet connected: call `connect()` once its listeners are on. */
export function createClient(options: ClientOptions): ParleyClient {
  return new ParleyClient(options);
}
