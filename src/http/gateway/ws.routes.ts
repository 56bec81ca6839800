import crypto from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { GatewayConfig } from '../../config.js';
import type { Logger } from '../../domain/context.js';
import { AppError } from '../../domain/errors.js';
import { CLOSE, errorFrame, PONG, type GatewayConnection } from '../../services/gateway/frames.js';
import type { Gateway } from '../../services/gateway/gateway.js';
import { hijackedReplyClosed } from '../plugins/in-flight.js';
import { readClientFrame } from './client-frames.js';

/** The subprotocol of this protocol (docs/realtime.md). */
export const SUBPROTOCOL = 'parley.v1';
/** A resume's catch-up waits while more than this (or a quarter of maxBufferedBytes) is unsent, and goes on below the half of it. */
const CATCH_UP_BUFFER = 256 * 1024;
/** A closed socket whose peer does not answer the close handshake is cut after this. */
const CLOSE_GRACE_MS = 1_000;
/** A text frame's bytes as UTF-8 (invalid bytes throw: an error frame, not a dropped socket). */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * One WebSocket client (docs/realtime.md, "Limits"): the first frame authenticates within the
 * auth timeout (else 4001); then pings, typing. Every frame takes a token of a bucket of
 * `framesPerSecond` refilled at that rate (so a client keeping to the rate is never closed,
 * whatever the jitter; an empty bucket: 4008) and keeps the connection alive (silent for the
 * idle timeout: closed). Bad frames (not JSON, not UTF-8, binary, too large, unknown) are
 * answered with an error frame and the socket stays open. Over a connection limit: an
 * ERR_TOO_MANY_REQUESTS error frame, then 4008. A reader with more than `maxBufferedBytes`
 * unsent is dropped at once (no close frame could reach it): it reconnects and resumes.
 */
export function serveSocket(socket: WebSocket, request: FastifyRequest, appId: string, gateway: Gateway, config: GatewayConfig): void {
  const log: Logger = request.log;
  const ctx = { appId, requestId: request.id, log };
  let conn: GatewayConnection | undefined;
  let authenticating = false;
  let detach: (() => void) | undefined;
  let closed = false;
  // Room for one more event under maxBufferedBytes once the catch-up goes on.
  const catchUpBuffer = Math.min(CATCH_UP_BUFFER, Math.floor(config.maxBufferedBytes / 4));
  let tokens = config.framesPerSecond;
  let refilledAt = performance.now();
  const close = (code: number, reason: string) => {
    if (closed) return;
    closed = true;
    socket.close(code, reason);
    setTimeout(() => socket.terminate(), CLOSE_GRACE_MS).unref();
  };
  const send = (frame: string) => {
    if (socket.readyState !== socket.OPEN) return;
    socket.send(frame);
    // A reader this far behind is cut; it reconnects and resumes.
    if (socket.bufferedAmount > config.maxBufferedBytes) {
      closed = true;
      socket.terminate();
    }
  };
  const authTimer = setTimeout(() => close(CLOSE.badToken, 'no auth frame in time'), config.authTimeoutMs);
  const idleTimer = setTimeout(() => close(1001, 'no frame within the idle timeout'), config.idleTimeoutMs);
  socket.on('close', () => {
    closed = true;
    clearTimeout(authTimer);
    clearTimeout(idleTimer);
    detach?.();
    hijackedReplyClosed(request);
  });
  socket.on('message', (data, isBinary) => {
    if (closed) return;
    idleTimer.refresh();
    const now = performance.now();
    tokens = Math.min(config.framesPerSecond, tokens + ((now - refilledAt) * config.framesPerSecond) / 1_000);
    refilledAt = now;
    if (tokens < 1) return close(CLOSE.rateLimited, 'too many frames');
    tokens--;
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    if (isBinary) return send(errorFrame('ERR_BAD_REQUEST', 'Frames are JSON text, not binary.'));
    const text = bytes.length > config.maxFrameBytes ? '' : utf8Of(bytes);
    if (text === undefined) return send(errorFrame('ERR_BAD_REQUEST', 'A text frame must be UTF-8.'));
    const frame = readClientFrame(text, bytes.length, config.maxFrameBytes);
    switch (frame.type) {
      case 'invalid':
        return send(errorFrame(frame.code, frame.message));
      case 'ping':
        return send(PONG);
      case 'auth': {
        if (conn || authenticating) return send(errorFrame('ERR_BAD_REQUEST', 'The connection is authenticated already.'));
        authenticating = true;
        // The bound is on the frame's arrival: a slow token lookup does not close a client that sent it in time.
        clearTimeout(authTimer);
        void (async () => {
          let user: { uid: string; tokenHash: string };
          try {
            user = await gateway.authenticate(ctx, frame.authToken);
          } catch (error) {
            // A refused token is 4001 (the client gets a new one); failed authentications over
            // their limit 4008; a lookup that failed (the database) 1013, so the client retries.
            if (error instanceof AppError && error.status === 429) {
              send(errorFrame(error.code, error.message));
              return close(CLOSE.rateLimited, error.code);
            }
            if (error instanceof AppError && error.status < 500) return close(CLOSE.badToken, error.code);
            log.warn({ err: error }, 'a gateway connection could not be authenticated');
            return close(CLOSE.tryAgain, 'try again');
          }
          if (closed) return;
          const connection: GatewayConnection = {
            id: crypto.randomUUID(),
            appId,
            uid: user.uid,
            tokenHash: user.tokenHash,
            write: send,
            drained: () => (socket.bufferedAmount > catchUpBuffer && !closed ? waitForBuffer(socket, catchUpBuffer, () => closed) : undefined),
            close,
          };
          conn = connection;
          try {
            const release = await gateway.attach(connection, frame.lastEventId, log);
            if (closed) release();
            else detach = release;
          } catch (error) {
            if (error instanceof AppError && error.code === 'ERR_TOO_MANY_REQUESTS') {
              // A connection limit: said in a frame (the catalogue's code), then closed 4008.
              send(errorFrame(error.code, error.message));
              return close(CLOSE.rateLimited, error.message.slice(0, 120));
            }
            log.warn({ err: error }, 'a gateway connection could not be attached');
            close(CLOSE.restarting, 'try again');
          }
        })();
        return;
      }
      default: {
        if (!conn || !detach) return send(errorFrame('ERR_BAD_REQUEST', 'Authenticate first: the first frame is auth.'));
        if (frame.type === 'typing_ended') return gateway.typingEnded(conn, frame.receiver, frame.receiverType);
        gateway.typingStarted(conn, frame.receiver, frame.receiverType).catch((error: unknown) => {
          if (error instanceof AppError) send(errorFrame(error.code, error.message));
          else log.warn({ err: error }, 'a typing frame failed');
        });
      }
    }
  });
}

/** The frame's text, or undefined when its bytes are not UTF-8. */
function utf8Of(bytes: Buffer): string | undefined {
  try {
    return UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** Resolves once the socket's unsent data falls under half the catch-up bound (or it closed). */
function waitForBuffer(socket: WebSocket, bound: number, closed: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const check = () => (socket.bufferedAmount <= bound / 2 || closed() ? resolve() : setTimeout(check, 5));
    check();
  });
}

/** The app a connection is for: from the Host, the appId header, or the appId query parameter (browsers cannot set headers on a WebSocket). */
export function appIdHeaderOf(request: FastifyRequest): string | undefined {
  const header = request.headers.appid;
  if (typeof header === 'string' && header.trim() !== '') return header;
  const query = (request.query as Record<string, unknown> | undefined)?.appId;
  return typeof query === 'string' ? query : undefined;
}

export type { FastifyInstance };
