import { sql, type Kysely } from 'kysely';
import { runApart } from '../../db/batcher.js';
import { parseTimestamptz } from '../../db/timestamps.js';
import type { DB, ReceiverType } from '../../db/schema.js';
import { StatementTemplate } from '../sql-text.js';
import type { MessageRow, NewMessage } from '../messages.repository.js';
import { sendChecks, sendFactsOf, type SendCheckRow, type SendFacts } from '../send-checks.js';
import { createSides, drawIdsUnderLock } from './conversation-moves.js';
import { recordMessageEvents } from './message-events.js';
import { storedRow, textArray } from './message-rows.js';

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
 * Messages written many at a time: concurrent sends coalesced into one statement (the
 * application's group commit, as for create-user; see Batcher). A data import's chunks are
 * MessageImportsRepository.insertMany's.
 */
export class MessageBatchesRepository {
  /**
   * The send statement of a round all to users, all to groups, or to both (sendStatement),
   * compiled when the repository is made: a fragment misused fails the start, not a send.
   */
  private readonly sendStatements: Record<ReceiverType | 'both', SendStatement>;

  constructor(private readonly db: Kysely<DB>) {
    this.sendStatements = { user: sendStatement(db, 'user'), group: sendStatement(db, 'group'), both: sendStatement(db, undefined) };
  }

  /**
   * Checks and stores sent messages (not thread replies), of any apps, each answered on its
   * own: per app in rounds in which each conversation appears once, in the order sent, each
   * round ONE statement (sendRound). The form that concurrent sends are coalesced into
   * (container.ts): the application's group commit, as for create-user.
   */
  async sendMany(items: Array<{ appId: string; message: NewMessage }>): Promise<Array<SendOutcome | Error>> {
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
          outcomes = await runApart(
            (messages: NewMessage[]) => this.sendRound(appId, messages),
            round.map((index) => items[index]!.message),
          );
        } catch (error) {
          outcomes = round.map(() => (error instanceof Error ? error : new Error(String(error))));
        }
        round.forEach((index, n) => (results[index] = outcomes[n]!));
      }
    }
    return results;
  }

  /**
   * One statement for sends to distinct conversations: it reads what each is checked against
   * (sendChecks: the sender; the receiving user and the blocks between the two, or the group
   * with the sender's membership and ban; the permissions) and an earlier message with the
   * muid, stores those that pass (conversation-moves.ts, one message per conversation) with
   * their events (message-events.ts), and answers the facts with each stored row. A muid used twice at once raises UniqueViolation.
   */
  private async sendRound(appId: string, messages: NewMessage[]): Promise<SendOutcome[]> {
    const records = messages.map(sendRecord);
    const kind = messages[0]!.receiverType;
    const statement = this.sendStatements[messages.every((message) => message.receiverType === kind) ? kind : 'both'];
    const rows = await statement.execute(this.db, { appId, records: `[${records.join(',')}]` });
    const outcomes: SendOutcome[] = new Array(messages.length);
    for (const found of rows) {
      const message = messages[found.n]!;
      const facts = sendFactsOf(found, message.receiverType);
      const outcome: SendOutcome = { facts };
      if (found.first_id !== null) outcome.firstId = found.first_id;
      if (found.id !== null && found.at !== null) outcome.row = storedRow(appId, message, found.id, parseTimestamptz(found.at));
      outcomes[found.n] = outcome;
    }
    return outcomes;
  }
}

type SendFound = SendCheckRow & { n: number; first_id: string | null; id: string | null; at: string | null };
type SendStatement = StatementTemplate<{ appId: string; records: string }, SendFound>;

/**
 * The statement of a round of sends (see sendRound), for sends all to users, all to groups, or
 * (receivers undefined) of both kinds: a statement leaves out the lookups of a kind it has no
 * sends to (sendChecks).
 */
function sendStatement(db: Kysely<DB>, receivers: ReceiverType | undefined): SendStatement {
  return new StatementTemplate(
    db,
    ['appId', 'records'],
    ({ appId, records }) => sql<SendFound>`
      with r as (
        select * from json_to_recordset(${records}::json) as r(
          n int, conversation_id text, sender text, receiver text, receiver_type text, category text, type text, data json,
          tags json, mentioned_uids json, muid text, shown text, moderated boolean)
      ), f as (
        -- The checks of each send (send-checks.ts), and the sender's earlier message with its muid.
        select c.*,
          case when c.muid is not null then (
            select m.id from messages m where m.app_id = ${appId} and m.sender = c.sender and m.muid = c.muid) end as first_id
        from (${sendChecks(appId, receivers ? { reply: false, receivers } : { reply: false })}) c
      ), ok as (
        -- The sends that break no rule (SEND_REFUSALS) and are no muid's retry.
        select * from f where f.refused is null and f.first_id is null
      ), conv as (${drawIdsUnderLock(appId, sql`select conversation_id, receiver_type from ok`)}
      ), sides as (${createSides(
        appId,
        sql`select ok.conversation_id, ok.sender, ok.receiver from ok join conv on conv.conversation_id = ok.conversation_id
            where conv.created and ok.receiver_type = 'user'`,
      )}
      ), ins as (
        insert into messages (app_id, id, conversation_id, sender, receiver, receiver_type, category, type, data, tags,
                              mentioned_uids, muid, sent_at, shown)
        overriding system value
        select ${appId}, conv.id, ok.conversation_id, ok.sender, ok.receiver, ok.receiver_type, ok.category, ok.type, ok.data,
               ${textArray(sql`ok.tags`)}, ${textArray(sql`ok.mentioned_uids`)}, ok.muid, conv.at, ok.shown
        from ok join conv on conv.conversation_id = ok.conversation_id
      ), ev as (${recordMessageEvents(
        appId,
        sql`select ok.conversation_id, conv.id, ok.category, ok.type, null::text, ok.mentioned_uids is not null, ok.moderated is true
            from ok join conv on conv.conversation_id = ok.conversation_id`,
      )}
      )
      select f.n, f.sender_row, f.receiver_row, f.group_row, f.sender_blocked_receiver, f.receiver_blocked_sender,
             f.is_member, f.is_banned, f.member_scope, f.denied_by, f.refused, f.first_id::text as first_id, conv.id::text as id, conv.at::text as at
      from f left join conv on conv.conversation_id = f.conversation_id`,
  );
}

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
  if (message.shown) record += `,"shown":${JSON.stringify(message.shown)}`;
  if (message.moderated) record += `,"moderated":true`;
  return `${record},"muid":${JSON.stringify(message.muid)},"data":${message.dataJson}}`;
}
