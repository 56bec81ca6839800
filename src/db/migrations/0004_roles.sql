-- Roles, their restricted features and permissions (RBAC), and group scope permissions (SBAC).

CREATE TABLE roles (
  app_id      text NOT NULL,
  role        text COLLATE "C" NOT NULL,
  name        text NOT NULL,
  description text,
  metadata    json,
  settings    json,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz,
  PRIMARY KEY (app_id, role)
);

-- Every app has the `default` role: the apps that exist now get it here, new apps when they
-- are created (AppsService). It cannot be deleted, so it is always there. users.role has no
-- foreign key to roles: every user insert would share-lock the role's row (see 0001).
INSERT INTO roles (app_id, role, name, description, created_at)
SELECT id, 'default', 'Default Role', 'This role gives full access', created_at FROM apps;

CREATE TABLE role_restricted_features (
  app_id     text NOT NULL,
  role       text COLLATE "C" NOT NULL,
  feature    text COLLATE "C" NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, role, feature),
  FOREIGN KEY (app_id, role) REFERENCES roles (app_id, role) ON DELETE CASCADE
);

-- Only the permissions explicitly set; the others have their catalogue default.
CREATE TABLE role_permissions (
  app_id     text NOT NULL,
  role       text COLLATE "C" NOT NULL,
  permission text COLLATE "C" NOT NULL,
  value      json NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz,
  PRIMARY KEY (app_id, role, permission),
  FOREIGN KEY (app_id, role) REFERENCES roles (app_id, role) ON DELETE CASCADE
);

CREATE TABLE group_scope_permissions (
  app_id     text NOT NULL,
  guid       text COLLATE "C" NOT NULL,
  scope      text NOT NULL CHECK (scope IN ('admin', 'moderator', 'participant')),
  permission text COLLATE "C" NOT NULL,
  value      json NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz,
  PRIMARY KEY (app_id, guid, scope, permission),
  FOREIGN KEY (app_id, guid) REFERENCES groups (app_id, guid) ON DELETE CASCADE
);
