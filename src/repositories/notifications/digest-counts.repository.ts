import { sql } from 'kysely';
import type { Executor } from '../../db/transaction.js';

/** A digest's channel and the provider it goes through, as the notification log names them. */
export type DigestRoute = { channel: 'email'; provider: 'sendgrid' | 'custom' } | { channel: 'sms'; provider: 'twilio' | 'custom' };

/**
 * How many e-mail and SMS digests a user was sent lately, for the caps of the app's settings
 * (maxPerDay, maxPerDayPerConversation): the notification log's entries of digests the provider
 * took (migration 0026 indexes just those).
 */
export class DigestCountsRepository {
  constructor(private readonly db: Executor) {}

  /**
   * The digests sent to `uid` through `route` since `since`: in all, and in one conversation
   * (a group by its guid; a 1:1 conversation by the other user, who sent its messages).
   */
  async sentSince(
    appId: string,
    route: DigestRoute,
    uid: string,
    conversation: { type: 'user' | 'group'; id: string },
    since: Date,
    tx: Executor = this.db,
  ): Promise<{ all: number; conversation: number }> {
    const inConversation = conversation.type === 'group' ? sql`l.receiver_type = 'group' and l.receiver = ${conversation.id}` : sql`l.receiver_type = 'user' and l.sender = ${conversation.id}`;
    // The channel as a literal (one of two words): the partial index's condition is proven from it.
    const result = await sql<{ all: number; conversation: number }>`
      select count(*)::int as "all", (count(*) filter (where ${inConversation}))::int as conversation
      from notification_logs l
      where l.app_id = ${appId} and l.channel = ${sql.lit(route.channel)} and l.provider = ${route.provider}
        and coalesce(l.member, l.receiver) = ${uid} and l.created_at > ${since}
        and l.notification_triggered and l.success`.execute(tx);
    const row = result.rows[0];
    return { all: row?.all ?? 0, conversation: row?.conversation ?? 0 };
  }
}
