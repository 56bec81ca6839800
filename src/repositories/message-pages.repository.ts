import { sql, type RawBuilder } from 'kysely';
import type { ReceiverType } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';
import type { GroupRow } from './groups.repository.js';
import { GROUP_ROW, MESSAGE_ROW, STATE_ROW, type ConversationStateRow, type MessageRow } from './row-codecs.js';
import type { ReactionCount } from './reactions.repository.js';
import { escapeLike } from './sql-helpers.js';
import { USER_ROW, type UserRow } from './users.repository.js';

/** What a message list keeps; every field narrows it. */
export interface MessageFilter {
  /** One conversation's key (see domain/conversation-id.ts). */
  conversationId?: string;
  /** Any of these conversations' keys (none: no message). */
  conversationIn?: string[];
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

/** What readPage reads besides the page itself. */
export interface PageReads {
  /** Users and groups to read whether or not the page names them (e.g. to check them). */
  uids?: string[];
  guids?: string[];
  /** Who views the page: reactedByMe and receipts are relative to them. */
  viewer?: string;
  /** Also whether this user is a member of this group, and whether they are banned from it. */
  membership?: { uid: string; guid: string };
  /** A page of one conversation, versioned (see pageVersion). */
  conversation?: PageConversation;
}

/**
 * A page of one conversation: its id, and the users whose states of it the page shows (its
 * receipts and marks): the viewer's, and in a 1:1 conversation the other side's.
 */
export interface PageConversation {
  id: string;
  stateUids: string[];
}

/** A conversation page's version, and what it is read from (readPage answers both; pageVersion reads it again). */
export interface PageVersion {
  version: string;
  check: PageCheck;
}

/** What a page's version is read from. */
export interface PageCheck {
  conversation: PageConversation;
  /** The users and groups the page named or checked, found or not. */
  uids: string[];
  guids: string[];
  membership?: { uid: string; guid: string };
}

/** A page of messages with everything it is shown with (see readPage). */
export interface MessagePage {
  rows: MessageRow[];
  /** The users and groups the page names (senders, receivers, mentions), and those of PageReads. */
  users: UserRow[];
  groups: GroupRow[];
  /** Each message's reaction counts, as ReactionsRepository.counts gives them. */
  reactions: Map<string, ReactionCount[]>;
  /** The conversation states its receipts come from: its 1:1 receivers' and the viewer's. */
  states: ConversationStateRow[];
  isMember: boolean;
  isBanned: boolean;
}

const LINK = '(https?://|www\\.)[^[:space:]]';

/**
 * History pages: a keyset page of messages with everything it is shown with, in one statement,
 * and its version (see readPage and pageVersion).
 */
export class MessagePagesRepository {
  constructor(private readonly db: Executor) {}

  /**
   * A page of messages with everything it is shown with, in ONE statement: the users and groups
   * it names, its reaction counts, the conversation states of its receipts, and optionally a
   * membership to check. A history page is then one round trip, and its rows travel as one
   * JSON value (see json-rows.ts).
   *
   * The page is a keyset page (`WHERE id > / < cursor ORDER BY id LIMIT n`, never an offset), so
   * it costs the same anywhere in the history and messages arriving between pages neither shift
   * nor repeat what was read.
   *
   * A page of one conversation (`reads.conversation`) also answers its version, read in the same
   * snapshot, and what it was read from: see pageVersion.
   */
  async readPage(
    appId: string,
    filter: MessageFilter,
    cursor: MessageCursor,
    reads: PageReads,
    tx: Executor = this.db,
  ): Promise<{ page: MessagePage; versioned?: PageVersion }> {
    const viewer = reads.viewer ?? null;
    const mine = reads.viewer === undefined ? sql`false` : sql`bool_or(r.uid = ${reads.viewer})`;
    const conversation = reads.conversation;
    type Arrays = unknown[][] | null;
    const result = await sql<{
      uids: string[];
      guids: string[];
      version: string | null;
      messages: Arrays;
      users: Arrays;
      groups: Arrays;
      reactions: Array<[string, string, number, boolean]> | null;
      states: Arrays;
      is_member: boolean;
      is_banned: boolean;
    }>`
      with page as ${this.pageQuery(appId, filter, cursor, tx)},
      asked as (
        select array(select unnest(${reads.uids ?? []}::text[]) union select sender from page
                     union select receiver from page where receiver_type = 'user' union select unnest(mentioned_uids) from page) as uids,
               array(select unnest(${reads.guids ?? []}::text[]) union select receiver from page where receiver_type = 'group') as guids
      ), u as (
        select u.* from users u where u.app_id = ${appId} and u.uid = any((select uids from asked)::text[])
      ), g as (
        select g.* from groups g where g.app_id = ${appId} and g.guid = any((select guids from asked)::text[])
      ), r as (
        select r.message_id, r.reaction, r.uid, r.id from message_reactions r
        where r.app_id = ${appId} and r.message_id = any(array(select id from page))
      ), s as ${
        conversation
          ? statesOf(appId, conversation)
          : // A 1:1 message's receipts are its receiver's; a group message's the viewer's.
            sql`(select s.* from conversation_states s
                 where s.app_id = ${appId} and (s.uid, s.conversation_id) in (
                   select case when receiver_type = 'user' then receiver else ${viewer}::text end, conversation_id from page))`
      }, m as ${membershipOf(appId, reads.membership)}
      select asked.uids, asked.guids, m.is_member, m.is_banned,
        ${conversation ? versionOf(appId, conversation, sql`asked.uids`, sql`asked.guids`, reads.membership) : sql`null`} as version,
        (select json_agg(${MESSAGE_ROW.select('p')} order by p.id) from page p) as messages,
        (select json_agg(${USER_ROW.select('u')}) from u) as users,
        (select json_agg(${GROUP_ROW.select('g')}) from g) as groups,
        (select json_agg(json_build_array(c.message_id::text, c.reaction, c.count, c.mine) order by c.message_id, c.first)
         from (select r.message_id, r.reaction, count(*) as count, ${mine} as mine, min(r.id) as first
               from r group by r.message_id, r.reaction) c) as reactions,
        (select json_agg(${STATE_ROW.select('s')}) from s) as states
      from asked, m`.execute(tx);
    const row = result.rows[0]!;
    const reactions = new Map<string, ReactionCount[]>();
    for (const [id, reaction, count, mine] of row.reactions ?? []) {
      const list = reactions.get(id) ?? [];
      list.push({ reaction, count: Number(count), reactedByMe: mine === true });
      reactions.set(id, list);
    }
    const page: MessagePage = {
      rows: (row.messages ?? []).map(MESSAGE_ROW.read),
      users: (row.users ?? []).map(USER_ROW.read),
      groups: (row.groups ?? []).map(GROUP_ROW.read),
      reactions,
      states: (row.states ?? []).map(STATE_ROW.read),
      isMember: row.is_member,
      isBanned: row.is_banned,
    };
    if (!conversation) return { page };
    const check: PageCheck = { conversation, uids: row.uids, guids: row.guids };
    if (reads.membership) check.membership = reads.membership;
    // page_version always answers for a conversation's page.
    return { page, versioned: { version: row.version!, check } };
  }

  /**
   * The version of a conversation's page now, read from what `check` names, without reading the
   * page: a few key lookups (page_version, migration 0009). A message added to the conversation,
   * or one of its messages or reactions changed or removed, a user or group it names changed, a
   * state its receipts or marks come from, or the membership it checked: each changes a row
   * version that it reads. While none has, the page reads the same, so a copy can be sent again.
   */
  async pageVersion(appId: string, check: PageCheck, tx: Executor = this.db): Promise<string> {
    return (await this.pageVersions([{ appId, check }], tx))[0]!;
  }

  /**
   * The versions of many pages, of any apps, in one statement: the form that concurrent checks
   * are coalesced into (container.ts). Each is a few key lookups, and a statement each cost
   * more than the lookups.
   */
  async pageVersions(items: Array<{ appId: string; check: PageCheck }>, tx: Executor = this.db): Promise<string[]> {
    const records = JSON.stringify(
      items.map(({ appId, check }, n) => ({
        n,
        app_id: appId,
        conversation_id: check.conversation.id,
        uids: check.uids,
        guids: check.guids,
        state_uids: check.conversation.stateUids,
        member_uid: check.membership?.uid ?? null,
        member_guid: check.membership?.guid ?? null,
      })),
    );
    const result = await sql<{ n: number; version: string }>`
      select r.n, page_version(r.app_id, r.conversation_id, r.uids, r.guids, r.state_uids, r.member_uid, r.member_guid) as version
      from json_to_recordset(${records}::json) as r(
        n int, app_id text, conversation_id text, uids text[], guids text[], state_uids text[], member_uid text, member_guid text)`.execute(tx);
    const versions: string[] = new Array(items.length);
    for (const row of result.rows) versions[row.n] = row.version;
    return versions;
  }

  /**
   * The query of one keyset page (see readPage): newest first for `prepend`, oldest first for
   * `append`.
   */
  private pageQuery(appId: string, filter: MessageFilter, cursor: MessageCursor, tx: Executor) {
    let query = tx
      .selectFrom('messages')
      .selectAll()
      .where('app_id', '=', appId);
    if (filter.conversationId !== undefined) query = query.where('conversation_id', '=', filter.conversationId);
    if (filter.conversationIn !== undefined) {
      query = filter.conversationIn.length === 0 ? query.where(sql<boolean>`false`) : query.where('conversation_id', 'in', filter.conversationIn);
    }
    if (filter.visibleTo !== undefined) {
      const uid = filter.visibleTo;
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
    // Marks of conversation_states (0007): in one conversation's history, its state read once;
    // across conversations, each row's.
    const conversation = filter.conversationId === undefined ? sql`messages.conversation_id` : sql`${filter.conversationId}`;
    const afterMark = (uid: string, marks: Array<'cleared' | 'read' | 'delivered'>) =>
      sql<boolean>`messages.id > coalesce((select greatest(${sql.join(marks.map((mark) => sql`coalesce(s.${sql.ref(`${mark}_message_id`)}, 0)`))}) from conversation_states s where s.app_id = ${appId} and s.uid = ${uid} and s.conversation_id = ${conversation}), 0)`;
    if (filter.clearedFor !== undefined) query = query.where(afterMark(filter.clearedFor, ['cleared']));
    if (filter.unreadBy !== undefined) query = query.where('sender', '<>', filter.unreadBy).where(afterMark(filter.unreadBy, ['cleared', 'read']));
    if (filter.undeliveredBy !== undefined) {
      query = query.where('sender', '<>', filter.undeliveredBy).where(afterMark(filter.undeliveredBy, ['cleared', 'delivered']));
    }
    // The limit as a literal (a validated integer, 1 to 1,000): with a parameter there, the
    // prepared statement's generic plan is costed for a tenth of the table, so PostgreSQL would
    // plan every call anew (~0.4 ms) instead of reusing one plan.
    if (!Number.isSafeInteger(cursor.limit)) throw new Error(`not an integer limit: ${cursor.limit}`);
    const limit = sql.lit(cursor.limit);
    if (cursor.affix === 'append') {
      if (cursor.id !== undefined) query = query.where('id', '>', cursor.id as never);
      return query.orderBy('id', 'asc').limit(limit);
    }
    if (cursor.id !== undefined) query = query.where('id', '<', cursor.id as never);
    return query.orderBy('id', 'desc').limit(limit);
  }
}

/** The conversation states a conversation's page shows: its stateUids' (CTE `s` of readPage). */
function statesOf(appId: string, conversation: PageConversation) {
  return sql`(select s.* from conversation_states s
              where s.app_id = ${appId} and s.uid = any(${conversation.stateUids}::text[]) and s.conversation_id = ${conversation.id})`;
}

/** Whether the membership's user is a member of its group, and banned from it (CTE `m`). */
function membershipOf(appId: string, membership: { uid: string; guid: string } | undefined) {
  return membership
    ? sql`(select exists (select 1 from group_members m where m.app_id = ${appId} and m.guid = ${membership.guid} and m.uid = ${membership.uid}) as is_member,
                  exists (select 1 from group_bans b where b.app_id = ${appId} and b.guid = ${membership.guid} and b.uid = ${membership.uid}) as is_banned)`
    : sql`(select false as is_member, false as is_banned)`;
}

/** A conversation page's version (the function page_version of migration 0009): one definition for readPage and pageVersion. */
function versionOf(
  appId: string,
  conversation: PageConversation,
  uids: RawBuilder<unknown>,
  guids: RawBuilder<unknown>,
  membership: { uid: string; guid: string } | undefined,
) {
  return sql<string>`page_version(${appId}, ${conversation.id}, ${uids}, ${guids}, ${conversation.stateUids}::text[],
                                  ${membership?.uid ?? null}::text, ${membership?.guid ?? null}::text)`;
}

