-- Step 4 of the commit (SCHEMA.md), for a replaced message: its row,
-- whose original move_to_recall.sql has just copied to recall, takes the
-- replacement in place: the same position and time, the replacement's id
-- (the message's own, kept, or the one derived from its new text), role,
-- text and exact JSON. Its search text is '': the replacement is not
-- indexed (its original, in recall, is the hit). ?1: conversation id; ?2:
-- the message's id; ?3: the replacement's id; ?4: role; ?5: content; ?6:
-- raw. The Go, Python and Node stores run this file.
UPDATE messages SET id = ?3, role = ?4, content = ?5, raw = ?6, search_text = ''
WHERE conversation_id = ?1 AND id = ?2
