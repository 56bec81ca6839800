-- Conversations are stored under keys that name one conversation each (src/domain/conversation-id.ts,
-- docs/conversations.md). A 1:1 conversation was stored under the vendor's id,
-- `<uidA>_user_<uidB>`, which two pairs of users can share (`a` + `b_user_c` and `a_user_b` + `c`),
-- or a pair and a group (users `group_x` + `y`, group `x_user_y`): their messages, last message
-- and states were then one conversation's. Its key is now `<uidA>:<uidB>` (`:` is in no id);
-- a group keeps `group_<guid>`. Rows that a shared id merged are split here.

-- The key of the 1:1 conversation stored as `old_id` that `uid` takes part in: the other user is
-- what the id holds beside `uid`, the uids in byte order. When `uid` fits on both sides, the
-- side naming `hint` (a message's sender) wins. NULL when `uid` fits neither.
CREATE FUNCTION parley_0012_pair_key(old_id text, uid text, hint text) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  head text := uid || '_user_';
  tail text := '_user_' || uid;
  after_uid text;
  before_uid text;
BEGIN
  IF left(old_id, length(head)) = head THEN
    after_uid := substr(old_id, length(head) + 1);
    IF after_uid = '' OR position(':' IN after_uid) > 0 OR after_uid COLLATE "C" < uid COLLATE "C" THEN after_uid := NULL; END IF;
  END IF;
  IF right(old_id, length(tail)) = tail THEN
    before_uid := left(old_id, length(old_id) - length(tail));
    IF before_uid = '' OR position(':' IN before_uid) > 0 OR before_uid COLLATE "C" > uid COLLATE "C" THEN before_uid := NULL; END IF;
  END IF;
  IF after_uid IS NOT NULL AND (before_uid IS NULL OR before_uid IS DISTINCT FROM hint) THEN
    RETURN uid || ':' || after_uid;
  END IF;
  IF before_uid IS NOT NULL THEN
    RETURN before_uid || ':' || uid;
  END IF;
  RETURN NULL;
END $$;

-- The key of a 1:1 message: from its old id and its receiver (always one of the two; the
-- sender breaks a tie), else from its sender and receiver.
CREATE FUNCTION parley_0012_message_key(old_id text, sender text, receiver text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(parley_0012_pair_key(old_id, receiver, sender),
                  CASE WHEN sender COLLATE "C" < receiver COLLATE "C" THEN sender || ':' || receiver ELSE receiver || ':' || sender END)
$$;

-- Each old 1:1 id with the keys of the pairs it stood for: from the participants' sides, and
-- from the messages (a pair whose users were both deleted keeps its messages, not its sides).
CREATE TABLE parley_0012_pairs (
  app_id text NOT NULL,
  old_id text COLLATE "C" NOT NULL,
  key    text COLLATE "C" NOT NULL,
  PRIMARY KEY (app_id, old_id, key)
);
INSERT INTO parley_0012_pairs (app_id, old_id, key)
SELECT DISTINCT app_id, conversation_id,
       CASE WHEN uid < conversation_with THEN uid || ':' || conversation_with ELSE conversation_with || ':' || uid END
FROM user_conversations
ON CONFLICT DO NOTHING;
INSERT INTO parley_0012_pairs (app_id, old_id, key)
SELECT DISTINCT app_id, conversation_id, parley_0012_message_key(conversation_id, sender, receiver)
FROM messages WHERE receiver_type = 'user'
ON CONFLICT DO NOTHING;

-- Old ids that stood for more than one conversation: several pairs, or a pair and a group.
CREATE TABLE parley_0012_merged (
  app_id text NOT NULL,
  old_id text COLLATE "C" NOT NULL,
  PRIMARY KEY (app_id, old_id)
);
INSERT INTO parley_0012_merged (app_id, old_id)
SELECT p.app_id, p.old_id FROM parley_0012_pairs p
GROUP BY p.app_id, p.old_id
HAVING count(*) > 1
    OR (left(p.old_id, 6) = 'group_' AND EXISTS (SELECT 1 FROM groups g WHERE g.app_id = p.app_id AND g.guid = substr(p.old_id, 7)))
    OR EXISTS (SELECT 1 FROM messages m WHERE m.app_id = p.app_id AND m.conversation_id = p.old_id AND m.receiver_type = 'group');

-- 1. A conversation row under each pair's key: a copy of the row it shared.
INSERT INTO conversations (app_id, conversation_id, conversation_type, last_message_id, created_at, updated_at)
SELECT p.app_id, p.key, 'user', c.last_message_id, coalesce(c.created_at, now()), coalesce(c.updated_at, now())
FROM parley_0012_pairs p
LEFT JOIN conversations c ON c.app_id = p.app_id AND c.conversation_id = p.old_id
ORDER BY p.app_id, p.key
ON CONFLICT DO NOTHING;

-- 2. The messages and the participants' sides move to their pair's key.
UPDATE messages SET conversation_id = parley_0012_message_key(conversation_id, sender, receiver)
WHERE receiver_type = 'user';
UPDATE user_conversations
SET conversation_id = CASE WHEN uid < conversation_with THEN uid || ':' || conversation_with ELSE conversation_with || ':' || uid END
WHERE position(':' IN conversation_id) = 0;

-- 3. A state of a 1:1 conversation is copied to its key (the old row goes with its conversation
-- below; a group's stays where it is).
INSERT INTO conversation_states (app_id, uid, conversation_id, delivered_message_id, delivered_at, read_message_id, read_at,
                                 cleared_message_id, tags, updated_at)
SELECT s.app_id, s.uid, k.key, s.delivered_message_id, s.delivered_at, s.read_message_id, s.read_at,
       s.cleared_message_id, s.tags, s.updated_at
FROM conversation_states s
CROSS JOIN LATERAL (SELECT parley_0012_pair_key(s.conversation_id, s.uid, NULL) AS key) k
WHERE position(':' IN s.conversation_id) = 0 AND k.key IS NOT NULL
  AND EXISTS (SELECT 1 FROM parley_0012_pairs p WHERE p.app_id = s.app_id AND p.old_id = s.conversation_id AND p.key = k.key)
ON CONFLICT DO NOTHING;

-- 4. A merged row's last message and time are its own conversation's again.
UPDATE conversations c
SET last_message_id = (SELECT max(m.id) FROM messages m WHERE m.app_id = c.app_id AND m.conversation_id = c.conversation_id),
    updated_at = coalesce((SELECT max(m.sent_at) FROM messages m WHERE m.app_id = c.app_id AND m.conversation_id = c.conversation_id), c.updated_at)
WHERE (c.app_id, c.conversation_id) IN (
  SELECT p.app_id, p.key FROM parley_0012_merged x JOIN parley_0012_pairs p ON p.app_id = x.app_id AND p.old_id = x.old_id
  UNION ALL
  SELECT x.app_id, x.old_id FROM parley_0012_merged x);

-- 5. An old id that was also a group's conversation stays the group's; the other old 1:1 rows
-- go, with their sides and states (copied above).
UPDATE conversations c SET conversation_type = 'group'
WHERE c.conversation_type = 'user' AND position(':' IN c.conversation_id) = 0
  AND EXISTS (SELECT 1 FROM parley_0012_merged x WHERE x.app_id = c.app_id AND x.old_id = c.conversation_id)
  AND ((left(c.conversation_id, 6) = 'group_' AND EXISTS (SELECT 1 FROM groups g WHERE g.app_id = c.app_id AND g.guid = substr(c.conversation_id, 7)))
       OR EXISTS (SELECT 1 FROM messages m WHERE m.app_id = c.app_id AND m.conversation_id = c.conversation_id AND m.receiver_type = 'group'));
DELETE FROM conversations WHERE conversation_type = 'user' AND position(':' IN conversation_id) = 0;
DELETE FROM conversation_versions v
WHERE position(':' IN v.conversation_id) = 0
  AND NOT EXISTS (SELECT 1 FROM conversations c WHERE c.app_id = v.app_id AND c.conversation_id = v.conversation_id);

DROP TABLE parley_0012_merged;
DROP TABLE parley_0012_pairs;
DROP FUNCTION parley_0012_message_key(text, text, text);
DROP FUNCTION parley_0012_pair_key(text, text, text);
