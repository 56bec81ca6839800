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
