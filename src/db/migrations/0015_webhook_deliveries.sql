-- Webhook delivery (docs/webhooks.md): what the event log owes each webhook, and in what order.
--
-- The fan-out reads each app's log from its cursor up to the feed's safe id (an id no running
-- transaction can still fill), and inserts one delivery per event and subscribed webhook; the
-- cursor's row lock (FOR UPDATE SKIP LOCKED) makes one process do each stretch, and the unique
-- key makes a delivery once whatever happens.
CREATE TABLE webhook_cursors (
  app_id   text PRIMARY KEY,
  -- The last event id fanned out for the app.
  event_id bigint NOT NULL
);

-- One delivery of one event to one webhook. Its id is the X-Parley-Delivery header, the same on
-- every attempt and redelivery. `lane` is the conversation the event happened in ('' when none):
-- a webhook gets each lane's deliveries in event order.
CREATE TABLE webhook_deliveries (
  app_id          text NOT NULL,
  id              bigint GENERATED ALWAYS AS IDENTITY,
  webhook_id      text COLLATE "C" NOT NULL,
  event_id        bigint NOT NULL,
  trigger         text NOT NULL,
  lane            text NOT NULL,
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts        integer NOT NULL DEFAULT 0,
  -- When the current run of attempts began (a redelivery begins a new run): retries stop at
  -- this plus the retry horizon.
  first_attempt_at timestamptz,
  last_attempt_at timestamptz,
  -- The last attempt's HTTP status, or null when it got none (refused, timed out).
  last_status     integer,
  last_error      text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, id),
  UNIQUE (app_id, webhook_id, event_id)
);
-- A lane's pending deliveries in order, for the sender.
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (app_id, webhook_id, lane, event_id) WHERE status = 'pending';

-- A webhook's lanes that have pending deliveries. `next_attempt_at` is when the lane may be taken
-- next (null: nothing pending): now for new work, the head's retry time after a failure, the
-- lease's end while a process sends it (`claim` names that process's claim; a claim whose lease
-- ended is taken over by another process).
CREATE TABLE webhook_lanes (
  app_id          text NOT NULL,
  webhook_id      text COLLATE "C" NOT NULL,
  lane            text NOT NULL,
  next_attempt_at timestamptz,
  claim           text,
  PRIMARY KEY (app_id, webhook_id, lane)
);
CREATE INDEX webhook_lanes_due ON webhook_lanes (app_id, webhook_id, next_attempt_at) WHERE next_attempt_at IS NOT NULL;

-- A rotated signing secret keeps signing deliveries, beside the new one, until its overlap ends.
ALTER TABLE webhooks ADD COLUMN previous_signing_secret text;
ALTER TABLE webhooks ADD COLUMN previous_secret_expires_at timestamptz;
