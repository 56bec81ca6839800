-- Groups, their members and their bans.

CREATE TABLE groups (
  app_id        text NOT NULL,
  guid          text COLLATE "C" NOT NULL,
  name          text NOT NULL,
  type          text NOT NULL CHECK (type IN ('public', 'private', 'password')),
  -- scrypt, for password groups only; never returned.
  password_hash text,
  icon          text,
  description   text,
  metadata      json,
  tags          text[] NOT NULL DEFAULT '{}',
  owner         text COLLATE "C",
  -- Kept by the group_members triggers below, whatever writes memberships (including the
  -- cascade of a deleted user).
  members_count integer NOT NULL DEFAULT 0,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz,
  PRIMARY KEY (app_id, guid),
  -- A permanently deleted owner leaves the group without one (its memberships go too).
  FOREIGN KEY (app_id, owner) REFERENCES users (app_id, uid) ON DELETE SET NULL (owner)
);

CREATE INDEX groups_app_name ON groups (app_id, (lower(name) COLLATE "C"), guid);
CREATE INDEX groups_app_created ON groups (app_id, created_at, guid);
CREATE INDEX groups_app_updated ON groups (app_id, updated_at, guid);
CREATE INDEX groups_app_owner ON groups (app_id, owner);

CREATE TABLE group_members (
  app_id    text NOT NULL,
  guid      text COLLATE "C" NOT NULL,
  uid       text COLLATE "C" NOT NULL,
  scope     text NOT NULL CHECK (scope IN ('admin', 'moderator', 'participant')),
  joined_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, guid, uid),
  FOREIGN KEY (app_id, guid) REFERENCES groups (app_id, guid) ON DELETE CASCADE,
  FOREIGN KEY (app_id, uid) REFERENCES users (app_id, uid) ON DELETE CASCADE
);

-- A user's groups: hasJoined, and the limit of groups per user.
CREATE INDEX group_members_app_uid ON group_members (app_id, uid, guid);

CREATE TABLE group_bans (
  app_id    text NOT NULL,
  guid      text COLLATE "C" NOT NULL,
  uid       text COLLATE "C" NOT NULL,
  banned_at timestamptz NOT NULL DEFAULT now(),
  banned_by text COLLATE "C",
  PRIMARY KEY (app_id, guid, uid),
  FOREIGN KEY (app_id, guid) REFERENCES groups (app_id, guid) ON DELETE CASCADE,
  FOREIGN KEY (app_id, uid) REFERENCES users (app_id, uid) ON DELETE CASCADE
);

CREATE INDEX group_bans_app_uid ON group_bans (app_id, uid, guid);

CREATE FUNCTION group_members_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Groups are updated in key order, so concurrent statements lock them in the same order.
  IF TG_OP = 'INSERT' THEN
    UPDATE groups g SET members_count = g.members_count + d.n
    FROM (SELECT app_id, guid, count(*) AS n FROM new_rows GROUP BY app_id, guid ORDER BY app_id, guid) AS d
    WHERE g.app_id = d.app_id AND g.guid = d.guid;
  ELSE
    UPDATE groups g SET members_count = g.members_count - d.n
    FROM (SELECT app_id, guid, count(*) AS n FROM old_rows GROUP BY app_id, guid ORDER BY app_id, guid) AS d
    WHERE g.app_id = d.app_id AND g.guid = d.guid;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER group_members_count_insert AFTER INSERT ON group_members
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION group_members_count();
CREATE TRIGGER group_members_count_delete AFTER DELETE ON group_members
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION group_members_count();
