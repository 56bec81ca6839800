-- Push tokens and the notification log (docs/notifications.md, "Push tokens" and "Logs").

-- A device's push token, registered for a user through one of their auth tokens. One row per
-- (app, token): a device belongs to one user at a time, so registering its token again moves it
-- to the new user and auth token. The auth token's delete (revoke, flush, the rolling limit, its
-- user's delete, the app's) takes its push tokens with it, in the same statement: the cascade.
-- `uid` is the auth token's (which never changes), kept here for the delivery engine's read of
-- many users' tokens.
CREATE TABLE notification_push_tokens (
  app_id          text NOT NULL,
  token           text COLLATE "C" NOT NULL,
  platform        text NOT NULL,
  -- null: the app's default provider of the platform's kind, when sending.
  provider_id     text COLLATE "C",
  uid             text COLLATE "C" NOT NULL,
  auth_token_hash text NOT NULL,
  timezone        text,
  -- In milliseconds, as JavaScript reads them: a time the engine read back compares equal.
  created_at      timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
  updated_at      timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
  PRIMARY KEY (app_id, token),
  FOREIGN KEY (app_id, auth_token_hash) REFERENCES auth_tokens (app_id, token_hash) ON DELETE CASCADE,
  CHECK (length(token) BETWEEN 1 AND 512),
  CHECK (platform IN (
    'fcm_android', 'fcm_ios', 'fcm_web', 'fcm_flutter_android', 'fcm_flutter_ios', 'fcm_react_native_android',
    'fcm_react_native_ios', 'fcm_ionic_cordova_android', 'fcm_ionic_cordova_ios',
    'apns_ios_device', 'apns_flutter_device', 'apns_react_native_device', 'apns_ionic_cordova_device',
    'apns_ios_voip', 'apns_flutter_voip', 'apns_ionic_cordova_voip', 'apns_react_native_voip'))
);
-- The auth token's tokens (its listing, its unregister, and the cascade of its delete).
CREATE INDEX notification_push_tokens_auth ON notification_push_tokens (app_id, auth_token_hash);
-- A user's tokens, least recently registered first (the per-user limit drops those), and the
-- engine's read of many users' tokens.
CREATE INDEX notification_push_tokens_user ON notification_push_tokens (app_id, uid, updated_at);

-- One notification the delivery engine attempted (one recipient, one channel, one token), in the
-- vendor's vocabulary: triggered (and whether the provider took it), or not and why not.
-- Appended in time order (ids from one sequence); the retention deletes an app's oldest first.
-- Times are Unix milliseconds, as the vendor shows them.
CREATE TABLE notification_logs (
  app_id                   text NOT NULL,
  id                       bigint GENERATED ALWAYS AS IDENTITY,
  created_at               timestamptz NOT NULL DEFAULT clock_timestamp(),
  processing_started_at_ms bigint NOT NULL,
  processing_ended_at_ms   bigint NOT NULL,
  component                text NOT NULL,
  channel                  text NOT NULL CHECK (channel IN ('push', 'email', 'sms')),
  provider                 text CHECK (provider IN ('fcm', 'apns', 'sendgrid', 'twilio', 'custom')),
  provider_id              text,
  trigger                  text NOT NULL,
  message_id               bigint,
  reaction_id              bigint,
  message_sent_at_ms       bigint NOT NULL,
  message_category         text,
  message_type             text,
  sender                   text COLLATE "C",
  reaction_sender          text COLLATE "C",
  receiver                 text COLLATE "C",
  reaction_receiver        text COLLATE "C",
  receiver_type            text CHECK (receiver_type IN ('user', 'group')),
  member                   text COLLATE "C",
  token_type               text,
  push_token               text,
  payload                  json,
  notification_triggered   boolean NOT NULL,
  -- Why not, when not triggered (and only then); whether the provider took it, when triggered.
  reason                   text,
  success                  boolean,
  error                    text,
  PRIMARY KEY (app_id, id),
  CHECK (notification_triggered = (reason IS NULL)),
  CHECK (notification_triggered = (success IS NOT NULL))
);
-- "Why was this message (not) notified": the filter most reads use. Other filters read the app's
-- entries newest first (the primary key).
CREATE INDEX notification_logs_message ON notification_logs (app_id, message_id, id) WHERE message_id IS NOT NULL;
