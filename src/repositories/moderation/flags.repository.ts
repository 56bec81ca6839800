import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { ModerationFlaggedMessagesTable, ModerationFlagsTable } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';

export type FlaggedMessageRow = Selectable<ModerationFlaggedMessagesTable>;
export type FlagRow = Selectable<ModerationFlagsTable>;
export type FlagStatus = FlaggedMessageRow['status'];
export type ReviewStatus = Exclude<FlagStatus, 'pending'>;

/** How many flags of one reason a message has, and when the last of them was made. */
export interface ReasonCountRow {
  message_id: string;
  reason_id: string;
  count: number;
  last_at: Date;
}

/**
 * An item of the reviewed list: a flagged message moderators reviewed (`flagged`), or a message
 * the moderation engine held that they reviewed (`blocked`, with what held it).
 */
export interface ReviewedRow {
  source: 'flagged' | 'blocked';
  message_id: string;
  status: 'pending' | 'approved' | 'disapproved' | 'rejected';
  reviewed_at: Date;
  /** When it was first flagged, or held. */
  created_at: Date;
  rule_id: string | null;
  rule_name: string | null;
  revision_id: string | null;
  condition: unknown;
  action: unknown;
  kind: 'send' | 'edit' | null;
}

export interface OffsetPage {
  limit: number;
  offset: number;
}

/** Users' flags of messages, and the queue of flagged messages moderators review. */
export class FlagsRepository {
  constructor(private readonly db: Executor) {}

  /**
   * Puts a flagged message in the queue, or back in it: pending, unless a review disapproved
   * it (it is hidden already; the new flag is kept for the record). Concurrent flags of one
   * message take turns on its row.
   */
  async queue(appId: string, messageId: string, tx: Executor): Promise<FlaggedMessageRow> {
    return tx
      .insertInto('moderation_flagged_messages')
      .values({ app_id: appId, message_id: messageId, status: 'pending', created_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
      .onConflict((oc) =>
        oc.columns(['app_id', 'message_id']).doUpdateSet({
          status: sql<FlagStatus>`case when moderation_flagged_messages.status = 'disapproved' then 'disapproved' else 'pending' end`,
          updated_at: sql<Date>`now()`,
        }),
      )
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** The user's flag of the message; flagging again replaces its reason, remark and time. */
  async upsertFlag(appId: string, flag: { messageId: string; uid: string; reasonId: string; remark: string | null }, tx: Executor): Promise<FlagRow> {
    return tx
      .insertInto('moderation_flags')
      .values({ app_id: appId, message_id: flag.messageId, uid: flag.uid, reason_id: flag.reasonId, remark: flag.remark, created_at: sql<Date>`now()` })
      .onConflict((oc) => oc.columns(['app_id', 'message_id', 'uid']).doUpdateSet({ reason_id: flag.reasonId, remark: flag.remark, created_at: sql<Date>`now()` }))
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async get(appId: string, messageId: string, tx: Executor = this.db): Promise<FlaggedMessageRow | undefined> {
    return tx.selectFrom('moderation_flagged_messages').selectAll().where('app_id', '=', appId).where('message_id', '=', messageId).executeTakeFirst();
  }

  /** The queued message, its row locked until the transaction ends: reviews and flags of it take turns. */
  async getForUpdate(appId: string, messageId: string, tx: Executor): Promise<FlaggedMessageRow | undefined> {
    return tx.selectFrom('moderation_flagged_messages').selectAll().where('app_id', '=', appId).where('message_id', '=', messageId).forUpdate().executeTakeFirst();
  }

  async markReviewed(appId: string, messageId: string, status: ReviewStatus, tx: Executor): Promise<FlaggedMessageRow> {
    return tx
      .updateTable('moderation_flagged_messages')
      .set({ status, reviewed_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
      .where('app_id', '=', appId)
      .where('message_id', '=', messageId)
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /**
   * A page of the pending queue, the message flagged last first; with `reasonId`, messages
   * with a flag of that reason, with `sender`, messages that user sent.
   */
  async listPending(appId: string, page: OffsetPage & { reasonId?: string; sender?: string }, tx: Executor = this.db): Promise<FlaggedMessageRow[]> {
    let query = tx.selectFrom('moderation_flagged_messages as q').selectAll('q').where('q.app_id', '=', appId).where('q.status', '=', 'pending');
    if (page.reasonId !== undefined) {
      const reasonId = page.reasonId;
      query = query.where(({ exists, selectFrom }) =>
        exists(selectFrom('moderation_flags as f').select('f.uid').whereRef('f.app_id', '=', 'q.app_id').whereRef('f.message_id', '=', 'q.message_id').where('f.reason_id', '=', reasonId)),
      );
    }
    if (page.sender !== undefined) {
      const sender = page.sender;
      query = query.where(({ exists, selectFrom }) =>
        exists(selectFrom('messages as m').select('m.id').whereRef('m.app_id', '=', 'q.app_id').whereRef('m.id', '=', 'q.message_id').where('m.sender', '=', sender)),
      );
    }
    return query.orderBy('q.updated_at', 'desc').orderBy('q.message_id', 'desc').limit(page.limit).offset(page.offset).execute();
  }

  /**
   * The flags of these messages: the `shown` latest of each (then by uid), and the count of
   * each message's flags by reason with the time of the last.
   */
  async flagsOf(appId: string, messageIds: string[], shown: number, tx: Executor = this.db): Promise<{ flags: FlagRow[]; counts: ReasonCountRow[] }> {
    if (messageIds.length === 0) return { flags: [], counts: [] };
    const flags = await sql<FlagRow>`
      select app_id, message_id, uid, reason_id, remark, created_at from (
        select f.*, row_number() over (partition by f.message_id order by f.created_at desc, f.uid) as n
        from moderation_flags f
        where f.app_id = ${appId} and f.message_id = any(${messageIds}::bigint[])
      ) latest
      where n <= ${shown}
      order by message_id, created_at desc, uid`.execute(tx);
    const counts = await tx
      .selectFrom('moderation_flags')
      .select((eb) => ['message_id', 'reason_id', eb.fn.countAll<string>().as('count'), eb.fn.max('created_at').as('last_at')])
      .where('app_id', '=', appId)
      .where('message_id', 'in', messageIds)
      .groupBy(['message_id', 'reason_id'])
      .execute();
    return {
      flags: flags.rows,
      counts: counts.map((row) => ({ message_id: row.message_id, reason_id: row.reason_id, count: Number(row.count), last_at: row.last_at })),
    };
  }

  /**
   * A page of what moderators reviewed, the latest review first: flagged messages reviewed,
   * and messages the moderation engine held that were reviewed (moderation_blocked_messages),
   * or only those of one `source`.
   */
  async listReviewed(appId: string, page: OffsetPage & { source?: 'flagged' | 'blocked' }, tx: Executor = this.db): Promise<ReviewedRow[]> {
    const parts: RawBuilder<unknown>[] = [];
    if (page.source !== 'blocked') {
      parts.push(sql`
        select 'flagged'::text as source, message_id, status, coalesce(reviewed_at, updated_at) as reviewed_at, created_at,
               null::text as rule_id, null::text as rule_name, null::text as revision_id, null::jsonb as condition, null::jsonb as action, null::text as kind
        from moderation_flagged_messages
        where app_id = ${appId} and status <> 'pending'`);
    }
    if (page.source !== 'flagged') {
      parts.push(sql`
        select 'blocked'::text as source, message_id, status, updated_at as reviewed_at, created_at, rule_id, rule_name, revision_id, condition, action, kind
        from moderation_blocked_messages
        where app_id = ${appId} and reviewed`);
    }
    const result = await sql<ReviewedRow>`
      select * from (${sql.join(parts, sql` union all `)}) reviewed
      order by reviewed_at desc, message_id desc, source
      limit ${page.limit} offset ${page.offset}`.execute(tx);
    return result.rows;
  }
}
