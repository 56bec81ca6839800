import { sql, type RawBuilder } from 'kysely';
import type { ReceiverType } from '../db/schema.js';

/**
 * Only friends may be sent 1:1 messages: `sendMessage.mode: friends`, or, where that permission
 * is not set, the role's older `settings.sendMessagesTo: friendsOnly`.
 */
const FRIENDS_ONLY = sql`coalesce(rp.v ->> 'sendMessage.mode', case when rs.v = 'friendsOnly' then 'friends' end) = 'friends'`;

/**
 * The role (RBAC) and scope (SBAC) permissions of a send, read and decided inside the statement
 * that checks the send (and, for a batch of sends, stores those that pass). The statement must
 * name, per send:
 * - `r`: the send, with `sender`, `receiver`, `receiver_type`, `category`, `type` and `data` (json);
 * - `s`: the sender's lookup, with its `role` (whose permissions and `settings` apply);
 * - `u`: the receiving user's lookup, with its `role`, or nulls for a group;
 * - `gm`: the sender's membership of the receiving group (its `scope`), or nulls.
 *
 * Only permissions explicitly set are stored, so for an app that sets none this is a probe of
 * the sender's role row and two index probes that find nothing (PostgreSQL memoises the role's
 * two per batch; the friends probe runs only when the role sends to friends only).
 */
export function sendPermissionJoins(appId: string, options: { reply: boolean; receivers?: ReceiverType | undefined }): RawBuilder<unknown> {
  const scopePermission = options.reply ? 'sendThreadedMessage' : 'sendMessage';
  // Sends to one kind of receiver only: the other kind's lookup is left out, its column null (see sendChecks).
  const scope =
    options.receivers === 'user'
      ? sql`cross join (select null::text as v) sp`
      : sql`left join lateral (select p.value #>> '{}' as v from group_scope_permissions p
                       where r.receiver_type = 'group' and p.app_id = ${appId} and p.guid = r.receiver and p.scope = gm.scope
                         and p.permission = ${scopePermission} limit 1) sp on true`;
  const friends =
    options.receivers === 'group'
      ? sql`cross join (select null::boolean as found) fr`
      : sql`left join lateral (select true as found from friends x
                       where r.receiver_type = 'user' and ${FRIENDS_ONLY}
                         and x.app_id = ${appId} and x.uid = r.sender and x.friend_uid = r.receiver limit 1) fr on true`;
  return sql`
    left join lateral (select json_object_agg(p.permission, p.value) as v from role_permissions p
                       where p.app_id = ${appId} and p.role = s.role and p.permission like 'sendMessage%') rp on true
    left join lateral (select x.settings ->> 'sendMessagesTo' as v from roles x
                       where x.app_id = ${appId} and x.role = s.role limit 1) rs on true
    ${scope}
    ${friends}`;
}

/**
 * The permission that refuses the send (`scope:<permission>` for a scope's), or null: the
 * first that fails, in the catalogue's order. An array permission restricts only when it is
 * not empty; one set to a single string is a list of one. A media message under
 * `sendMessage.allowedMimeTypes` needs attachments, each with an allowed `mimeType`.
 */
export function sendDeniedBy(options: { reply: boolean }): RawBuilder<string | null> {
  const scopePermission = options.reply ? 'sendThreadedMessage' : 'sendMessage';
  const list = (key: string) => sql`(rp.v -> ${sql.lit(key)})::jsonb`;
  const restricts = (key: string) => sql`coalesce(${list(key)}, '[]'::jsonb) <> '[]'::jsonb`;
  const allows = (key: string, value: RawBuilder<unknown>) => sql`(not ${restricts(key)} or ${list(key)} @> to_jsonb(${value}::text))`;
  return sql<string | null>`case
    when rp.v is null and sp.v is null and rs.v is distinct from 'friendsOnly' then null
    when rp.v ->> 'sendMessage' = 'deny' then 'sendMessage'
    when sp.v = 'deny' then ${`scope:${scopePermission}`}
    when r.receiver_type = 'user' and ${FRIENDS_ONLY} and fr.found is null
      then case when rp.v ->> 'sendMessage.mode' is null then 'settings.sendMessagesTo' else 'sendMessage.mode' end
    when not ${allows('sendMessage.allowedReceiverTypes', sql`r.receiver_type`)} then 'sendMessage.allowedReceiverTypes'
    when r.receiver_type = 'user' and not ${allows('sendMessage.allowedReceiverRoles', sql`u.role`)} then 'sendMessage.allowedReceiverRoles'
    when not ${allows('sendMessage.allowedMessageCategories', sql`r.category`)} then 'sendMessage.allowedMessageCategories'
    when r.category = 'message' and not ${allows('sendMessage.allowedMessageTypes', sql`r.type`)} then 'sendMessage.allowedMessageTypes'
    when r.category = 'custom' and not ${allows('sendMessage.allowedCustomTypes', sql`r.type`)} then 'sendMessage.allowedCustomTypes'
    when r.category = 'message' and r.type <> 'text' and ${restricts('sendMessage.allowedMimeTypes')} and not (
      case when json_typeof(r.data -> 'attachments') = 'array' then
        json_array_length(r.data -> 'attachments') > 0
        and not exists (select 1 from json_array_elements(r.data -> 'attachments') a
                        where not ${list('sendMessage.allowedMimeTypes')} @> to_jsonb(coalesce(a ->> 'mimeType', '')))
      else false end
    ) then 'sendMessage.allowedMimeTypes'
  end`;
}
