import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../db/transaction.js';
import type { MessageRow, NewMessage } from '../messages.repository.js';
import { createSides, drawIdsUnderLock, lockConversations, moveLastMessage } from './conversation-moves.js';
import { storeHeldAction } from './held-messages.repository.js';
import { recordMessageEvents } from './message-events.js';

/** A stored message (CTE `msg`) as recordMessageEvents reads it. */
function storedEventsOfMsg(message: NewMessage): RawBuilder<unknown> {
  return sql`select msg.conversation_id, msg.id, msg.category, msg.type,
                    case when msg.category = 'action' then msg.data->>'action' end, cardinality(msg.mentioned_uids) > 0,
                    ${message.moderated === true}::boolean
             from msg`;
}

/** Messages stored one statement at a time: a thread reply, an action message, the action messages of one group change. */
export class MessageStoreRepository {
  constructor(private readonly db: Executor) {}

  /**
   * Stores a message in its conversation in ONE statement (conversation-moves.ts, one message
   * per conversation): the conversation is created or locked and the message's id drawn under
   * its lock, each side of a new 1:1 is created, the message is inserted with that id and the
   * conversation's time, with its events (message-events.ts), and a reply is counted on its
   * parent. Alone it is atomic (no transaction needed); it also runs inside a caller's
   * transaction. A muid the sender used
   * before raises UniqueViolation, and nothing is written.
   */
  async store(appId: string, message: NewMessage, tx: Executor = this.db): Promise<{ row: MessageRow; parentFound: boolean }> {
    // An action message about a held message is held with it, out of the conversation.
    if (message.held) return { row: await storeHeldAction(appId, message, tx), parentFound: true };
    const parentId = message.parentId ?? null;
    const result = await sql<MessageRow & { parent_found: boolean }>`
      with conv as (${drawIdsUnderLock(appId, sql`select ${message.conversationId}::text, ${message.receiverType}::text`)}
      ), sides as (${createSides(
        appId,
        sql`select ${message.conversationId}::text, ${message.sender}::text, ${message.receiver}::text
            from conv where conv.created and ${message.receiverType}::text = 'user'`,
      )}
      ), parent as (
        update messages set reply_count = reply_count + 1
        where app_id = ${appId} and id = ${parentId}::bigint
        returning id
      ), msg as (
        insert into messages (app_id, id, conversation_id, sender, receiver, receiver_type, category, type, data, tags,
                              mentioned_uids, muid, parent_id, sent_at, shown)
        overriding system value
        select ${appId}, conv.id, ${message.conversationId}, ${message.sender}, ${message.receiver}, ${message.receiverType},
               ${message.category}, ${message.type}, ${message.dataJson}::json, ${message.tags}::text[],
               ${message.mentionedUids}::text[], ${message.muid}, ${parentId}::bigint, conv.at, ${message.shown ?? null}::text
        from conv
        returning *
      ), ev as (${recordMessageEvents(appId, storedEventsOfMsg(message))}
      )
      select msg.*, exists (select 1 from parent) as parent_found from msg`.execute(tx);
    const { parent_found: parentFound, ...row } = result.rows[0]!;
    return { row, parentFound };
  }

  /**
   * Stores several messages of one group conversation, in order, inside the caller's
   * transaction (conversation-moves.ts, many messages per conversation): the conversation is
   * created or locked, then one statement inserts the messages, with ids in their order and one
   * time, taken under the lock, and moves the conversation's last message to the newest. For action
   * messages of one change (no muid, no thread).
   */
  async storeManyInGroup(appId: string, guid: string, conversationId: string, messages: Array<Pick<NewMessage, 'sender' | 'category' | 'type' | 'dataJson'>>, tx: Executor): Promise<MessageRow[]> {
    await lockConversations(appId, sql`select ${conversationId}::text, 'group', clock_timestamp(), clock_timestamp()`).execute(tx);
    // data is already JSON text: spliced in as is, keeping its key order.
    const records = messages.map((message, n) => `${JSON.stringify({ n, sender: message.sender, category: message.category, type: message.type }).slice(0, -1)},"data":${message.dataJson}}`);
    const inserted = await sql<MessageRow>`
      with ins as (
        insert into messages (app_id, conversation_id, sender, receiver, receiver_type, category, type, data, sent_at)
        select ${appId}, ${conversationId}, r.sender, ${guid}, 'group', r.category, r.type, r.data, now.at
        from json_to_recordset(${`[${records.join(',')}]`}::json) as r(n int, sender text, category text, type text, data json),
             (select clock_timestamp() as at) as now
        order by r.n
        returning *
      ), ev as (${recordMessageEvents(appId, sql`select conversation_id, id, category, type, data->>'action', cardinality(mentioned_uids) > 0, false from ins`)}
      ), last as (${moveLastMessage(appId, sql`select conversation_id, receiver_type, id, sent_at from ins`)})
      select * from ins`.execute(tx);
    return inserted.rows.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
  }
}
