import { sql, type Selectable } from 'kysely';
import { translated } from '../db/driver-errors.js';
import type { MessagesTable, ReceiverType } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';
import { escapeLike } from './sql-helpers.js';

export type MessageRow = Selectable<MessagesTable>;

export interface NewMessage {
  conversationId: string;
  sender: string;
  receiver: string;
  receiverType: ReceiverType;
  category: string;
  type: string;
  /** Already serialised JSON, so key order and bytes are kept. */
  dataJson: string;
  tags: string[];
  mentionedUids: string[];
  muid: string | null;
  /** A thread reply: its parent's id. */
  parentId?: string;
}

/** What a message list keeps; every field narrows it. */
export interface MessageFilter {
  conversationId?: string;
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

export class MessagesRepository {
  constructor(private readonly db: Executor) {}

  /** Inserts a message; undefined when the sender already has a message with this muid. */
  async create(appId: string, message: NewMessage, tx: Executor = this.db): Promise<MessageRow | undefined> {
    const row = await translated(() =>
      tx
        .insertInto('messages')
        .values({
          app_id: appId,
          conversation_id: message.conversationId,
          sender: message.sender,
          receiver: message.receiver,
          receiver_type: message.receiverType,
          category: message.category,
          type: message.type,
          data: message.dataJson,
          tags: message.tags,
          mentioned_uids: message.mentionedUids,
          muid: message.muid,
          parent_id: message.parentId ?? null,
        })
        .onConflict((oc) => oc.columns(['app_id', 'sender', 'muid']).where('muid', 'is not', null).doNothing())
        .returningAll()
        .executeTakeFirst(),
    );
    return row;
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

  /** Counts a new reply on its parent; false when the parent is gone. */
  async addReply(appId: string, parentId: string, tx: Executor): Promise<boolean> {
    const row = await tx
      .updateTable('messages')
      .set((eb) => ({ reply_count: eb('reply_count', '+', 1) }))
      .where('app_id', '=', appId)
      .where('id', '=', parentId as never)
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
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

  /**
   * One keyset page of messages, oldest first, for every message list: `WHERE id > / < cursor
   * ORDER BY id LIMIT n`, never an offset, so a page costs the same anywhere in the history and
   * messages arriving between pages neither shift nor repeat what was read.
   */
  async list(appId: string, filter: MessageFilter, cursor: MessageCursor, tx: Executor = this.db): Promise<MessageRow[]> {
    let query = tx.selectFrom('messages').selectAll().where('app_id', '=', appId);
    if (filter.conversationId !== undefined) query = query.where('conversation_id', '=', filter.conversationId);
    if (filter.visibleTo !== undefined) {
      const uid = filter.visibleTo;
      // By receiver type too: a guid like `x_user_y` gives the same conversation id as uids `group_x` and `y`.
      query = query.where((eb) =>
        eb.or([
          eb.and([
            eb('receiver_type', '=', 'user'),
            eb('conversation_id', 'in', eb.selectFrom('user_conversations').select('conversation_id').where('app_id', '=', appId).where('uid', '=', uid)),
          ]),
          eb.and([
            eb('receiver_type', '=', 'group'),
            eb('receiver', 'in', eb.selectFrom('group_members').select('guid').where('app_id', '=', appId).where('uid', '=', uid)),
          ]),
        ]),
      );
    }
    if (filter.receiverType) query = query.where('receiver_type', '=', filter.receiverType);
    if (filter.categories?.length) query = query.where('category', 'in', filter.categories);
    if (filter.types?.length) query = query.where('type', 'in', filter.types);
    if (filter.senders?.length) query = query.where('sender', 'in', filter.senders);
    if (filter.tags?.length) query = query.where(sql<boolean>`tags && ${sql.val(filter.tags)}::text[]`);
    if (filter.sentAfter) query = query.where('sent_at', '>', filter.sentAfter);
    if (filter.sentBefore) query = query.where('sent_at', '<', filter.sentBefore);
    if (filter.sentFrom) query = query.where('sent_at', '>=', filter.sentFrom);
    if (filter.sentTo) query = query.where('sent_at', '<=', filter.sentTo);
    if (filter.hideReplies) query = query.where('parent_id', 'is', null);
    if (filter.deleted === 'hide') query = query.where('deleted_at', 'is', null);
    if (filter.deleted === 'only') query = query.where('deleted_at', 'is not', null);
    if (filter.searchKey) query = query.where(sql<boolean>`(data->>'text') ilike ${`%${escapeLike(filter.searchKey)}%`}`);
    if (filter.hasAttachments !== undefined) {
      const media = sql<boolean>`(category = 'message' and type in ('image', 'video', 'audio', 'file'))`;
      query = query.where(media, '=', filter.hasAttachments);
    }
    if (filter.mediaTypes?.length) query = query.where('category', '=', 'message').where('type', 'in', filter.mediaTypes);
    if (filter.hasMentions !== undefined) {
      query = query.where(sql<boolean>`(cardinality(mentioned_uids) > 0)`, '=', filter.hasMentions);
    }
    if (filter.mentioning?.length) query = query.where(sql<boolean>`mentioned_uids && ${sql.val(filter.mentioning)}::text[]`);
    if (filter.hasLinks !== undefined) {
      query = query.where(sql<boolean>`coalesce((data->>'text') ~* ${LINK}, false)`, '=', filter.hasLinks);
    }
    if (filter.hideSendersBlockedBy !== undefined) {
      const uid = filter.hideSendersBlockedBy;
      query = query.where('sender', 'not in', (eb) =>
        eb.selectFrom('blocked_users').select('blocked_uid').where('app_id', '=', appId).where('uid', '=', uid),
      );
    }
    if (filter.hasReactions !== undefined) {
      const reacted = sql<boolean>`exists (select 1 from message_reactions r where r.app_id = ${appId} and r.message_id = messages.id)`;
      query = query.where(reacted, '=', filter.hasReactions);
    }
    // Marks of conversation_states (0007), read per row of this conversation's state.
    const afterMark = (uid: string, marks: Array<'cleared' | 'read' | 'delivered'>) =>
      sql<boolean>`messages.id > coalesce((select greatest(${sql.join(marks.map((mark) => sql`coalesce(s.${sql.ref(`${mark}_message_id`)}, 0)`))}) from conversation_states s where s.app_id = ${appId} and s.uid = ${uid} and s.conversation_id = messages.conversation_id), 0)`;
    if (filter.clearedFor !== undefined) query = query.where(afterMark(filter.clearedFor, ['cleared']));
    if (filter.unreadBy !== undefined) query = query.where('sender', '<>', filter.unreadBy).where(afterMark(filter.unreadBy, ['cleared', 'read']));
    if (filter.undeliveredBy !== undefined) {
      query = query.where('sender', '<>', filter.undeliveredBy).where(afterMark(filter.undeliveredBy, ['cleared', 'delivered']));
    }
    if (cursor.affix === 'append') {
      if (cursor.id !== undefined) query = query.where('id', '>', cursor.id as never);
      return query.orderBy('id', 'asc').limit(cursor.limit).execute();
    }
    if (cursor.id !== undefined) query = query.where('id', '<', cursor.id as never);
    const rows = await query.orderBy('id', 'desc').limit(cursor.limit).execute();
    return rows.reverse();
  }
}
