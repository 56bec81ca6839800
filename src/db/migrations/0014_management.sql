-- The vendor's management API (docs/management-api.md): the deployment's management
-- credentials, apps whose delete has begun, apps' settings and webhooks.

-- A management credential belongs to the deployment, not to an app: it acts on every app. The
-- secret is 32 random bytes, stored as its SHA-256 digest (no slow hash is needed for so much
-- randomness); the key is its public name.
CREATE TABLE management_keys (
  key         text PRIMARY KEY,
  secret_hash text NOT NULL,
  name        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- An app being deleted: its keys went first, its rows go in small batches, and its own row last,
-- with this one. A delete interrupted midway (the process stopped) is finished by the next
-- delete of the app; meanwhile the app is listed with the state "deleting".
CREATE TABLE app_deletions (
  app_id       text PRIMARY KEY,
  requested_at timestamptz NOT NULL DEFAULT now()
);

-- The vendor's "map settings": boolean settings of an app, by key.
CREATE TABLE app_settings (
  app_id     text NOT NULL,
  key        text COLLATE "C" NOT NULL,
  value      boolean NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, key)
);

-- An app's webhooks (at most 25 per app, as the vendor's). `triggers` holds the names of the
-- triggers it subscribes to, sorted and distinct.
CREATE TABLE webhooks (
  app_id           text NOT NULL,
  id               text COLLATE "C" NOT NULL,
  name             text NOT NULL,
  url              text NOT NULL,
  use_basic_auth   boolean NOT NULL DEFAULT false,
  username         text,
  -- Kept as given: deliveries send it in HTTP Basic auth, the vendor's only auth.
  password         text,
  enabled          boolean NOT NULL DEFAULT true,
  retry_on_failure boolean NOT NULL DEFAULT false,
  triggers         text[] NOT NULL DEFAULT '{}',
  -- 32 random bytes, hex: deliveries are signed with it (HMAC-SHA256), so it is kept as is.
  -- The create answer shows it once.
  signing_secret   text NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, id)
);
