-- Notifications (docs/notifications.md): the app's SMS and e-mail providers (Twilio, SendGrid)
-- and its custom providers (a webhook per channel: push, SMS, e-mail). At most one of each per
-- app. Secrets (Twilio's auth token, SendGrid's API key, Basic-auth passwords) are stored sealed
-- (domain/secret-box.ts: AES-256-GCM under PARLEY_SECRET_KEY, bound to the app and the field),
-- never in plain text; `*_hint` is the masked form the API answers (a few characters at each end).

-- The app's Twilio account, for SMS.
CREATE TABLE notification_twilio_providers (
  app_id            text PRIMARY KEY,
  enabled           boolean NOT NULL,
  -- AC + 32 hex digits.
  account_sid       text NOT NULL,
  -- The sender: a phone number (E.164) or a messaging service (MG + 32 hex digits).
  sender            text NOT NULL,
  auth_token_sealed text NOT NULL,
  auth_token_hint   text NOT NULL,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now()
);

-- The app's SendGrid account, for e-mail.
CREATE TABLE notification_sendgrid_providers (
  app_id               text PRIMARY KEY,
  enabled              boolean NOT NULL,
  api_key_sealed       text NOT NULL,
  api_key_hint         text NOT NULL,
  template_id          text NOT NULL,
  unsubscribe_group_id text NOT NULL,
  sender_name          text NOT NULL,
  sender_email         text NOT NULL,
  allow_replies        boolean NOT NULL,
  -- Where replies go (Reply-To), when given.
  reply_to_email       text,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now()
);

-- The app's custom provider of a channel: a webhook Parley posts each notification to.
CREATE TABLE notification_custom_providers (
  app_id              text NOT NULL,
  channel             text NOT NULL CHECK (channel IN ('push', 'sms', 'email')),
  enabled             boolean NOT NULL,
  url                 text NOT NULL,
  use_basic_auth      boolean NOT NULL,
  username            text,
  password_sealed     text,
  -- SMS: useStoredPhNo, e-mail: useStoredEmailID: called only for users whose phone number or
  -- e-mail address is stored (contact details). Push has no such option.
  only_stored_contact boolean NOT NULL DEFAULT false,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, channel),
  CHECK (channel <> 'push' OR NOT only_stored_contact),
  -- Basic auth needs both.
  CHECK (NOT use_basic_auth OR (username IS NOT NULL AND password_sealed IS NOT NULL))
);
