-- Each user's state of a conversation: receipts (how far they have received and read it),
-- the point up to which they cleared its history (reset-*-conversation, delete-conversation),
-- and their tags. Rows are written only by those calls, never by a send: unread counts are
-- computed on read from read_message_id (an indexed range of messages), so a send to a group
-- of any size writes no per-member row.
CREATE TABLE conversation_states (
  app_id               text NOT NULL,
  uid                  text COLLATE "C" NOT NULL,
  conversation_id      text COLLATE "C" NOT NULL,
  -- Watermarks: every message up to this id is delivered to / read by uid. Never moved
  -- backwards, except read by mark-as-unread.
  delivered_message_id bigint,
  delivered_at         timestamptz,
  read_message_id      bigint,
  read_at              timestamptz,
  -- Messages up to this id are hidden from uid; the conversation is hidden while its last
  -- message is not newer.
  cleared_message_id   bigint,
  tags                 text[] NOT NULL DEFAULT '{}',
  updated_at           timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, uid, conversation_id),
  FOREIGN KEY (app_id, conversation_id) REFERENCES conversations (app_id, conversation_id) ON DELETE CASCADE,
  FOREIGN KEY (app_id, uid) REFERENCES users (app_id, uid) ON DELETE CASCADE
);

-- The cascades from a deleted conversation, without scanning these tables.
CREATE INDEX conversation_states_app_conversation ON conversation_states (app_id, conversation_id);
CREATE INDEX user_conversations_app_conversation ON user_conversations (app_id, conversation_id);

-- Conversations and messages carry no foreign key to groups (see 0005): a deleted group takes
-- its conversation (with the members' states) and its messages with it here, whatever path
-- deletes it. Filtered by type too: a guid `x_user_y` gives the id of a 1:1 conversation.
CREATE FUNCTION groups_delete_conversation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM conversations
   WHERE app_id = OLD.app_id AND conversation_id = 'group_' || OLD.guid AND conversation_type = 'group';
  DELETE FROM messages
   WHERE app_id = OLD.app_id AND conversation_id = 'group_' || OLD.guid AND receiver_type = 'group';
  RETURN NULL;
END $$;

CREATE TRIGGER groups_delete_conversation AFTER DELETE ON groups
  FOR EACH ROW EXECUTE FUNCTION groups_delete_conversation();
