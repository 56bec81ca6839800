import crypto from 'node:crypto';
import websocket from '@fastify/websocket';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { GatewayConfig } from '../../config.js';
import { AppError } from '../../domain/errors.js';
import { EVENT_ID_PATTERN } from '../../domain/events.js';
import { CLOSE, errorFrame, type GatewayConnection } from '../../services/gateway/frames.js';
import type { Gateway } from '../../services/gateway/gateway.js';
import { drainedOf } from '../drained.js';
import { hijackedReplyClosed } from '../plugins/in-flight.js';
import { resolveAppId, type TenancySettings } from '../plugins/tenancy.js';
import { appIdHeaderOf, serveSocket, SUBPROTOCOL } from './ws.routes.js';

/** A comment line this often keeps proxies from closing a quiet SSE stream. */
const SSE_KEEP_ALIVE_MS = 15_000;

/**
 * The gateway's transports (docs/realtime.md), outside the apiKey authentication of the
 * general API (a client holds a user's auth token, not a key): `GET /v3/ws`, the WebSocket
 * (`@fastify/websocket` on `ws`, subprotocol parley.v1, no per-message deflate), and
 * `GET /v3/me/events`, the same frames as Server-Sent Events for clients without sockets. The
 * app comes from the Host, the appId header or (for browsers' sockets) the appId query
 * parameter, and must exist; the shutdown closes every connection with 1012.
 */
export const gatewayRoutes: FastifyPluginAsync<{ gateway: Gateway; config: GatewayConfig; tenancy: TenancySettings }> = async (app, { gateway, config, tenancy }) => {
  await app.register(websocket, {
    options: {
      // Frames above the gateway's bound get an error frame; far above it, ws closes with 1009.
      maxPayload: Math.max(config.maxFrameBytes * 4, 64 * 1024),
      perMessageDeflate: false,
      // serveSocket checks a text frame's UTF-8 itself: invalid bytes get an error frame, the socket stays open.
      skipUTF8Validation: true,
      handleProtocols: (protocols: Set<string>) => (protocols.has(SUBPROTOCOL) ? SUBPROTOCOL : false),
    },
    // The shutdown (preClose): every connection closed with 1012, clients reconnect elsewhere.
    preClose: async () => {
      await gateway.stop();
    },
  });
  const appOf = async (request: FastifyRequest) => {
    const appId = resolveAppId(request.hostname, appIdHeaderOf(request), tenancy);
    await gateway.requireApp(appId);
    return appId;
  };
  const wsApps = new WeakMap<FastifyRequest, string>();
  app.route({
    method: 'GET',
    url: '/v3/ws',
    schema: { hide: true },
    // Tenancy before the upgrade: no such app is answered over HTTP, in the vendor's shape.
    preValidation: async (request) => {
      wsApps.set(request, await appOf(request));
    },
    wsHandler: (socket, request) => serveSocket(socket, request, wsApps.get(request)!, gateway, config),
    // A plain HTTP request (no Upgrade) is told what this is, in the vendor's shape.
    handler: async () => {
      throw new AppError('ERR_BAD_REQUEST', { message: `GET /v3/ws is the WebSocket gateway: open it as a WebSocket (subprotocol ${SUBPROTOCOL}; docs/realtime.md).` });
    },
  });

  app.get('/v3/me/events', { schema: { hide: true } }, async (request, reply) => {
    const appId = await appOf(request);
    const ctx = { appId, requestId: request.id, log: request.log };
    const token = request.headers.authtoken;
    const user = await gateway.authenticate(ctx, typeof token === 'string' ? token : undefined);
    const lastEventId = request.headers['last-event-id'];
    if (lastEventId !== undefined && (typeof lastEventId !== 'string' || !new RegExp(EVENT_ID_PATTERN).test(lastEventId))) {
      throw new AppError('ERR_BAD_REQUEST', { message: 'Last-Event-ID must be an event id (digits) as an event carried it.' });
    }
    reply.hijack();
    const res = reply.raw;
    let detach: (() => void) | undefined;
    let ended = false;
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), SSE_KEEP_ALIVE_MS);
    res.on('close', () => {
      ended = true;
      clearInterval(keepAlive);
      detach?.();
      hijackedReplyClosed(request);
    });
    res.writeHead(200, { ...(reply.getHeaders() as Record<string, string>), 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
    res.write(': parley gateway\n\n');
    const conn: GatewayConnection = {
      id: crypto.randomUUID(),
      appId,
      uid: user.uid,
      tokenHash: user.tokenHash,
      write(frame, eventId) {
        if (ended) return;
        res.write(eventId === undefined ? `data: ${frame}\n\n` : `id: ${eventId}\ndata: ${frame}\n\n`);
        if (res.writableLength > config.maxBufferedBytes) res.destroy();
      },
      drained: drainedOf(res, () => ended),
      close(code, reason) {
        if (ended) return;
        // The close code as a last frame (an EventSource cannot see one), then the end.
        res.write(`event: close\ndata: ${JSON.stringify({ type: 'close', code, reason })}\n\n`);
        res.end();
      },
    };
    try {
      const release = await gateway.attach(conn, lastEventId, request.log);
      if (ended) release();
      else detach = release;
    } catch (error) {
      const code = error instanceof AppError && error.code === 'ERR_TOO_MANY_REQUESTS' ? CLOSE.rateLimited : CLOSE.restarting;
      if (code !== CLOSE.rateLimited) request.log.warn({ err: error }, 'an SSE gateway connection could not be attached');
      // A connection limit: said in an error frame (the catalogue's code), as on the WebSocket.
      if (code === CLOSE.rateLimited) conn.write(errorFrame('ERR_TOO_MANY_REQUESTS', (error as AppError).message));
      conn.close(code, error instanceof AppError ? error.message : 'try again');
    }
  });
};
