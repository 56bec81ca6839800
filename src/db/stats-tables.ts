import type { ColumnType } from 'kysely';

/** An app's place in the event log's aggregation into statistics (migration 0027). */
export interface StatsCursorsTable {
  app_id: string;
  /** bigint: a string of digits on both engines (see database.ts). */
  event_id: ColumnType<string, string, string>;
}

/** Counts of one app's five-minute bucket (migration 0027). */
export interface StatsMessageBucketsTable {
  app_id: string;
  bucket: Date;
  messages_sent: ColumnType<string, string | undefined, string>;
  read_receipts: ColumnType<string, string | undefined, string>;
  delivery_receipts: ColumnType<string, string | undefined, string>;
}

/** A user active on a UTC day, with the hours of it (bit h: hour h) (migration 0027). */
export interface StatsActiveUsersTable {
  app_id: string;
  day: ColumnType<Date, string, string>;
  uid: string;
  hours: number;
}

declare module './schema.js' {
  interface DB {
    stats_cursors: StatsCursorsTable;
    stats_message_buckets: StatsMessageBucketsTable;
    stats_active_users: StatsActiveUsersTable;
  }
}
