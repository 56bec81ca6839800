/**
 * One keyset page's query over the messages (MessagePagesRepository.readPage reads it with
 * everything the page is shown with): the filters of the message lists, the cursor, and a
 * user's messages across their conversations.
 */
import type { ReceiverType } from '../db/schema.js';
import { visibleTo } from './message-visibility.js';
import { conversationMessages, conversationMessagesOrder, escapeLike } from './sql-helpers.js';
import type { SqlParams } from './sql-text.js';

/** What a message list keeps; every field narrows it. */
export interface MessageFilter {
  /** One conversation's key (see domain/conversation-id.ts). */
  conversationId?: string;
  /** Any of these conversations' keys (none: no message). */
  conversationIn?: string[];
  /** Only the conversations this user takes part in: their 1:1s and their groups'. */
  visibleTo?: string;
  receiverType?: ReceiverType;
  categories?: string[];
  types?: string[];
  senders?: string[];
  /** Messages having at least one of these tags. */
  tags?: string[];
  /** Strict bounds on sent_at (the `sentAt` cursor) and inclusive ones (from/toTimestamp). */
  sentAfter?: Date;
  sentBefore?: Date;
  sentFrom?: Date;
  sentTo?: Date;
  hideReplies?: boolean;
  deleted?: 'hide' | 'only';
  /** A substring of the text, case-insensitive. */
  searchKey?: string;
  /** Media messages (category message, a media type), or all others. */
  hasAttachments?: boolean;
  /** Media messages of these types. */
  mediaTypes?: string[];
  hasMentions?: boolean;
  /** Messages mentioning at least one of these users. */
  mentioning?: string[];
  hasLinks?: boolean;
  /** Leaves out messages from users this user has blocked. */
  hideSendersBlockedBy?: string;
  /** Messages with at least one reaction, or none. */
  hasReactions?: boolean;
  /** Leaves out the messages this user cleared (reset-*-conversation). */
  clearedFor?: string;
  /** Messages after this user's read (delivered) mark, not sent by them. */
  unreadBy?: string;
  undeliveredBy?: string;
}

/** A keyset page: `append` = ids after `id` (from the oldest), `prepend` = ids before it (from the newest). */
export interface MessageCursor {
  affix: 'append' | 'prepend';
  id?: string;
  limit: number;
}

const LINK = '(https?://|www\\.)[^[:space:]]';

/**
 * The query of one keyset page (see readPage), as text with its values in `p`: newest first
 * for `prepend`, oldest first for `append`. `app` is the app id's parameter; `viewer` the
 * viewer's (a null text without one): held messages are theirs alone (message-visibility.ts).
 */
export function pageQuery(p: SqlParams, app: string, filter: MessageFilter, cursor: MessageCursor, viewer: string): string {
  const where = [`messages.app_id = ${app}`, visibleTo('messages', viewer)];
  const any = (values: readonly string[]) => `any(${p.typed(values, 'text[]')})`;
  const conversationId = filter.conversationId === undefined ? undefined : p.shared(filter.conversationId, 'text');
  // Listed conversations alone are read each by its index (eachConversationQuery, below).
  const listed = filter.conversationIn?.length && !conversationId && filter.visibleTo === undefined ? filter.conversationIn : undefined;
  if (filter.conversationIn !== undefined && !listed) {
    where.push(filter.conversationIn.length === 0 ? 'false' : `messages.conversation_id = ${any(filter.conversationIn)}`);
  }
  if (filter.receiverType) where.push(`messages.receiver_type = ${p.param(filter.receiverType)}`);
  if (filter.categories?.length) where.push(`messages.category = ${any(filter.categories)}`);
  if (filter.types?.length) where.push(`messages.type = ${any(filter.types)}`);
  if (filter.senders?.length) where.push(`messages.sender = ${any(filter.senders)}`);
  if (filter.tags?.length) where.push(`messages.tags && ${p.typed(filter.tags, 'text[]')}`);
  if (filter.sentAfter) where.push(`messages.sent_at > ${p.param(filter.sentAfter)}`);
  if (filter.sentBefore) where.push(`messages.sent_at < ${p.param(filter.sentBefore)}`);
  if (filter.sentFrom) where.push(`messages.sent_at >= ${p.param(filter.sentFrom)}`);
  if (filter.sentTo) where.push(`messages.sent_at <= ${p.param(filter.sentTo)}`);
  if (filter.hideReplies) where.push('messages.parent_id is null');
  if (filter.deleted === 'hide') where.push('messages.deleted_at is null');
  if (filter.deleted === 'only') where.push('messages.deleted_at is not null');
  if (filter.searchKey) where.push(`(messages.data->>'text') ilike ${p.typed(`%${escapeLike(filter.searchKey)}%`, 'text')}`);
  if (filter.hasAttachments !== undefined) {
    where.push(`(messages.category = 'message' and messages.type in ('image', 'video', 'audio', 'file')) = ${p.typed(filter.hasAttachments, 'boolean')}`);
  }
  if (filter.mediaTypes?.length) where.push(`messages.category = 'message' and messages.type = ${any(filter.mediaTypes)}`);
  if (filter.hasMentions !== undefined) where.push(`(cardinality(messages.mentioned_uids) > 0) = ${p.typed(filter.hasMentions, 'boolean')}`);
  if (filter.mentioning?.length) where.push(`messages.mentioned_uids && ${p.typed(filter.mentioning, 'text[]')}`);
  if (filter.hasLinks !== undefined) {
    where.push(`coalesce((messages.data->>'text') ~* ${p.typed(LINK, 'text')}, false) = ${p.typed(filter.hasLinks, 'boolean')}`);
  }
  if (filter.hideSendersBlockedBy !== undefined) {
    where.push(`messages.sender not in (select blocked_uid from blocked_users where app_id = ${app} and uid = ${p.param(filter.hideSendersBlockedBy)})`);
  }
  if (filter.hasReactions !== undefined) {
    where.push(`exists (select 1 from message_reactions r where r.app_id = ${app} and r.message_id = messages.id) = ${p.typed(filter.hasReactions, 'boolean')}`);
  }
  // Marks of conversation_states (0007): in one conversation's history, its state read once;
  // across conversations, each row's.
  const conversation = conversationId ?? (() => 'messages.conversation_id');
  const afterMark = (uid: string, marks: Array<'cleared' | 'read' | 'delivered'>) =>
    `messages.id > coalesce((select greatest(${marks.map((mark) => `coalesce(s.${mark}_message_id, 0)`).join(', ')}) from conversation_states s
                             where s.app_id = ${app} and s.uid = ${p.param(uid)} and s.conversation_id = ${conversation()}), 0)`;
  if (filter.clearedFor !== undefined) where.push(afterMark(filter.clearedFor, ['cleared']));
  if (filter.unreadBy !== undefined) where.push(`messages.sender <> ${p.param(filter.unreadBy)}`, afterMark(filter.unreadBy, ['cleared', 'read']));
  if (filter.undeliveredBy !== undefined) {
    where.push(`messages.sender <> ${p.param(filter.undeliveredBy)}`, afterMark(filter.undeliveredBy, ['cleared', 'delivered']));
  }
  // The limit as a literal (a validated integer, 1 to 1,000): with a parameter there, the
  // prepared statement's generic plan is costed for a tenth of the table, so PostgreSQL would
  // plan every call anew (~0.4 ms) instead of reusing one plan.
  if (!Number.isSafeInteger(cursor.limit)) throw new Error(`not an integer limit: ${cursor.limit}`);
  const append = cursor.affix === 'append';
  const keyset: Keyset = { append, cursorId: cursor.id === undefined ? undefined : p.typed(cursor.id, 'bigint'), limit: cursor.limit };
  if (conversationId) where.push(conversationRange(conversationId(), keyset));
  if (filter.visibleTo !== undefined) return visiblePageQuery(p, app, p.param(filter.visibleTo), where, keyset);
  if (listed) return eachConversationQuery(`select distinct unnest(${p.typed(listed, 'text[]')})`, where, keyset);
  if (conversationId) return `select * from messages where ${where.join(' and ')} ${conversationOrder(keyset)}`;
  return `select * from messages where ${[...where, ...idRange(keyset)].join(' and ')} ${idOrder(keyset)}`;
}

/** A keyset page's bounds: its direction, its cursor's parameter, its limit. */
interface Keyset {
  append: boolean;
  cursorId: string | undefined;
  limit: number;
}

/** Messages after (append) or before (prepend) the cursor, by id. */
function idRange({ append, cursorId }: Keyset): string[] {
  return cursorId === undefined ? [] : [`messages.id ${append ? '>' : '<'} ${cursorId}`];
}

function idOrder({ append, limit }: Keyset): string {
  return `order by messages.id ${append ? 'asc' : 'desc'} limit ${limit}`;
}

/** The page's messages of one conversation (an expression), from the cursor (see conversationMessages). */
function conversationRange(conversation: string, { append, cursorId }: Keyset): string {
  if (cursorId === undefined) return conversationMessages('messages', conversation);
  return conversationMessages('messages', conversation, append ? { after: cursorId } : { before: cursorId });
}

function conversationOrder({ append, limit }: Keyset): string {
  return `${conversationMessagesOrder('messages', append ? 'asc' : 'desc')} limit ${limit}`;
}

/**
 * The page of the messages `where` keeps in the conversations that `conversations` (a query of
 * their keys) lists: each conversation's page read by its index (conversationMessages) and the
 * pages merged, so the cost follows the conversations listed, not the app's size. `gate`: a
 * condition for running it at all (a one-time filter).
 */
function eachConversationQuery(conversations: string, where: string[], keyset: Keyset, gate = 'true'): string {
  const each = [...where, conversationRange('listed.conversation_id', keyset)].join(' and ');
  return `select messages.* from (${conversations}) as listed (conversation_id)
            cross join lateral (select * from messages where ${each} ${conversationOrder(keyset)}) as messages
          where ${gate}
          order by id ${keyset.append ? 'asc' : 'desc'} limit ${keyset.limit}`;
}

/**
 * Up to this many conversations, a user's messages across them (MessageFilter.visibleTo) are
 * read conversation by conversation (see visiblePageQuery).
 */
export const VISIBLE_CONVERSATIONS_READ_EACH = 256;

/**
 * The page of the messages `where` keeps in the conversations of the user `uid`: their 1:1
 * conversations (user_conversations) and their groups' (`group_<guid>`, see
 * domain/conversation-id.ts). As one filter over the app's messages, PostgreSQL walks the app's
 * primary key from the cursor until the page is full, past every message of other users'
 * conversations: 150 ms for a user with a few messages in an app of 1M (docs/performance-log.md, "Plans that walked the app's messages").
 * So a user with up to VISIBLE_CONVERSATIONS_READ_EACH conversations has each conversation's
 * page read by its own index and the pages merged, a cost that follows their conversations,
 * not the app's size (~8 µs a conversation). One with more keeps the walk, which is quick where
 * their messages are dense among the app's (reading each of 3,000 conversations took 25 ms
 * where the walk took 2.5). Both branches are in the statement, gated on the count (a one-time
 * filter): only one runs.
 */
function visiblePageQuery(_p: SqlParams, app: string, uid: string, where: string[], keyset: Keyset): string {
  const order = `order by id ${keyset.append ? 'asc' : 'desc'} limit ${keyset.limit}`;
  const visible = `select conversation_id from user_conversations where app_id = ${app} and uid = ${uid}
                   union all
                   select 'group_' || guid from group_members where app_id = ${app} and uid = ${uid}`;
  const few = `(select count(*) from (${visible} limit ${VISIBLE_CONVERSATIONS_READ_EACH + 1}) as v) <= ${VISIBLE_CONVERSATIONS_READ_EACH}`;
  return `(${eachConversationQuery(visible, where, keyset, few)})
          union all
          (select * from messages
           where ${[...where, ...idRange(keyset)].join(' and ')} and not ${few}
             and ((messages.receiver_type = 'user' and messages.conversation_id in (
                    select conversation_id from user_conversations where app_id = ${app} and uid = ${uid}))
                  or (messages.receiver_type = 'group' and messages.receiver in (
                    select guid from group_members where app_id = ${app} and uid = ${uid})))
           ${idOrder(keyset)})
          ${order}`;
}
