import { sql, type RawBuilder } from 'kysely';
import { defaultNotificationSettings } from '../../domain/notifications/preferences-defaults.js';
import { MESSAGE_RECIPIENTS, notBlockedWith } from './notification-recipients.js';

/** The consumer name of the notifications' rows in the event log's queue. */
export const NOTIFICATIONS_CONSUMER = 'notifications';

/** The push channel's target: every app that can send push notifications has it. */
export const PUSH_TARGET = 'push';

/** The apps that can send push notifications: an FCM or APNs provider, or an enabled custom push provider. */
export const PUSH_APPS = sql`
  select app_id from notification_fcm_providers
  union select app_id from notification_apns_providers
  union select app_id from notification_custom_providers where channel = 'push' and enabled`;

/** `(app_id, target)` of the push targets. */
export const PUSH_TARGETS = sql`select p.app_id, ${PUSH_TARGET}::text as target from (${PUSH_APPS}) p`;

/** The group actions' triggers and the preference of each (its `<kind>Setting` and `<kind>Override`). */
export const GROUP_ACTION_TRIGGERS = {
  group_member_joined: 'memberJoined',
  group_member_left: 'memberLeft',
  group_member_added: 'memberAdded',
  group_member_kicked: 'memberKicked',
  group_member_banned: 'memberBanned',
  group_member_unbanned: 'memberUnbanned',
  group_member_scope_changed: 'memberScopeChanged',
} as const;

const DEFAULTS = defaultNotificationSettings().preferences;
type Section = 'group' | 'oneOnOne';

/**
 * The app's setting `section.field` (a number, as text) from its stored settings `s` (a left
 * join: none stored is the defaults), as the settings service reads them back: a value missing
 * or of another type is the default's.
 */
function appSetting(section: Section, field: string): RawBuilder<string> {
  const fallback = (DEFAULTS[section] as unknown as Record<string, number>)[field];
  if (fallback === undefined) throw new Error(`no setting ${section}.${field}`);
  const value = sql`s.preferences -> ${sql.lit(section)} -> ${sql.lit(field)}`;
  return sql`coalesce(case when jsonb_typeof(${value}) = 'number' then ${value} #>> '{}' end, ${sql.lit(String(fallback))})`;
}

/** The app's flag `section.field` (a boolean), read as appSetting reads a number. */
function appFlag(section: Section, field: string): RawBuilder<boolean> {
  const fallback = (DEFAULTS[section] as unknown as Record<string, boolean>)[field];
  if (fallback === undefined) throw new Error(`no setting ${section}.${field}`);
  const value = sql`s.preferences -> ${sql.lit(section)} -> ${sql.lit(field)}`;
  return sql`coalesce(case when jsonb_typeof(${value}) = 'boolean' then (${value} #>> '{}')::boolean end, ${sql.lit(fallback)})`;
}

/** The 1:1 or the group version of a setting, as the message `m` is. */
const inSection = (field: string) => sql`case when m.receiver_type = 'group' then ${appSetting('group', field)} else ${appSetting('oneOnOne', field)} end`;

/**
 * What every delivery needs, for the recipient `r.uid` of the event `b` done by `actor` (a uid,
 * or null when the app did it): the app can send push notifications, nobody is in a block
 * relation with the actor (either way), and the recipient holds a push token (unless the app
 * has a custom push provider, which is called for each recipient).
 */
function reachable(actor: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`b.app_id in (${PUSH_APPS})
      and ${notBlockedWith(actor)}
      and (exists (select 1 from notification_push_tokens p where p.app_id = b.app_id and p.uid = r.uid)
           or exists (select 1 from notification_custom_providers c where c.app_id = b.app_id and c.channel = 'push' and c.enabled))`;
}

/** A new message (message_sent, replies included): the 1:1 receiver, or the group's members; never the sender. */
const MESSAGE_SENT = sql`
    select b.app_id, ${NOTIFICATIONS_CONSUMER}::text, ${PUSH_TARGET}::text, b.id, r.uid, b.trigger, r.uid
    from batch b
    join messages m on m.app_id = b.app_id and m.id = b.message_id and not m.held
    ${MESSAGE_RECIPIENTS}
    where b.trigger = 'message_sent' and r.uid <> m.sender
      and ${reachable(sql`m.sender`)}`;

/**
 * An edit or a delete (message_edited, message_deleted: its action message `m`, sent by whoever
 * edited or deleted): the conversation's other members, the two users of a 1:1 (the action's
 * receiver and the message's own sender) or the group's members, not the one who acted; only
 * where the app's setting for it is "notify" (users cannot override it).
 */
const MESSAGE_ACTION = sql`
    select b.app_id, ${NOTIFICATIONS_CONSUMER}::text, ${PUSH_TARGET}::text, b.id, r.uid, b.trigger, r.uid
    from batch b
    join messages m on m.app_id = b.app_id and m.id = b.message_id and not m.held
    left join notification_settings s on s.app_id = b.app_id
    cross join lateral (
      select m.receiver as uid where m.receiver_type = 'user'
      union
      select m.data -> 'entities' -> 'on' -> 'entity' ->> 'sender' where m.receiver_type = 'user'
      union
      select gm.uid from group_members gm where m.receiver_type = 'group' and gm.app_id = m.app_id and gm.guid = m.receiver
    ) r
    where ((b.trigger = 'message_edited' and ${inSection('messageEditedSetting')} = '2')
           or (b.trigger = 'message_deleted' and ${inSection('messageDeletedSetting')} = '2'))
      and r.uid is not null and r.uid <> m.sender
      and ${reachable(sql`m.sender`)}`;

/**
 * A reaction (message_reaction_added, about the message `m`, by `x.reactor`): the message's
 * author (while in the conversation), whom "reactions to own messages" (the default) is about;
 * and the conversation's other users only where reactions to all messages (3) can apply to
 * them: the app's setting, or their own where the app lets users override it (read from the few
 * users who stored one, so a large group's reaction makes no delivery for members who cannot
 * want it). Never the reactor.
 */
const REACTION = sql`
    select b.app_id, ${NOTIFICATIONS_CONSUMER}::text, ${PUSH_TARGET}::text, b.id, r.uid, b.trigger, r.uid
    from batch b
    join events e on e.app_id = b.app_id and e.id = b.id and b.trigger = 'message_reaction_added'
    join messages m on m.app_id = b.app_id and m.id = (e.data -> 'reaction' ->> 'messageId')::bigint and not m.held
    left join notification_settings s on s.app_id = b.app_id
    cross join lateral (select e.data -> 'reaction' ->> 'uid' as reactor) x
    cross join lateral (
      select m.sender as uid
        where m.receiver_type = 'user'
           or exists (select 1 from group_members gm where gm.app_id = m.app_id and gm.guid = m.receiver and gm.uid = m.sender)
      union
      select m.receiver where m.receiver_type = 'user'
        and (${appSetting('oneOnOne', 'reactionsSetting')} = '3'
             or (${appFlag('oneOnOne', 'reactionsOverride')} and exists (
                   select 1 from notification_user_preferences p
                   where p.app_id = m.app_id and p.uid = m.receiver and p.preferences ->> 'oneOnOne.reactionsSetting' = '3')))
      union
      select gm.uid from group_members gm
        where m.receiver_type = 'group' and ${appSetting('group', 'reactionsSetting')} = '3' and gm.app_id = m.app_id and gm.guid = m.receiver
      union
      select p.uid from notification_user_preferences p
        join group_members gm on gm.app_id = p.app_id and gm.guid = m.receiver and gm.uid = p.uid
        where m.receiver_type = 'group' and ${appFlag('group', 'reactionsOverride')}
          and p.app_id = m.app_id and p.preferences ->> 'group.reactionsSetting' = '3'
    ) r
    where r.uid <> x.reactor
      and ${reachable(sql`x.reactor`)}`;

/** A `case b.trigger` over the group actions' triggers: `value(kind)` for each. */
function perGroupAction(value: (kind: string) => RawBuilder<unknown>): RawBuilder<unknown> {
  const cases = Object.entries(GROUP_ACTION_TRIGGERS).map(([trigger, kind]) => sql`when ${sql.lit(trigger)} then ${value(kind)}`);
  return sql`case b.trigger ${sql.join(cases, sql` `)} end`;
}

/**
 * A group action (group_member_*, `e.data`: the group, the members acted on, and `by` when a
 * user acted on others): the group's members and the members acted on who are no longer in it
 * (kicked, banned, unbanned), never the one who acted (`g.actor`: `by`, or the member who joined
 * or left); only where "notify" (2) can apply to them: the app's setting (the default is don't
 * notify, and then nothing is made), or their own where the app lets users override it.
 */
const GROUP_ACTION = sql`
    select b.app_id, ${NOTIFICATIONS_CONSUMER}::text, ${PUSH_TARGET}::text, b.id, r.uid, b.trigger, r.uid
    from batch b
    join events e on e.app_id = b.app_id and e.id = b.id
      and b.trigger in (${sql.join(Object.keys(GROUP_ACTION_TRIGGERS).map((trigger) => sql.lit(trigger)))})
    left join notification_settings s on s.app_id = b.app_id
    cross join lateral (
      select e.data -> 'group' ->> 'guid' as guid,
             coalesce(e.data -> 'by' ->> 'uid',
                      case when b.trigger in ('group_member_joined', 'group_member_left')
                           then (select k from json_object_keys(e.data -> 'members') k limit 1) end) as actor,
             ${perGroupAction((kind) => appSetting('group', `${kind}Setting`))} as setting,
             ${perGroupAction((kind) => appFlag('group', `${kind}Override`))} as override,
             ${perGroupAction((kind) => sql.lit(`group.${kind}Setting`))} as own
    ) g
    cross join lateral (
      select gm.uid from group_members gm where g.setting = '2' and gm.app_id = b.app_id and gm.guid = g.guid
      union
      select k from json_object_keys(e.data -> 'members') k where g.setting = '2'
      union
      select p.uid from group_members gm
        join notification_user_preferences p on p.app_id = gm.app_id and p.uid = gm.uid
        where g.override and gm.app_id = b.app_id and gm.guid = g.guid and p.preferences ->> g.own = '2'
      union
      select p.uid from json_object_keys(e.data -> 'members') k
        join notification_user_preferences p on p.app_id = b.app_id and p.uid = k
        where g.override and p.preferences ->> g.own = '2'
    ) r
    where r.uid is distinct from g.actor
      and ${reachable(sql`g.actor`)}`;

/**
 * The push fan-out, from the events `batch b` (docs/notifications.md, "What triggers a push
 * notification"): one delivery per recipient who could be notified, for a new message, an edit
 * or delete, a reaction, and a group action. Whether each recipient wants it (preferences,
 * mutes, quiet hours) is decided when it is sent; the fan-out leaves out only those whom no
 * setting could let have it. The delivery's item and lane are the recipient: one recipient's
 * notifications go in order, recipients side by side. Held messages notify nobody. Rows of
 * (app_id, consumer, target, event_id, item, trigger, lane).
 */
export const PUSH_FANOUT = sql`
  ${MESSAGE_SENT}
  union all
  ${MESSAGE_ACTION}
  union all
  ${REACTION}
  union all
  ${GROUP_ACTION}`;
