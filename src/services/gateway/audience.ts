/**
 * Who may see an event of the log on the gateway (docs/realtime.md, "Durable frames"): the one
 * rule, applied to live events (to the users connected to this node) and to a resume (to the
 * one user resuming). What an event is about decides:
 *
 * - an event of a 1:1 conversation (its key `<uidA>:<uidB>`: messages, edits, deletes,
 *   reactions, receipts): its two users (a send between users who blocked each other is
 *   refused, so a block stops new ones);
 * - an event of a group's conversation (`group_<guid>`: its messages and changes): the group's
 *   members, and the users a membership event names (the member who left, was kicked or banned
 *   sees that, and nothing after it); `group_created`: its owner;
 * - `user_blocked`, `user_unblocked`: the user who blocked (their own blocks);
 * - anything else (moderation verdicts, which are for the app's moderators;
 *   `user_connection_status_changed`, which sockets get as `presence` frames): nobody.
 *
 * Another app's events never reach this rule: each app's events are read for that app alone.
 * Message payloads are rendered as the app sees them (services/event-payloads.ts): a message
 * held for moderation review is shown to no socket.
 */

import { conversationOfKey } from '../../domain/conversation-id.js';

/** The users an event may reach, as the caller knows them: on a node, its connected users; on a resume, the user. */
export interface AudienceView {
  /** Whether the user is one the caller serves. */
  has(uid: string): boolean;
  /** The users the caller serves who are members of the group. */
  membersOf(guid: string): Iterable<string>;
}

/** What the rule reads of an event: its trigger, its conversation's key, its payload's `data`. */
export interface AudienceEvent {
  trigger: string;
  conversationId: string | null;
  data: unknown;
}

const BLOCKS = new Set(['user_blocked', 'user_unblocked']);
const JOINS = new Set(['group_member_joined', 'group_member_added']);
const REMOVALS = new Set(['group_member_left', 'group_member_kicked', 'group_member_banned']);
const NOBODY = new Set(['moderation_engine_approved', 'moderation_engine_blocked', 'moderation_manual_approved', 'moderation_engine_failed', 'user_connection_status_changed']);

/** The users of `view` who may see the event. */
export function audienceOf(event: AudienceEvent, view: AudienceView): string[] {
  if (NOBODY.has(event.trigger)) return [];
  const key = event.conversationId;
  const out: string[] = [];
  if (key === null) {
    if (BLOCKS.has(event.trigger)) {
      const by = uidOf(field(event.data, 'by'));
      if (by !== undefined && view.has(by)) out.push(by);
    }
    return out;
  }
  const conversation = conversationOfKey(key);
  if (conversation?.type === 'user') {
    const [a, b] = conversation.uids;
    if (view.has(a)) out.push(a);
    if (b !== a && view.has(b)) out.push(b);
    return out;
  }
  if (conversation === undefined) return out;
  const seen = new Set<string>();
  for (const uid of view.membersOf(conversation.guid)) seen.add(uid);
  for (const uid of subjectsOf(event)) if (view.has(uid)) seen.add(uid);
  for (const uid of seen) out.push(uid);
  return out;
}

/** The users a group event names as its subjects: the members of a membership event, the owner of a group created. */
export function subjectsOf(event: AudienceEvent): string[] {
  if (event.trigger === 'group_created') {
    const owner = field(field(event.data, 'group'), 'owner');
    return typeof owner === 'string' ? [owner] : [];
  }
  const members = field(event.data, 'members');
  return members !== null && typeof members === 'object' ? Object.keys(members) : [];
}

/** How a membership event changes who is in its group: members `added`, `removed`, or the whole group gone. */
export interface MembershipChange {
  guid: string;
  added?: string[];
  removed?: string[];
  deleted?: true;
}

/** The change a membership event makes (see MembershipChange), if it is one. */
export function membershipChange(event: AudienceEvent): MembershipChange | undefined {
  const conversation = event.conversationId === null ? undefined : conversationOfKey(event.conversationId);
  if (conversation?.type !== 'group') return undefined;
  const guid = conversation.guid;
  if (event.trigger === 'group_deleted') return { guid, deleted: true };
  if (event.trigger === 'group_created' || JOINS.has(event.trigger)) return { guid, added: subjectsOf(event) };
  if (REMOVALS.has(event.trigger)) return { guid, removed: subjectsOf(event) };
  return undefined;
}

function field(value: unknown, name: string): unknown {
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[name] : undefined;
}

function uidOf(user: unknown): string | undefined {
  const uid = field(user, 'uid');
  return typeof uid === 'string' ? uid : undefined;
}
