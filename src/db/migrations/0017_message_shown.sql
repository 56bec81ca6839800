-- A message's text as every viewer sees it, stored when the message is (docs/performance.md,
-- "Stored message text"): the one renderer's output (shownText, services/views/shown-messages.ts)
-- cut where what is not the row's own goes in (its id and times, drawn by the statement that
-- stores it; its entities, mentions, reactions, tags and receipts, which other rows and the
-- viewer decide). A history page reads it as text and splices those in, instead of reading,
-- rendering and serialising every column of every message.
--
-- NULL where a message is rendered from its columns as before: rows stored before this
-- migration, messages the stored form does not cover (shownText says which), and any row
-- changed since it was stored.
ALTER TABLE messages ADD COLUMN shown text;

-- The text holds only what the row held when it was stored, so any change to the row (an edit,
-- a deletion, a reply counted, tags) drops it, whichever statement makes the change: the row is
-- then rendered from its columns. One rule, here, for every update there is and will be.
CREATE FUNCTION drop_stale_shown() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.shown IS NOT DISTINCT FROM OLD.shown THEN
    NEW.shown := NULL;
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER messages_shown_stale BEFORE UPDATE ON messages
  FOR EACH ROW WHEN (OLD.shown IS NOT NULL) EXECUTE FUNCTION drop_stale_shown();
