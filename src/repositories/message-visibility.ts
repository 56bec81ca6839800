/**
 * Who sees a message (docs/moderation.md): whoever may read its conversation, unless the
 * message is held for moderation review (`messages.held`: blocked by a rule or the moderation
 * hook and not yet approved, or disapproved or rejected by a moderator) — then its sender alone.
 *
 * The one rule, written once, as SQL: every statement that reads messages for someone applies it
 * (history pages and the app-wide list, one message, thread replies, unread counts, the message
 * a receipt names, the event payloads of message triggers), and the message store keeps held
 * messages out of their conversation's last message (message-store/held-messages.repository.ts).
 *
 * `alias`: the messages table's alias in the statement. `viewer`: an SQL expression of the
 * viewer's uid (a parameter, a column); `null` for a read with no user, which sees no held
 * message (the app's own lists, webhooks and streams: moderators use the moderation queues).
 */
export function visibleTo(alias: string, viewer: string): string {
  return `(not ${alias}.held or ${alias}.sender = ${viewer})`;
}
