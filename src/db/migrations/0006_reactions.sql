-- Reactions to messages: one row per user, reaction and message.
--
-- No foreign key to users, as for messages: a permanently deleted user's reactions stay
-- (reactedBy then shows only the uid), and a reaction takes no lock on the user's row.
CREATE TABLE message_reactions (
  app_id     text NOT NULL,
  -- The reaction's own id: its order, and the cursor of the reaction lists.
  id         bigint GENERATED ALWAYS AS IDENTITY,
  message_id bigint NOT NULL,
  -- As sent (an emoji or any text of 1-45 characters), compared byte for byte.
  reaction   text COLLATE "C" NOT NULL,
  uid        text COLLATE "C" NOT NULL,
  reacted_at timestamptz NOT NULL DEFAULT now(),
  -- Adding the same reaction twice is one row.
  PRIMARY KEY (app_id, message_id, reaction, uid),
  -- A message deleted permanently takes its reactions with it.
  FOREIGN KEY (app_id, message_id) REFERENCES messages (app_id, id) ON DELETE CASCADE
);

-- A message's reactions in order (the lists), and its summary and hasReactions by prefix.
CREATE UNIQUE INDEX message_reactions_app_message_id ON message_reactions (app_id, message_id, id);
