import { sql } from 'kysely';
import type { ConsumerQueue } from './event-queue.repository.js';
import { DIGEST_DUE, DIGEST_FANOUT, DIGEST_TARGETS } from './notification-digest-fanout.js';
import { NOTIFICATIONS_CONSUMER, PUSH_FANOUT, PUSH_TARGETS } from './notification-push-fanout.js';

export { NOTIFICATIONS_CONSUMER, PUSH_TARGET } from './notification-push-fanout.js';
export { DIGEST_CHANNELS, EMAIL_TARGET, SMS_TARGET, type DigestChannel } from './notification-digest-fanout.js';

/**
 * Notifications as a consumer of the event log (docs/notifications.md): a target is an app's
 * channel (push, email, sms); each channel's fan-out (notification-push-fanout.ts,
 * notification-digest-fanout.ts) makes its deliveries. A push lane is due at once; an e-mail or
 * SMS lane (a digest) waits the app's interval for more messages. Whether a recipient wants one
 * (preferences, mutes, quiet hours) is decided when it is sent, and logged either way.
 */
export const NOTIFICATIONS_QUEUE: ConsumerQueue = {
  name: NOTIFICATIONS_CONSUMER,
  targets: sql`${PUSH_TARGETS} union ${DIGEST_TARGETS}`,
  // (columns: app_id, consumer, target, event_id, item, trigger, lane)
  expand: sql`select * from (${PUSH_FANOUT}) f union all select * from (${DIGEST_FANOUT}) d order by 1, 3, 4, 5`,
  due: DIGEST_DUE,
};
