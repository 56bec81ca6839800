import type { BlockRelation } from '../../repositories/blocked-users.repository.js';
import type { GroupRow } from '../../repositories/groups.repository.js';
import type { ShownRow } from '../../repositories/message-pages.repository.js';
import { storedRow } from '../../repositories/message-store/message-rows.js';
import type { MessageRow, NewMessage } from '../../repositories/messages.repository.js';
import type { ReactionCount } from '../../repositories/reactions.repository.js';
import type { UserRow } from '../../repositories/users.repository.js';
import { entitiesOf, mentionsOf, reactionsShown, toMessage } from './messages.view.js';

// A message's stored text (messages.shown, migration 0017; docs/performance-log.md, "Stored message text"): what toMessage
// renders of the row as it is stored, less what the row does not decide alone. A history page
// puts those around it (ShownMessage) instead of reading, rendering and serialising every column
// of every message.

/** The end of the marked data shownText cuts: the marker of its entities and its closing brace. */
const END = '"entities":"\\u0000"}';
/** Ids a stored text's row is read back with (message-pages.repository.ts) must not hold control characters. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: it finds control characters, on purpose
const CONTROL = /[\u0000-\u001f]/;
/** The time the row is rendered with (left out of its text). */
const NO_TIME = new Date(0);

/** What a message about to be stored is rendered from (a send's, a reply's, an import's). */
export type StoredMessage = Omit<NewMessage, 'shown'> & { deliveredAt?: Date | null; readAt?: Date | null };

/**
 * The stored text of a message about to be stored (its id and time are drawn by the statement
 * that stores it), or null where the message is rendered from its columns instead: an action
 * message (its entities are its own), a message with source receipts (an import's), and one
 * whose data holds a key the render adds (`entities`, `mentions`, `reactions`).
 *
 * It is toMessage's text of the row without its id, times and tags, and with `data` last and
 * left open after its own fields: `"conversationId":…,"data":{"text":"hi",` (each key once, as
 * toMessage writes it; JSON does not order keys). toShownMessage puts the rest around it.
 */
export function shownText(message: StoredMessage): string | null {
  const receipts = { deliveredAt: message.deliveredAt ?? null, readAt: message.readAt ?? null };
  if (message.category === 'action' || receipts.deliveredAt !== null || receipts.readAt !== null) return null;
  if (CONTROL.test(message.sender) || CONTROL.test(message.receiver) || CONTROL.test(message.conversationId) || message.mentionedUids.some((uid) => CONTROL.test(uid))) return null;
  const row = storedRow('', message, '0', NO_TIME, receipts);
  const stored = row.data;
  if (stored === null || typeof stored !== 'object' || Array.isArray(stored)) return null;
  for (const key of ['entities', 'mentions', 'reactions']) if (Object.hasOwn(stored, key)) return null;
  row.parent_id = message.parentId ?? null;
  // Mentions and tags are the page's to add (they depend on users and on the request).
  row.tags = [];
  row.mentioned_uids = [];
  // Drawn when stored, or decided by other rows and the viewer: put around the text by toShownMessage.
  const { id: _id, sentAt: _sentAt, updatedAt: _updatedAt, data, ...rest } = toMessage(row, new Map(), new Map(), { withTags: false, shareEntities: false });
  data.entities = '\u0000' as never;
  const dataText = JSON.stringify(data);
  if (!dataText.endsWith(END) || dataText.indexOf('\\u0000') !== dataText.length - END.length + '"entities":"'.length) return null;
  const restText = JSON.stringify(rest);
  if (restText.includes('\\u0000')) return null;
  return `${restText.slice(1, -1)},"data":${dataText.slice(0, -END.length)}`;
}

/**
 * The stored text of a message already stored without one (before migration 0017), as shownText
 * would have made it when it was stored; null where it would have made none, or where the row
 * has changed since it was stored (edited, deleted, replied to, or updated otherwise: such rows
 * are rendered from their columns, as the trigger of 0017 has any row that changes).
 */
export function shownTextOfRow(row: MessageRow): string | null {
  if (row.updated_at !== null || row.edited_at !== null || row.edited_by !== null || row.deleted_at !== null || row.deleted_by !== null || row.reply_count !== 0) return null;
  const message: StoredMessage = {
    conversationId: row.conversation_id,
    sender: row.sender,
    receiver: row.receiver,
    receiverType: row.receiver_type,
    category: row.category,
    type: row.type,
    dataJson: JSON.stringify(row.data),
    tags: row.tags,
    mentionedUids: row.mentioned_uids,
    muid: row.muid,
    deliveredAt: row.delivered_at,
    readAt: row.read_at,
  };
  if (row.parent_id !== null) message.parentId = String(row.parent_id);
  return shownText(message);
}

/** A message of a history page read as its stored text (ShownRow): its JSON text, as toMessage and withReceipt make it. */
export class ShownMessage {
  constructor(
    readonly id: string,
    readonly sentAt: number,
    readonly text: string,
  ) {}
}

/**
 * A stored text's message with its entities, mentions, reactions, tags and receipt, as
 * toMessage's options ask. `pairs`: the entities' text of each sender and receiver of the page,
 * written once per pair.
 */
export function toShownMessage(
  row: ShownRow,
  users: Map<string, UserRow>,
  groups: Map<string, GroupRow>,
  options: { withTags: boolean; mentionsWithTagInfo?: boolean; mentionBlocks?: Map<string, BlockRelation> },
  reactions: ReactionCount[] | undefined,
  receipt: { deliveredAt?: number; readAt?: number },
  pairs: Map<string, string>,
): ShownMessage {
  const pair = `${row.sender}\u0000${row.receiver_type}\u0000${row.receiver}`;
  let entities = pairs.get(pair);
  if (entities === undefined) pairs.set(pair, (entities = JSON.stringify(entitiesOf(row, users, groups, true))));
  const mentions = row.mentioned_uids.length ? mentionsOf(row.mentioned_uids, users, options) : undefined;
  // The id is a bigint's digits (ShownRow), written as a JSON string as they are.
  let text = `{"id":"${row.id}","sentAt":${row.sentAt},"updatedAt":${row.updatedAt ?? row.sentAt},${row.shown}"entities":${entities}`;
  if (mentions) text += `,"mentions":${JSON.stringify(mentions)}`;
  if (reactions?.length) text += `,"reactions":${JSON.stringify(reactionsShown(reactions))}`;
  text += '}';
  if (options.withTags && row.tags.length) text += `,"tags":${JSON.stringify(row.tags)}`;
  if (receipt.deliveredAt !== undefined) text += `,"deliveredAt":${receipt.deliveredAt}`;
  if (receipt.readAt !== undefined) text += `,"readAt":${receipt.readAt}`;
  return new ShownMessage(row.id, row.sentAt, `${text}}`);
}
