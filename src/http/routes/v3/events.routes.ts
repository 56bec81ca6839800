import type { ServerResponse } from 'node:http';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../../container.js';
import { badRequest } from '../../../domain/errors.js';
import { isTrigger } from '../../../domain/events.js';
import { errorResponses } from '../../../schemas/common.schema.js';
import { EventStreamHeaders, EventStreamQuery } from '../../../schemas/events.schema.js';
import type { RenderedEvent } from '../../../services/event-payloads.js';
import { hijackedReplyClosed } from '../../plugins/in-flight.js';

/** A comment line this often keeps proxies from closing a quiet stream. */
const KEEP_ALIVE_MS = 15_000;
/** A reader this far behind is cut off; it resumes with Last-Event-ID. */
const MAX_UNSENT_BYTES = 8 * 1024 * 1024;

/**
 * An event's frame (`id`, `event`, and its payload as JSON `data`), written once however many
 * streams send it: the feed hands the same rendered event to every stream of its app
 * (serialising per stream was a third of the CPU of a 1,000-stream fan-out).
 */
const frames = new WeakMap<RenderedEvent, string>();
function frameOf(event: RenderedEvent): string {
  let frame = frames.get(event);
  if (frame === undefined) {
    frame = `id: ${event.id}\nevent: ${event.trigger}\ndata: ${JSON.stringify(event.payload)}\n\n`;
    frames.set(event, frame);
  }
  return frame;
}

/**
 * The live event stream (a Parley extension; docs/events.md): `GET /v3/events`, Server-Sent
 * Events of the app's event log, the payloads webhooks get, resumable from Last-Event-ID.
 */
export const eventsRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const open = new Set<ServerResponse>();
  // Streams never end by themselves: a shutdown ends them (readers resume elsewhere).
  app.addHook('preClose', async () => {
    for (const res of open) res.end();
  });

  app.get(
    '/events',
    {
      schema: {
        operationId: 'stream-events',
        tags: ['Events'],
        summary: 'Stream events',
        description:
          "Server-Sent Events of the app's event log: each event's `id`, its trigger as the `event`, and as `data` the payload a webhook gets (`trigger`, `data`, `appId`, `region`). With `Last-Event-ID`, resumes after that event from the log (within its retention). A fullAccess key. Parley extension: the vendor has no such endpoint.",
        querystring: EventStreamQuery,
        headers: EventStreamHeaders,
        response: { 200: { description: 'text/event-stream', type: 'string' }, ...errorResponses },
      },
    },
    async (request, reply) => {
      const names = request.query.triggers?.split(',').map((name) => name.trim()).filter(Boolean);
      const unknown = names?.find((name) => !isTrigger(name));
      if (unknown !== undefined) throw badRequest({ triggers: `names an unknown trigger: ${unknown}` });
      // Without Last-Event-ID the stream starts at the safe id of the moment it answers: an event
      // committed once the client has the answer is never before it (see EventFeed.ready).
      const after = request.headers['last-event-id'] ?? String(await services.eventFeed.ready(request.log));
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        ...(reply.getHeaders() as Record<string, string>),
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        'x-accel-buffering': 'no',
      });
      res.write(': parley event stream\n\n');
      open.add(res);
      let unsubscribe: (() => void) | undefined;
      let closed = false;
      const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
      res.on('close', () => {
        closed = true;
        hijackedReplyClosed(request);
        open.delete(res);
        clearInterval(keepAlive);
        unsubscribe?.();
      });
      // The events of one advance of the feed in one write: a write per event per stream was
      // most of a fan-out's CPU (docs/performance.md).
      const send = (events: RenderedEvent[]) => {
        res.write(events.length === 1 ? frameOf(events[0]!) : events.map(frameOf).join(''));
        if (res.writableLength > MAX_UNSENT_BYTES) res.destroy();
      };
      try {
        const remove = await services.eventFeed.subscribe(
          { appId: request.ctx.appId, ...(names?.length ? { triggers: new Set(names) } : {}), send },
          after,
          request.log,
        );
        if (closed) remove();
        else unsubscribe = remove;
      } catch (error) {
        request.log.warn({ err: error }, 'the event stream failed');
        res.destroy();
      }
    },
  );
};
