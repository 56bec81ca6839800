-- A conversation's history page is checked against its conversation instead of its rows
-- (page_version below, MessagesRepository.pageVersion). Whatever changes the messages of a
-- conversation changes one of two row versions:
--  * a message added: every statement that inserts messages writes its conversation's row in
--    the same statement (the last message, the conversation's time), so that row's xmin changes;
--  * a message changed or removed, or a reaction added, changed or removed: these triggers count
--    it in conversation_versions, a row of its own, so that edits and reactions never wait for
--    the conversation row that sends hold.
-- Statement triggers: one upsert per statement and conversation, however many rows it changes.
CREATE TABLE conversation_versions (
  app_id          text NOT NULL,
  conversation_id text COLLATE "C" NOT NULL,
  version         bigint NOT NULL DEFAULT 1,
  PRIMARY KEY (app_id, conversation_id)
);

CREATE FUNCTION count_message_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- In key order, so that two statements lock the same rows in the same order.
  INSERT INTO conversation_versions AS v (app_id, conversation_id)
  SELECT DISTINCT app_id, conversation_id FROM changed_messages ORDER BY 1, 2
  ON CONFLICT (app_id, conversation_id) DO UPDATE SET version = v.version + 1;
  RETURN NULL;
END $$;

CREATE TRIGGER messages_updated AFTER UPDATE ON messages
  REFERENCING NEW TABLE AS changed_messages FOR EACH STATEMENT EXECUTE FUNCTION count_message_changes();
CREATE TRIGGER messages_deleted AFTER DELETE ON messages
  REFERENCING OLD TABLE AS changed_messages FOR EACH STATEMENT EXECUTE FUNCTION count_message_changes();

CREATE FUNCTION count_reaction_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Each reaction's message found by its key (LIMIT 1: a probe, never a join the planner may
  -- turn into a scan of every message). A reaction removed with its message finds none: the
  -- message's own delete is counted.
  INSERT INTO conversation_versions AS v (app_id, conversation_id)
  SELECT DISTINCT m.app_id, m.conversation_id
  FROM changed_reactions r
  CROSS JOIN LATERAL (SELECT x.app_id, x.conversation_id FROM messages x WHERE x.app_id = r.app_id AND x.id = r.message_id LIMIT 1) m
  ORDER BY 1, 2
  ON CONFLICT (app_id, conversation_id) DO UPDATE SET version = v.version + 1;
  RETURN NULL;
END $$;

CREATE TRIGGER message_reactions_inserted AFTER INSERT ON message_reactions
  REFERENCING NEW TABLE AS changed_reactions FOR EACH STATEMENT EXECUTE FUNCTION count_reaction_changes();
CREATE TRIGGER message_reactions_updated AFTER UPDATE ON message_reactions
  REFERENCING NEW TABLE AS changed_reactions FOR EACH STATEMENT EXECUTE FUNCTION count_reaction_changes();
CREATE TRIGGER message_reactions_deleted AFTER DELETE ON message_reactions
  REFERENCING OLD TABLE AS changed_reactions FOR EACH STATEMENT EXECUTE FUNCTION count_reaction_changes();

-- The version of a conversation's history page (MessagesRepository.readPage answers it with the
-- page, in the page's snapshot; pageVersion reads it again): the row versions of the
-- conversation and of its count above, of the users and groups the page named (absent: '-'),
-- of the conversation states its receipts and marks come from, and the membership it checked.
-- One key lookup each, as statements PL/pgSQL prepares once per connection: a page checked again
-- costs no planning.
CREATE FUNCTION page_version(p_app text, p_conversation text, p_uids text[], p_guids text[], p_state_uids text[],
                             p_member_uid text, p_member_guid text)
RETURNS text LANGUAGE plpgsql STABLE AS $$
DECLARE
  parts text[];
  key text;
  v text;
BEGIN
  SELECT c.xmin::text INTO v FROM conversations c WHERE c.app_id = p_app AND c.conversation_id = p_conversation;
  parts := ARRAY[coalesce(v, '-')];
  SELECT cv.version::text INTO v FROM conversation_versions cv WHERE cv.app_id = p_app AND cv.conversation_id = p_conversation;
  parts := parts || coalesce(v, '-');
  FOREACH key IN ARRAY p_uids LOOP
    SELECT u.xmin::text INTO v FROM users u WHERE u.app_id = p_app AND u.uid = key;
    parts := parts || ('u' || key || ':' || coalesce(v, '-'));
  END LOOP;
  FOREACH key IN ARRAY p_guids LOOP
    SELECT g.xmin::text INTO v FROM groups g WHERE g.app_id = p_app AND g.guid = key;
    parts := parts || ('g' || key || ':' || coalesce(v, '-'));
  END LOOP;
  FOREACH key IN ARRAY p_state_uids LOOP
    SELECT s.xmin::text INTO v FROM conversation_states s WHERE s.app_id = p_app AND s.uid = key AND s.conversation_id = p_conversation;
    parts := parts || ('s' || key || ':' || coalesce(v, '-'));
  END LOOP;
  IF p_member_uid IS NOT NULL THEN
    parts := parts || ('m' || exists (SELECT 1 FROM group_members m WHERE m.app_id = p_app AND m.guid = p_member_guid AND m.uid = p_member_uid)::text
                           || ':' || exists (SELECT 1 FROM group_bans b WHERE b.app_id = p_app AND b.guid = p_member_guid AND b.uid = p_member_uid)::text);
  END IF;
  RETURN md5(array_to_string(parts, '/'));
END $$;
