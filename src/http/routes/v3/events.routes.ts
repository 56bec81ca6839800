import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { DEFAULT_EVENT_STREAMS, type Config } from '../../../config.js';
import type { Services } from '../../../container.js';
import { AppError, badRequest } from '../../../domain/errors.js';
import { isTrigger } from '../../../domain/events.js';
import { errorResponses } from '../../../schemas/common.schema.js';
import { EventStreamHeaders, EventStreamQuery } from '../../../schemas/events.schema.js';
import type { RenderedEvent } from '../../../services/event-payloads.js';
import { drainedOf } from '../../drained.js';
import { hijackedReplyClosed } from '../../plugins/in-flight.js';

/** A comment line this often keeps proxies from closing a quiet stream. */
const KEEP_ALIVE_MS = 15_000;
/** A reader this far behind is cut off; it resumes with Last-Event-ID. */
const MAX_UNSENT_BYTES = 8 * 1024 * 1024;
/** Seconds a stream refused for the caps is told to wait (Retry-After). */
const RETRY_AFTER_SECONDS = 5;

/** Streams open at once: per app, and on this node (PARLEY_STREAMS_PER_APP, PARLEY_STREAMS_PER_NODE). */
export type EventStreamLimits = Config['eventStreams'];
const LIMITS = Symbol('eventStreamLimits');

/** Sets the caps of the streams of the app (buildApp, before the routes are registered; the defaults otherwise). */
export function setEventStreamLimits(app: FastifyInstance, limits: EventStreamLimits): void {
  app.decorate(LIMITS, limits);
}

/**
 * The places of the open streams: at most `perApp` per app and `perNode` in all. A place is
 * taken before the stream does anything and given back once its response closes.
 */
class StreamPlaces {
  private open = 0;
  private readonly perApp = new Map<string, number>();

  constructor(private readonly limits: EventStreamLimits) {}

  /** Takes a place for the app, or throws ERR_TOO_MANY_REQUESTS; answers the function that gives it back (once). */
  take(appId: string): () => void {
    const ofApp = this.perApp.get(appId) ?? 0;
    if (ofApp >= this.limits.perApp || this.open >= this.limits.perNode) {
      const scope = ofApp >= this.limits.perApp ? `${this.limits.perApp} per app` : `${this.limits.perNode} on this server`;
      throw new AppError('ERR_TOO_MANY_REQUESTS', {
        message: `Too many event streams open at once (at most ${scope}). Close one, or retry after the specified time.`,
        retryAfter: RETRY_AFTER_SECONDS,
      });
    }
    this.open++;
    this.perApp.set(appId, ofApp + 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.open--;
      const left = (this.perApp.get(appId) ?? 1) - 1;
      if (left > 0) this.perApp.set(appId, left);
      else this.perApp.delete(appId);
    };
  }
}

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
  const places = new StreamPlaces((app as unknown as { [LIMITS]?: EventStreamLimits })[LIMITS] ?? DEFAULT_EVENT_STREAMS);
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
          "Server-Sent Events of the app's event log: each event's `id`, its trigger as the `event`, and as `data` the payload a webhook gets (`trigger`, `data`, `appId`, `region`). Without `Last-Event-ID`, from the events committed after it answers; with it, resumes after that event from the log (within its retention). A fullAccess key. At most 100 streams open per app by default (more: `429 ERR_TOO_MANY_REQUESTS` with `Retry-After`). Parley extension: the vendor has no such endpoint.",
        querystring: EventStreamQuery,
        headers: EventStreamHeaders,
        response: { 200: { description: 'text/event-stream', type: 'string' }, ...errorResponses },
      },
    },
    async (request, reply) => {
      const names = request.query.triggers
        ?.split(',')
        .map((name) => name.trim())
        .filter(Boolean);
      const unknown = names?.find((name) => !isTrigger(name));
      if (unknown !== undefined) throw badRequest({ triggers: `names an unknown trigger: ${unknown}` });
      const release = places.take(request.ctx.appId);
      const res = reply.raw;
      // From here the response's end, however it comes (the client gone, the shutdown, an error
      // answered), gives the place back and stops the stream's work.
      const gone = new AbortController();
      let keepAlive: NodeJS.Timeout | undefined;
      res.on('close', () => {
        release();
        gone.abort();
        hijackedReplyClosed(request);
        open.delete(res);
        clearInterval(keepAlive);
      });
      // Without Last-Event-ID the stream starts after every event committed when it answers, and
      // before every event committed once the client has the answer (EventFeed.startPoint).
      const from = request.headers['last-event-id'] ?? (await services.eventFeed.startPoint(request.log));
      // Answered by the stream itself from here (or not at all: the client has gone).
      reply.hijack();
      if (gone.signal.aborted || res.destroyed) return;
      res.writeHead(200, {
        ...(reply.getHeaders() as Record<string, string>),
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        'x-accel-buffering': 'no',
      });
      res.write(': parley event stream\n\n');
      open.add(res);
      keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
      // The events of one advance of the feed in one write: a write per event per stream was
      // most of a fan-out's CPU (docs/performance-log.md, "streams written per advance"). A live reader this far behind is cut off.
      const send = (events: RenderedEvent[]) => {
        res.write(events.length === 1 ? frameOf(events[0]!) : events.map(frameOf).join(''));
        if (res.writableLength > MAX_UNSENT_BYTES) res.destroy();
      };
      // A catch-up reads its next page once the socket has taken the last (or the client has gone).
      const drained = drainedOf(res, () => res.destroyed);
      try {
        await services.eventFeed.subscribe({ appId: request.ctx.appId, ...(names?.length ? { triggers: new Set(names) } : {}), send, drained, signal: gone.signal }, from, request.log);
      } catch (error) {
        request.log.warn({ err: error }, 'the event stream failed');
        res.destroy();
      }
    },
  );
};
