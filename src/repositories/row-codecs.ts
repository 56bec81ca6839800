import type { Selectable } from 'kysely';
import type { ConversationStatesTable, MessagesTable } from '../db/schema.js';
import type { GroupRow } from './groups.repository.js';
import { jsonRowCodec } from './json-rows.js';

/** A message's columns; its stored text (`shown`) is read by history pages alone (message-pages.repository.ts). */
export type MessageRow = Omit<Selectable<MessagesTable>, 'shown'>;
export type ConversationStateRow = Selectable<ConversationStatesTable>;

// Rows read as JSON arrays inside larger statements (see json-rows.ts): history pages, conversation lists, sends.
export const MESSAGE_ROW = jsonRowCodec<MessageRow>({
  app_id: 'value',
  id: 'bigint',
  conversation_id: 'value',
  sender: 'value',
  receiver: 'value',
  receiver_type: 'value',
  category: 'value',
  type: 'value',
  data: 'value',
  tags: 'value',
  mentioned_uids: 'value',
  muid: 'value',
  parent_id: 'bigint',
  reply_count: 'value',
  sent_at: 'timestamp',
  updated_at: 'timestamp',
  edited_at: 'timestamp',
  edited_by: 'value',
  deleted_at: 'timestamp',
  deleted_by: 'value',
  delivered_at: 'timestamp',
  read_at: 'timestamp',
  held: 'value',
});
export const GROUP_ROW = jsonRowCodec<GroupRow>({
  app_id: 'value',
  guid: 'value',
  name: 'value',
  type: 'value',
  password_hash: 'value',
  icon: 'value',
  description: 'value',
  metadata: 'value',
  tags: 'value',
  owner: 'value',
  members_count: 'value',
  created_at: 'timestamp',
  updated_at: 'timestamp',
});
export const STATE_ROW = jsonRowCodec<ConversationStateRow>({
  app_id: 'value',
  uid: 'value',
  conversation_id: 'value',
  delivered_message_id: 'bigint',
  delivered_at: 'timestamp',
  read_message_id: 'bigint',
  read_at: 'timestamp',
  cleared_message_id: 'bigint',
  tags: 'value',
  updated_at: 'timestamp',
});
