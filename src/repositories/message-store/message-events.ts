import { sql, type RawBuilder } from 'kysely';

/**
 * The events of messages stored (docs/events.md), written once for every entry point of the
 * message store and inserted by the statement (or the transaction) that stores them, so a
 * message is never stored without its events nor an event recorded without its message. Which
 * events a message makes is decided here, from the message itself:
 * - a message or custom message: `message_sent`, and `user_mentioned` when it mentions users;
 * - an action message about a message (`type` message, `data.action` edited or deleted):
 *   `message_edited` or `message_deleted`, whose payload is that action message (as the
 *   vendor's webhooks send them);
 * - a groupMember action message: none (its change records its group event);
 * - a message the moderation engine evaluated and let through: also `moderation_engine_approved`.
 * The events' ids are drawn in the messages' order (and so, for one conversation, under its lock).
 *
 * `stored`: rows of `conversation_id, id, category, type, action, mentions, moderated`
 * (`action`: the action of an action message, else null; `mentions`: whether it mentions users;
 * `moderated`: the moderation engine approved it). A CTE body. (A held message records none of
 * these until it is released: held-messages.repository.ts.)
 */
export function recordMessageEvents(appId: string, stored: RawBuilder<unknown>): RawBuilder<never> {
  return sql`
    insert into events (app_id, trigger, conversation_id, message_id)
    select ${appId}, t.trigger, s.conversation_id, s.id
    from (${stored}) as s (conversation_id, id, category, type, action, mentions, moderated),
         lateral (values
           (1, case when s.category <> 'action' and s.moderated then 'moderation_engine_approved' end),
           (2, case when s.category <> 'action' then 'message_sent'
                    when s.type = 'message' and s.action in ('edited', 'deleted') then 'message_' || s.action end),
           (3, case when s.category <> 'action' and s.mentions then 'user_mentioned' end)
         ) as t (n, trigger)
    where t.trigger is not null
    order by s.id, t.n`;
}
