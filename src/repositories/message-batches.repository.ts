import { sql, type Kysely, type RawBuilder } from 'kysely';
import { Batcher, runApart } from '../db/batcher.js';
import { translated } from '../db/driver-errors.js';
import { parseTimestamptz } from '../db/timestamps.js';
import type { Engine } from '../db/database.js';
import type { DB, MemberScope, ReceiverType } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';
import type { GroupRow } from './groups.repository.js';
import { GROUP_ROW, type MessageRow, type NewMessage, type SendFacts } from './messages.repository.js';
import { sendDeniedBy, sendPermissionJoins } from './send-permissions.js';
import { anyOf } from './sql-helpers.js';
import { USER_ROW } from './users.repository.js';

/** A message to insert in bulk (an imported one), with its muid, place in the history and receipts. */
export interface BulkMessage extends Omit<NewMessage, 'parentId' | 'muid'> {
  muid: string;
  sentAt: Date;
  deliveredAt: Date | null;
  readAt: Date | null;
}

/** What a coalesced send found and did (see MessageBatchesRepository.send). */
export interface SendOutcome {
  /** What the send was checked against, read in the statement that stored it. */
  facts: SendFacts;
  /** The stored message; absent when a check failed (the facts tell which) or the muid was used before. */
  row?: MessageRow;
  /** The id of the sender's earlier message with this muid: nothing was stored. */
  firstId?: string;
}

/**
 * Messages written many at a time: a chunk of the data import (insertMany), and concurrent
 * sends coalesced into one statement (send: the application's group commit, as for create-user;
 * see Batcher).
 */
export class MessageBatchesRepository {
  private readonly sendBatcher: Batcher<{ appId: string; message: NewMessage }, SendOutcome>;

  constructor(
    private readonly db: Kysely<DB>,
    engine: Engine,
  ) {
    this.sendBatcher = new Batcher(
      (items) => this.sendBatch(items),
      // On PostgreSQL, one statement at a time makes the largest batches: measured against two
      // and eight, alternating in the same minutes, more sends per second and less CPU per send
      // in both the server and PostgreSQL. One that waits on a lock (an import holding the
      // conversation) gives up its place after 50 ms, so the sends behind it go on. PGlite runs
      // one statement at a time anyway; there eight queued keep it busy (~25% more sends/s).
      { maxBatch: 500, maxInFlight: engine === 'postgres' ? 1 : 8, stalledAfterMs: 50, maxStalled: 7 },
    );
  }

  /** The sends of one batch: each app's in rounds, each round one statement (sendRound). */
  private async sendBatch(items: Array<{ appId: string; message: NewMessage }>): Promise<Array<SendOutcome | Error>> {
    const results: Array<SendOutcome | Error> = new Array(items.length);
    const byApp = new Map<string, number[]>();
    items.forEach((item, index) => {
      const indexes = byApp.get(item.appId);
      if (indexes) indexes.push(index);
      else byApp.set(item.appId, [index]);
    });
    for (const [appId, indexes] of byApp) {
      // Rounds in which each conversation appears once, in the order sent.
      const rounds: number[][] = [];
      const roundOf = new Map<string, number>();
      for (const index of indexes) {
        const conversationId = items[index]!.message.conversationId;
        const round = roundOf.get(conversationId) ?? 0;
        roundOf.set(conversationId, round + 1);
        (rounds[round] ??= []).push(index);
      }
      for (const round of rounds) {
        // One send's failure (its text, a muid sent twice at once) must not fail the others.
        let outcomes: Array<SendOutcome | Error>;
        try {
          outcomes = await runApart((messages: NewMessage[]) => this.sendRound(appId, messages), round.map((index) => items[index]!.message));
        } catch (error) {
          outcomes = round.map(() => (error instanceof Error ? error : new Error(String(error))));
        }
        round.forEach((index, n) => (results[index] = outcomes[n]!));
      }
    }
    return results;
  }

  /**
   * Checks and stores a sent message (not a thread reply), coalesced with the sends of the same
   * moment: ONE statement for them all reads what each is checked against (the sender; the
   * receiving user and the blocks between the two, or the group with the sender's membership
   * and ban; an earlier message with the muid), stores those that pass, and answers the facts
   * with each stored row. It is MessagesRepository.store made multi-row: each conversation's
   * row is locked (in key order) while its message's id is drawn, so ids follow commit order.
   * A conversation takes one message per statement; more to it wait for the next round.
   * A muid used twice at once raises UniqueViolation, as store does.
   */
  async send(appId: string, message: NewMessage): Promise<SendOutcome> {
    return this.sendBatcher.submit({ appId, message });
  }


  /** One statement for sends to distinct conversations: see send. */
  private async sendRound(appId: string, messages: NewMessage[]): Promise<SendOutcome[]> {
    const records = messages.map(sendRecord);
    type Found = {
      n: number;
      sender_row: unknown[] | null;
      receiver_row: unknown[] | null;
      group_row: unknown[] | null;
      sender_blocked_receiver: boolean;
      receiver_blocked_sender: boolean;
      is_member: boolean;
      is_banned: boolean;
      member_scope: MemberScope | null;
      denied_by: string | null;
      first_id: string | null;
      id: string | null;
      at: string | null;
    };
    const result = await translated(() =>
      sql<Found>`
        with r as (
          select * from json_to_recordset(${`[${records.join(',')}]`}::json) as r(
            n int, conversation_id text, sender text, receiver text, receiver_type text, category text, type text, data json,
            tags json, mentioned_uids json, muid text)
        ), f as (
          select r.*,
            case when s.uid is not null then ${USER_ROW.select('s')} end as sender_row,
            s.uid is not null and s.deactivated_at is null as sender_active,
            case when u.uid is not null then ${USER_ROW.select('u')} end as receiver_row,
            u.uid is not null and u.deactivated_at is null as receiver_active,
            case when g.guid is not null then ${GROUP_ROW.select('g')} end as group_row,
            sb.found is not null as sender_blocked_receiver,
            rb.found is not null as receiver_blocked_sender,
            gm.scope is not null as is_member,
            gm.scope as member_scope,
            gb.found is not null as is_banned,
            ${sendDeniedBy({ reply: false })} as denied_by,
            case when r.muid is not null then (
              select m.id from messages m where m.app_id = ${appId} and m.sender = r.sender and m.muid = r.muid) end as first_id
          from r
          -- limit 1 keeps each lookup a probe per row. A join, or an EXISTS in the select list, the
          -- planner may hash instead, reading all of the app's rows of the table (it plans for 100
          -- records here): a group send read all 3,000 memberships of a small app that way.
          left join lateral (select * from users x where x.app_id = ${appId} and x.uid = r.sender limit 1) s on true
          left join lateral (select * from users x where r.receiver_type = 'user' and x.app_id = ${appId} and x.uid = r.receiver limit 1) u on true
          left join lateral (select * from groups x where r.receiver_type = 'group' and x.app_id = ${appId} and x.guid = r.receiver limit 1) g on true
          left join lateral (select true as found from blocked_users x
                             where r.receiver_type = 'user' and x.app_id = ${appId} and x.uid = r.sender and x.blocked_uid = r.receiver limit 1) sb on true
          left join lateral (select true as found from blocked_users x
                             where r.receiver_type = 'user' and x.app_id = ${appId} and x.uid = r.receiver and x.blocked_uid = r.sender limit 1) rb on true
          left join lateral (select x.scope from group_members x
                             where r.receiver_type = 'group' and x.app_id = ${appId} and x.guid = r.receiver and x.uid = r.sender limit 1) gm on true
          left join lateral (select true as found from group_bans x
                             where r.receiver_type = 'group' and x.app_id = ${appId} and x.guid = r.receiver and x.uid = r.sender limit 1) gb on true
          ${sendPermissionJoins(appId, { reply: false })}
        ), ok as (
          -- The rules of a send (MessagesService.checkReceiver gives the error of one that fails).
          select * from f
          where f.sender_active and f.first_id is null and f.denied_by is null and case
            when f.receiver_type = 'user' then f.receiver_active and not f.sender_blocked_receiver and not f.receiver_blocked_sender
            else f.group_row is not null and f.is_member end
        ), conv as (
          insert into conversations as c (app_id, conversation_id, conversation_type, last_message_id, updated_at)
          select ${appId}, ok.conversation_id, ok.receiver_type, nextval(pg_get_serial_sequence('messages', 'id')), clock_timestamp()
          from ok order by ok.conversation_id
          on conflict (app_id, conversation_id) do update
            set last_message_id = nextval(pg_get_serial_sequence('messages', 'id')), updated_at = clock_timestamp()
          returning c.conversation_id, c.last_message_id as id, c.updated_at as at, (xmax = 0) as created
        ), sides as (
          insert into user_conversations (app_id, uid, conversation_id, conversation_with)
          select ${appId}, side.uid, ok.conversation_id, side.other
          from ok join conv on conv.conversation_id = ok.conversation_id,
               lateral (values (ok.sender, ok.receiver), (ok.receiver, ok.sender)) as side (uid, other)
          where conv.created and ok.receiver_type = 'user'
          on conflict do nothing
        ), ins as (
          insert into messages (app_id, id, conversation_id, sender, receiver, receiver_type, category, type, data, tags,
                                mentioned_uids, muid, sent_at)
          overriding system value
          select ${appId}, conv.id, ok.conversation_id, ok.sender, ok.receiver, ok.receiver_type, ok.category, ok.type, ok.data,
                 ${textArray(sql`ok.tags`)}, ${textArray(sql`ok.mentioned_uids`)}, ok.muid, conv.at
          from ok join conv on conv.conversation_id = ok.conversation_id
        )
        select f.n, f.sender_row, f.receiver_row, f.group_row, f.sender_blocked_receiver, f.receiver_blocked_sender,
               f.is_member, f.is_banned, f.member_scope, f.denied_by, f.first_id::text as first_id, conv.id::text as id, conv.at::text as at
        from f left join conv on conv.conversation_id = f.conversation_id`.execute(this.db),
    );
    const outcomes: SendOutcome[] = new Array(messages.length);
    for (const found of result.rows) {
      const message = messages[found.n]!;
      const sender = found.sender_row ? USER_ROW.read(found.sender_row) : undefined;
      const facts: SendFacts =
        message.receiverType === 'user'
          ? {
              sender,
              receiverUser: found.receiver_row ? USER_ROW.read(found.receiver_row) : undefined,
              senderBlockedReceiver: found.sender_blocked_receiver,
              receiverBlockedSender: found.receiver_blocked_sender,
              deniedBy: found.denied_by,
            }
          : {
              sender,
              group: found.group_row ? GROUP_ROW.read(found.group_row) : undefined,
              isMember: found.is_member,
              isBanned: found.is_banned,
              memberScope: found.member_scope,
              deniedBy: found.denied_by,
            };
      const outcome: SendOutcome = { facts };
      if (found.first_id !== null) outcome.firstId = found.first_id;
      if (found.id !== null && found.at !== null) outcome.row = storedRow(appId, message, found.id, parseTimestamptz(found.at));
      outcomes[found.n] = outcome;
    }
    return outcomes;
  }

  /** The groups of these guids that exist, locked against deletion until the transaction ends (in guid order). */
  async lockExistingGroups(appId: string, guids: string[], tx: Executor = this.db): Promise<GroupRow[]> {
    if (guids.length === 0) return [];
    return tx.selectFrom('groups').selectAll().where('app_id', '=', appId).where('guid', '=', anyOf(guids)).orderBy('guid').forKeyShare().execute();
  }

  /**
   * Inserts the messages, given in history order (sentAt, then the order sent): their ids are
   * drawn in that order. First the conversations are created or row-locked, in id order (so
   * concurrent importers cannot deadlock, and a live send to one of them waits: ids of a
   * conversation follow commit order, as in MessagesRepository.store). Then one statement
   * inserts the messages (a sender's muid imported before is skipped), moves each
   * conversation's last message, creates the sides of the 1:1 conversations it created, and
   * moves the receipt watermarks of the readers (a 1:1 message's receiver; a group message's
   * members) up to the newest message imported as delivered or read. Answers the stored row of
   * each message, at its index (undefined for one skipped), made from the input and the ids the
   * database returns (only those travel back).
   */
  async insertMany(appId: string, messages: BulkMessage[], tx: Executor): Promise<Array<MessageRow | undefined>> {
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
    }
    const ordered = [...conversations.values()].sort((a, b) => (a.conversation_id < b.conversation_id ? -1 : 1));
    // An existing conversation is only locked: ON CONFLICT DO UPDATE locks every conflicting row,
    // and WHERE false writes no new version of it (the statement below moves it). Only the rows
    // inserted here are returned.
    const upserted = await sql<{ conversation_id: string }>`
      insert into conversations as c (app_id, conversation_id, conversation_type, created_at, updated_at)
      select ${appId}, r.conversation_id, r.conversation_type, r.first_at, r.last_at
      from json_to_recordset(${JSON.stringify(ordered)}::json) as r(conversation_id text, conversation_type text, first_at timestamptz, last_at timestamptz)
      order by r.conversation_id
      on conflict (app_id, conversation_id) do update set updated_at = c.updated_at where false
      returning c.conversation_id`.execute(tx);
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
          unnest(${arrayLiteral(columns.readAt)}::float8[])
        ) with ordinality as r(conversation_id, sender, receiver, receiver_type, category, type, data, tags, mentioned_uids, muid,
                               sent_at, delivered_at, read_at, n)
      ), ins as (
        insert into messages (app_id, conversation_id, sender, receiver, receiver_type, category, type, data, tags, mentioned_uids,
                              muid, sent_at, delivered_at, read_at)
        select ${appId}, r.conversation_id, r.sender, r.receiver, r.receiver_type, r.category, r.type, r.data,
               ${textArray(sql`r.tags`)}, ${textArray(sql`r.mentioned_uids`)},
               r.muid, to_timestamp(r.sent_at), to_timestamp(r.delivered_at), to_timestamp(r.read_at)
        from r order by r.n
        on conflict (app_id, sender, muid) where muid is not null do nothing
        returning id, conversation_id, sender, receiver, receiver_type, muid, sent_at, delivered_at, read_at
      ), last as (
        -- The conversation's last message. Written as an upsert of rows that exist, so each is
        -- found through the key whatever the planner believes of the table (a join to ins may
        -- scan it all when its statistics are stale).
        insert into conversations as c (app_id, conversation_id, conversation_type, last_message_id, updated_at)
        select ${appId}, conversation_id, min(receiver_type), max(id), max(sent_at) from ins group by conversation_id
        on conflict (app_id, conversation_id) do update
          set last_message_id = greatest(c.last_message_id, excluded.last_message_id), updated_at = greatest(c.updated_at, excluded.updated_at)
      ), sides as (
        insert into user_conversations (app_id, uid, conversation_id, conversation_with)
        select distinct ${appId}, side.uid, ins.conversation_id, side.other
        from ins, lateral (values (ins.sender, ins.receiver), (ins.receiver, ins.sender)) as side (uid, other)
        where ins.receiver_type = 'user' and ins.conversation_id = any(${created}::text[])
        on conflict do nothing
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

/**
 * The json_to_recordset record of the n-th send of a statement, written as text: a literal of
 * spread objects given to JSON.stringify cost twice as much. data is already JSON text: spliced
 * in as is, keeping its key order and bytes. Tags and mentions are absent when empty (most
 * are), JSON arrays otherwise, read into text[] by textArray: json_to_recordset's own text[]
 * columns cost PostgreSQL more than the rest of the record together.
 */
function sendRecord(message: NewMessage, n: number): string {
  let record =
    `{"n":${n},"conversation_id":${JSON.stringify(message.conversationId)},"sender":${JSON.stringify(message.sender)},` +
    `"receiver":${JSON.stringify(message.receiver)},"receiver_type":${JSON.stringify(message.receiverType)},` +
    `"category":${JSON.stringify(message.category)},"type":${JSON.stringify(message.type)}`;
  if (message.tags.length) record += `,"tags":${JSON.stringify(message.tags)}`;
  if (message.mentionedUids.length) record += `,"mentioned_uids":${JSON.stringify(message.mentionedUids)}`;
  return `${record},"muid":${JSON.stringify(message.muid)},"data":${message.dataJson}}`;
}

/** A json column of tags or mentions (see sendRecord) as text[]. */
function textArray(column: RawBuilder<unknown>): RawBuilder<string[]> {
  return sql<string[]>`case when ${column} is null then '{}'::text[] else array(select json_array_elements_text(${column})) end`;
}

/** A message's own columns, as the table names them. */
function columnsOf(message: Omit<NewMessage, 'parentId'>) {
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
function storedRow(
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
  };
}
