import { sql } from 'kysely';
import type { ReceiverType } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';
import type { GroupRow } from './groups.repository.js';
import { GROUP_ROW, MESSAGE_ROW, STATE_ROW, type ConversationStateRow, type MessageRow } from './row-codecs.js';
import { pageQuery, type MessageCursor, type MessageFilter } from './message-page-query.js';
import type { ReactionCount } from './reactions.repository.js';
import { SqlParams, type EachStatement } from './sql-text.js';
import { USER_ROW, type UserRow } from './users.repository.js';

export type { MessageCursor, MessageFilter } from './message-page-query.js';

/** What readPage reads besides the page itself. */
export interface PageReads {
  /** Users and groups to read whether or not the page names them (e.g. to check them). */
  uids?: string[];
  /**
   * `uids` holds every sender and receiver of the page (a 1:1 conversation's page: its two
   * users): only the users its messages mention are added to them (~10% of PostgreSQL's work
   * for a page is finding the others).
   */
  uidsHoldParties?: boolean;
  guids?: string[];
  /** Who views the page: reactedByMe and receipts are relative to them. */
  viewer?: string;
  /** Also whether this user is a member of this group, and whether they are banned from it. */
  membership?: { uid: string; guid: string };
  /** A page of one conversation, versioned (see pageVersion) unless `unversioned`. */
  conversation?: PageConversation;
  /** A page of one conversation read without its version (one that will not be kept: a sixth of its statement's work). */
  unversioned?: boolean;
  /** Messages with a stored text (migration 0017) read as it (MessagePage.shown), not as rows. */
  shown?: boolean;
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
  /** Its messages read as rows: all of them, or with PageReads.shown those without a stored text. */
  rows: MessageRow[];
  /** With PageReads.shown, its messages read as their stored text; both lists in id order. */
  shown: ShownRow[];
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

/**
 * A message read as its stored text (messages.shown: shownText in services/views/shown-messages.ts),
 * with the columns that what the page splices in is made from. Times in Unix seconds.
 */
export interface ShownRow {
  id: string;
  sentAt: number;
  /** Null: it was not updated (then it is sentAt). */
  updatedAt: number | null;
  sender: string;
  receiver: string;
  receiver_type: ReceiverType;
  conversation_id: string;
  mentioned_uids: string[];
  tags: string[];
  /** A stored text is never an import's with source receipts. */
  delivered_at: null;
  read_at: null;
  /** The stored text. */
  shown: string;
}

/** One page to read (readPage's arguments). */
export interface PageRead {
  appId: string;
  filter: MessageFilter;
  cursor: MessageCursor;
  reads: PageReads;
}

/** A page read, and its version when it is a page of one conversation. */
export interface PageResult {
  page: MessagePage;
  versioned?: PageVersion;
}

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
   * The page is a keyset page (`WHERE id > / < cursor ORDER BY id LIMIT n`, never an offset;
   * one conversation's as a range of (conversation_id, id), see message-page-query.ts), so
   * it costs the same anywhere in the history and messages arriving between pages neither shift
   * nor repeat what was read.
   *
   * A page of one conversation (`reads.conversation`) also answers its version, read in the same
   * snapshot, and what it was read from: see pageVersion.
   */
  async readPage(appId: string, filter: MessageFilter, cursor: MessageCursor, reads: PageReads, tx: Executor = this.db): Promise<PageResult> {
    return (await this.readPages([{ appId, filter, cursor, reads }], tx))[0]!;
  }

  /**
   * Many pages, of any apps, each as readPage reads it: the form that concurrent page reads are
   * coalesced into (container.ts). Pages of the same shape (the same filters, limit and reads)
   * are read by one statement (SqlParams.rowsOfEach), pages of different shapes side by side.
   */
  async readPages(items: readonly PageRead[], tx: Executor = this.db): Promise<PageResult[]> {
    const shapes = new Map<EachStatement, Array<{ n: number; params: SqlParams }>>();
    items.forEach((item, n) => {
      const { text, params } = pageStatement(item);
      const statement = SqlParams.statementOf(text, params);
      const same = shapes.get(statement);
      if (same) same.push({ n, params });
      else shapes.set(statement, [{ n, params }]);
    });
    const results = new Array<PageResult>(items.length);
    await Promise.all(
      [...shapes].map(async ([statement, same]) => {
        const params = same.map((s) => s.params);
        const rows = await SqlParams.rowsOfEach<PageRow>(tx, statement, params);
        same.forEach(({ n }, i) => (results[n] = pageResult(items[n]!.reads, rows[i]![0]!)));
      }),
    );
    return results;
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
}

/** One page's statement: its text and its parameters. */
interface PageStatement {
  text: string;
  params: SqlParams;
}

/** What a page's statement answers (one row). */
interface PageRow {
  uids: string[];
  guids: string[];
  version: string | null;
  messages: unknown[][] | null;
  shown: string | null;
  users: unknown[][] | null;
  groups: unknown[][] | null;
  reactions: Array<[string, string, number, boolean]> | null;
  states: unknown[][] | null;
  is_member: boolean;
  is_banned: boolean;
}

/** The statement of readPage, as text with its values in its parameters (see sql-text.ts). */
function pageStatement({ appId, filter, cursor, reads }: PageRead): PageStatement {
  const p = new SqlParams();
  const app = p.param(appId);
  const viewer = p.shared(reads.viewer ?? null, 'text');
  const conversation = reads.conversation;
  const pageText = pageQuery(p, app, filter, cursor, viewer());
  const parties = reads.uidsHoldParties ? '' : `union select sender from page union select receiver from page where receiver_type = 'user'`;
  const asked = `array(select unnest(${p.typed(reads.uids ?? [], 'text[]')}) ${parties} union select unnest(mentioned_uids) from page) as uids,
             array(select unnest(${p.typed(reads.guids ?? [], 'text[]')}) union select receiver from page where receiver_type = 'group') as guids`;
  // A 1:1 message's receipts are its receiver's; a group message's the viewer's.
  const states = conversation
    ? statesOf(p, app, conversation)
    : `(select s.* from conversation_states s
        where s.app_id = ${app} and (s.uid, s.conversation_id) in (
          select case when receiver_type = 'user' then receiver else ${viewer()} end, conversation_id from page))`;
  const membership = membershipOf(p, app, reads.membership);
  const version = conversation && !reads.unversioned ? versionOf(p, app, conversation, 'asked.uids', 'asked.guids', reads.membership) : 'null';
  const mine = reads.viewer === undefined ? 'false' : `bool_or(r.uid = ${viewer()})`;
  const text = `with page as (${pageText}),
    asked as (select ${asked}),
    u as (
      select u.* from users u where u.app_id = ${app} and u.uid = any((select uids from asked)::text[])
    ), g as (
      -- Gated on the list (a one-time filter): a 1:1 page names no group, and with a small
      -- table the generic plan reads it whole for none (~100 µs of a 700-group app's page).
      select g.* from groups g
      where cardinality((select guids from asked)) > 0 and g.app_id = ${app} and g.guid = any((select guids from asked)::text[])
    ), r as (
      select r.message_id, r.reaction, r.uid, r.id from message_reactions r
      where r.app_id = ${app} and r.message_id = any(array(select id from page))
    ), s as ${states}, m as ${membership}
    select asked.uids, asked.guids, m.is_member, m.is_banned, ${version} as version,
      ${messagesOf(reads)},
      (select json_agg(${USER_ROW.selectText('u')}) from u) as users,
      (select json_agg(${GROUP_ROW.selectText('g')}) from g) as groups,
      (select json_agg(json_build_array(c.message_id::text, c.reaction, c.count, c.mine) order by c.message_id, c.first)
       from (select r.message_id, r.reaction, count(*) as count, ${mine} as mine, min(r.id) as first
             from r group by r.message_id, r.reaction) c) as reactions,
      (select json_agg(${STATE_ROW.selectText('s')}) from s) as states
    from asked, m`;
  return { text, params: p };
}

/** A page's statement's row as readPage answers it. */
function pageResult(reads: PageReads, row: PageRow): PageResult {
  const reactions = new Map<string, ReactionCount[]>();
  for (const [id, reaction, count, mine] of row.reactions ?? []) {
    const list = reactions.get(id) ?? [];
    list.push({ reaction, count: Number(count), reactedByMe: mine === true });
    reactions.set(id, list);
  }
  const page: MessagePage = {
    rows: (row.messages ?? []).map(MESSAGE_ROW.read),
    shown: row.shown === null ? [] : shownRows(row.shown),
    users: (row.users ?? []).map(USER_ROW.read),
    groups: (row.groups ?? []).map(GROUP_ROW.read),
    reactions,
    states: (row.states ?? []).map(STATE_ROW.read),
    isMember: row.is_member,
    isBanned: row.is_banned,
  };
  const conversation = reads.conversation;
  if (!conversation || reads.unversioned) return { page };
  const check: PageCheck = { conversation, uids: row.uids, guids: row.guids };
  if (reads.membership) check.membership = reads.membership;
  // page_version always answers for a conversation's page.
  return { page, versioned: { version: row.version!, check } };
}

/**
 * The page's messages (columns `messages` and `shown` of readPage's statement): as rows, or with
 * PageReads.shown those with a stored text as one text (ShownRow's fields, each message's
 * joined by U+0002 and the messages by U+0001: no id holds a control character, nor does JSON
 * text, so nothing is escaped or parsed). Read as text, a message costs PostgreSQL a fraction
 * of the JSON array of its columns (docs/performance-log.md, "Stored message text").
 */
function messagesOf(reads: PageReads): string {
  const rows = `json_agg(${MESSAGE_ROW.selectText('p')} order by p.id)`;
  if (!reads.shown) return `(select ${rows} from page p) as messages, null as shown`;
  // Joined by `||`, each field as text (a null one as ''), not by concat(): concat() writes
  // every argument through its output function and copies the stored text twice more, ~10 µs
  // of PostgreSQL's ~140 a page (docs/performance-log.md, "The uncached history page at 50%").
  const fields = [
    'p.id::text',
    'extract(epoch from p.sent_at)::text',
    `coalesce(extract(epoch from p.updated_at)::text, '')`,
    'p.sender',
    'p.receiver',
    'p.receiver_type',
    'p.conversation_id',
    `array_to_string(p.mentioned_uids, E'\\x03')`,
    `coalesce(case when cardinality(p.tags) > 0 then array_to_json(p.tags)::text end, '')`,
    'p.shown',
  ];
  return `(select ${rows} filter (where p.shown is null) from page p) as messages,
          (select string_agg(${fields.join(` || E'\\x02' || `)}, E'\\x01' order by p.id) filter (where p.shown is not null) from page p) as shown`;
}

/**
 * The messages of the `shown` column (see messagesOf), read by finding each separator in the
 * one text rather than splitting it into arrays of parts (docs/performance-log.md, "on a noisy machine").
 */
function shownRows(text: string): ShownRow[] {
  const rows: ShownRow[] = [];
  for (let start = 0; ; ) {
    let end = text.indexOf(SHOWN_ROWS, start);
    if (end < 0) end = text.length;
    rows.push(shownRow(text, start, end));
    if (end === text.length) return rows;
    start = end + 1;
  }
}

/** The message of `text` from `start` to `end` (its fields, in messagesOf's order). */
function shownRow(text: string, start: number, end: number): ShownRow {
  const f1 = fieldEnd(text, start, end);
  const f2 = fieldEnd(text, f1 + 1, end);
  const f3 = fieldEnd(text, f2 + 1, end);
  const f4 = fieldEnd(text, f3 + 1, end);
  const f5 = fieldEnd(text, f4 + 1, end);
  const f6 = fieldEnd(text, f5 + 1, end);
  const f7 = fieldEnd(text, f6 + 1, end);
  const f8 = fieldEnd(text, f7 + 1, end);
  const f9 = fieldEnd(text, f8 + 1, end);
  // The stored text is JSON, which holds no control character: a tenth separator is an error.
  const more = text.indexOf(SHOWN_FIELD, f9 + 1);
  if (more >= 0 && more < end) throw new Error('a stored message text of more than 10 fields');
  return {
    id: text.slice(start, f1),
    sentAt: Math.floor(Number(text.slice(f1 + 1, f2))),
    updatedAt: f3 === f2 + 1 ? null : Math.floor(Number(text.slice(f2 + 1, f3))),
    sender: text.slice(f3 + 1, f4),
    receiver: text.slice(f4 + 1, f5),
    receiver_type: text.slice(f5 + 1, f6) as ReceiverType,
    conversation_id: text.slice(f6 + 1, f7),
    mentioned_uids: f8 === f7 + 1 ? [] : text.slice(f7 + 1, f8).split(MENTIONED),
    tags: f9 === f8 + 1 ? [] : (JSON.parse(text.slice(f8 + 1, f9)) as string[]),
    delivered_at: null,
    read_at: null,
    shown: text.slice(f9 + 1, end),
  };
}

/** Where the field of `text` from `from` ends: its separator, before the message's `end`. */
function fieldEnd(text: string, from: number, end: number): number {
  const at = text.indexOf(SHOWN_FIELD, from);
  if (at < 0 || at >= end) throw new Error('a stored message text of fewer than 10 fields');
  return at;
}

/** The separators of the `shown` column: between messages, between a message's fields, between its mentioned uids. */
const SHOWN_ROWS = '\u0001';
const SHOWN_FIELD = '\u0002';
const MENTIONED = '\u0003';

/** The conversation states a conversation's page shows: its stateUids' (CTE `s` of readPage). */
function statesOf(p: SqlParams, app: string, conversation: PageConversation): string {
  return `(select s.* from conversation_states s
           where s.app_id = ${app} and s.uid = any(${p.typed(conversation.stateUids, 'text[]')}) and s.conversation_id = ${p.param(conversation.id)})`;
}

/** Whether the membership's user is a member of its group, and banned from it (CTE `m`). */
function membershipOf(p: SqlParams, app: string, membership: { uid: string; guid: string } | undefined): string {
  if (!membership) return '(select false as is_member, false as is_banned)';
  const guid = p.param(membership.guid);
  const uid = p.param(membership.uid);
  return `(select exists (select 1 from group_members m where m.app_id = ${app} and m.guid = ${guid} and m.uid = ${uid}) as is_member,
                  exists (select 1 from group_bans b where b.app_id = ${app} and b.guid = ${guid} and b.uid = ${uid}) as is_banned)`;
}

/** A conversation page's version (the function page_version of migration 0009), read in readPage's statement. */
function versionOf(p: SqlParams, app: string, conversation: PageConversation, uids: string, guids: string, membership: { uid: string; guid: string } | undefined): string {
  return `page_version(${app}, ${p.typed(conversation.id, 'text')}, ${uids}, ${guids}, ${p.typed(conversation.stateUids, 'text[]')},
                       ${p.typed(membership?.uid ?? null, 'text')}, ${p.typed(membership?.guid ?? null, 'text')})`;
}
