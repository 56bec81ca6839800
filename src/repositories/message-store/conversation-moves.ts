import { sql, type RawBuilder } from 'kysely';
import { visibleTo } from '../message-visibility.js';
import { conversationMessages, conversationMessagesOrder } from '../sql-helpers.js';

/**
 * How a conversation moves when messages are stored in it, written once: every statement that
 * inserts messages (this folder's repositories) or takes them away (deletes, purges) is built
 * from these fragments, so the invariant below holds whatever the entry point.
 *
 * 1. **Ids follow commit order within a conversation.** A message's id is drawn while its
 *    conversation's row is locked (created by its first message): two writers of one
 *    conversation take turns, and the later commit holds the higher id. Rows are locked in
 *    conversation key order, so racing batches cannot deadlock.
 * 2. **A 1:1 conversation has both sides.** The statement that creates a 1:1 conversation
 *    creates each participant's `user_conversations` row with it.
 * 3. **The conversation's last message is its newest one shown.** `last_message_id` moves
 *    forward to the highest id stored, and back to the newest left when its message is taken
 *    away or withheld; `updated_at` moves with it.
 * 4. **A held message stays out of its conversation** (moderation: shown to its sender alone,
 *    repositories/message-visibility.ts). Stored held, it draws its id from the sequence without
 *    the conversation's lock, neither creates nor moves the conversation nor counts on its
 *    parent, and counts as a change to the conversation's pages (countMessageChange). Released,
 *    it goes in where its id puts it, as an import chunk's messages do (lockConversations, then
 *    moveLastMessage and createSides): readers paging by id who passed its place before it was
 *    released never saw it, as they never saw it while it was held. See held-messages.repository.ts.
 *
 * Two forms put these together:
 * - **One message per conversation in a statement** (a send, a coalesced round of sends, a
 *   reply): `drawIdsUnderLock` creates or locks each conversation and draws its message's id in
 *   the same upsert, which also moves the last message; `createSides` follows.
 * - **Many messages per conversation** (the action messages of one group change, an import
 *   chunk): `lockConversations` first, its own statement; then the messages are inserted with ids
 *   from the sequence, in order, and `moveLastMessage` and `createSides` follow in that statement.
 */

/**
 * The next message id, from the identity column's sequence (named by migration 0005's table):
 * the name as a regclass literal is resolved when the statement is planned, where
 * pg_get_serial_sequence looked it up on every row (~6% of the backend's samples during sends).
 */
const NEXT_MESSAGE_ID = sql`nextval('messages_id_seq'::regclass)`;

/**
 * An upsert of the conversations of `conversations` (rows of `conversation_id, receiver_type`, each
 * conversation once), in key order, that draws each one's next message id under its row lock and
 * makes it the last message. Returns `conversation_id, id, at, created` (`at`: the conversation's
 * time, the message's `sent_at`; `created`: the row is new). A CTE body or a statement.
 */
export function drawIdsUnderLock(appId: string, conversations: RawBuilder<unknown>): RawBuilder<{ conversation_id: string; id: string; at: Date; created: boolean }> {
  return sql`
    insert into conversations as c (app_id, conversation_id, conversation_type, last_message_id, updated_at)
    select ${appId}, r.conversation_id, r.receiver_type, ${NEXT_MESSAGE_ID}, clock_timestamp()
    from (${conversations}) as r (conversation_id, receiver_type)
    order by r.conversation_id
    on conflict (app_id, conversation_id) do update set last_message_id = ${NEXT_MESSAGE_ID}, updated_at = clock_timestamp()
    returning c.conversation_id, c.last_message_id as id, c.updated_at as at, (xmax = 0) as created`;
}

/**
 * Creates the conversations of `conversations` (rows of `conversation_id, receiver_type, first_at,
 * last_at`, each once) that do not exist, and row-locks those that do, in key order, until the
 * transaction ends, without writing them (ON CONFLICT DO UPDATE locks the row; WHERE false
 * writes no new version). Returns the `conversation_id` of each one created. Its own statement:
 * the statement that inserts the messages then moves the rows (moveLastMessage).
 */
export function lockConversations(appId: string, conversations: RawBuilder<unknown>): RawBuilder<{ conversation_id: string }> {
  return sql`
    insert into conversations as c (app_id, conversation_id, conversation_type, created_at, updated_at)
    select ${appId}, r.conversation_id, r.receiver_type, r.first_at, r.last_at
    from (${conversations}) as r (conversation_id, receiver_type, first_at, last_at)
    order by r.conversation_id
    on conflict (app_id, conversation_id) do update set updated_at = c.updated_at where false
    returning c.conversation_id`;
}

/**
 * Moves each conversation of `stored` (rows of `conversation_id, receiver_type, id, at`: messages
 * just stored in conversations this transaction has locked) to its newest message, never back.
 * Written as an upsert of rows that exist, so each is found through its key whatever the planner
 * believes of the table. A CTE body.
 */
export function moveLastMessage(appId: string, stored: RawBuilder<unknown>): RawBuilder<never> {
  return sql`
    insert into conversations as c (app_id, conversation_id, conversation_type, last_message_id, updated_at)
    select ${appId}, s.conversation_id, min(s.receiver_type), max(s.id), max(s.at)
    from (${stored}) as s (conversation_id, receiver_type, id, at)
    group by s.conversation_id
    on conflict (app_id, conversation_id) do update
      set last_message_id = greatest(c.last_message_id, excluded.last_message_id), updated_at = greatest(c.updated_at, excluded.updated_at)`;
}

/**
 * Creates both sides of the 1:1 conversations of `pairs` (rows of `conversation_id, sender,
 * receiver`: messages of 1:1 conversations that this statement created). A CTE body.
 */
export function createSides(appId: string, pairs: RawBuilder<unknown>): RawBuilder<never> {
  return sql`
    insert into user_conversations (app_id, uid, conversation_id, conversation_with)
    select distinct ${appId}, side.uid, p.conversation_id, side.other
    from (${pairs}) as p (conversation_id, sender, receiver),
         lateral (values (p.sender, p.receiver), (p.receiver, p.sender)) as side (uid, other)
    on conflict do nothing`;
}

/**
 * After the messages `removedIds` were taken away from `conversations` (or withheld): each
 * conversation whose last message was one of them moves back to the newest message left that is
 * shown (none when it has none; held messages are never a conversation's last message). A
 * statement, after the one that removed them. The newest left is read by the conversation's index
 * (conversationMessages).
 */
export function moveLastMessageBack(appId: string, conversations: readonly string[], removedIds: readonly string[]): RawBuilder<never> {
  return sql`
    update conversations c
    set last_message_id = (select m.id from messages m where m.app_id = c.app_id and ${sql.raw(conversationMessages('m', 'c.conversation_id'))}
                             and ${sql.raw(visibleTo('m', 'null'))}
                           ${sql.raw(conversationMessagesOrder('m', 'desc'))} limit 1)
    where c.app_id = ${appId} and c.conversation_id = any(${conversations}::text[]) and c.last_message_id = any(${removedIds}::bigint[])`;
}

/**
 * Counts a change to conversations' messages that moves no conversation row (a held message
 * stored): the version of their pages (migration 0009), as its triggers count edits, so a page
 * kept for the sender is read again. `conversations`: rows of `conversation_id`. A CTE body.
 */
export function countMessageChange(appId: string, conversations: RawBuilder<unknown>): RawBuilder<never> {
  return sql`
    insert into conversation_versions as v (app_id, conversation_id)
    select distinct ${appId}::text, c.conversation_id from (${conversations}) as c (conversation_id) order by 2
    on conflict (app_id, conversation_id) do update set version = v.version + 1`;
}
