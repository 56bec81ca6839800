import { silentLogger } from '../domain/context.js';
import type { EventRow } from '../repositories/events.repository.js';
import type { MessagesRepository } from '../repositories/messages.repository.js';
import type { MessageHistoryService } from './message-history.service.js';

/** An event as webhooks and the live stream send it (NOTES.md §6.4): `{trigger, data, appId, region}`, as JSON text. */
export interface RenderedEvent {
  id: string;
  appId: string;
  trigger: string;
  /** The payload: `{"trigger", "data", "appId", "region"}` (a webhook adds `webhook`). */
  payload: Record<string, unknown>;
}

/**
 * Builds the payloads of logged events (docs/events.md): a message event's `data.message` is
 * rendered now from its message, as the REST API renders it; the others carry the data
 * recorded with them. An event whose message is gone (deleted permanently) is left out.
 */
export class EventPayloads {
  constructor(
    private readonly deps: { messages: MessagesRepository; history: MessageHistoryService; region: string },
  ) {}

  /** The payloads of these events (of any apps), in their order. */
  async render(events: readonly EventRow[]): Promise<RenderedEvent[]> {
    const idsByApp = new Map<string, Set<string>>();
    for (const event of events) {
      if (event.message_id === null) continue;
      const ids = idsByApp.get(event.app_id) ?? new Set<string>();
      ids.add(event.message_id);
      idsByApp.set(event.app_id, ids);
    }
    // Each app's messages: read and rendered together, as the app (no viewer).
    const rendered = new Map<string, unknown>();
    for (const [appId, ids] of idsByApp) {
      const ctx = { appId, requestId: 'events', log: silentLogger };
      const rows = await this.deps.messages.getMany(appId, [...ids]);
      const messages = await this.deps.history.render(ctx, rows, { withTags: true });
      messages.forEach((message, n) => rendered.set(`${appId}\u0000${rows[n]!.id}`, message));
    }
    const out: RenderedEvent[] = [];
    for (const event of events) {
      let data: unknown = event.data;
      if (event.message_id !== null) {
        const message = rendered.get(`${event.app_id}\u0000${event.message_id}`);
        if (message === undefined) continue;
        data = { message };
      }
      out.push({
        id: event.id,
        appId: event.app_id,
        trigger: event.trigger,
        payload: { trigger: event.trigger, data, appId: event.app_id, region: this.deps.region },
      });
    }
    return out;
  }
}
