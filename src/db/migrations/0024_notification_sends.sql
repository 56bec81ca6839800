-- Notifications (docs/notifications.md): what each event has been sent to. A row is made before a
-- notification goes to a device token (or a custom provider, key 'custom'), and kept, so that one
-- event reaches one token at most once: a retry, a redelivery or a process taking over after a
-- crash skips what is here. A send that failed in passing removes its row, so it is tried again.
CREATE TABLE notification_sends (
  app_id   text NOT NULL,
  event_id bigint NOT NULL,
  key      text COLLATE "C" NOT NULL,
  sent_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, event_id, key)
);
