-- One appended message, after the conversation's active history (MAX(seq)
-- + 1; 1 for the first). ?1: id; ?2: conversation id; ?3: role; ?4:
-- content; ?5: created_at; ?6: raw — a row of the planAppend export (or
-- of decodeHistory) and the message's exact JSON. The Go, Python and Node
-- stores run this file, in the transaction that ran held_ids.sql.
INSERT INTO messages (id, conversation_id, seq, role, content, created_at, raw)
VALUES (?1, ?2, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE conversation_id = ?2), ?3, ?4, ?5, ?6)
