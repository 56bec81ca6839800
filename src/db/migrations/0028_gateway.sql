-- The WebSocket gateway (docs/realtime.md).
--
-- A user's resume reads the events of their own conversations, each by this index (a range of
-- (conversation_id, id) per conversation), never the whole app's log: an app whose log gained a
-- million events while one user was away reads that user's few hundred.
CREATE INDEX events_app_conversation ON events (app_id, conversation_id, id) WHERE conversation_id IS NOT NULL;
-- And the events about a user outside their conversations now: the groups they left, were kicked
-- or banned from, and their blocks (the triggers below). Those are a small part of the log.
CREATE INDEX events_app_about_users ON events (app_id, id)
  WHERE trigger IN ('group_member_left', 'group_member_kicked', 'group_member_banned', 'user_blocked', 'user_unblocked');

-- Presence: the nodes holding a user's connections. A user is online while a row names them;
-- a node refreshes its rows' seen_at while it lives, and the rows of a node silent for long are
-- taken away by the others (the user then goes offline unless another node holds them).
CREATE TABLE gateway_presence (
  app_id  text NOT NULL,
  uid     text COLLATE "C" NOT NULL,
  node_id text NOT NULL,
  seen_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, uid, node_id),
  FOREIGN KEY (app_id, uid) REFERENCES users (app_id, uid) ON DELETE CASCADE
);
-- A node's rows of an app (its connections there going away); the sweeps of every app read the
-- whole table, which holds one row per user online per node.
CREATE INDEX gateway_presence_node ON gateway_presence (app_id, node_id);
