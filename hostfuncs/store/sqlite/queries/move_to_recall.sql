-- Step 4 of the commit (SCHEMA.md): the removed messages, and the
-- originals of the replaced ones, are copied from messages to recall, in
-- order, each with the text its commit gave for the search index. A
-- message whose conversation and id recall already holds is left there:
-- a replacement that kept its id (its original is that row) leaving the
-- active history. ?1: conversation id; ?2: JSON array of the ids to
-- move; ?3: removed_at; ?4: operation id; ?5: JSON object of message id
-- to search text ('{}' when the commit gave none). The search texts are
-- materialized so the join goes through an automatic index, not a scan
-- of the JSON per message. The ids are the conversation's (a message is
-- keyed by conversation and id, migration 5): the conversation is part of
-- every match. The Go, Python and Node stores run this file.
WITH st (id, text) AS MATERIALIZED (SELECT key, value FROM json_each(?5) WHERE type = 'text')
INSERT INTO recall (id, conversation_id, seq, role, content, created_at, raw, removed_at, operation_id, search_text)
SELECT m.id, m.conversation_id, m.seq, m.role, m.content, m.created_at, m.raw, ?3, ?4, st.text
FROM messages m LEFT JOIN st ON st.id = m.id
WHERE m.conversation_id = ?1 AND m.id IN (SELECT value FROM json_each(?2))
ORDER BY m.seq
ON CONFLICT DO NOTHING
