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

  async getByMuid(appId: string, sender: string, muid: string, tx: Executor = this.db): Promise<MessageRow | undefined> {
    return tx
      .selectFrom('messages')
      .selectAll()
      .where('app_id', '=', appId)
      .where('sender', '=', sender)
      .where('muid', '=', muid)
      .executeTakeFirst();
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
    if (cursor.affix === 'append') {
      if (cursor.id !== undefined) query = query.where('id', '>', cursor.id as never);
      return query.orderBy('id', 'asc').limit(cursor.limit).execute();
    }
    if (cursor.id !== undefined) query = query.where('id', '<', cursor.id as never);
    const rows = await query.orderBy('id', 'desc').limit(cursor.limit).execute();
    return rows.reverse();
  }
}
