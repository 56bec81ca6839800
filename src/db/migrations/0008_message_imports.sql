-- Imported messages keep their source receipts (the data import API's deliveredAt and readAt):
-- a message's own times, shown instead of the receiver's watermark times. NULL for messages
-- sent through the API, whose receipts are the watermarks of conversation_states (0007).
ALTER TABLE messages ADD COLUMN delivered_at timestamptz;
ALTER TABLE messages ADD COLUMN read_at timestamptz;
