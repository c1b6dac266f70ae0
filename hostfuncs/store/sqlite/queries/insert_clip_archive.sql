-- Step 3 and 7 of the commit (SCHEMA.md): the clip-archive goes before
-- every message of the conversation's active history, at MIN(seq) - 1 (0
-- when it has none). It is inserted before the removed messages leave, so
-- it precedes them too. ?1: id; ?2: conversation id; ?3: role; ?4: content;
-- ?5: created_at; ?6: raw — the plan's "insert" (the planCommit export).
-- The Go, Python and Node stores run this file.
INSERT INTO messages (id, conversation_id, seq, role, content, created_at, raw)
SELECT ?1, ?2, COALESCE(MIN(seq) - 1, 0), ?3, ?4, ?5, ?6 FROM messages WHERE conversation_id = ?2
