import { sql } from 'kysely';
import type { ConsumerQueue } from './event-queue.repository.js';

/** The consumer name of the notifications' rows in the event log's queue. */
export const NOTIFICATIONS_CONSUMER = 'notifications';

/** The channels notifications go out on, each a target of every app that has a provider for it. */
export const PUSH_TARGET = 'push';

/** The apps that can send push notifications: an FCM or APNs provider, or an enabled custom push provider. */
const PUSH_APPS = sql`
  select app_id from notification_fcm_providers
  union select app_id from notification_apns_providers
  union select app_id from notification_custom_providers where channel = 'push' and enabled`;

/**
 * Notifications as a consumer of the event log (docs/notifications.md): a target is an app's
 * channel (push); a new message (message_sent, replies included) becomes one delivery per
 * recipient who could be reached: the 1:1 receiver, or the group's members, never the sender,
 * nobody in a block with the sender, only users holding a push token (unless the app has a custom
 * push provider, which is called for each recipient). The delivery's item and lane are the
 * recipient: one recipient's notifications go in order, recipients side by side. Held messages
 * notify nobody. Whether a recipient wants it (preferences, mutes, quiet hours) is decided when it
 * is sent, and logged either way.
 */
export const NOTIFICATIONS_QUEUE: ConsumerQueue = {
  name: NOTIFICATIONS_CONSUMER,
  targets: sql`select p.app_id, ${PUSH_TARGET}::text as target from (${PUSH_APPS}) p`,
  expand: sql`
    select b.app_id, ${NOTIFICATIONS_CONSUMER}::text, ${PUSH_TARGET}::text, b.id, r.uid, b.trigger, r.uid
    from batch b
    join messages m on m.app_id = b.app_id and m.id = b.message_id and not m.held
    cross join lateral (
      select m.receiver as uid where m.receiver_type = 'user'
      union all
      select gm.uid from group_members gm where m.receiver_type = 'group' and gm.app_id = m.app_id and gm.guid = m.receiver
    ) r
    where b.trigger = 'message_sent' and r.uid <> m.sender
      and b.app_id in (${PUSH_APPS})
      and not exists (select 1 from blocked_users k where k.app_id = b.app_id
                      and ((k.uid = r.uid and k.blocked_uid = m.sender) or (k.uid = m.sender and k.blocked_uid = r.uid)))
      and (exists (select 1 from notification_push_tokens p where p.app_id = b.app_id and p.uid = r.uid)
           or exists (select 1 from notification_custom_providers c where c.app_id = b.app_id and c.channel = 'push' and c.enabled))
    order by b.app_id, b.id, r.uid`,
};
