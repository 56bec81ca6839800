import { sql } from 'kysely';
import { defaultNotificationSettings } from '../../domain/notifications/preferences-defaults.js';
import { NOTIFICATIONS_CONSUMER } from './notification-push-fanout.js';
import { MESSAGE_RECIPIENTS, notBlockedWith } from './notification-recipients.js';

/** The e-mail and SMS channels' targets: every app that can send that channel's digests has it. */
export const EMAIL_TARGET = 'email';
export const SMS_TARGET = 'sms';
export type DigestChannel = typeof EMAIL_TARGET | typeof SMS_TARGET;
export const DIGEST_CHANNELS: readonly DigestChannel[] = [EMAIL_TARGET, SMS_TARGET];

/**
 * `(app_id, target)` of the digest targets: `email` for an app with an enabled SendGrid provider
 * or an enabled custom e-mail provider, `sms` for one with an enabled Twilio provider or an
 * enabled custom SMS provider.
 */
export const DIGEST_TARGETS = sql`
  select app_id, ${EMAIL_TARGET}::text as target from notification_sendgrid_providers where enabled
  union select app_id, ${EMAIL_TARGET}::text from notification_custom_providers where channel = ${EMAIL_TARGET} and enabled
  union select app_id, ${SMS_TARGET}::text from notification_twilio_providers where enabled
  union select app_id, ${SMS_TARGET}::text from notification_custom_providers where channel = ${SMS_TARGET} and enabled`;

/**
 * A digest's lane: its recipient and conversation (key), as `<uid>/<conversation key>`. Neither
 * holds a `/` (uids and guids are letters, digits, `_` and `-`; a conversation key adds `:` and
 * `group_`), so one lane names one recipient's conversation.
 */
export function digestLane(uid: string, conversationKey: string): string {
  return `${uid}/${conversationKey}`;
}

/**
 * The e-mail and SMS fan-out, from the events `batch b`: a new message (message_sent, replies
 * included) becomes, for each digest channel the app has, one delivery per recipient the channel
 * could reach: the 1:1 receiver or the group's members, never the sender, nobody in a block with
 * the sender, and only users whose e-mail address (phone number) is stored, unless the app's
 * custom provider of the channel is called for every user (no useStoredEmailID / useStoredPhNo).
 * The item is the recipient; the lane is the recipient's conversation (digestLane), so one
 * recipient's messages of one conversation gather into one digest. Held messages notify nobody.
 * Rows of (app_id, consumer, target, event_id, item, trigger, lane).
 */
export const DIGEST_FANOUT = sql`
    select b.app_id, ${NOTIFICATIONS_CONSUMER}::text, g.target, b.id, r.uid, b.trigger, r.uid || '/' || m.conversation_id
    from batch b
    join (${DIGEST_TARGETS}) g on g.app_id = b.app_id
    join messages m on m.app_id = b.app_id and m.id = b.message_id and not m.held
    ${MESSAGE_RECIPIENTS}
    left join notification_user_preferences p on p.app_id = b.app_id and p.uid = r.uid
    where b.trigger = 'message_sent' and r.uid <> m.sender
      and ${notBlockedWith(sql`m.sender`)}
      and ((case g.target when ${EMAIL_TARGET} then p.email else p.phone end) is not null
           or exists (select 1 from notification_custom_providers c
                      where c.app_id = b.app_id and c.channel = g.target and c.enabled and not c.only_stored_contact))`;

const DEFAULTS = defaultNotificationSettings().preferences;

/**
 * When a digest's lane falls due (ConsumerQueue.due, over the lane's row `l`): the app's
 * `intervalInSeconds` of the channel after now (its stored settings; the default when it has
 * none or the field is absent), so the messages that arrive meanwhile join the digest. Other
 * targets (push) are due at once.
 */
export const DIGEST_DUE = sql`
  case when l.target in (${EMAIL_TARGET}, ${SMS_TARGET}) then now() + coalesce(
      (select (s.preferences -> l.target ->> 'intervalInSeconds')::numeric from notification_settings s
        where s.app_id = l.app_id and jsonb_typeof(s.preferences -> l.target -> 'intervalInSeconds') = 'number'),
      case l.target when ${EMAIL_TARGET} then ${DEFAULTS.email.intervalInSeconds}::numeric else ${DEFAULTS.sms.intervalInSeconds}::numeric end
    ) * interval '1 second'
  else now() end`;
