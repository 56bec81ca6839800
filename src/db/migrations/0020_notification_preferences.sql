-- Who is notified and when (docs/notifications.md): the app's notification settings, each user's
-- own preferences, time zone and contact details, and the conversations users muted.
-- src/domain/notifications/preferences.ts says what the values mean.

-- The app's settings (notifications-push-*-settings): preferences with their "user may override"
-- flags, sounds and templates, as the API shows them, every field present. An app with no row
-- has the defaults (domain/notifications/preferences-defaults.ts); a reset deletes the row.
CREATE TABLE notification_settings (
  app_id      text PRIMARY KEY,
  preferences jsonb NOT NULL,
  sound       jsonb NOT NULL,
  templates   jsonb NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- A user's own values (notifications-push-*-preferences), time zone and contact details. The
-- preferences are the values the user set, sparse, one key per field ('group.messagesSetting',
-- 'mute.schedule.monday.from'), so that an update merges with `||` in one statement; what
-- applies is the app's settings with these where the app lets users override them.
CREATE TABLE notification_user_preferences (
  app_id      text NOT NULL,
  uid         text COLLATE "C" NOT NULL,
  preferences jsonb NOT NULL DEFAULT '{}',
  -- An IANA time zone name (checked by the service with Intl); null: UTC.
  timezone    text,
  email       text,
  -- E.164: + and up to 15 digits.
  phone       text CHECK (phone ~ '^\+[1-9][0-9]{1,14}$'),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, uid),
  FOREIGN KEY (app_id, uid) REFERENCES users (app_id, uid) ON DELETE CASCADE
);

-- The conversations a user muted: a 1:1 conversation (kind 'oneOnOne', target the other user's
-- uid) or a group's (kind 'group', target its guid), until a time or (until null) until unmuted.
-- The generated columns name the target for its foreign key: a mute goes with the user who
-- muted, the user muted and the group muted.
CREATE TABLE notification_mutes (
  app_id     text NOT NULL,
  uid        text COLLATE "C" NOT NULL,
  kind       text NOT NULL CHECK (kind IN ('oneOnOne', 'group')),
  target     text COLLATE "C" NOT NULL,
  until      timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  muted_uid  text COLLATE "C" GENERATED ALWAYS AS (CASE WHEN kind = 'oneOnOne' THEN target END) STORED,
  muted_guid text COLLATE "C" GENERATED ALWAYS AS (CASE WHEN kind = 'group' THEN target END) STORED,
  PRIMARY KEY (app_id, uid, kind, target),
  FOREIGN KEY (app_id, uid) REFERENCES users (app_id, uid) ON DELETE CASCADE,
  FOREIGN KEY (app_id, muted_uid) REFERENCES users (app_id, uid) ON DELETE CASCADE,
  FOREIGN KEY (app_id, muted_guid) REFERENCES groups (app_id, guid) ON DELETE CASCADE
);

-- The cascades of a deleted user or group find their mutes by these (partial: half the rows each).
CREATE INDEX notification_mutes_muted_uid ON notification_mutes (app_id, muted_uid) WHERE muted_uid IS NOT NULL;
CREATE INDEX notification_mutes_muted_guid ON notification_mutes (app_id, muted_guid) WHERE muted_guid IS NOT NULL;
