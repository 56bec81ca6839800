import { sql, type RawBuilder } from 'kysely';
import type { MemberScope, ReceiverType } from '../db/schema.js';
import type { GroupRow } from './groups.repository.js';
import { GROUP_ROW } from './row-codecs.js';
import { sendDeniedBy, sendPermissionJoins } from './send-permissions.js';
import { USER_ROW, type UserRow } from './users.repository.js';

/**
 * The rules of a send, in the order they are checked: the first that fails refuses the send.
 * SQL decides them (sendRefusal) inside the statement that reads the facts, and that same
 * statement stores the sends that pass (MessageBatchesRepository.send); the service only turns
 * the refusal into its error (services/send-rules.ts). One owner: nothing re-decides them.
 */
export const SEND_REFUSALS = [
  /** The sender does not exist or is deactivated. */
  'sender_not_found',
  /** The receiving user does not exist or is deactivated. */
  'receiver_not_found',
  /** The sender blocked the receiving user. */
  'sender_blocked_receiver',
  /** The receiving user blocked the sender. */
  'receiver_blocked_sender',
  /** The receiving group does not exist. */
  'group_not_found',
  /** The sender is banned from the receiving group. */
  'banned',
  /** The sender is not a member of the receiving group. */
  'not_a_member',
  /** A role or scope permission refuses the send (deniedBy names it). */
  'denied',
] as const;
export type SendRefusal = (typeof SEND_REFUSALS)[number];

/** What a send is checked against, read in the statement that checks it (see sendChecks). */
export interface SendFacts {
  sender: UserRow | undefined;
  receiverUser?: UserRow | undefined;
  senderBlockedReceiver?: boolean;
  receiverBlockedSender?: boolean;
  group?: GroupRow | undefined;
  isMember?: boolean;
  isBanned?: boolean;
  /** The sender's scope in the receiving group. */
  memberScope?: MemberScope | null;
  /** The role or scope permission that refuses the send (see send-permissions.ts), or null. */
  deniedBy?: string | null;
  /** The first rule the send breaks (SEND_REFUSALS), or null when it may be stored. */
  refused: SendRefusal | null;
}

/** A row of sendChecks, as the database answers it. */
export interface SendCheckRow {
  sender_row: unknown[] | null;
  receiver_row: unknown[] | null;
  group_row: unknown[] | null;
  sender_blocked_receiver: boolean;
  receiver_blocked_sender: boolean;
  is_member: boolean;
  is_banned: boolean;
  member_scope: MemberScope | null;
  denied_by: string | null;
  refused: SendRefusal | null;
}

/**
 * The checks of sends, as a query over `r` (the sends: `sender`, `receiver`, `receiver_type`,
 * `category`, `type`, `data`, and any other column, which is kept): per send, the facts it is
 * checked against (the rows as JSON arrays, see json-rows.ts), the permission that denies it,
 * and `refused`, the first rule it breaks. `permissions: false` (a read that checks a
 * membership) skips the permissions: `denied_by` is null. `reply`: a thread reply's permissions.
 * `receivers`: every send goes to that kind of receiver (the caller makes sure), and the other
 * kind's lookups are left out, their columns the constants they would give (nothing found), so
 * the rules read the same: PostgreSQL initialises every node of a plan on each run, run or not
 * (a fifth of its CPU on a send statement, docs/performance-log.md, "The send on a machine that slows idle cores"), and the other kind's lookups
 * are a third of them.
 */
export function sendChecks(appId: string, options: { reply: boolean; permissions?: boolean; receivers?: ReceiverType }): RawBuilder<unknown> {
  const permissions = options.permissions ?? true;
  const receivers = options.receivers;
  // limit 1 keeps each lookup a probe per row. A join, or an EXISTS in the select list, the
  // planner may hash instead, reading all of the app's rows of the table (it plans for 100
  // records here): a group send read all 3,000 memberships of a small app that way.
  const toUsers = receivers !== 'group';
  const toGroups = receivers !== 'user';
  return sql`
    select f.*, ${sendRefusal()} as refused from (
      select r.*,
        s.row as sender_row,
        s.uid is not null and s.deactivated_at is null as sender_active,
        ${toUsers ? sql`u.row` : sql`null::json`} as receiver_row,
        ${toUsers ? sql`u.uid is not null and u.deactivated_at is null` : sql`false`} as receiver_active,
        ${toGroups ? sql`case when g.guid is not null then ${GROUP_ROW.select('g')} end` : sql`null::json`} as group_row,
        ${toUsers ? sql`sb.found is not null` : sql`false`} as sender_blocked_receiver,
        ${toUsers ? sql`rb.found is not null` : sql`false`} as receiver_blocked_sender,
        ${toGroups ? sql`gm.scope is not null` : sql`false`} as is_member,
        ${toGroups ? sql`gm.scope` : sql`null::text`} as member_scope,
        ${toGroups ? sql`gb.found is not null` : sql`false`} as is_banned,
        ${permissions ? sendDeniedBy({ reply: options.reply }) : sql`null::text`} as denied_by
      from r
      left join lateral (select ${USER_ROW.select('x')} as row, ${USER_FACTS} from users x where x.app_id = ${appId} and x.uid = r.sender limit 1) s on true
      ${toUsers ? receivingUserJoins(appId) : sql`cross join (select null::text as role) u`}
      ${toGroups ? receivingGroupJoins(appId) : sql`cross join (select null::text as scope) gm`}
      ${permissions ? sendPermissionJoins(appId, { reply: options.reply, receivers }) : sql``}
      -- Kept a subquery (OFFSET 0): pulled up, each of its columns that the rules read (the
      -- permission that denies, above all) would be written into the plan twice, and computed
      -- and initialised twice a run (−5% of PostgreSQL's CPU a send with it kept).
      offset 0
    ) f`;
}

/**
 * What the checks read of a user found (`s`, the sender; `u`, the receiving user) besides its row
 * as JSON (`row`): its key, whether it is deactivated, its role (send-permissions.ts). Only
 * these travel up the joins: each join of the checks' chain carries (and initialises, on every
 * run) every column its lookups give, and `users x.*` carried every column of the users table
 * (−3% of PostgreSQL's CPU a send, docs/performance-log.md, "The send statement").
 */
const USER_FACTS = sql`x.uid, x.deactivated_at, x.role`;

/** The receiving user, and the blocks between the two (`u`, `sb`, `rb`). */
function receivingUserJoins(appId: string): RawBuilder<unknown> {
  return sql`
      left join lateral (select ${USER_ROW.select('x')} as row, ${USER_FACTS} from users x
                         where r.receiver_type = 'user' and x.app_id = ${appId} and x.uid = r.receiver limit 1) u on true
      left join lateral (select true as found from blocked_users x
                         where r.receiver_type = 'user' and x.app_id = ${appId} and x.uid = r.sender and x.blocked_uid = r.receiver limit 1) sb on true
      left join lateral (select true as found from blocked_users x
                         where r.receiver_type = 'user' and x.app_id = ${appId} and x.uid = r.receiver and x.blocked_uid = r.sender limit 1) rb on true`;
}

/** The receiving group, and the sender's membership of it and ban from it (`g`, `gm`, `gb`). */
function receivingGroupJoins(appId: string): RawBuilder<unknown> {
  return sql`
      left join lateral (select * from groups x where r.receiver_type = 'group' and x.app_id = ${appId} and x.guid = r.receiver limit 1) g on true
      left join lateral (select x.scope from group_members x
                         where r.receiver_type = 'group' and x.app_id = ${appId} and x.guid = r.receiver and x.uid = r.sender limit 1) gm on true
      left join lateral (select true as found from group_bans x
                         where r.receiver_type = 'group' and x.app_id = ${appId} and x.guid = r.receiver and x.uid = r.sender limit 1) gb on true`;
}

/** The rules of SEND_REFUSALS, in order, over the columns of sendChecks' inner query. */
function sendRefusal(): RawBuilder<SendRefusal | null> {
  return sql<SendRefusal | null>`case
    when not f.sender_active then 'sender_not_found'
    when f.receiver_type = 'user' and not f.receiver_active then 'receiver_not_found'
    when f.receiver_type = 'user' and f.sender_blocked_receiver then 'sender_blocked_receiver'
    when f.receiver_type = 'user' and f.receiver_blocked_sender then 'receiver_blocked_sender'
    when f.receiver_type = 'group' and f.group_row is null then 'group_not_found'
    when f.receiver_type = 'group' and not f.is_member and f.is_banned then 'banned'
    when f.receiver_type = 'group' and not f.is_member then 'not_a_member'
    when f.denied_by is not null then 'denied'
  end`;
}

/** The facts of a row of sendChecks. */
export function sendFactsOf(row: SendCheckRow, receiverType: ReceiverType): SendFacts {
  const sender = row.sender_row ? USER_ROW.read(row.sender_row) : undefined;
  return receiverType === 'user'
    ? {
        sender,
        receiverUser: row.receiver_row ? USER_ROW.read(row.receiver_row) : undefined,
        senderBlockedReceiver: row.sender_blocked_receiver,
        receiverBlockedSender: row.receiver_blocked_sender,
        deniedBy: row.denied_by,
        refused: row.refused,
      }
    : {
        sender,
        group: row.group_row ? GROUP_ROW.read(row.group_row) : undefined,
        isMember: row.is_member,
        isBanned: row.is_banned,
        memberScope: row.member_scope,
        deniedBy: row.denied_by,
        refused: row.refused,
      };
}
