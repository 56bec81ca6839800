import { sql, type Kysely } from 'kysely';
import { Batcher } from '../db/batcher.js';
import { UniqueViolation } from '../db/driver-errors.js';
import type { DB, ReceiverType } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';
import type { GroupRow } from './groups.repository.js';
import type { MessageRow, NewMessage, SendFacts } from './messages.repository.js';
import { anyOf } from './sql-helpers.js';
import type { UserRow } from './users.repository.js';

/** A message to insert in bulk: imported (with its sentAt and receipts) or sent now. */
export interface BulkMessage {
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
  /** Its place in the history; null: now (the time it is stored, as a send). */
  sentAt: Date | null;
  deliveredAt: Date | null;
  readAt: Date | null;
}

/**
 * Messages written many at a time, in two statements whatever their number: a chunk of the
 * data import, and concurrent sends coalesced into one transaction (the application's group
 * commit, as for create-user: see Batcher).
 */
export class MessageBatchesRepository {
  constructor(
    private readonly db: Kysely<DB>,
    /** Stores one message on its own (MessagesRepository.store): a batch that fails is retried this way, item by item. */
    private readonly storeOne: (appId: string, message: NewMessage) => Promise<MessageRow>,
  ) {}

  /**
   * Stores a sent message (not a thread reply), coalesced with the sends of the same moment:
   * it commits with them, in one transaction per app. A muid the sender used before (or twice
   * in the batch) rejects with UniqueViolation, as MessagesRepository.store does.
   */
  async store(appId: string, message: NewMessage): Promise<MessageRow> {
    return this.sendBatcher.submit({ appId, message });
  }

  private readonly sendBatcher = new Batcher<{ appId: string; message: NewMessage }, MessageRow>(
    async (items) => {
      const results: Array<MessageRow | Error> = new Array(items.length);
      const byApp = new Map<string, number[]>();
      items.forEach((item, index) => byApp.set(item.appId, [...(byApp.get(item.appId) ?? []), index]));
      for (const [appId, indexes] of byApp) {
        const messages = indexes.map((index): BulkMessage => ({ ...items[index]!.message, sentAt: null, deliveredAt: null, readAt: null }));
        try {
          const rows = await this.db.transaction().execute((tx) => this.insert(appId, messages, tx));
          const byN = new Map(rows.map((row, k) => [row.n, rows[k]!.row]));
          indexes.forEach((index, n) => (results[index] = byN.get(n) ?? new UniqueViolation('messages_app_sender_muid', undefined)));
        } catch {
          // One bad message (e.g. its receiver deleted meanwhile) must not fail the others.
          await Promise.all(
            indexes.map(async (index) => {
              try {
                results[index] = await this.storeOne(appId, items[index]!.message);
              } catch (error) {
                results[index] = error instanceof Error ? error : new Error(String(error));
              }
            }),
          );
        }
      }
      return results;
    },
    { maxBatch: 500, maxInFlight: 8 },
  );

  /**
   * What a send is checked against (as MessagesRepository.sendFacts), read for the sends of the
   * same moment together: one query per table for all of them instead of one query per send.
   */
  async sendFacts(appId: string, sender: string, receiverType: ReceiverType, receiver: string): Promise<SendFacts> {
    return this.factsBatcher.submit({ appId, sender, receiverType, receiver });
  }

  private readonly factsBatcher = new Batcher<{ appId: string; sender: string; receiverType: ReceiverType; receiver: string }, SendFacts>(
    async (items) => {
      const results: SendFacts[] = new Array(items.length);
      const byApp = new Map<string, number[]>();
      items.forEach((item, index) => byApp.set(item.appId, [...(byApp.get(item.appId) ?? []), index]));
      for (const [appId, indexes] of byApp) {
        const asked = indexes.map((index) => items[index]!);
        const toUser = asked.filter((item) => item.receiverType === 'user');
        const toGroup = asked.filter((item) => item.receiverType === 'group');
        const uids = [...new Set(asked.flatMap((item) => (item.receiverType === 'user' ? [item.sender, item.receiver] : [item.sender])))];
        const guids = [...new Set(toGroup.map((item) => item.receiver))];
        const pairs = (list: typeof asked, flip = false) =>
          sql`(select * from unnest(${list.map((item) => (flip ? item.receiver : item.sender))}::text[], ${list.map((item) => (flip ? item.sender : item.receiver))}::text[]) as p (a, b))`;
        const [users, groups, blocks, members, bans] = await Promise.all([
          this.db.selectFrom('users').selectAll().where('app_id', '=', appId).where('uid', '=', anyOf(uids)).execute(),
          guids.length ? this.db.selectFrom('groups').selectAll().where('app_id', '=', appId).where('guid', '=', anyOf(guids)).execute() : [],
          toUser.length
            ? sql<{ uid: string; blocked_uid: string }>`
                select b.uid, b.blocked_uid from blocked_users b
                join (${pairs(toUser)} union ${pairs(toUser, true)}) as p on b.uid = p.a and b.blocked_uid = p.b
                where b.app_id = ${appId}`.execute(this.db).then((result) => result.rows)
            : [],
          toGroup.length
            ? sql<{ guid: string; uid: string }>`
                select m.guid, m.uid from group_members m join ${pairs(toGroup, true)} as p on m.guid = p.a and m.uid = p.b
                where m.app_id = ${appId}`.execute(this.db).then((result) => result.rows)
            : [],
          toGroup.length
            ? sql<{ guid: string; uid: string }>`
                select g.guid, g.uid from group_bans g join ${pairs(toGroup, true)} as p on g.guid = p.a and g.uid = p.b
                where g.app_id = ${appId}`.execute(this.db).then((result) => result.rows)
            : [],
        ]);
        const userByUid = new Map<string, UserRow>(users.map((user) => [user.uid, user]));
        const groupByGuid = new Map<string, GroupRow>(groups.map((group) => [group.guid, group]));
        const has = (rows: Array<{ a: string; b: string }>) => new Set(rows.map((row) => `${row.a}\u0000${row.b}`));
        const blocked = has(blocks.map((row) => ({ a: row.uid, b: row.blocked_uid })));
        const joined = has(members.map((row) => ({ a: row.guid, b: row.uid })));
        const banned = has(bans.map((row) => ({ a: row.guid, b: row.uid })));
        indexes.forEach((index) => {
          const { sender, receiverType, receiver } = items[index]!;
          results[index] =
            receiverType === 'user'
              ? {
                  sender: userByUid.get(sender),
                  receiverUser: userByUid.get(receiver),
                  senderBlockedReceiver: blocked.has(`${sender}\u0000${receiver}`),
                  receiverBlockedSender: blocked.has(`${receiver}\u0000${sender}`),
                }
              : {
                  sender: userByUid.get(sender),
                  group: groupByGuid.get(receiver),
                  isMember: joined.has(`${receiver}\u0000${sender}`),
                  isBanned: banned.has(`${receiver}\u0000${sender}`),
                };
        });
      }
      return results;
    },
    { maxBatch: 500, maxInFlight: 8 },
  );

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
   * inserts the messages (a sender's muid imported before is skipped: not returned), moves each
   * conversation's last message, creates the sides of the 1:1 conversations it created, and
   * moves the receipt watermarks of the readers (a 1:1 message's receiver; a group message's
   * members) up to the newest message imported as delivered or read. Returns the inserted rows,
   * made from the input and the ids the database returns (only those travel back).
   */
  async insertMany(appId: string, messages: BulkMessage[], tx: Executor): Promise<MessageRow[]> {
    return (await this.insert(appId, messages, tx)).map((inserted) => inserted.row);
  }

  /** insertMany, each row with its index in `messages`. */
  private async insert(appId: string, messages: BulkMessage[], tx: Executor): Promise<Array<{ n: number; row: MessageRow }>> {
    if (messages.length === 0) return [];
    // A conversation's times: of its first and last imported message, or now (null) for sends.
    const conversations = new Map<string, { conversation_id: string; conversation_type: ReceiverType; first_at: Date | null; last_at: Date | null }>();
    for (const message of messages) {
      const known = conversations.get(message.conversationId);
      if (!known) {
        conversations.set(message.conversationId, {
          conversation_id: message.conversationId,
          conversation_type: message.receiverType,
          first_at: message.sentAt,
          last_at: message.sentAt,
        });
      } else if (message.sentAt && known.last_at && message.sentAt > known.last_at) known.last_at = message.sentAt;
    }
    const ordered = [...conversations.values()].sort((a, b) => (a.conversation_id < b.conversation_id ? -1 : 1));
    const upserted = await sql<{ conversation_id: string; created: boolean }>`
      insert into conversations as c (app_id, conversation_id, conversation_type, created_at, updated_at)
      select ${appId}, r.conversation_id, r.conversation_type, coalesce(r.first_at, clock_timestamp()), coalesce(r.last_at, clock_timestamp())
      from json_to_recordset(${JSON.stringify(ordered)}::json) as r(conversation_id text, conversation_type text, first_at timestamptz, last_at timestamptz)
      order by r.conversation_id
      on conflict (app_id, conversation_id) do update set updated_at = greatest(c.updated_at, excluded.updated_at)
      returning c.conversation_id, (xmax = 0) as created`.execute(tx);
    const created = upserted.rows.filter((row) => row.created).map((row) => row.conversation_id);

    // data is already JSON text: spliced in as is, keeping its key order and bytes.
    const records = messages.map((message, n) => {
      const fields = JSON.stringify({
        n,
        conversation_id: message.conversationId,
        sender: message.sender,
        receiver: message.receiver,
        receiver_type: message.receiverType,
        category: message.category,
        type: message.type,
        tags: message.tags,
        mentioned_uids: message.mentionedUids,
        muid: message.muid,
        sent_at: message.sentAt,
        delivered_at: message.deliveredAt,
        read_at: message.readAt,
      });
      return `${fields.slice(0, -1)},"data":${message.dataJson}}`;
    });
    const inserted = await sql<{ id: string; sender: string; muid: string | null; sent_at: Date; conversation_id: string }>`
      with r as (
        select * from json_to_recordset(${`[${records.join(',')}]`}::json) as r(
          n int, conversation_id text, sender text, receiver text, receiver_type text, category text, type text, data json,
          tags text[], mentioned_uids text[], muid text, sent_at timestamptz, delivered_at timestamptz, read_at timestamptz)
      ), ins as (
        insert into messages (app_id, conversation_id, sender, receiver, receiver_type, category, type, data, tags, mentioned_uids,
                              muid, sent_at, delivered_at, read_at)
        select ${appId}, r.conversation_id, r.sender, r.receiver, r.receiver_type, r.category, r.type, r.data, r.tags, r.mentioned_uids,
               r.muid, coalesce(r.sent_at, clock_timestamp()), r.delivered_at, r.read_at
        from r order by r.n
        on conflict (app_id, sender, muid) where muid is not null do nothing
        returning id, conversation_id, sender, receiver, receiver_type, muid, sent_at, delivered_at, read_at
      ), last as (
        -- A send moves the conversation's time to its own (an import's was set above). Written as
        -- an upsert of rows that exist, so each is found through the key whatever the planner
        -- believes of the table (a join to ins may scan it all when its statistics are stale).
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
      select ins.id, ins.sender, ins.muid, ins.sent_at, ins.conversation_id from ins`.execute(tx);
    // A conversation created here whose every message was a muid used before is taken back
    // (rare: only then is there a statement for it).
    if (created.length > 0) {
      const kept = new Set(inserted.rows.map((row) => row.conversation_id));
      const emptied = created.filter((id) => !kept.has(id));
      if (emptied.length > 0) {
        await tx.deleteFrom('conversations').where('app_id', '=', appId).where('conversation_id', 'in', emptied).execute();
      }
    }
    // Each row back to its message: by sender and muid; messages without a muid (which never
    // conflict) took their ids in the order given.
    const byMuid = new Map<string, (typeof inserted.rows)[number]>();
    const withoutMuid: Array<(typeof inserted.rows)[number]> = [];
    for (const row of inserted.rows) {
      if (row.muid === null) withoutMuid.push(row);
      else byMuid.set(`${row.sender}\u0000${row.muid}`, row);
    }
    withoutMuid.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
    let next = 0;
    const found = messages.flatMap((message, n) => {
      const row = message.muid === null ? withoutMuid[next++] : byMuid.get(`${message.sender}\u0000${message.muid}`);
      return row ? [{ n, id: row.id, sent_at: row.sent_at }] : [];
    });
    return found.map(({ id, n, sent_at }) => {
      const message = messages[n]!;
      const row: MessageRow = {
        app_id: appId,
        id: String(id),
        conversation_id: message.conversationId,
        sender: message.sender,
        receiver: message.receiver,
        receiver_type: message.receiverType,
        category: message.category,
        type: message.type,
        data: JSON.parse(message.dataJson) as unknown,
        tags: message.tags,
        mentioned_uids: message.mentionedUids,
        muid: message.muid,
        parent_id: null,
        reply_count: 0,
        sent_at: sent_at instanceof Date ? sent_at : new Date(sent_at),
        updated_at: null,
        edited_at: null,
        edited_by: null,
        deleted_at: null,
        deleted_by: null,
        delivered_at: message.deliveredAt,
        read_at: message.readAt,
      };
      return { n, row };
    });
  }
}
