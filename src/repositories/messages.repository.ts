import { sql } from 'kysely';
import type { ReceiverType } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';
import { type MessageRow } from './row-codecs.js';
import { sendChecks, sendFactsOf, type SendCheckRow, type SendFacts } from './send-checks.js';

export type { MessageRow } from './row-codecs.js';


export interface NewMessage {
  conversationId: string;
  sender: string;
  receiver: string;
  receiverType: ReceiverType;
  category: string;
  type: string;
  /** Already serialised JSON, so key order and bytes are kept. */
  dataJson: string;
  /** The same data as an object, when the caller has it: the stored row then takes it as is. */
  data?: Record<string, unknown>;
  tags: string[];
  mentionedUids: string[];
  muid: string | null;
  /** A thread reply: its parent's id. */
  parentId?: string;
  /** Its stored text (shownText, services/views/shown-messages.ts); absent or null: none. */
  shown?: string | null;
}

export class MessagesRepository {
  constructor(private readonly db: Executor) {}

  /**
   * What a send of `message` is checked against, and the first rule it breaks (send-checks.ts),
   * in one query: the same checks the batched send applies in its statement. A thread reply
   * passes `reply` (its permissions); a read that checks a membership passes `permissions: false`.
   */
  async sendFacts(
    appId: string,
    message: Pick<NewMessage, 'sender' | 'receiver' | 'receiverType'> & Partial<Pick<NewMessage, 'category' | 'type' | 'dataJson'>>,
    options: { reply: boolean; permissions?: boolean },
    tx: Executor = this.db,
  ): Promise<SendFacts> {
    const result = await sql<SendCheckRow>`
      with r as (
        select ${message.sender}::text as sender, ${message.receiver}::text as receiver, ${message.receiverType}::text as receiver_type,
               ${message.category ?? null}::text as category, ${message.type ?? null}::text as type, ${message.dataJson ?? null}::json as data
      )
      ${sendChecks(appId, options)}`.execute(tx);
    return sendFactsOf(result.rows[0]!, message.receiverType);
  }

  async get(appId: string, id: string, tx: Executor = this.db): Promise<MessageRow | undefined> {
    return tx.selectFrom('messages').selectAll().where('app_id', '=', appId).where('id', '=', id as never).executeTakeFirst();
  }

  /** Messages by id (e.g. the last messages of a page of conversations); unknown ids are absent. */
  async getMany(appId: string, ids: string[], tx: Executor = this.db): Promise<MessageRow[]> {
    if (ids.length === 0) return [];
    return tx.selectFrom('messages').selectAll().where('app_id', '=', appId).where('id', 'in', ids as never[]).execute();
  }

  async getByMuid(appId: string, sender: string, muid: string, tx: Executor = this.db): Promise<MessageRow | undefined> {
    return tx
      .selectFrom('messages')
      .selectAll()
      .where('app_id', '=', appId)
      .where('sender', '=', sender)
      .where('muid', '=', muid)
      .executeTakeFirst();
  }

  /** A message, row-locked until the transaction ends: its writers (e.g. of its reactions) take turns. */
  async getForUpdate(appId: string, id: string, tx: Executor): Promise<MessageRow | undefined> {
    return tx.selectFrom('messages').selectAll().where('app_id', '=', appId).where('id', '=', id as never).forNoKeyUpdate().executeTakeFirst();
  }

  /** An edit: new content, and who edited it when. */
  async edit(
    appId: string,
    id: string,
    edit: { dataJson: string; tags: string[]; mentionedUids: string[]; editedBy: string },
    tx: Executor,
  ): Promise<MessageRow | undefined> {
    return tx
      .updateTable('messages')
      .set({
        data: edit.dataJson,
        tags: edit.tags,
        mentioned_uids: edit.mentionedUids,
        edited_by: edit.editedBy,
        edited_at: sql<Date>`now()`,
        updated_at: sql<Date>`now()`,
      })
      .where('app_id', '=', appId)
      .where('id', '=', id as never)
      .returningAll()
      .executeTakeFirst();
  }

  /** A soft delete: the message stays, marked deleted. */
  async markDeleted(appId: string, id: string, deletedBy: string, tx: Executor): Promise<MessageRow | undefined> {
    return tx
      .updateTable('messages')
      .set({ deleted_by: deletedBy, deleted_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
      .where('app_id', '=', appId)
      .where('id', '=', id as never)
      .returningAll()
      .executeTakeFirst();
  }

  /**
   * A permanent delete: the message, and the edited/deleted action messages about it (they
   * carry its content), which come after it in its conversation. Returns the removed ids.
   */
  async deletePermanently(appId: string, conversationId: string, id: string, tx: Executor): Promise<string[]> {
    const rows = await tx
      .deleteFrom('messages')
      .where('app_id', '=', appId)
      .where('conversation_id', '=', conversationId)
      .where((eb) =>
        eb.or([
          eb('id', '=', id as never),
          eb.and([
            eb('id', '>', id as never),
            eb('category', '=', 'action'),
            eb('type', '=', 'message'),
            eb(sql<string>`data->'entities'->'on'->'entity'->>'id'`, '=', id),
          ]),
        ]),
      )
      .returning('id')
      .execute();
    return rows.map((row) => String(row.id));
  }

  /** Uncounts a permanently deleted reply on its parent. */
  async removeReply(appId: string, parentId: string, tx: Executor): Promise<void> {
    await tx
      .updateTable('messages')
      .set((eb) => ({ reply_count: eb('reply_count', '-', 1) }))
      .where('app_id', '=', appId)
      .where('id', '=', parentId as never)
      .where('reply_count', '>', 0)
      .execute();
  }

  /** A page of a thread's replies, oldest first (threads are small: the vendor pages them by number). */
  async listReplies(appId: string, parentId: string, page: { offset: number; limit: number }, tx: Executor = this.db): Promise<MessageRow[]> {
    return tx
      .selectFrom('messages')
      .selectAll()
      .where('app_id', '=', appId)
      .where('parent_id', '=', parentId)
      .orderBy('id', 'asc')
      .offset(page.offset)
      .limit(page.limit)
      .execute();
  }

}
