import crypto from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * What an incoming X-Request-Id may be to be kept: up to 128 letters, digits and `. _ : - + / = @`
 * (UUIDs, trace ids, base64). Anything else (too long, spaces, quotes, control characters: a
 * value that could forge a log line or a header) is replaced by an id of Parley's own.
 */
const ACCEPTED_REQUEST_ID = /^[A-Za-z0-9._:+/=@-]{1,128}$/;

/**
 * The request's id (Fastify's genReqId): the caller's X-Request-Id when it is acceptable, so one
 * id follows a request through a proxy's logs and Parley's, else a random UUID. It is sent back
 * as X-Request-Id, bound to every log line of the request (`reqId`) and put in every error
 * body's details (`requestId`).
 */
export function requestIdOf(request: IncomingMessage): string {
  const header = request.headers['x-request-id'];
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && ACCEPTED_REQUEST_ID.test(value) ? value : crypto.randomUUID();
}
