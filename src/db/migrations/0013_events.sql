-- The event log (docs/events.md): every change a webhook trigger names, recorded in the same
-- transaction as the change, so a rolled-back change records nothing and a committed one is
-- never lost. Webhook deliveries and the live stream read it; the cleanup job deletes events
-- older than the retention.
--
-- `tx` comes before `id`: the transaction's id is assigned before the event's id is drawn.
-- Message events (message_sent, message_edited, message_deleted, user_mentioned) name the
-- message their payload shows (`message_id`, rendered when delivered); the others carry their
-- payload's `data` as recorded.
CREATE TABLE events (
  app_id          text NOT NULL,
  tx              xid8 NOT NULL DEFAULT pg_current_xact_id(),
  id              bigint GENERATED ALWAYS AS IDENTITY,
  trigger         text NOT NULL,
  conversation_id text,
  message_id      bigint,
  data            json,
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (app_id, id),
  CHECK ((message_id IS NULL) <> (data IS NULL))
);
-- Every read is an app's: its stream, its webhooks' deliveries, its cleanup (old events are the
-- first of its ids).
