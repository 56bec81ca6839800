import type { ColumnType } from 'kysely';
import type { CustomProviderChannel } from '../domain/notifications/channel-providers.js';

// The notification channel providers' tables (migration 0022, docs/notifications.md): Twilio,
// SendGrid and the custom providers. Merged into DB by the module augmentation below.

/** A timestamp column: read as Date, written as Date (or left to its default). */
type Timestamp = ColumnType<Date, Date | undefined, Date>;

/** The app's Twilio account, for SMS (migration 0022). */
export interface NotificationTwilioProvidersTable {
  app_id: string;
  enabled: boolean;
  account_sid: string;
  sender: string;
  auth_token_sealed: string;
  auth_token_hint: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** The app's SendGrid account, for e-mail (migration 0022). */
export interface NotificationSendgridProvidersTable {
  app_id: string;
  enabled: boolean;
  api_key_sealed: string;
  api_key_hint: string;
  template_id: string;
  unsubscribe_group_id: string;
  sender_name: string;
  sender_email: string;
  allow_replies: boolean;
  reply_to_email: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** The app's custom provider of a channel (migration 0022). */
export interface NotificationCustomProvidersTable {
  app_id: string;
  channel: CustomProviderChannel;
  enabled: boolean;
  url: string;
  use_basic_auth: boolean;
  username: string | null;
  password_sealed: string | null;
  only_stored_contact: ColumnType<boolean, boolean | undefined, boolean>;
  /** The secret signing its POSTs, sealed, and its masked form (migration 0025). */
  signing_secret_sealed: ColumnType<string | null, string | null | undefined, string | null>;
  signing_secret_hint: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module './schema.js' {
  interface DB {
    notification_twilio_providers: NotificationTwilioProvidersTable;
    notification_sendgrid_providers: NotificationSendgridProvidersTable;
    notification_custom_providers: NotificationCustomProvidersTable;
  }
}
