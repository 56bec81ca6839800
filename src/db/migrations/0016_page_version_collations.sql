-- page_version (0009) compared its parameters with the tables' keys in whatever collation the
-- call gave it. A history page calls it with the uids it read from its messages (text COLLATE
-- "C", as every id column is), which made the function's input collation "C"; `app_id` is in
-- the default collation, so `app_id = p_app` could not use any primary key, and each lookup
-- became a sequential scan (of the users table for each uid of the page: ~15 ms for one user of
-- 100,000 here, found by auto_explain). The same function, each comparison in its column's own
-- collation, so every lookup is a key lookup however it is called.
CREATE OR REPLACE FUNCTION page_version(p_app text, p_conversation text, p_uids text[], p_guids text[], p_state_uids text[],
                                        p_member_uid text, p_member_guid text)
RETURNS text LANGUAGE plpgsql STABLE AS $$
DECLARE
  parts text[];
  key text;
  v text;
BEGIN
  SELECT c.xmin::text INTO v FROM conversations c
   WHERE c.app_id = p_app COLLATE "default" AND c.conversation_id = p_conversation COLLATE "C";
  parts := ARRAY[coalesce(v, '-')];
  SELECT cv.version::text INTO v FROM conversation_versions cv
   WHERE cv.app_id = p_app COLLATE "default" AND cv.conversation_id = p_conversation COLLATE "C";
  parts := parts || coalesce(v, '-');
  FOREACH key IN ARRAY p_uids LOOP
    SELECT u.xmin::text INTO v FROM users u WHERE u.app_id = p_app COLLATE "default" AND u.uid = key COLLATE "C";
    parts := parts || ('u' || key || ':' || coalesce(v, '-'));
  END LOOP;
  FOREACH key IN ARRAY p_guids LOOP
    SELECT g.xmin::text INTO v FROM groups g WHERE g.app_id = p_app COLLATE "default" AND g.guid = key COLLATE "C";
    parts := parts || ('g' || key || ':' || coalesce(v, '-'));
  END LOOP;
  FOREACH key IN ARRAY p_state_uids LOOP
    SELECT s.xmin::text INTO v FROM conversation_states s
     WHERE s.app_id = p_app COLLATE "default" AND s.uid = key COLLATE "C" AND s.conversation_id = p_conversation COLLATE "C";
    parts := parts || ('s' || key || ':' || coalesce(v, '-'));
  END LOOP;
  IF p_member_uid IS NOT NULL THEN
    parts := parts || ('m' || exists (SELECT 1 FROM group_members m
                                       WHERE m.app_id = p_app COLLATE "default" AND m.guid = p_member_guid COLLATE "C" AND m.uid = p_member_uid COLLATE "C")::text
                           || ':' || exists (SELECT 1 FROM group_bans b
                                       WHERE b.app_id = p_app COLLATE "default" AND b.guid = p_member_guid COLLATE "C" AND b.uid = p_member_uid COLLATE "C")::text);
  END IF;
  RETURN md5(array_to_string(parts, '/'));
END $$;
