import { sql, type RawBuilder } from 'kysely';

/**
 * Who a message reaches, for every channel's fan-out (push, e-mail, SMS): one rule, written once.
 * The rows `r (uid)` of the message `m`: the 1:1 receiver, or the group's members (the sender
 * among them: each fan-out leaves them out).
 */
export const MESSAGE_RECIPIENTS = sql`
    cross join lateral (
      select m.receiver as uid where m.receiver_type = 'user'
      union all
      select gm.uid from group_members gm where m.receiver_type = 'group' and gm.app_id = m.app_id and gm.guid = m.receiver
    ) r`;

/** The recipient `r.uid` of the event `b` is in no block relation with `actor` (either way). */
export function notBlockedWith(actor: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`not exists (select 1 from blocked_users k where k.app_id = b.app_id
                      and ((k.uid = r.uid and k.blocked_uid = ${actor}) or (k.uid = ${actor} and k.blocked_uid = r.uid)))`;
}
