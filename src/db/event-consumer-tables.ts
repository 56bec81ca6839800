import type { ColumnType, Generated } from 'kysely';

type Status = 'pending' | 'delivered' | 'failed';

/** Where a consumer's fan-out stands in an app's event log (migration 0019, docs/events.md). */
export interface EventCursorsTable {
  app_id: string;
  consumer: string;
  event_id: string;
}

/** One delivery of one event to one of a consumer's targets (migration 0019). */
export interface EventDeliveriesTable {
  app_id: string;
  id: Generated<string>;
  consumer: string;
  target: string;
  event_id: string;
  item: Generated<string>;
  trigger: string;
  lane: string;
  status: ColumnType<Status, Status | undefined, Status>;
  attempts: Generated<number>;
  first_attempt_at: Date | null;
  last_attempt_at: Date | null;
  last_status: number | null;
  last_error: string | null;
  created_at: Generated<Date>;
}

/** A target's lane with pending deliveries (migration 0019): `claim` is its claimant's lock key. */
export interface EventLanesTable {
  app_id: string;
  consumer: string;
  target: string;
  lane: string;
  next_attempt_at: Date | null;
  claim: string | null;
}

/** One attempt of a delivery (migration 0019). */
export interface EventDeliveryAttemptsTable {
  app_id: string;
  delivery_id: string;
  id: Generated<string>;
  at: Date;
  duration_ms: number;
  status: number | null;
  error: string | null;
}

/** The webhooks' deliveries (a view of event_deliveries, migration 0019). */
export interface WebhookDeliveriesView {
  app_id: string;
  id: string;
  webhook_id: string;
  event_id: string;
  trigger: string;
  lane: string;
  status: Status;
  attempts: number;
  first_attempt_at: Date | null;
  last_attempt_at: Date | null;
  last_status: number | null;
  last_error: string | null;
  created_at: Date;
}

/** The webhooks' lanes (a view of event_lanes, migration 0019). */
export interface WebhookLanesView {
  app_id: string;
  webhook_id: string;
  lane: string;
  next_attempt_at: Date | null;
  claim: string | null;
}

// The event log's consumers' tables, merged into DB.
declare module './schema.js' {
  interface DB {
    event_cursors: EventCursorsTable;
    event_deliveries: EventDeliveriesTable;
    event_lanes: EventLanesTable;
    event_delivery_attempts: EventDeliveryAttemptsTable;
    webhook_deliveries: WebhookDeliveriesView;
    webhook_lanes: WebhookLanesView;
  }
}
