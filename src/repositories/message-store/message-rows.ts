import { sql, type RawBuilder } from 'kysely';
import type { MessageRow, NewMessage } from '../messages.repository.js';

// What every coalesced or bulk message insert shares: tags and mentions read from JSON, and the
// row of a message just stored, made from what was sent and the ids the database drew.

/** A json column of tags or mentions (see sendRecord) as text[]. */
export function textArray(column: RawBuilder<unknown>): RawBuilder<string[]> {
  return sql<string[]>`case when ${column} is null then '{}'::text[] else array(select json_array_elements_text(${column})) end`;
}

/** A message's own columns, as the table names them. */
export function columnsOf(message: Omit<NewMessage, 'parentId'>) {
  return {
    conversation_id: message.conversationId,
    sender: message.sender,
    receiver: message.receiver,
    receiver_type: message.receiverType,
    category: message.category,
    type: message.type,
  };
}

/** The row of a message just stored, made from what was sent and what the database drew. */
export function storedRow(
  appId: string,
  message: Omit<NewMessage, 'parentId'>,
  id: string,
  sentAt: Date,
  receipts: { deliveredAt: Date | null; readAt: Date | null } = { deliveredAt: null, readAt: null },
): MessageRow {
  return {
    app_id: appId,
    id,
    ...columnsOf(message),
    data: message.data ?? (JSON.parse(message.dataJson) as unknown),
    tags: message.tags,
    mentioned_uids: message.mentionedUids,
    muid: message.muid,
    parent_id: null,
    reply_count: 0,
    sent_at: sentAt,
    updated_at: null,
    edited_at: null,
    edited_by: null,
    deleted_at: null,
    deleted_by: null,
    delivered_at: receipts.deliveredAt,
    read_at: receipts.readAt,
    held: false,
  };
}
