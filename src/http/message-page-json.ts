import type { Message } from '../services/views/messages.view.js';
import { ShownMessage } from '../services/views/shown-messages.js';

/**
 * A history page's JSON text (the body of the two history lists: see RenderedPages).
 *
 * Written with JSON.stringify instead of the route schema's serializer (fast-json-stringify),
 * with each message's `entities` written once per page: a page names the same few users and
 * groups on every message, and their entity objects are shared (views/messages.view.ts), so the
 * text of each sender-and-receiver pair is made once. The page is stringified once with each
 * message's entities replaced by a marker (`"\u0000<n>"`), and one pass over the text puts the
 * n-th entities' text in its place. On a 50-message page this takes less than half the
 * schema serializer's time (docs/performance-log.md, "The uncached history page: its serializer"). The route schema still describes the body
 * (OpenAPI), and test/api/message-page-json.test.ts holds that this text reads exactly as the
 * schema's serializer writes it.
 *
 * A marker holds the NUL character, which no stored text can (domain/text.ts refuses it at the
 * edge and in imports, and PostgreSQL cannot store it). Should the text hold a marker's form
 * more often than messages were marked even so, the page is written by JSON.stringify whole.
 *
 * A page with messages read as their stored text (ShownMessage, their text made with the page)
 * is their texts joined, the others' written by JSON.stringify.
 */
export function messagePageJson(page: { data: Array<Message | ShownMessage>; meta: unknown }): string {
  if (page.data.some((item) => item instanceof ShownMessage)) {
    const texts = page.data.map((item) => (item instanceof ShownMessage ? item.text : JSON.stringify(item)));
    return `{"data":[${texts.join(',')}],"meta":${JSON.stringify(page.meta)}}`;
  }
  return messagesJson(page as { data: Message[]; meta: unknown });
}

/** messagePageJson of rendered messages: their entities written once per pair. */
function messagesJson(page: { data: Message[]; meta: unknown }): string {
  const texts: string[] = [];
  const pairs = new Map<object, Map<object, number>>();
  const saved = new Array<Message['data']['entities'] | undefined>(page.data.length);
  let marked = 0;
  let text: string;
  try {
    for (let i = 0; i < page.data.length; i++) {
      const data = page.data[i]!.data;
      const entities = data.entities as unknown;
      if (entities === null || typeof entities !== 'object') continue;
      saved[i] = data.entities;
      data.entities = `\u0000${entitiesIndex(entities as Record<string, unknown>, texts, pairs)}` as never;
      marked++;
    }
    text = JSON.stringify(page);
  } finally {
    for (let i = 0; i < page.data.length; i++) if (saved[i] !== undefined) page.data[i]!.data.entities = saved[i]!;
  }
  if (marked === 0) return text;
  let found = 0;
  const spliced = text.replace(MARKER, (_match, n: string) => {
    found++;
    return texts[Number(n)] ?? '';
  });
  return found === marked ? spliced : JSON.stringify(page);
}

const MARKER = /"\\u0000(\d+)"/g;

/** The index in `texts` of these entities' text: made once per sender-and-receiver pair of a page. */
function entitiesIndex(entities: Record<string, unknown>, texts: string[], pairs: Map<object, Map<object, number>>): number {
  const { sender, receiver } = entities;
  const shared = Object.keys(entities).length === 2 && typeof sender === 'object' && sender !== null && typeof receiver === 'object' && receiver !== null;
  // An action message's entities (by, on, for) are its own: written for it alone.
  if (!shared) return texts.push(JSON.stringify(entities)) - 1;
  let bySender = pairs.get(sender);
  if (!bySender) pairs.set(sender, (bySender = new Map()));
  let index = bySender.get(receiver);
  if (index === undefined) bySender.set(receiver, (index = texts.push(JSON.stringify(entities)) - 1));
  return index;
}
