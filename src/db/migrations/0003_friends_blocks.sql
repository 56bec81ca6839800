-- Friends and blocked users: the social graph between the users of one app.

-- A friendship is stored in both directions, so each user's friends are one range of the
-- primary key (list, count towards the limit) with no OR across two columns.
CREATE TABLE friends (
  app_id     text NOT NULL,
  uid        text COLLATE "C" NOT NULL,
  friend_uid text COLLATE "C" NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, uid, friend_uid),
  CHECK (uid <> friend_uid),
  -- A permanently deleted user's friendships go with them (both rows of each).
  FOREIGN KEY (app_id, uid) REFERENCES users (app_id, uid) ON DELETE CASCADE,
  FOREIGN KEY (app_id, friend_uid) REFERENCES users (app_id, uid) ON DELETE CASCADE
);

-- Serves the cascade of a deleted user through friend_uid.
CREATE INDEX friends_app_friend ON friends (app_id, friend_uid, uid);

-- One row per direction: uid has blocked blocked_uid.
CREATE TABLE blocked_users (
  app_id      text NOT NULL,
  uid         text COLLATE "C" NOT NULL,
  blocked_uid text COLLATE "C" NOT NULL,
  blocked_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, uid, blocked_uid),
  CHECK (uid <> blocked_uid),
  FOREIGN KEY (app_id, uid) REFERENCES users (app_id, uid) ON DELETE CASCADE,
  FOREIGN KEY (app_id, blocked_uid) REFERENCES users (app_id, uid) ON DELETE CASCADE
);

-- Who has blocked a user (hasBlockedMe), and the cascade through blocked_uid.
CREATE INDEX blocked_users_app_blocked ON blocked_users (app_id, blocked_uid, uid);
