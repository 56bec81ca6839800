import type { Executor } from '../db/transaction.js';
import { silentLogger } from '../domain/context.js';
import { MODERATION_TRIGGERS } from '../domain/events.js';
import type { EventRow } from '../repositories/events.repository.js';
import type { MessagesRepository } from '../repositories/messages.repository.js';
import type { MessageHistoryService } from './message-history.service.js';

/** An event as webhooks and the live stream send it (docs/webhooks.md, "What a delivery is"): `{trigger, data, appId, region}`, as JSON text. */
export interface RenderedEvent {
  id: string;
  appId: string;
  trigger: string;
  /** The conversation it happened in (its key), if any: the gateway's audience rule reads it (services/gateway/audience.ts). */
  conversationId: string | null;
  /** The payload: `{"trigger", "data", "appId", "region"}` (a webhook adds `webhook`). */
  payload: Record<string, unknown>;
}

/**
 * Builds the payloads of logged events (docs/events.md): a message event's `data.message` is
 * rendered now from its message, as the REST API renders it; the others carry the data
 * recorded with them. An event whose message is gone (deleted permanently) is left out, and so
 * is a message event whose message is held for moderation review now (as the app, no viewer
 * sees it: repositories/message-visibility.ts). Moderation events show their message whether
 * or not it is held (they are for the app's moderators), with the data recorded beside it.
 */
export class EventPayloads {
  constructor(
    private readonly deps: {
      /** Where its reads run (the consumers' connections). */
      db: Executor;
      messages: MessagesRepository;
      history: MessageHistoryService;
      region: string;
    },
  ) {}

  /** The payloads of these events (of any apps), in their order. */
  async render(events: readonly EventRow[]): Promise<RenderedEvent[]> {
    // Per app, the ids of message events' messages (shown if not held) and of moderation events' (shown).
    const idsByApp = new Map<string, { shown: Set<string>; any: Set<string> }>();
    for (const event of events) {
      if (event.message_id === null) continue;
      let ids = idsByApp.get(event.app_id);
      if (!ids) idsByApp.set(event.app_id, (ids = { shown: new Set(), any: new Set() }));
      (isModerationEvent(event) ? ids.any : ids.shown).add(event.message_id);
    }
    // Each app's messages: read and rendered together, as the app (no viewer).
    const rendered = new Map<string, unknown>();
    const shown = new Set<string>();
    for (const [appId, ids] of idsByApp) {
      const ctx = { appId, requestId: 'events', log: silentLogger };
      const visible = await this.deps.messages.getManyVisible(appId, [...ids.shown], undefined, this.deps.db);
      const read = new Set(visible.map((row) => String(row.id)));
      for (const id of read) shown.add(`${appId}\u0000${id}`);
      const others = await this.deps.messages.getMany(
        appId,
        [...ids.any].filter((id) => !read.has(id)),
        this.deps.db,
      );
      const rows = [...visible, ...others];
      const messages = await this.deps.history.render(ctx, rows, { withTags: true }, this.deps.db);
      messages.forEach((message, n) => rendered.set(`${appId}\u0000${rows[n]!.id}`, message));
    }
    const out: RenderedEvent[] = [];
    for (const event of events) {
      let data: unknown = event.data;
      if (event.message_id !== null) {
        const key = `${event.app_id}\u0000${event.message_id}`;
        const message = rendered.get(key);
        if (message === undefined) continue;
        if (isModerationEvent(event)) data = Object.assign({ message }, event.data);
        else if (shown.has(key)) data = { message };
        else continue;
      }
      out.push({
        id: event.id,
        appId: event.app_id,
        trigger: event.trigger,
        conversationId: event.conversation_id,
        payload: { trigger: event.trigger, data, appId: event.app_id, region: this.deps.region },
      });
    }
    return out;
  }
}

const MODERATION = new Set<string>(MODERATION_TRIGGERS);

function isModerationEvent(event: EventRow): boolean {
  return MODERATION.has(event.trigger);
}
