/**
 * `parley events tail` (docs/events.md): the live event stream of an app in a terminal, one
 * JSON payload a line, read from the event log as the server's stream reads it. Run by cli.ts
 * against the database (PostgreSQL: beside running servers; the embedded database is the
 * server's alone, so there use `curl -N .../v3/events`).
 */
import type { Services } from './container.js';
import type { RequestContext } from './domain/context.js';
import { EVENT_ID_PATTERN, isTrigger } from './domain/events.js';
import type { RenderedEvent } from './services/event-payloads.js';

/** What the command needs from cli.ts: a context for an app, and its usage error. */
interface CommandIo {
  context(appId: string): RequestContext;
  usage(message: string): Error;
}

export interface EventsFlags {
  app?: string;
  triggers?: string;
  after?: string;
}

export const EVENTS_USAGE = `  events tail --app APPID [--triggers a,b] [--after EVENT_ID]
                                 Print the app's events as they happen, one JSON payload a line
                                 (with --after, first those after that event id, from the log)`;

export async function eventsCommand(
  services: Services,
  io: CommandIo,
  sub: string | undefined,
  flags: EventsFlags,
  output: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
  until: Promise<unknown> = interrupted(),
): Promise<number> {
  if (sub !== 'tail') throw io.usage('Usage: parley events tail --app APPID [--triggers a,b] [--after EVENT_ID]');
  if (!flags.app) throw io.usage('--app is required.');
  const appId = flags.app.toLowerCase();
  if (!(await services.apps.list()).some((app) => app.appId === appId)) throw io.usage(`No app with id ${appId}.`);
  const ctx = io.context(appId);
  const triggers = flags.triggers
    ?.split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const unknown = triggers?.find((name) => !isTrigger(name));
  if (unknown !== undefined) throw io.usage(`--triggers names an unknown trigger: ${unknown}`);
  if (flags.after !== undefined && !new RegExp(EVENT_ID_PATTERN).test(flags.after)) throw io.usage('--after must be an event id.');
  const send = (events: RenderedEvent[]) => {
    for (const event of events) output(JSON.stringify({ id: event.id, ...event.payload }));
  };
  const remove = await services.eventFeed.subscribe({ appId: ctx.appId, ...(triggers?.length ? { triggers: new Set(triggers) } : {}), send }, flags.after, ctx.log);
  try {
    await until;
  } finally {
    remove();
    await services.eventFeed.stop();
  }
  return 0;
}

/** Resolves on Ctrl-C or SIGTERM. */
function interrupted(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}
