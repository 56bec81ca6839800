import type { ColumnType } from 'kysely';

// The push providers' tables (migration 0021, docs/notifications.md), merged into DB below.

/** A timestamp column: read as Date, written as Date (or left to its default). */
type Timestamp = ColumnType<Date, Date | undefined, Date>;
/** A column with a default: optional on insert. */
type Defaulted<T> = ColumnType<T, T | undefined, T>;
/** A jsonb column: read parsed, written as JSON text. */
type JsonB = ColumnType<unknown, string, string>;

/** An app's FCM provider (migration 0021). */
export interface NotificationFcmProvidersTable {
  app_id: string;
  provider_id: string;
  is_default: Defaulted<boolean>;
  service_account_filename: string | null;
  project_id: string;
  client_email: string;
  private_key_id: string | null;
  /** The whole service-account JSON, sealed (SecretBox). */
  service_account_sealed: string;
  notification_in_payload: JsonB;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** An app's APNs provider (migration 0021). */
export interface NotificationApnsProvidersTable {
  app_id: string;
  provider_id: string;
  is_default: Defaulted<boolean>;
  key_id: string;
  team_id: string;
  bundle_id: string;
  p8_key_filename: string | null;
  /** The .p8 key, sealed (SecretBox). */
  p8_key_sealed: string;
  production_mode: boolean;
  include_content_available: boolean;
  include_mutable_content: boolean;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module './schema.js' {
  interface DB {
    notification_fcm_providers: NotificationFcmProvidersTable;
    notification_apns_providers: NotificationApnsProvidersTable;
  }
}
