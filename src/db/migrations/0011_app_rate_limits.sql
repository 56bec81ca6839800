-- An app's own rate limits (requests a minute, per class; 0 is off). A class left NULL has the
-- deployment's limit (PARLEY_RATE_LIMITS); an app with no row has the deployment's for all.
-- Read with the app and its key in the one lookup each request makes (AppsRepository.getWithKey),
-- so per-app limits cost no query of their own.
CREATE TABLE app_rate_limits (
  app_id          text PRIMARY KEY,
  core            integer CHECK (core >= 0),
  standard        integer CHECK (standard >= 0),
  import          integer CHECK (import >= 0),
  send_per_user   integer CHECK (send_per_user >= 0),
  unread_per_user integer CHECK (unread_per_user >= 0),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
