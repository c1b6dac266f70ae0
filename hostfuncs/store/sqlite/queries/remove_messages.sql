-- Step 4 of the commit (SCHEMA.md): the removed messages leave the active
-- history, once move_to_recall.sql has copied them to recall. ?1: the
-- conversation id; ?2: JSON array of the ids (the plan's "remove_ids").
-- The Go, Python and Node stores run this file.
DELETE FROM messages WHERE conversation_id = ?1 AND id IN (SELECT value FROM json_each(?2))
