-- The event log's consumers (docs/events.md, "Consumers"): one queue for every reader that must
-- get each event (webhooks, notifications), in place of the webhooks' own tables (0015).
--
-- A consumer's fan-out reads each app's log from its cursor up to the feed's safe id (an id no
-- running transaction can still fill) and inserts its deliveries; the cursor's row lock (FOR
-- UPDATE SKIP LOCKED) makes one process do each stretch, and the unique key makes a delivery
-- once whatever happens.
CREATE TABLE event_cursors (
  app_id   text NOT NULL,
  consumer text NOT NULL,
  -- The last event id fanned out for the app to this consumer.
  event_id bigint NOT NULL,
  PRIMARY KEY (app_id, consumer)
);

-- One delivery of one event to one of a consumer's targets (a webhook; a notification's
-- recipient), and of one `item` of it where a target gets several ('' when one). Its id is the
-- same on every attempt and redelivery (the webhooks' X-Parley-Delivery). `lane` orders it: a
-- target gets each lane's deliveries in event order.
CREATE TABLE event_deliveries (
  app_id           text NOT NULL,
  id               bigint GENERATED ALWAYS AS IDENTITY,
  consumer         text NOT NULL,
  target           text COLLATE "C" NOT NULL,
  event_id         bigint NOT NULL,
  item             text COLLATE "C" NOT NULL DEFAULT '',
  trigger          text NOT NULL,
  lane             text NOT NULL,
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts         integer NOT NULL DEFAULT 0,
  -- When the current run of attempts began (a redelivery begins a new run): retries stop at
  -- this plus the retry horizon.
  first_attempt_at timestamptz,
  last_attempt_at  timestamptz,
  -- The last attempt's status (HTTP), or null when it got none (refused, timed out).
  last_status      integer,
  last_error       text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, id),
  UNIQUE (app_id, consumer, target, event_id, item)
);
-- A lane's pending deliveries in order, for the sender.
CREATE INDEX event_deliveries_pending ON event_deliveries (app_id, consumer, target, lane, event_id) WHERE status = 'pending';

-- A target's lanes that have pending deliveries. `next_attempt_at` is when the lane may be taken
-- next (null: nothing pending): now for new work, the head's retry time after a failure, the
-- lease's end while a process sends it. `claim` names that process's claim: the key of an
-- advisory lock its holder keeps on a session of its own, so a claim whose holder is gone (its
-- session ended) is taken over at once, and one whose lease ended in any case.
CREATE TABLE event_lanes (
  app_id          text NOT NULL,
  consumer        text NOT NULL,
  target          text COLLATE "C" NOT NULL,
  lane            text NOT NULL,
  next_attempt_at timestamptz,
  claim           bigint,
  PRIMARY KEY (app_id, consumer, target, lane)
);
CREATE INDEX event_lanes_due ON event_lanes (app_id, consumer, target, next_attempt_at) WHERE next_attempt_at IS NOT NULL;
-- The claimed lanes (few: those being sent), for the look for claimants that are gone.
CREATE INDEX event_lanes_claimed ON event_lanes (app_id, consumer, claim) WHERE claim IS NOT NULL;

-- Every attempt of a delivery: when, how long, what it got.
CREATE TABLE event_delivery_attempts (
  app_id      text NOT NULL,
  delivery_id bigint NOT NULL,
  id          bigint GENERATED ALWAYS AS IDENTITY,
  at          timestamptz NOT NULL,
  duration_ms integer NOT NULL,
  status      integer,
  error       text,
  PRIMARY KEY (app_id, delivery_id, id)
);

-- The webhooks' queue moves in, with its ids (a delivery keeps its id).
INSERT INTO event_cursors (app_id, consumer, event_id) SELECT app_id, 'webhooks', event_id FROM webhook_cursors;
INSERT INTO event_deliveries (app_id, id, consumer, target, event_id, trigger, lane, status, attempts, first_attempt_at, last_attempt_at, last_status, last_error, created_at)
  OVERRIDING SYSTEM VALUE
  SELECT app_id, id, 'webhooks', webhook_id, event_id, trigger, lane, status, attempts, first_attempt_at, last_attempt_at, last_status, last_error, created_at FROM webhook_deliveries;
SELECT setval(pg_get_serial_sequence('event_deliveries', 'id'), greatest(1, (SELECT coalesce(max(id), 0) FROM event_deliveries)), (SELECT count(*) > 0 FROM event_deliveries));
INSERT INTO event_lanes (app_id, consumer, target, lane, next_attempt_at)
  SELECT app_id, 'webhooks', webhook_id, lane, next_attempt_at FROM webhook_lanes;
DROP TABLE webhook_cursors;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_lanes;

-- The webhooks' part of the queue, as their delivery log reads it.
CREATE VIEW webhook_deliveries AS
  SELECT app_id, id, target AS webhook_id, event_id, trigger, lane, status, attempts, first_attempt_at, last_attempt_at, last_status, last_error, created_at
  FROM event_deliveries WHERE consumer = 'webhooks';
CREATE VIEW webhook_lanes AS
  SELECT app_id, target AS webhook_id, lane, next_attempt_at, claim FROM event_lanes WHERE consumer = 'webhooks';
