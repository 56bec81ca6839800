-- Messages and conversations.
--
-- Messages carry no foreign key to users or groups: a permanently deleted user or a deleted
-- group leaves the history of the people they talked with intact (the sender's entity then
-- shows only its uid). It also spares every insert a FOR KEY SHARE lock on the sender's row.

CREATE TABLE messages (
  app_id          text NOT NULL,
  -- One sequence for all apps: the id is the order (keyset pagination), never a timestamp.
  id              bigint GENERATED ALWAYS AS IDENTITY,
  conversation_id text COLLATE "C" NOT NULL,
  sender          text COLLATE "C" NOT NULL,
  receiver        text COLLATE "C" NOT NULL,
  receiver_type   text NOT NULL CHECK (receiver_type IN ('user', 'group')),
  category        text NOT NULL,
  type            text NOT NULL,
  -- As the client sent it (json, not jsonb: key order and bytes are kept).
  data            json NOT NULL,
  tags            text[] NOT NULL DEFAULT '{}',
  -- Users mentioned as <@uid:UID> in the text who existed when it was sent.
  mentioned_uids  text[] NOT NULL DEFAULT '{}',
  muid            text,
  parent_id       bigint,
  reply_count     integer NOT NULL DEFAULT 0,
  -- clock_timestamp(), not now(): a send that waited for the conversation's lock must not
  -- carry an earlier time than the message committed before it.
  sent_at         timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- NULL until the message changes (then updatedAt is sent_at).
  updated_at      timestamptz,
  edited_at       timestamptz,
  edited_by       text COLLATE "C",
  deleted_at      timestamptz,
  deleted_by      text COLLATE "C",
  PRIMARY KEY (app_id, id)
);

-- A conversation's history, paged by id.
CREATE INDEX messages_app_conversation ON messages (app_id, conversation_id, id);
-- A client's message id: a retried send returns the first message, on any node.
CREATE UNIQUE INDEX messages_app_sender_muid ON messages (app_id, sender, muid) WHERE muid IS NOT NULL;
-- Thread replies (later increment).
CREATE INDEX messages_app_parent ON messages (app_id, parent_id, id) WHERE parent_id IS NOT NULL;

-- One row per conversation, created by its first message. Its row lock serialises the sends
-- of one conversation, so ids within a conversation are assigned in commit order and a reader
-- paging by id never skips a message that commits later with a smaller id.
CREATE TABLE conversations (
  app_id            text NOT NULL,
  conversation_id   text COLLATE "C" NOT NULL,
  conversation_type text NOT NULL CHECK (conversation_type IN ('user', 'group')),
  last_message_id   bigint,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, conversation_id)
);

-- Each participant's side of a 1:1 conversation, created with it: a user's conversations are
-- one range of this key. Per-user state (read/delivered, reset, pins) joins it later.
-- Group conversations are reached through group_members instead.
CREATE TABLE user_conversations (
  app_id            text NOT NULL,
  uid               text COLLATE "C" NOT NULL,
  conversation_id   text COLLATE "C" NOT NULL,
  conversation_with text COLLATE "C" NOT NULL,
  created_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, uid, conversation_id),
  FOREIGN KEY (app_id, conversation_id) REFERENCES conversations (app_id, conversation_id) ON DELETE CASCADE,
  -- A permanently deleted user's side goes with them; the messages stay.
  FOREIGN KEY (app_id, uid) REFERENCES users (app_id, uid) ON DELETE CASCADE
);
