import { sql } from 'kysely';
import type { ReceiverType } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';
import { visibleTo } from './message-visibility.js';
import type { MessageRow } from './row-codecs.js';
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
  /** The moderation engine evaluated it and let it through: its event moderation_engine_approved is recorded with it. */
  moderated?: boolean;
  /**
   * Stored held for moderation review, out of its conversation (held-messages.repository.ts): an
   * action message about a held message (an edit or delete of it by its sender).
   */
  held?: boolean;
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
    return tx
      .selectFrom('messages')
      .selectAll()
      .where('app_id', '=', appId)
      .where('id', '=', id as never)
      .executeTakeFirst();
  }

  /**
   * The message as `viewer` sees it (message-visibility.ts): undefined when unknown or held from
   * them. Without a viewer (undefined), as the app sees it: no held message.
   */
  async getVisible(appId: string, id: string, viewer: string | undefined, tx: Executor = this.db): Promise<MessageRow | undefined> {
    return (await this.getManyVisible(appId, [id], viewer, tx))[0];
  }

  /** getVisible for many ids; unknown or held ones are absent. */
  async getManyVisible(appId: string, ids: string[], viewer: string | undefined, tx: Executor = this.db): Promise<MessageRow[]> {
    if (ids.length === 0) return [];
    const result = await sql<MessageRow>`
      select m.* from messages m, (select ${viewer ?? null}::text as uid) as v
      where m.app_id = ${appId} and m.id = any(${ids}::bigint[]) and ${sql.raw(visibleTo('m', 'v.uid'))}`.execute(tx);
    return result.rows;
  }

  /** Messages by id (e.g. the last messages of a page of conversations); unknown ids are absent. */
  async getMany(appId: string, ids: string[], tx: Executor = this.db): Promise<MessageRow[]> {
    if (ids.length === 0) return [];
    return tx
      .selectFrom('messages')
      .selectAll()
      .where('app_id', '=', appId)
      .where('id', 'in', ids as never[])
      .execute();
  }

  async getByMuid(appId: string, sender: string, muid: string, tx: Executor = this.db): Promise<MessageRow | undefined> {
    return tx.selectFrom('messages').selectAll().where('app_id', '=', appId).where('sender', '=', sender).where('muid', '=', muid).executeTakeFirst();
  }

  /**
   * A message, row-locked until the transaction ends: its writers (e.g. of its reactions) take
   * turns. With `viewer` (its uid, or null for the app), only as getVisible would find it.
   */
  async getForUpdate(appId: string, id: string, tx: Executor, viewer?: string | null): Promise<MessageRow | undefined> {
    if (viewer === undefined) {
      return tx
        .selectFrom('messages')
        .selectAll()
        .where('app_id', '=', appId)
        .where('id', '=', id as never)
        .forNoKeyUpdate()
        .executeTakeFirst();
    }
    const result = await sql<MessageRow>`
      select m.* from messages m, (select ${viewer}::text as uid) as v
      where m.app_id = ${appId} and m.id = ${id}::bigint and ${sql.raw(visibleTo('m', 'v.uid'))}
      for no key update of m`.execute(tx);
    return result.rows[0];
  }

  /** An edit: new content, and who edited it when. */
  async edit(appId: string, id: string, edit: { dataJson: string; tags: string[]; mentionedUids: string[]; editedBy: string }, tx: Executor): Promise<MessageRow | undefined> {
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
          eb.and([eb('id', '>', id as never), eb('category', '=', 'action'), eb('type', '=', 'message'), eb(sql<string>`data->'entities'->'on'->'entity'->>'id'`, '=', id)]),
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

  /**
   * A page of a thread's replies as `viewer` sees them (message-visibility.ts; undefined: the
   * app), oldest first (threads are small: the vendor pages them by number).
   */
  async listReplies(appId: string, parentId: string, page: { offset: number; limit: number }, viewer: string | undefined, tx: Executor = this.db): Promise<MessageRow[]> {
    const result = await sql<MessageRow>`
      select m.* from messages m, (select ${viewer ?? null}::text as uid) as v
      where m.app_id = ${appId} and m.parent_id = ${parentId}::bigint and ${sql.raw(visibleTo('m', 'v.uid'))}
      order by m.id asc offset ${page.offset} limit ${page.limit}`.execute(tx);
    return result.rows;
  }
}
