import type { RenderedEvent } from '../event-payloads.js';

// The frames the gateway sends (docs/realtime.md, "Protocol"): JSON text with a `type`.

/** What a connection needs of its transport (a WebSocket, or the SSE fallback). */
export interface GatewayConnection {
  readonly id: string;
  readonly appId: string;
  readonly uid: string;
  /** The token it authenticated with, by its hash (revocation closes it). */
  readonly tokenHash: string;
  /** Sends a frame; `eventId` for a durable event (the SSE fallback writes it as the frame's id). */
  write(frame: string, eventId?: string): void;
  /** Resolves once the transport has taken what it was given (a resume reads its next page then). */
  drained(): Promise<void> | undefined;
  /** Closes with a WebSocket close code (docs/realtime.md, "Close codes"). */
  close(code: number, reason: string): void;
}

/** The close codes (docs/realtime.md). */
export const CLOSE = {
  /** Bad or missing token (or no auth frame in time). */
  badToken: 4001,
  /** The token was revoked or its user deactivated or deleted. */
  revoked: 4002,
  /** Too many frames, or connections over a limit. */
  rateLimited: 4008,
  /** The server is shutting down: reconnect (elsewhere) and resume. */
  restarting: 1012,
  /** The token could not be checked (the database failed): reconnect after a backoff and resume. */
  tryAgain: 1013,
} as const;

export const helloFrame = (connectionId: string, heartbeatMs: number) => JSON.stringify({ type: 'hello', connectionId, heartbeatMs });
export const RESUMED = '{"type":"resumed"}';
export const RESYNC_REQUIRED = '{"type":"resync_required"}';
export const PONG = '{"type":"pong"}';
export const PING = '{"type":"ping"}';
export const errorFrame = (code: string, message: string) => JSON.stringify({ type: 'error', code, message });

export function typingFrame(type: 'typing_started' | 'typing_ended', sender: string, receiver: string, receiverType: 'user' | 'group'): string {
  return JSON.stringify({ type, sender, receiver, receiverType });
}

export function presenceFrame(uid: string, status: 'online' | 'offline', lastActiveAt: number | undefined): string {
  return JSON.stringify(lastActiveAt === undefined ? { type: 'presence', uid, status } : { type: 'presence', uid, status, lastActiveAt });
}

/**
 * A durable event's frame: `{"type":"event","id":…}` and the webhook payload's fields
 * (`trigger`, `data`, `appId`, `region`), written once per event however many sockets get it.
 */
const eventFrames = new WeakMap<RenderedEvent, string>();
export function eventFrame(event: RenderedEvent): string {
  let frame = eventFrames.get(event);
  if (frame === undefined) {
    const payload = JSON.stringify(event.payload);
    frame = `{"type":"event","id":"${event.id}",${payload.slice(1)}`;
    eventFrames.set(event, frame);
  }
  return frame;
}
