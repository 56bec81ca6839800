import { sql } from 'kysely';
import type { ReceiverType } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import type { GroupRow } from '../groups.repository.js';
import type { MessageRow, NewMessage } from '../messages.repository.js';
import { anyOf } from '../sql-helpers.js';
import { createSides, lockConversations, moveLastMessage } from './conversation-moves.js';
import { recordMessageEvents } from './message-events.js';
import { storedRow, textArray } from './message-rows.js';

/** A message to insert in bulk (an imported one), with its muid, place in the history and receipts. */
export interface BulkMessage extends Omit<NewMessage, 'parentId' | 'muid'> {
  muid: string;
  sentAt: Date;
  deliveredAt: Date | null;
  readAt: Date | null;
}

/** The data import's messages, a chunk at a time, in the import's transaction. */
export class MessageImportsRepository {
  constructor(private readonly db: Executor) {}

  /** The groups of these guids that exist, locked against deletion until the transaction ends (in guid order). */
  async lockExistingGroups(appId: string, guids: string[], tx: Executor = this.db): Promise<GroupRow[]> {
    if (guids.length === 0) return [];
    return tx.selectFrom('groups').selectAll().where('app_id', '=', appId).where('guid', '=', anyOf(guids)).orderBy('guid').forKeyShare().execute();
  }

  /**
   * Inserts the messages, given in history order (sentAt, then the order sent): their ids are
   * drawn in that order (conversation-moves.ts, many messages per conversation). First the
   * conversations are created or row-locked, in key order (so concurrent importers cannot
   * deadlock, and a live send to one of them waits). Then one statement inserts the messages (a
   * sender's muid imported before is skipped), moves each conversation's last message, creates
   * the sides of the 1:1 conversations it created, and moves the receipt watermarks of the
   * readers (a 1:1 message's receiver; a group message's members) up to the newest message
   * imported as delivered or read. Answers the stored row of
   * each message, at its index (undefined for one skipped), made from the input and the ids the
   * database returns (only those travel back). With `recordEvents` the statement records the
   * messages' events as a send does; an import records none by default (docs/webhooks.md).
   */
  async insertMany(appId: string, messages: BulkMessage[], tx: Executor, options: { recordEvents?: boolean } = {}): Promise<Array<MessageRow | undefined>> {
    if (messages.length === 0) return [];
    // A conversation's times: of its first and last imported message.
    const conversations = new Map<string, { conversation_id: string; conversation_type: ReceiverType; first_at: Date; last_at: Date }>();
    // The messages travel as one array per column (PostgreSQL reads array literals at about twice
    // the speed of the same records as JSON); data as one JSON array of the texts as sent.
    const columns = {
      conversationId: [] as string[],
      sender: [] as string[],
      receiver: [] as string[],
      receiverType: [] as string[],
      category: [] as string[],
      type: [] as string[],
      data: [] as string[],
      tags: [] as Array<string | null>,
      mentioned: [] as Array<string | null>,
      muid: [] as string[],
      sentAt: [] as number[],
      deliveredAt: [] as Array<number | null>,
      readAt: [] as Array<number | null>,
      shown: [] as Array<string | null>,
    };
    for (const message of messages) {
      const known = conversations.get(message.conversationId);
      if (!known) {
        conversations.set(message.conversationId, {
          conversation_id: message.conversationId,
          conversation_type: message.receiverType,
          first_at: message.sentAt,
          last_at: message.sentAt,
        });
      } else if (message.sentAt > known.last_at) known.last_at = message.sentAt;
      columns.conversationId.push(message.conversationId);
      columns.sender.push(message.sender);
      columns.receiver.push(message.receiver);
      columns.receiverType.push(message.receiverType);
      columns.category.push(message.category);
      columns.type.push(message.type);
      columns.data.push(message.dataJson);
      columns.tags.push(message.tags.length ? JSON.stringify(message.tags) : null);
      columns.mentioned.push(message.mentionedUids.length ? JSON.stringify(message.mentionedUids) : null);
      columns.muid.push(message.muid);
      columns.sentAt.push(message.sentAt.getTime() / 1000);
      columns.deliveredAt.push(message.deliveredAt === null ? null : message.deliveredAt.getTime() / 1000);
      columns.readAt.push(message.readAt === null ? null : message.readAt.getTime() / 1000);
      columns.shown.push(message.shown ?? null);
    }
    const ordered = [...conversations.values()].sort((a, b) => (a.conversation_id < b.conversation_id ? -1 : 1));
    const upserted = await lockConversations(
      appId,
      sql`select r.conversation_id, r.conversation_type, r.first_at, r.last_at
          from json_to_recordset(${JSON.stringify(ordered)}::json) as r(conversation_id text, conversation_type text, first_at timestamptz, last_at timestamptz)`,
    ).execute(tx);
    const created = upserted.rows.map((row) => row.conversation_id);

    const inserted = await sql<{ inserted: string[] | Array<[string, string, string]> | null }>`
      with r as (
        select * from rows from (
          unnest(${arrayLiteral(columns.conversationId)}::text[]), unnest(${arrayLiteral(columns.sender)}::text[]),
          unnest(${arrayLiteral(columns.receiver)}::text[]), unnest(${arrayLiteral(columns.receiverType)}::text[]),
          unnest(${arrayLiteral(columns.category)}::text[]), unnest(${arrayLiteral(columns.type)}::text[]),
          json_array_elements(${`[${columns.data.join(',')}]`}::json),
          unnest(${arrayLiteral(columns.tags)}::json[]),
          unnest(${arrayLiteral(columns.mentioned)}::json[]),
          unnest(${arrayLiteral(columns.muid)}::text[]),
          unnest(${arrayLiteral(columns.sentAt)}::float8[]),
          unnest(${arrayLiteral(columns.deliveredAt)}::float8[]),
          unnest(${arrayLiteral(columns.readAt)}::float8[]),
          json_array_elements_text(${JSON.stringify(columns.shown)}::json)
        ) with ordinality as r(conversation_id, sender, receiver, receiver_type, category, type, data, tags, mentioned_uids, muid,
                               sent_at, delivered_at, read_at, shown, n)
      ), ins as (
        insert into messages (app_id, conversation_id, sender, receiver, receiver_type, category, type, data, tags, mentioned_uids,
                              muid, sent_at, delivered_at, read_at, shown)
        select ${appId}, r.conversation_id, r.sender, r.receiver, r.receiver_type, r.category, r.type, r.data,
               ${textArray(sql`r.tags`)}, ${textArray(sql`r.mentioned_uids`)},
               r.muid, to_timestamp(r.sent_at), to_timestamp(r.delivered_at), to_timestamp(r.read_at), r.shown
        from r order by r.n
        on conflict (app_id, sender, muid) where muid is not null do nothing
        returning id, conversation_id, sender, receiver, receiver_type, muid, sent_at, delivered_at, read_at, category, type, mentioned_uids
      ), ev as (${
        options.recordEvents
          ? // Asked for (docs/webhooks.md): message_sent (and user_mentioned) as a send records them.
            recordMessageEvents(appId, sql`select conversation_id, id, category, type, null::text, coalesce(cardinality(mentioned_uids), 0) > 0, false from ins`)
          : sql`select 1`
      }
      ), last as (${moveLastMessage(appId, sql`select conversation_id, receiver_type, id, sent_at from ins`)}
      ), sides as (${createSides(appId, sql`select conversation_id, sender, receiver from ins where receiver_type = 'user' and conversation_id = any(${created}::text[])`)}
      ), received as (
        -- Per conversation: the newest message delivered and the newest read, with their times.
        select ins.receiver_type, ins.receiver, ins.conversation_id,
               max(ins.id) filter (where ins.delivered_at is not null) as delivered_id, max(ins.delivered_at) as delivered_at,
               max(ins.id) filter (where ins.read_at is not null) as read_id, max(ins.read_at) as read_at
        from ins where ins.delivered_at is not null
        group by ins.receiver_type, ins.receiver, ins.conversation_id
      ), readers as (
        select received.receiver as uid, received.* from received where received.receiver_type = 'user'
        union all
        select m.uid, received.* from received
        join group_members m on m.app_id = ${appId} and m.guid = received.receiver
        where received.receiver_type = 'group'
      ), marks as (
        insert into conversation_states as s (app_id, uid, conversation_id, delivered_message_id, delivered_at, read_message_id, read_at)
        select ${appId}, readers.uid, readers.conversation_id, readers.delivered_id, readers.delivered_at, readers.read_id, readers.read_at
        from readers
        on conflict (app_id, uid, conversation_id) do update set
          delivered_message_id = greatest(s.delivered_message_id, excluded.delivered_message_id),
          delivered_at = case when excluded.delivered_message_id > coalesce(s.delivered_message_id, 0) then excluded.delivered_at else s.delivered_at end,
          read_message_id = greatest(s.read_message_id, excluded.read_message_id),
          read_at = case when excluded.read_message_id > coalesce(s.read_message_id, 0) then excluded.read_at else s.read_at end,
          updated_at = now()
      )
      -- What travels back: the inserted messages' ids, in id order. They were drawn in input
      -- order, so when all were inserted the n-th id is the n-th message's; otherwise each comes
      -- with the sender and muid that find its message. (CASE runs only the subquery it needs.)
      select case when (select count(*) from ins) = ${messages.length} then (select json_agg(id::text order by id) from ins)
                  else (select json_agg(json_build_array(id::text, sender, muid)) from ins) end as inserted`.execute(tx);
    const answered = inserted.rows[0]?.inserted ?? [];
    const ids: Array<string | undefined> = new Array(messages.length);
    if (answered.length === messages.length) (answered as string[]).forEach((id, n) => (ids[n] = id));
    else {
      const byKey = new Map((answered as Array<[string, string, string]>).map(([id, sender, muid]) => [`${sender}\u0000${muid}`, id]));
      messages.forEach((message, n) => (ids[n] = byKey.get(`${message.sender}\u0000${message.muid}`)));
    }
    const kept = new Set<string>();
    const rows = messages.map((message, n) => {
      const id = ids[n];
      if (id === undefined) return undefined;
      kept.add(message.conversationId);
      return storedRow(appId, message, id, message.sentAt, { deliveredAt: message.deliveredAt, readAt: message.readAt });
    });
    // A conversation created here whose every message was a muid used before is taken back
    // (rare: only then is there a statement for it).
    const emptied = created.filter((id) => !kept.has(id));
    if (emptied.length > 0) {
      await tx.deleteFrom('conversations').where('app_id', '=', appId).where('conversation_id', 'in', emptied).execute();
    }
    return rows;
  }
}

/**
 * A PostgreSQL array literal of these values (NULL for null), for a parameter cast to an array
 * type: built here because the driver escapes every element, where ids and numbers rarely need it.
 */
function arrayLiteral(values: ReadonlyArray<string | number | null>): string {
  const elements = values.map((value) => {
    if (value === null) return 'NULL';
    if (typeof value === 'number') return String(value);
    return `"${NEEDS_ESCAPE.test(value) ? value.replace(ESCAPE, '\\$&') : value}"`;
  });
  return `{${elements.join(',')}}`;
}
const NEEDS_ESCAPE = /["\\]/;
const ESCAPE = /["\\]/g;
