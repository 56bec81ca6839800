import { sql, type RawBuilder } from 'kysely';
import type { MemberScope, ReceiverType } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';
import { conversationTypeOf } from '../domain/conversation-id.js';
import { extended } from '../domain/objects.js';
import { pageOffset, type PageRequest } from '../domain/pagination.js';
import type { GroupRow } from './groups.repository.js';
import { GROUP_ROW, MESSAGE_ROW, type ConversationStateRow, type MessageRow } from './row-codecs.js';
import { visibleTo } from './message-visibility.js';
import { conversationMessages, conversationMessagesOrder, escapeLike } from './sql-helpers.js';
import { USER_ROW, type UserRow } from './users.repository.js';

export type { ConversationStateRow } from './row-codecs.js';

/** Unread counts stop here (enough for "99+" badges): each is one index range of at most this many messages. */
export const UNREAD_COUNT_CAP = 100;

/** A conversation as one user sees it. */
export interface ConversationViewRow {
  conversation_id: string;
  conversation_type: ReceiverType;
  /** The other user's uid, or the group's guid. */
  with_id: string;
  /** Group conversations: the viewer's membership. */
  scope: MemberScope | null;
  joined_at: Date | null;
  /** When the conversation began for the viewer: its first message, or their joining the group. */
  created_at: Date;
  updated_at: Date;
  last_message_id: string | null;
  tags: string[] | null;
  cleared_message_id: string | null;
  read_message_id: string | null;
  unread: string;
  /** Read with the row, so the conversation is rendered from one statement: its last message, */
  last_message: MessageRow | null;
  /** and the other user (a 1:1 conversation) or the group, when they exist. */
  with_user: UserRow | null;
  with_group: GroupRow | null;
}

export interface ConversationFilter {
  conversationType?: ReceiverType;
  /** One conversation, by its key (domain/conversation-id.ts). */
  conversationId?: string;
  unread?: boolean;
  /** Conversations the viewer tagged with at least one of these. */
  tags?: string[];
  /** 1:1 conversations whose other user has one of these tags. */
  userTags?: string[];
  /** Group conversations whose group has one of these tags. */
  groupTags?: string[];
  /** A case-insensitive substring of the other user's or the group's name. */
  searchKey?: string;
}

export type ReceiptMark = { kind: 'delivered' | 'read'; messageId: string } | { kind: 'unread'; messageId: string | null };

/**
 * Each user's state of their conversations (receipts, cleared history, tags), and the
 * conversations a user takes part in: their 1:1s (user_conversations) and the conversations of
 * the groups they are a member of, for the conversation endpoints.
 */
export class ConversationStatesRepository {
  constructor(private readonly db: Executor) {}

  /**
   * A page of the conversations `uid` takes part in, newest activity first, each with its
   * unread count; and how many there are. A conversation exists from its first message, and is
   * hidden while the viewer has cleared up to its last message.
   */
  async list(appId: string, uid: string, filter: ConversationFilter, page: PageRequest, tx: Executor = this.db): Promise<{ rows: ConversationViewRow[]; total: number }> {
    const from = visibleFrom(appId, uid, filter);
    const [rows, count] = await Promise.all([this.page(from, appId, uid, page, true, tx), sql<{ n: string }>`select count(*) as n ${from}`.execute(tx)]);
    return { rows, total: Number(count.rows[0]!.n) };
  }

  /**
   * One conversation as `uid` sees it; undefined when they are not part of it or it is hidden.
   * `content`: with its last message and other side, to render it (else those are null, for a
   * check of access).
   */
  async get(appId: string, uid: string, conversationId: string, type: ReceiverType | undefined, options: { content: boolean }, tx: Executor = this.db): Promise<ConversationViewRow | undefined> {
    const from = visibleFrom(appId, uid, { conversationId, conversationType: type });
    const rows = await this.page(from, appId, uid, { page: 1, perPage: 1 }, options.content, tx);
    return rows[0];
  }

  /**
   * A page of `from` (see visibleFrom), newest activity first; `content` as for get. An `sql`
   * template, not the query builder: building and compiling this query with the builder was
   * ~20% of a conversation list's CPU.
   */
  private async page(from: RawBuilder<unknown>, appId: string, uid: string, page: PageRequest, content: boolean, tx: Executor): Promise<ConversationViewRow[]> {
    const ifContent = (read: RawBuilder<unknown>) => (content ? read : sql`null`);
    const lastMessage = ifContent(sql`(select ${MESSAGE_ROW.select('lm')} from messages lm where lm.app_id = ${appId} and lm.id = c.last_message_id)`);
    const withUser = ifContent(sql`case when m.conversation_type = 'user' then (select ${USER_ROW.select('wu')} from users wu where wu.app_id = ${appId} and wu.uid = m.with_id) end`);
    const withGroup = ifContent(sql`case when m.conversation_type = 'group' then (select ${GROUP_ROW.select('wg')} from groups wg where wg.app_id = ${appId} and wg.guid = m.with_id) end`);
    type PageRow = Omit<ConversationViewRow, 'last_message' | 'with_user' | 'with_group'> & {
      last_message: unknown[] | null;
      with_user: unknown[] | null;
      with_group: unknown[] | null;
    };
    const result = await sql<PageRow>`
      select m.conversation_id, m.conversation_type, m.with_id, m.scope, m.joined_at, m.created_at,
             c.updated_at, c.last_message_id, s.tags, s.cleared_message_id, s.read_message_id,
             (select count(*) from (${unreadMessages(appId, uid)} limit ${UNREAD_COUNT_CAP}) as unread) as unread,
             ${lastMessage} as last_message, ${withUser} as with_user, ${withGroup} as with_group
      ${from}
      order by c.last_message_id desc, m.conversation_id
      limit ${page.perPage} offset ${pageOffset(page)}`.execute(tx);
    return result.rows.map(
      (row): ConversationViewRow =>
        extended(row, {
          last_message: row.last_message ? MESSAGE_ROW.read(row.last_message) : null,
          with_user: row.with_user ? USER_ROW.read(row.with_user) : null,
          with_group: row.with_group ? GROUP_ROW.read(row.with_group) : null,
        }) as ConversationViewRow,
    );
  }

  /** The states of these (uid, conversation) pairs: receipts shown on a page of messages. */
  async getMany(appId: string, pairs: Array<{ uid: string; conversationId: string }>, tx: Executor = this.db): Promise<ConversationStateRow[]> {
    if (pairs.length === 0) return [];
    const unique = [...new Map(pairs.map((pair) => [`${pair.uid}\u0000${pair.conversationId}`, pair])).values()];
    // A join on the pairs, not `(uid, conversation_id) IN (...)`: the embedded engine evaluates
    // a long IN list of rows against every row of the app (a 1,000-message page took seconds).
    const result = await sql<ConversationStateRow>`
      select s.* from conversation_states s
      join unnest(${unique.map((pair) => pair.uid)}::text[], ${unique.map((pair) => pair.conversationId)}::text[]) as p (uid, conversation_id)
        on s.uid = p.uid and s.conversation_id = p.conversation_id
      where s.app_id = ${appId}`.execute(tx);
    return result.rows;
  }

  /**
   * Moves a watermark in one statement: delivered and read only forwards (a read message is
   * delivered too), read backwards for mark-as-unread. Times change only when a mark moves.
   * Throws ForeignKeyViolation when the conversation or the user was deleted meanwhile.
   */
  async mark(appId: string, uid: string, conversationId: string, mark: ReceiptMark, tx: Executor = this.db): Promise<void> {
    const now = new Date();
    const id = mark.messageId;
    if (mark.kind === 'unread') {
      await tx
        .insertInto('conversation_states')
        .values({ app_id: appId, uid, conversation_id: conversationId })
        .onConflict((oc) =>
          oc.columns(['app_id', 'uid', 'conversation_id']).doUpdateSet({
            read_message_id: sql`case when ${id}::bigint is null then null else least(conversation_states.read_message_id, ${id}::bigint) end`,
            updated_at: now,
          }),
        )
        .execute();
      return;
    }
    const forward = (column: 'delivered' | 'read') => sql<string>`greatest(conversation_states.${sql.ref(`${column}_message_id`)}, ${id}::bigint)`;
    const timeOf = (column: 'delivered' | 'read') =>
      sql<Date>`case when ${id}::bigint > coalesce(conversation_states.${sql.ref(`${column}_message_id`)}, 0) then ${now}::timestamptz else conversation_states.${sql.ref(`${column}_at`)} end`;
    const read = mark.kind === 'read';
    await tx
      .insertInto('conversation_states')
      .values({
        app_id: appId,
        uid,
        conversation_id: conversationId,
        delivered_message_id: id,
        delivered_at: now,
        read_message_id: read ? id : null,
        read_at: read ? now : null,
      })
      .onConflict((oc) =>
        oc.columns(['app_id', 'uid', 'conversation_id']).doUpdateSet({
          delivered_message_id: forward('delivered'),
          delivered_at: timeOf('delivered'),
          ...(read ? { read_message_id: forward('read'), read_at: timeOf('read') } : {}),
          updated_at: now,
        }),
      )
      .execute();
  }

  /** Throws ForeignKeyViolation when the conversation or the user was deleted meanwhile. */
  async setTags(appId: string, uid: string, conversationId: string, tags: string[], tx: Executor = this.db): Promise<void> {
    await tx
      .insertInto('conversation_states')
      .values({ app_id: appId, uid, conversation_id: conversationId, tags })
      .onConflict((oc) => oc.columns(['app_id', 'uid', 'conversation_id']).doUpdateSet({ tags, updated_at: new Date() }))
      .execute();
  }

  /** Hides the conversation's messages up to `upTo` from `uid`; ForeignKeyViolation as mark. */
  async clear(appId: string, uid: string, conversationId: string, upTo: string, tx: Executor = this.db): Promise<void> {
    await tx
      .insertInto('conversation_states')
      .values({ app_id: appId, uid, conversation_id: conversationId, cleared_message_id: upTo })
      .onConflict((oc) =>
        oc.columns(['app_id', 'uid', 'conversation_id']).doUpdateSet({
          cleared_message_id: sql`greatest(conversation_states.cleared_message_id, ${upTo}::bigint)`,
          updated_at: new Date(),
        }),
      )
      .execute();
  }

  /**
   * Hides the conversation's messages up to `upTo` from every participant: both sides of a 1:1
   * conversation, every member of a group. One statement, in uid order.
   */
  async clearForEveryone(appId: string, conversationId: string, upTo: string, tx: Executor): Promise<void> {
    const guid = conversationTypeOf(conversationId) === 'group' ? conversationId.slice('group_'.length) : undefined;
    const participants =
      guid === undefined
        ? sql`select uid from user_conversations where app_id = ${appId} and conversation_id = ${conversationId}`
        : sql`select uid from group_members where app_id = ${appId} and guid = ${guid}`;
    await sql`
      insert into conversation_states as s (app_id, uid, conversation_id, cleared_message_id)
      select ${appId}, p.uid, ${conversationId}, ${upTo}::bigint from (${participants}) p order by p.uid
      on conflict (app_id, uid, conversation_id) do update
        set cleared_message_id = greatest(s.cleared_message_id, excluded.cleared_message_id), updated_at = now()`.execute(tx);
  }

  /**
   * Deletes a conversation for everyone: its row first (which waits for, then blocks, the sends
   * to it), its participants' sides and states (cascades), then its messages.
   */
  async deleteWithMessages(appId: string, conversationId: string, type: ReceiverType, tx: Executor): Promise<void> {
    await tx.deleteFrom('conversations').where('app_id', '=', appId).where('conversation_id', '=', conversationId).execute();
    await tx.deleteFrom('messages').where('app_id', '=', appId).where('conversation_id', '=', conversationId).where('receiver_type', '=', type).execute();
  }
}

/**
 * The messages of conversation m unread by `uid` (m.uid): after their read mark and what they
 * cleared, not their own, not action messages, not deleted, not held from them
 * (message-visibility.ts), and in a group not sent before they joined.
 * A range of the conversation's index, in its order (conversationMessages: with statistics of
 * one long conversation, a conversation never read was counted by walking the app's messages
 * from its first, 12–40 ms each). To be read with a limit.
 */
function unreadMessages(appId: string, uid: string): RawBuilder<unknown> {
  const mark = 'greatest(coalesce(s.read_message_id, 0), coalesce(s.cleared_message_id, 0))';
  return sql`select 1 as one from messages um
    where um.app_id = ${appId} and ${sql.raw(conversationMessages('um', 'm.conversation_id', { after: mark }))}
      and um.sender <> ${uid} and um.category <> 'action' and um.deleted_at is null and ${sql.raw(visibleTo('um', 'm.uid'))}
      and (m.joined_at is null or um.sent_at >= m.joined_at)
    ${sql.raw(conversationMessagesOrder('um', 'asc'))}`;
}

/**
 * The conversations `uid` takes part in and sees, as the `from ... where ...` of a page or of its
 * count: their 1:1 conversations and their groups' (m), each with its conversation (c) and
 * their state of it (s), hidden while cleared up to its last message.
 */
function visibleFrom(appId: string, uid: string, filter: ConversationFilter): RawBuilder<unknown> {
  const key = filter.conversationId;
  const guidOf = key !== undefined && conversationTypeOf(key) === 'group' ? key.slice('group_'.length) : undefined;
  // userTags keep only 1:1 conversations, groupTags only group ones; both keep either kind.
  const userTags = filter.userTags?.length ? filter.userTags : undefined;
  const groupTags = filter.groupTags?.length ? filter.groupTags : undefined;
  const wantUser = filter.conversationType !== 'group' && !(groupTags && !userTags) && (key === undefined || guidOf === undefined);
  const wantGroup = filter.conversationType !== 'user' && !(userTags && !groupTags) && (key === undefined || guidOf !== undefined);
  const userSide = [sql`app_id = ${appId}`, sql`uid = ${uid}`];
  if (key !== undefined) userSide.push(sql`conversation_id = ${key}`);
  if (!wantUser) userSide.push(sql`false`);
  const groupSide = [sql`app_id = ${appId}`, sql`uid = ${uid}`];
  if (guidOf !== undefined) groupSide.push(sql`guid = ${guidOf}`);
  if (!wantGroup) groupSide.push(sql`false`);
  const conditions = [sql`(s.cleared_message_id is null or c.last_message_id > s.cleared_message_id)`];
  // Not `exists`, which would drop the order that keeps the read on the conversation's index.
  if (filter.unread) conditions.push(sql`(${unreadMessages(appId, uid)} limit 1) is not null`);
  if (filter.tags?.length) conditions.push(sql`s.tags && ${filter.tags}::text[]`);
  const byName = Boolean(userTags || groupTags || filter.searchKey);
  if (userTags || groupTags) {
    const byUser = userTags ? sql`(m.conversation_type = 'user' and u.tags && ${userTags}::text[])` : sql`false`;
    const byGroup = groupTags ? sql`(m.conversation_type = 'group' and g.tags && ${groupTags}::text[])` : sql`false`;
    conditions.push(sql`(${byUser} or ${byGroup})`);
  }
  if (filter.searchKey) conditions.push(sql`coalesce(u.name, g.name) ilike ${`%${escapeLike(filter.searchKey)}%`}`);
  return sql`
    from (
      select uid, conversation_id, 'user' as conversation_type, conversation_with as with_id, null as scope,
             null::timestamptz as joined_at, created_at
      from user_conversations where ${sql.join(userSide, sql` and `)}
      union all
      select uid, 'group_' || guid, 'group', guid, scope, joined_at, joined_at
      from group_members where ${sql.join(groupSide, sql` and `)}
    ) as m
    join conversations c on c.app_id = ${appId} and c.conversation_id = m.conversation_id and c.conversation_type = m.conversation_type
    left join conversation_states s on s.app_id = ${appId} and s.uid = ${uid} and s.conversation_id = m.conversation_id
    ${
      byName
        ? sql`left join users u on u.app_id = ${appId} and u.uid = m.with_id and m.conversation_type = 'user'
    left join groups g on g.app_id = ${appId} and g.guid = m.with_id and m.conversation_type = 'group'`
        : sql``
    }
    where ${sql.join(conditions, sql` and `)}`;
}
