-- A caller-owned commit (SCHEMA.md, "history_owner caller"): one removed
-- message written to recall storage, once: a message whose conversation
-- and id recall already holds is left as it is (the caller sends its list
-- again and again; the same conversation + id is written once). Another
-- conversation's message of the same id is another message. seq
-- continues the conversation's recall order. ?1: id; ?2: conversation id;
-- ?3: role; ?4: content; ?5: created_at; ?6: raw; ?7: removed_at; ?8:
-- operation id; ?9: search text. The Go, Python and Node stores run this
-- file.
INSERT INTO recall (id, conversation_id, seq, role, content, created_at, raw, removed_at, operation_id, search_text)
VALUES (?1, ?2, (SELECT COALESCE(MAX(seq), 0) + 1 FROM recall WHERE conversation_id = ?2), ?3, ?4, ?5, ?6, ?7, ?8, ?9)
ON CONFLICT (conversation_id, id) DO NOTHING
