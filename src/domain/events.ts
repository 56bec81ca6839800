/**
 * The changes Parley records in its event log (docs/events.md): the vendor's webhook triggers
 * for messages, users and groups (NOTES.md §6.3). Webhooks subscribe to them and the live
 * stream filters by them.
 */
export const MESSAGE_TRIGGERS = ['message_sent', 'message_edited', 'message_deleted', 'user_mentioned'] as const;

export const TRIGGERS = [
  ...MESSAGE_TRIGGERS,
  'message_delivery_receipt',
  'message_read_receipt',
  'message_reaction_added',
  'message_reaction_removed',
  'user_blocked',
  'user_unblocked',
  'group_created',
  'group_updated',
  'group_deleted',
  'group_member_joined',
  'group_member_left',
  'group_member_added',
  'group_member_kicked',
  'group_member_banned',
  'group_member_unbanned',
  'group_member_scope_changed',
  'group_owner_transferred',
] as const;

export type Trigger = (typeof TRIGGERS)[number];
/** The triggers whose payload shows a message, rendered when it is delivered. */
export type MessageTrigger = (typeof MESSAGE_TRIGGERS)[number];
/** The triggers whose payload's `data` is recorded with the event. */
export type DataTrigger = Exclude<Trigger, MessageTrigger>;

/** An event of a change, as a service records it with the change (its payload's `data`). */
export interface NewEvent {
  trigger: DataTrigger;
  /** The conversation it happened in (its key), when it happened in one. */
  conversationId?: string;
  data: Record<string, unknown>;
}

/**
 * An event id as a client names one (Last-Event-ID, `parley events tail --after`): digits that
 * fit PostgreSQL's bigint (18 always do; 19 may overflow it).
 */
export const EVENT_ID_PATTERN = '^[0-9]{1,18}$';

const KNOWN = new Set<string>(TRIGGERS);
export function isTrigger(name: string): name is Trigger {
  return KNOWN.has(name);
}
