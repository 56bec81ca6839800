-- Apps (tenants), their API keys, users and users' auth tokens.
-- app_id leads every key and index, so data can later be sharded by app.
-- Per-app tables carry no foreign key to apps: every insert would lock the app's row
-- (FOR KEY SHARE), and concurrent writes of one app would queue on it. Tenancy is checked
-- on every request before anything is written.

CREATE TABLE apps (
  id         text PRIMARY KEY,
  name       text NOT NULL,
  region     text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  app_id     text NOT NULL,
  key_hash   text NOT NULL,
  key_hint   text NOT NULL,
  name       text NOT NULL,
  scope      text NOT NULL CHECK (scope IN ('fullAccess', 'authOnly')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz,
  PRIMARY KEY (app_id, key_hash),
  UNIQUE (app_id, key_hint)
);

-- Ids compare byte-wise (COLLATE "C"), so one btree serves equality, prefix search and order.
CREATE TABLE users (
  app_id         text NOT NULL,
  uid            text COLLATE "C" NOT NULL,
  name           text NOT NULL,
  avatar         text,
  link           text,
  role           text NOT NULL DEFAULT 'default',
  status_message text,
  metadata       json,
  tags           text[] NOT NULL DEFAULT '{}',
  status         text NOT NULL DEFAULT 'offline',
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz,
  last_active_at timestamptz,
  deactivated_at timestamptz,
  PRIMARY KEY (app_id, uid)
);

-- The users list sorts by name, and searchKey is a prefix match on name or uid (the primary
-- key serves the uid prefix).
CREATE INDEX users_app_name ON users (app_id, (lower(name) COLLATE "C"), uid);

-- How many active and deactivated users each app has, for the unfiltered users list's total
-- (a count(*) of 100k users costs ~30 ms). Statement-level triggers keep it right whatever
-- writes users. Each app's count is spread over 16 rows, chosen by backend, so concurrent
-- writers rarely wait on the same row; the total is their sum.
CREATE TABLE user_counts (
  app_id      text NOT NULL,
  shard       smallint NOT NULL,
  active      bigint NOT NULL DEFAULT 0,
  deactivated bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (app_id, shard)
);

CREATE FUNCTION user_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Each branch names only the transition tables its event has. Rows are grouped by app and
  -- taken in app order, so two statements lock counter rows in the same order (no deadlock).
  IF TG_OP = 'INSERT' THEN
    INSERT INTO user_counts AS c (app_id, shard, active, deactivated)
    SELECT app_id, pg_backend_pid() % 16, count(*) FILTER (WHERE deactivated_at IS NULL),
           count(*) FILTER (WHERE deactivated_at IS NOT NULL)
    FROM new_rows GROUP BY app_id ORDER BY app_id
    ON CONFLICT (app_id, shard) DO UPDATE
      SET active = c.active + excluded.active, deactivated = c.deactivated + excluded.deactivated;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO user_counts AS c (app_id, shard, active, deactivated)
    SELECT app_id, pg_backend_pid() % 16, -count(*) FILTER (WHERE deactivated_at IS NULL),
           -count(*) FILTER (WHERE deactivated_at IS NOT NULL)
    FROM old_rows GROUP BY app_id ORDER BY app_id
    ON CONFLICT (app_id, shard) DO UPDATE
      SET active = c.active + excluded.active, deactivated = c.deactivated + excluded.deactivated;
  ELSE
    INSERT INTO user_counts AS c (app_id, shard, active, deactivated)
    SELECT app_id, pg_backend_pid() % 16, sum(active), sum(deactivated)
    FROM (SELECT app_id, (deactivated_at IS NULL)::int AS active, (deactivated_at IS NOT NULL)::int AS deactivated
          FROM new_rows
          UNION ALL
          SELECT app_id, -(deactivated_at IS NULL)::int, -(deactivated_at IS NOT NULL)::int
          FROM old_rows) AS delta
    GROUP BY app_id HAVING sum(active) <> 0 OR sum(deactivated) <> 0 ORDER BY app_id
    ON CONFLICT (app_id, shard) DO UPDATE
      SET active = c.active + excluded.active, deactivated = c.deactivated + excluded.deactivated;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER users_count_insert AFTER INSERT ON users
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION user_counts_apply();
CREATE TRIGGER users_count_delete AFTER DELETE ON users
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION user_counts_apply();
CREATE TRIGGER users_count_update AFTER UPDATE ON users
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION user_counts_apply();

CREATE TABLE auth_tokens (
  app_id     text NOT NULL,
  uid        text COLLATE "C" NOT NULL,
  token_hash text NOT NULL,
  token_hint text NOT NULL,
  platform   text,
  user_agent text,
  app_info   json,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz,
  PRIMARY KEY (app_id, token_hash),
  UNIQUE (app_id, uid, token_hint),
  FOREIGN KEY (app_id, uid) REFERENCES users (app_id, uid) ON DELETE CASCADE
);

CREATE INDEX auth_tokens_app_uid_created ON auth_tokens (app_id, uid, created_at);
