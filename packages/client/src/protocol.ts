/**
 * The parley.v1 protocol (docs/realtime.md): JSON text frames with a `type`. The server may add
 * frame types and fields; the client ignores what it does not know.
 */

export const SUBPROTOCOL = 'parley.v1';

/** The close codes the server uses, and what the client does on each (README.md). */
export const CloseCode = {
  /** A bad or missing token: the client asks `getToken()` once, then gives up. */
  BadToken: 4001,
  /** The token was revoked or expired: as for 4001. */
  TokenExpired: 4002,
  /** Rate limited: reconnects after a longer backoff. */
  RateLimited: 4008,
  /** The server is restarting: reconnects promptly, with jitter. */
  Restarting: 1012,
} as const;

export type ReceiverType = 'user' | 'group';

/** The conversation a typing indicator is for: a user (1:1) or a group. */
export interface Conversation {
  receiver: string;
  receiverType: ReceiverType;
}

/** The webhook triggers an event may carry (the server may add more). */
export type KnownTrigger =
  | 'message_sent'
  | 'message_edited'
  | 'message_deleted'
  | 'user_mentioned'
  | 'message_delivery_receipt'
  | 'message_read_receipt'
  | 'message_reaction_added'
  | 'message_reaction_removed'
  | 'user_blocked'
  | 'user_unblocked'
  | 'user_connection_status_changed'
  | 'group_created'
  | 'group_updated'
  | 'group_deleted'
  | 'group_member_joined'
  | 'group_member_left'
  | 'group_member_added'
  | 'group_member_kicked'
  | 'group_member_banned'
  | 'group_member_unbanned'
  | 'group_member_scope_changed'
  | 'group_owner_transferred'
  | 'moderation_engine_approved'
  | 'moderation_engine_blocked'
  | 'moderation_manual_approved'
  | 'moderation_engine_failed';

/** A durable event: one of the event log's, with its id, `trigger` and `data` as a webhook's payload has them. */
export interface EventFrame {
  type: 'event';
  id: string;
  trigger: KnownTrigger | (string & {});
  data: Record<string, unknown>;
  [field: string]: unknown;
}

export interface HelloFrame {
  type: 'hello';
  connectionId: string;
  heartbeatMs: number;
}

export interface TypingFrame extends Conversation {
  type: 'typing_started' | 'typing_ended';
  /** The uid of the user typing. */
  sender: string;
}

export interface PresenceFrame {
  type: 'presence';
  uid: string;
  status: 'online' | 'offline';
  lastActiveAt?: number;
}

export interface ErrorFrame {
  type: 'error';
  /** A code of Parley's error catalogue. */
  code: string;
  message: string;
}

export type ServerFrame = HelloFrame | EventFrame | TypingFrame | PresenceFrame | ErrorFrame | { type: 'resumed' } | { type: 'resync_required' } | { type: 'pong' };

export type ClientFrame = { type: 'auth'; authToken: string; resume?: { lastEventId: string } } | ({ type: 'typing_started' | 'typing_ended' } & Conversation) | { type: 'ping' };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isText = (value: unknown): value is string => typeof value === 'string';
const isReceiverType = (value: unknown): value is ReceiverType => value === 'user' || value === 'group';

/**
 * The frame a text message holds, or undefined for one that is not JSON, has no `type`, or is a
 * known type without the fields the client relies on. Unknown types are returned as they are.
 */
export function parseFrame(text: string): ServerFrame | { type: string; [field: string]: unknown } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(value) || !isText(value.type)) return undefined;
  switch (value.type) {
    case 'hello':
      return isText(value.connectionId) && typeof value.heartbeatMs === 'number' && value.heartbeatMs > 0 ? (value as unknown as HelloFrame) : undefined;
    case 'event':
      return isText(value.id) && value.id !== '' && isText(value.trigger) && isObject(value.data) ? (value as EventFrame) : undefined;
    case 'typing_started':
    case 'typing_ended':
      return isText(value.sender) && isText(value.receiver) && isReceiverType(value.receiverType) ? (value as unknown as TypingFrame) : undefined;
    case 'presence':
      return isText(value.uid) && (value.status === 'online' || value.status === 'offline') ? (value as unknown as PresenceFrame) : undefined;
    case 'error':
      return isText(value.code) ? ({ type: 'error', code: value.code, message: isText(value.message) ? value.message : '' } as ErrorFrame) : undefined;
    default:
      return value as { type: string };
  }
}

/**
 * Whether `id` comes after `last` in the log: event ids are decimal integers in commit order
 * (compared as such, whatever their length); ids of another form are compared as text only
 * for equality, by the caller's set of recent ids.
 */
export function compareEventIds(id: string, last: string): number | undefined {
  if (!/^[0-9]{1,30}$/.test(id) || !/^[0-9]{1,30}$/.test(last)) return undefined;
  const a = id.replace(/^0+(?=.)/, '');
  const b = last.replace(/^0+(?=.)/, '');
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}
