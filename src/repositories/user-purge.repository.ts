import { sql } from 'kysely';
import { moveLastMessageBack } from './message-store/conversation-moves.js';
import { conversationMessages } from './sql-helpers.js';
import type { Executor } from '../db/transaction.js';

/** What one purge step did: where the next starts, and whether the app's messages are all scanned. */
export interface PurgeStep {
  /** The last message id scanned (the next step starts after it). */
  scannedTo: string | null;
  /** Fewer messages than asked were left to scan: the purge has reached the newest. */
  done: boolean;
  deleted: number;
}

/**
 * The messages of a user deleted permanently: what they sent, and the edited/deleted action
 * messages about their messages (those carry their content). Messages have no index by sender
 * (it would cost every send), so a purge walks the app's messages in id order, a bounded window
 * per step, each step its own short transaction (see UsersService.delete).
 */
export class UserPurgeRepository {
  /**
   * Scans the app's next `window` messages after `afterId` and deletes the user's among them,
   * with their reactions (a cascade) and the user's own reactions to the messages scanned;
   * uncounts deleted replies on their parents; moves each touched conversation's last message
   * back, and deletes the conversations left with no message. Runs inside the caller's
   * transaction.
   */
  async step(appId: string, uid: string, afterId: string, window: number, tx: Executor): Promise<PurgeStep> {
    if (!Number.isSafeInteger(window) || window < 1) throw new Error(`not a window: ${window}`);
    const found = await sql<{ scanned_to: string | null; scanned: string; ids: string[] | null; conversations: string[] | null; parents: string[] | null }>`
      with scanned as (
        select id, sender, category, type, data from messages
        where app_id = ${appId} and id > ${afterId}::bigint
        order by id limit ${sql.lit(window)}
      ), gone as (
        delete from messages m using scanned s
        where m.app_id = ${appId} and m.id = s.id
          and (s.sender = ${uid}
               or (s.category = 'action' and s.type = 'message' and s.data->'entities'->'on'->'entity'->>'sender' = ${uid}))
        returning m.id, m.conversation_id, m.parent_id
      ), reactions as (
        delete from message_reactions r
        where r.app_id = ${appId} and r.uid = ${uid}
          and r.message_id > ${afterId}::bigint and r.message_id <= (select max(id) from scanned)
      )
      select (select max(id)::text from scanned) as scanned_to, (select count(*) from scanned)::text as scanned,
             (select array_agg(id::text) from gone) as ids,
             (select array_agg(distinct conversation_id) from gone) as conversations,
             (select array_agg(parent_id::text) from gone where parent_id is not null) as parents`.execute(tx);
    const row = found.rows[0]!;
    const ids = row.ids ?? [];
    if (ids.length > 0) {
      // A reply's parent counts one reply fewer (a parent deleted in this step is gone already).
      const parents = row.parents ?? [];
      if (parents.length > 0) {
        await sql`update messages m set reply_count = greatest(m.reply_count - p.n, 0)
                  from (select parent_id::bigint as id, count(*)::int as n from unnest(${parents}::text[]) as parent_id group by 1) p
                  where m.app_id = ${appId} and m.id = p.id`.execute(tx);
      }
      const conversations = row.conversations ?? [];
      await moveLastMessageBack(appId, conversations, ids).execute(tx);
      await sql`delete from conversations c
                where c.app_id = ${appId} and c.conversation_id = any(${conversations}::text[])
                  and not exists (select 1 from messages m where m.app_id = c.app_id and ${sql.raw(conversationMessages('m', 'c.conversation_id'))})`.execute(tx);
    }
    return { scannedTo: row.scanned_to, done: Number(row.scanned) < window, deleted: ids.length };
  }
}
