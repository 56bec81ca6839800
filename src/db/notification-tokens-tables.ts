import type { ColumnType } from 'kysely';

// Push tokens and the notification log (migration 0023, docs/notifications.md), merged into DB
// by the module augmentation below.

type Generated<T> = ColumnType<T, T | undefined, T>;
/** bigint: a string of digits on both engines (see database.ts). */
type BigIntColumn = ColumnType<string, string | number, string | number>;
type NullableBigInt = ColumnType<string | null, string | number | null | undefined, string | number | null>;

/** A device's push token, registered for a user through one of their auth tokens (0023). */
export interface NotificationPushTokensTable {
  app_id: string;
  token: string;
  platform: string;
  /** null: the app's default provider of the platform's kind when sending. */
  provider_id: string | null;
  uid: string;
  /** The auth token it was registered with (auth_tokens.token_hash); its delete takes the row. */
  auth_token_hash: string;
  timezone: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** One attempted notification (0023). */
export interface NotificationLogsTable {
  app_id: string;
  id: ColumnType<string, never, never>;
  created_at: Generated<Date>;
  processing_started_at_ms: BigIntColumn;
  processing_ended_at_ms: BigIntColumn;
  component: string;
  channel: string;
  provider: string | null;
  provider_id: string | null;
  trigger: string;
  message_id: NullableBigInt;
  reaction_id: NullableBigInt;
  message_sent_at_ms: BigIntColumn;
  message_category: string | null;
  message_type: string | null;
  sender: string | null;
  reaction_sender: string | null;
  receiver: string | null;
  reaction_receiver: string | null;
  receiver_type: string | null;
  member: string | null;
  token_type: string | null;
  push_token: string | null;
  payload: ColumnType<unknown, string | null, string | null>;
  notification_triggered: boolean;
  reason: string | null;
  success: boolean | null;
  error: string | null;
}

declare module './schema.js' {
  interface DB {
    notification_push_tokens: NotificationPushTokensTable;
    notification_logs: NotificationLogsTable;
  }
}
