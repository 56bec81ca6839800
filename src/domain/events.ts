/**
 * The changes Parley records in its event log (docs/events.md): the vendor's webhook triggers
 * for messages, users and groups (docs/management-api.md, "Webhooks", lists them). Webhooks subscribe to them and the live
 * stream filters by them.
 */
export const MESSAGE_TRIGGERS = ['message_sent', 'message_edited', 'message_deleted', 'user_mentioned'] as const;

/**
 * The moderation engine's and moderators' verdicts on a message (docs/moderation.md): the payload
 * is the message, rendered when it is delivered (whether or not it is held), with the details
 * recorded with the event (what held it).
 */
export const MODERATION_TRIGGERS = ['moderation_engine_approved', 'moderation_engine_blocked', 'moderation_manual_approved', 'moderation_engine_failed'] as const;

export const TRIGGERS = [
  ...MESSAGE_TRIGGERS,
  'message_delivery_receipt',
  'message_read_receipt',
  'message_reaction_added',
  'message_reaction_removed',
  'user_blocked',
  'user_unblocked',
  // A user went online (their first connection to the gateway) or offline (their last one gone, after the grace): docs/realtime.md.
  'user_connection_status_changed',
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
  ...MODERATION_TRIGGERS,
] as const;

export type Trigger = (typeof TRIGGERS)[number];
/** The triggers whose payload shows a message, rendered when it is delivered. */
export type MessageTrigger = (typeof MESSAGE_TRIGGERS)[number];
export type ModerationTrigger = (typeof MODERATION_TRIGGERS)[number];
/** The triggers whose payload's `data` is recorded with the event. */
export type DataTrigger = Exclude<Trigger, MessageTrigger | ModerationTrigger>;

/**
 * An event of a change, as a service records it with the change: its payload's `data`; a
 * moderation event names its message (rendered when delivered) and `data` is added beside it
 * (one about a message not stored, a hook's failure, carries the content in `data` instead).
 */
export type NewEvent =
  | {
      trigger: DataTrigger;
      /** The conversation it happened in (its key), when it happened in one. */
      conversationId?: string;
      data: Record<string, unknown>;
    }
  | { trigger: ModerationTrigger; conversationId: string; messageId?: string; data: Record<string, unknown> };

/**
 * An event id as a client names one (Last-Event-ID, `parley events tail --after`): digits that
 * fit PostgreSQL's bigint (18 always do; 19 may overflow it).
 */
export const EVENT_ID_PATTERN = '^[0-9]{1,18}$';

const KNOWN = new Set<string>(TRIGGERS);
export function isTrigger(name: string): name is Trigger {
  return KNOWN.has(name);
}
