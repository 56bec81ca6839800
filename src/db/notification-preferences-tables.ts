import type { ColumnType } from 'kysely';

// Who is notified and when (migration 0020, docs/notifications.md), merged into DB below.

/** A timestamp column: read as Date, written as Date (or left to its default). */
type Timestamp = ColumnType<Date, Date | undefined, Date>;
/** jsonb: read as parsed JSON, written as JSON text. */
type JsonB = ColumnType<unknown, string, string>;
/** A column the database computes (a generated column): read only. */
type GeneratedAlways<T> = ColumnType<T, never, never>;

/** An app's notification settings, every field present (migration 0020). */
export interface NotificationSettingsTable {
  app_id: string;
  preferences: JsonB;
  sound: JsonB;
  templates: JsonB;
  updated_at: Timestamp;
}

/** A user's own notification values, time zone and contact details (migration 0020). */
export interface NotificationUserPreferencesTable {
  app_id: string;
  uid: string;
  /** Sparse, one key per field (`group.messagesSetting`): domain/notifications/preferences.ts, userValueEntries. */
  preferences: ColumnType<unknown, string | undefined, string>;
  timezone: string | null;
  email: string | null;
  phone: string | null;
  updated_at: Timestamp;
}

/** A conversation a user muted (migration 0020). */
export interface NotificationMutesTable {
  app_id: string;
  uid: string;
  kind: 'oneOnOne' | 'group';
  target: string;
  until: Date | null;
  created_at: Timestamp;
  muted_uid: GeneratedAlways<string | null>;
  muted_guid: GeneratedAlways<string | null>;
}

declare module './schema.js' {
  interface DB {
    notification_settings: NotificationSettingsTable;
    notification_user_preferences: NotificationUserPreferencesTable;
    notification_mutes: NotificationMutesTable;
  }
}
