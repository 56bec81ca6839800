import type { Generated } from 'kysely';

/** What an event has been sent to (migration 0024). */
export interface NotificationSendsTable {
  app_id: string;
  event_id: string;
  key: string;
  sent_at: Generated<Date>;
}

declare module './schema.js' {
  interface DB {
    notification_sends: NotificationSendsTable;
  }
}
