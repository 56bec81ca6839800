import { sql } from 'kysely';
import { parseTimestamptz } from '../../db/timestamps.js';
import type { Executor } from '../../db/transaction.js';
import type { MessageRow, NewMessage } from '../messages.repository.js';
import { sendChecks, sendFactsOf, type SendCheckRow, type SendFacts } from '../send-checks.js';
import { countMessageChange, createSides, lockConversations, moveLastMessage, moveLastMessageBack } from './conversation-moves.js';
import { conversationMessages, conversationMessagesOrder } from '../sql-helpers.js';
import { recordMessageEvents } from './message-events.js';
import { storedRow } from './message-rows.js';

/** What held a message: a rule's match or the moderation hook, as moderation_blocked_messages keeps it. */
export interface HeldBy {
  ruleId: string;
  ruleName: string;
  revisionId: string;
  /** The condition that matched, as the rule wrote it; null for the hook. */
  condition: unknown;
  action: string[];
  /** A send (or reply) held before anyone saw it, or an edit of a message already shown. */
  kind: 'send' | 'edit';
}

/** What storeHeld found and did, as a send's outcome (SendOutcome) says it. */
export interface HeldOutcome {
  facts: SendFacts;
  /** The message stored held; absent when a check failed, the muid was used before, or a reply's parent is gone. */
  row?: MessageRow;
  /** The id of the sender's earlier message with this muid: nothing was stored. */
  firstId?: string;
  /** A reply's parent exists (always true for a send). */
  parentFound: boolean;
}

/** One message put back into its conversation by release (`dataJson`: its data now, or null to keep it). */
export interface Released {
  id: string;
  dataJson: string | null;
  /** Record the message's events now (recordMessageEvents): its message_sent, or an action message's message_edited. */
  events: boolean;
}

/**
 * Messages held for moderation review (docs/moderation.md): the message store's entry points
 * that keep a message out of its conversation and put it back in (conversation-moves.ts, 4). A
 * held message is shown to its sender alone (message-visibility.ts); nobody else's reads, its
 * conversation's last message and unread counts, nor the event log's message events see it
 * until it is released.
 */
export class HeldMessagesRepository {
  constructor(private readonly db: Executor) {}

  /**
   * Checks and stores a send (or, with `reply`, a thread reply) held by `heldBy`, in ONE
   * statement: the send's checks (send-checks.ts, the rules every send passes), the sender's
   * earlier message with its muid, a reply's parent; then the message, held, its id from the
   * sequence (no conversation lock: it moves no conversation), the record of what held it, the
   * change counted on the conversation's pages, and its `moderation_engine_blocked` event with
   * `eventData`. Its message_sent comes when it is released.
   */
  async storeHeld(appId: string, message: NewMessage, heldBy: HeldBy, eventData: Record<string, unknown>, options: { reply: boolean }, tx: Executor = this.db): Promise<HeldOutcome> {
    const parentId = message.parentId ?? null;
    const result = await sql<SendCheckRow & { first_id: string | null; id: string | null; at: string | null; parent_found: boolean }>`
      with r as (
        select ${message.sender}::text as sender, ${message.receiver}::text as receiver, ${message.receiverType}::text as receiver_type,
               ${message.category}::text as category, ${message.type}::text as type, ${message.dataJson}::json as data,
               ${message.conversationId}::text as conversation_id, ${message.muid}::text as muid
      ), f as (
        select c.*,
          case when c.muid is not null then (
            select m.id from messages m where m.app_id = ${appId} and m.sender = c.sender and m.muid = c.muid) end as first_id
        from (${sendChecks(appId, { reply: options.reply })}) c
      ), parent as (
        select p.id from messages p where p.app_id = ${appId} and p.id = ${parentId}::bigint
      ), ok as (
        select f.* from f
        where f.refused is null and f.first_id is null and (${parentId}::bigint is null or exists (select 1 from parent))
      ), ins as (
        insert into messages (app_id, conversation_id, sender, receiver, receiver_type, category, type, data, tags,
                              mentioned_uids, muid, parent_id, sent_at, shown, held)
        select ${appId}, ok.conversation_id, ok.sender, ok.receiver, ok.receiver_type, ok.category, ok.type, ok.data,
               ${message.tags}::text[], ${message.mentionedUids}::text[], ok.muid, ${parentId}::bigint, clock_timestamp(),
               ${message.shown ?? null}::text, true
        from ok
        returning id, sent_at, conversation_id
      ), blocked as (
        insert into moderation_blocked_messages (app_id, message_id, rule_id, rule_name, revision_id, condition, action, kind)
        select ${appId}, ins.id, ${heldBy.ruleId}, ${heldBy.ruleName}, ${heldBy.revisionId},
               ${heldBy.condition === null ? null : JSON.stringify(heldBy.condition)}::jsonb, ${JSON.stringify(heldBy.action)}::jsonb, ${heldBy.kind}
        from ins
      ), counted as (${countMessageChange(appId, sql`select conversation_id from ins`)}
      ), ev as (
        insert into events (app_id, trigger, conversation_id, message_id, data)
        select ${appId}, 'moderation_engine_blocked', ins.conversation_id, ins.id, ${JSON.stringify(eventData)}::json from ins
      )
      select f.sender_row, f.receiver_row, f.group_row, f.sender_blocked_receiver, f.receiver_blocked_sender,
             f.is_member, f.is_banned, f.member_scope, f.denied_by, f.refused, f.first_id::text as first_id,
             ins.id::text as id, ins.sent_at::text as at, exists (select 1 from parent) as parent_found
      from f left join ins on true`.execute(tx);
    const found = result.rows[0]!;
    const outcome: HeldOutcome = { facts: sendFactsOf(found, message.receiverType), parentFound: parentId === null || found.parent_found };
    if (found.first_id !== null) outcome.firstId = found.first_id;
    if (found.id !== null && found.at !== null) {
      const row = storedRow(appId, message, found.id, parseTimestamptz(found.at));
      row.held = true;
      row.parent_id = parentId;
      outcome.row = row;
    }
    return outcome;
  }

  /**
   * Puts held messages of one conversation into it, in the caller's transaction (rows locked by
   * the caller: see HoldsService.lock): the conversation created or locked, then one statement that
   * shows them (their data replaced where given), moves the conversation's last message forward
   * to the newest (never back), creates the sides of a 1:1 conversation that had no message
   * shown yet, counts a reply on its parent, and records the events of those that ask for them.
   * Answers the rows released, in id order.
   */
  async release(appId: string, conversationId: string, receiverType: 'user' | 'group', released: Released[], tx: Executor): Promise<MessageRow[]> {
    if (released.length === 0) return [];
    await lockConversations(appId, sql`select ${conversationId}::text, ${receiverType}::text, clock_timestamp(), clock_timestamp()`).execute(tx);
    const records = JSON.stringify(released.map((r) => ({ id: r.id, data: r.dataJson === null ? null : JSON.parse(r.dataJson), events: r.events })));
    const result = await sql<MessageRow>`
      with r as (
        select * from json_to_recordset(${records}::json) as r (id bigint, data json, events boolean)
      ), before as (
        select c.last_message_id from conversations c where c.app_id = ${appId} and c.conversation_id = ${conversationId}
      ), rel as (
        update messages m set held = false, data = coalesce(r.data, m.data)
        from r
        where m.app_id = ${appId} and m.id = r.id and m.conversation_id = ${conversationId} and m.held
        returning m.*, r.events
      ), last as (${moveLastMessage(appId, sql`select conversation_id, receiver_type, id, sent_at from rel`)}
      ), sides as (${createSides(
        appId,
        sql`select rel.conversation_id, rel.sender, rel.receiver from rel
            where rel.receiver_type = 'user' and (select last_message_id from before) is null`,
      )}
      ), parent as (
        update messages p set reply_count = p.reply_count + 1
        from rel where p.app_id = ${appId} and p.id = rel.parent_id
      ), ev as (${recordMessageEvents(
        appId,
        sql`select conversation_id, id, category, type, case when category = 'action' then data->>'action' end,
                   cardinality(mentioned_uids) > 0, false
            from rel where rel.events`,
      )}
      )
      select * from rel order by id`.execute(tx);
    return result.rows.map(withoutEvents);
  }

  /**
   * Hides shown messages of one conversation, in the caller's transaction (rows locked by the
   * caller): held again (their data replaced where given), a reply uncounted on its parent, then
   * the conversation's last message moved back to the newest shown (its own statement, which sees
   * them held). Answers the rows withheld.
   */
  async withhold(appId: string, conversationId: string, withheld: Array<{ id: string; dataJson: string | null }>, tx: Executor): Promise<MessageRow[]> {
    if (withheld.length === 0) return [];
    const records = JSON.stringify(withheld.map((w) => ({ id: w.id, data: w.dataJson === null ? null : JSON.parse(w.dataJson) })));
    const result = await sql<MessageRow>`
      with r as (
        select * from json_to_recordset(${records}::json) as r (id bigint, data json)
      ), w as (
        update messages m set held = true, data = coalesce(r.data, m.data)
        from r
        where m.app_id = ${appId} and m.id = r.id and m.conversation_id = ${conversationId} and not m.held
        returning m.*
      ), parent as (
        update messages p set reply_count = greatest(p.reply_count - 1, 0)
        from w where p.app_id = ${appId} and p.id = w.parent_id
      )
      select * from w order by id`.execute(tx);
    const ids = result.rows.map((row) => String(row.id));
    await moveLastMessageBack(appId, [conversationId], ids).execute(tx);
    return result.rows;
  }

  /** Where a message is (its conversation), read without a lock: what to lock first. */
  async find(appId: string, id: string, tx: Executor): Promise<Pick<MessageRow, 'conversation_id' | 'receiver_type'> | undefined> {
    const result = await sql<Pick<MessageRow, 'conversation_id' | 'receiver_type'>>`
      select conversation_id, receiver_type from messages where app_id = ${appId} and id = ${id}::bigint`.execute(tx);
    return result.rows[0];
  }

  /**
   * A message and the action messages about it (its edits and deletes) that are held, or with
   * `held: false` shown, row-locked until the transaction ends, the message first; the caller has
   * locked the conversation. Undefined when there is no such message.
   */
  async lockWithActions(appId: string, id: string, options: { held: boolean }, tx: Executor): Promise<{ message: MessageRow; actions: MessageRow[] } | undefined> {
    const message = (
      await sql<MessageRow>`
      select * from messages where app_id = ${appId} and id = ${id}::bigint for no key update`.execute(tx)
    ).rows[0];
    if (!message) return undefined;
    const actions = await sql<MessageRow>`
      select a.* from (select ${message.conversation_id}::text as conversation_id, ${id}::bigint as id) as c, messages a
      where a.app_id = ${appId} and ${sql.raw(conversationMessages('a', 'c.conversation_id', { after: 'c.id' }))} and a.held = ${options.held}
        and a.category = 'action' and a.type = 'message' and a.data->'entities'->'on'->'entity'->>'id' = ${id}
      ${sql.raw(conversationMessagesOrder('a', 'asc'))}
      for no key update of a`.execute(tx);
    return { message, actions: actions.rows };
  }

  /** A held message's data replaced (its moderation status), in the caller's transaction. */
  async setData(appId: string, id: string, dataJson: string, tx: Executor): Promise<void> {
    await sql`update messages set data = ${dataJson}::json where app_id = ${appId} and id = ${id}::bigint`.execute(tx);
  }
}

/**
 * Stores an action message about a held message (its sender's edit or delete of it) held as well,
 * in the caller's transaction: out of the conversation, no events, the change counted on the
 * conversation's pages. Released with its message (HeldMessagesRepository.release). The message
 * store's `store` calls it for a NewMessage marked `held`.
 */
export async function storeHeldAction(appId: string, message: NewMessage, tx: Executor): Promise<MessageRow> {
  const result = await sql<MessageRow>`
    with ins as (
      insert into messages (app_id, conversation_id, sender, receiver, receiver_type, category, type, data, tags, mentioned_uids, sent_at, held)
      select ${appId}, ${message.conversationId}, ${message.sender}, ${message.receiver}, ${message.receiverType}, ${message.category},
             ${message.type}, ${message.dataJson}::json, ${message.tags}::text[], ${message.mentionedUids}::text[], clock_timestamp(), true
      returning *
    ), counted as (${countMessageChange(appId, sql`select conversation_id from ins`)})
    select * from ins`.execute(tx);
  return result.rows[0]!;
}

/** A released row without the `events` column the statement carried. */
function withoutEvents(row: MessageRow & { events?: boolean }): MessageRow {
  delete row.events;
  return row;
}
