import { sql } from 'kysely';
import type { ConsumerQueue } from './event-queue.repository.js';

/** The consumer name of the webhooks' rows in the event log's queue. */
export const WEBHOOKS_CONSUMER = 'webhooks';

/**
 * The webhooks as a consumer of the event log (docs/webhooks.md): a target is a webhook, taking
 * deliveries while enabled; an event becomes one delivery per enabled webhook subscribed to its
 * trigger (created before the event's change began), in the lane of its conversation ('' when
 * none), so a webhook gets each conversation's events in order.
 */
export const WEBHOOKS_QUEUE: ConsumerQueue = {
  name: WEBHOOKS_CONSUMER,
  targets: sql`select app_id, id as target from webhooks where enabled`,
  expand: sql`
    select b.app_id, ${WEBHOOKS_CONSUMER}::text, w.id, b.id, ''::text, b.trigger, coalesce(b.conversation_id, '')
    from batch b join webhooks w on w.app_id = b.app_id and w.enabled and b.trigger = any(w.triggers) and w.created_at <= b.created_at
    order by b.app_id, w.id, b.id
    -- A webhook being deleted waits for this statement (and then deletes what it made), or
    -- this one skips it: no delivery outlives its webhook.
    for key share of w`,
};
