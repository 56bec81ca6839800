-- Push providers (docs/notifications.md, "FCM and APNs providers"): an app's FCM and APNs
-- credentials, several of each kind, one of each kind its default (the provider a push token
-- registered without a provider id is sent through).
--
-- Secrets are sealed (domain/secret-box.ts, AES-256-GCM under the deployment's key), each bound
-- to its app, kind, provider and field: a sealed value copied to another row does not open. The
-- columns in plain text are what the answers show; none of them is a secret.
--
-- At most one default per app and kind: the partial unique indexes hold it whatever happens;
-- the writes of an app's providers of one kind take turns (an advisory lock), so that a change
-- of default, an add (the first provider becomes the default) and a delete (another becomes it)
-- always leave exactly one while there are any.

CREATE TABLE notification_fcm_providers (
  app_id                   text NOT NULL,
  provider_id              text COLLATE "C" NOT NULL,
  is_default               boolean NOT NULL DEFAULT false,
  service_account_filename text,
  -- Copies of the service account's fields the answers show (its private key is not among them).
  project_id               text NOT NULL,
  client_email             text NOT NULL,
  private_key_id           text,
  -- The whole service-account JSON, as checked (its private_key as PKCS#8 PEM), sealed under
  -- `<app_id>:fcm:<provider_id>:serviceAccount`.
  service_account_sealed   text NOT NULL,
  -- Whether FCM's `notification` key is sent, per platform and type
  -- (domain/notifications/push-providers.ts: NotificationInPayload).
  notification_in_payload  jsonb NOT NULL,
  created_at               timestamptz NOT NULL DEFAULT now(),
  updated_at               timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, provider_id)
);

CREATE UNIQUE INDEX notification_fcm_providers_one_default ON notification_fcm_providers (app_id) WHERE is_default;

CREATE TABLE notification_apns_providers (
  app_id                    text NOT NULL,
  provider_id               text COLLATE "C" NOT NULL,
  is_default                boolean NOT NULL DEFAULT false,
  -- Apple's ids of the key and the team (10 characters), and the app's bundle id (the APNs topic).
  key_id                    text NOT NULL,
  team_id                   text NOT NULL,
  bundle_id                 text NOT NULL,
  p8_key_filename           text,
  -- The .p8 key (PKCS#8 PEM, EC P-256), sealed under `<app_id>:apns:<provider_id>:p8Key`.
  p8_key_sealed             text NOT NULL,
  -- api.push.apple.com when true, the sandbox (api.sandbox.push.apple.com) when false.
  production_mode           boolean NOT NULL,
  include_content_available boolean NOT NULL,
  include_mutable_content   boolean NOT NULL,
  created_at                timestamptz NOT NULL DEFAULT now(),
  updated_at                timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, provider_id)
);

CREATE UNIQUE INDEX notification_apns_providers_one_default ON notification_apns_providers (app_id) WHERE is_default;
