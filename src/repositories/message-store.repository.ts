import { sql } from 'kysely';
import type { Executor } from '../db/transaction.js';
import { type MessageRow } from './row-codecs.js';

import type { NewMessage } from './messages.repository.js';

/** Messages stored one statement at a time: a thread reply, an action message, the action messages of one group change. */
export class MessageStoreRepository {
  constructor(private readonly db: Executor) {}

  /**
   * Stores a message in its conversation in ONE statement: the conversation row is upserted
   * (created by its first message, with each side of a 1:1) and the message's id drawn while
   * that row is locked, so the ids of one conversation follow commit order; the message is
   * inserted with that id and the conversation's time, and a reply is counted on its parent.
   * Alone it is atomic (no transaction needed); it also runs inside a caller's transaction.
   * A muid the sender used before raises UniqueViolation, and nothing is written.
   */
  async store(appId: string, message: NewMessage, tx: Executor = this.db): Promise<{ row: MessageRow; parentFound: boolean }> {
    const parentId = message.parentId ?? null;
    const result = await sql<MessageRow & { parent_found: boolean }>`
      with conv as (
        insert into conversations as c (app_id, conversation_id, conversation_type, last_message_id, updated_at)
        values (${appId}, ${message.conversationId}, ${message.receiverType}, nextval(pg_get_serial_sequence('messages', 'id')), clock_timestamp())
        on conflict (app_id, conversation_id) do update
          set last_message_id = nextval(pg_get_serial_sequence('messages', 'id')), updated_at = clock_timestamp()
        returning c.last_message_id as id, c.updated_at as at, (xmax = 0) as created
      ), sides as (
        insert into user_conversations (app_id, uid, conversation_id, conversation_with)
        select ${appId}, side.uid, ${message.conversationId}, side.other
        from conv, (values (${message.sender}::text, ${message.receiver}::text), (${message.receiver}::text, ${message.sender}::text)) as side (uid, other)
        where conv.created and ${message.receiverType}::text = 'user'
        on conflict do nothing
      ), parent as (
        update messages set reply_count = reply_count + 1
        where app_id = ${appId} and id = ${parentId}::bigint
        returning id
      ), msg as (
        insert into messages (app_id, id, conversation_id, sender, receiver, receiver_type, category, type, data, tags,
                              mentioned_uids, muid, parent_id, sent_at)
        overriding system value
        select ${appId}, conv.id, ${message.conversationId}, ${message.sender}, ${message.receiver}, ${message.receiverType},
               ${message.category}, ${message.type}, ${message.dataJson}::json, ${message.tags}::text[],
               ${message.mentionedUids}::text[], ${message.muid}, ${parentId}::bigint, conv.at
        from conv
        returning *
      )
      select msg.*, exists (select 1 from parent) as parent_found from msg`.execute(tx);
    const { parent_found: parentFound, ...row } = result.rows[0]!;
    return { row, parentFound };
  }

  /**
   * Stores several messages of one group conversation, in order, inside the caller's
   * transaction: as `store` does for one, the conversation row is locked first, so the ids
   * follow commit order; then one multi-row INSERT, and the conversation's last message moves
   * to the newest. For action messages of one change (no muid, no thread).
   */
  async storeManyInGroup(
    appId: string,
    guid: string,
    conversationId: string,
    messages: Array<Pick<NewMessage, 'sender' | 'category' | 'type' | 'dataJson'>>,
    tx: Executor,
  ): Promise<MessageRow[]> {
    // data is already JSON text: spliced in as is, keeping its key order.
    const records = messages.map(
      (message, n) => `${JSON.stringify({ n, sender: message.sender, category: message.category, type: message.type }).slice(0, -1)},"data":${message.dataJson}}`,
    );
    const inserted = await sql<MessageRow>`
      with conv as (
        insert into conversations as c (app_id, conversation_id, conversation_type, updated_at)
        values (${appId}, ${conversationId}, 'group', clock_timestamp())
        on conflict (app_id, conversation_id) do update set updated_at = clock_timestamp()
        returning c.updated_at as at
      )
      insert into messages (app_id, conversation_id, sender, receiver, receiver_type, category, type, data, sent_at)
      select ${appId}, ${conversationId}, r.sender, ${guid}, 'group', r.category, r.type, r.data, conv.at
      from conv, json_to_recordset(${`[${records.join(',')}]`}::json) as r(n int, sender text, category text, type text, data json)
      order by r.n
      returning *`.execute(tx);
    const rows = inserted.rows.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
    await tx
      .updateTable('conversations')
      .set({ last_message_id: rows[rows.length - 1]!.id })
      .where('app_id', '=', appId)
      .where('conversation_id', '=', conversationId)
      .execute();
    return rows;
  }

}
