-- Step 6 of the commit (SCHEMA.md): one archive write, under a new random
-- id, "blk_" and 24 hex digits (12 random bytes: two hosts writing one
-- database never mint the same id). ?1: tier; ?2: label; ?3: content; ?4:
-- created_at (the plan's "now"); ?5: conversation id; ?6: reason; ?7:
-- operation id — an entry of the plan's "archive_writes". The Go, Python
-- and Node stores run this file.
INSERT INTO blocks (id, tier, label, content, created_at, conversation_id, reason, operation_id)
VALUES ('blk_' || lower(hex(randomblob(12))), ?1, ?2, ?3, ?4, ?5, ?6, ?7)
