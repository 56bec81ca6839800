import { sql } from 'kysely';
import type { Executor } from '../../db/transaction.js';

/**
 * What each event has been sent to (migration 0024): the idempotency of notifications. `claim`
 * before sending to a key (a device token, or 'custom'); a send that is to be tried again
 * `release`s it.
 */
export class NotificationSendsRepository {
  constructor(private readonly db: Executor) {}

  /** Whether the event is now this caller's to send to `key` (false: it was sent, or is being sent, already). */
  async claim(appId: string, eventId: string, key: string, tx: Executor = this.db): Promise<boolean> {
    const result = await sql<{ key: string }>`
      insert into notification_sends (app_id, event_id, key) values (${appId}, ${eventId}::bigint, ${key})
      on conflict do nothing returning key`.execute(tx);
    return result.rows.length > 0;
  }

  /**
   * claim for many sends in one statement (of any apps): per item, in order, whether it was
   * claimed now. Coalesced across the deliveries of the moment (container-notifications.ts).
   */
  async claimMany(items: ReadonlyArray<{ appId: string; eventId: string; key: string }>, tx: Executor = this.db): Promise<boolean[]> {
    if (items.length === 0) return [];
    const result = await sql<{ n: number }>`
      with wanted as (
        select * from unnest(${items.map((i) => i.appId)}::text[], ${items.map((i) => i.eventId)}::bigint[], ${items.map((i) => i.key)}::text[])
          with ordinality as w (app_id, event_id, key, n)
      ),
      made as (
        insert into notification_sends (app_id, event_id, key)
        select distinct on (app_id, event_id, key) app_id, event_id, key from wanted order by app_id, event_id, key, n
        on conflict do nothing
        returning app_id, event_id, key
      )
      -- An item named twice in one batch: its first naming claims it.
      select min(w.n)::int as n from wanted w join made m using (app_id, event_id, key) group by w.app_id, w.event_id, w.key`.execute(tx);
    const claimed = new Set(result.rows.map((row) => Number(row.n)));
    return items.map((_, index) => claimed.has(index + 1));
  }

  /** Forgets a claim whose send is to be tried again. */
  async release(appId: string, eventId: string, key: string, tx: Executor = this.db): Promise<void> {
    await tx.deleteFrom('notification_sends').where('app_id', '=', appId).where('event_id', '=', eventId).where('key', '=', key).execute();
  }

  /** The retention: deletes up to `batch` of the app's rows older than `cutoff`. */
  async deleteOlderThan(appId: string, cutoff: Date, batch: number, tx: Executor = this.db): Promise<number> {
    const result = await sql`
      delete from notification_sends s where s.app_id = ${appId} and (s.event_id, s.key) in (
        select o.event_id, o.key from notification_sends o where o.app_id = ${appId} and o.sent_at < ${cutoff} limit ${batch})`.execute(tx);
    return Number(result.numAffectedRows ?? 0);
  }
}
