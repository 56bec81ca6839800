-- Usage statistics (docs/stats.md): counts taken off the event log by an aggregation with a
-- cursor per app, so no send or receipt writes a counter row of its own (a hot row per app
-- would serialise them). One statement moves an app's cursor and adds what it read, so an
-- event is counted once whatever process reads it, and a rolled-back step counts nothing.
-- The counts outlive the log: its retention deletes events, not these rows.

-- The last event id counted for the app. An app starts at 0: what the log still holds when
-- the app (or this migration) is new is counted too.
CREATE TABLE stats_cursors (
  app_id   text NOT NULL,
  event_id bigint NOT NULL,
  PRIMARY KEY (app_id)
);

-- Per app and five-minute bucket (its start, a multiple of 300 s since the epoch): messages
-- sent (message_sent events), read and delivery receipts. A bucket has a row once it has a count.
CREATE TABLE stats_message_buckets (
  app_id            text NOT NULL,
  bucket            timestamptz NOT NULL,
  messages_sent     bigint NOT NULL DEFAULT 0,
  read_receipts     bigint NOT NULL DEFAULT 0,
  delivery_receipts bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (app_id, bucket)
);

-- The users active on a UTC day, one row each: bit h of `hours` is set when the user was
-- active in hour h (0-23, UTC) of that day. At most one row per user and day, so a day's
-- distinct users are read by key, and a range's are counted to the hour.
CREATE TABLE stats_active_users (
  app_id text NOT NULL,
  day    date NOT NULL,
  uid    text NOT NULL,
  hours  integer NOT NULL,
  PRIMARY KEY (app_id, day, uid)
);
