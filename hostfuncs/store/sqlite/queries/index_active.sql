-- What the search index holds for active messages (SCHEMA.md, "Search"):
-- each one's search text as the plug-in renders it over the active
-- history (the decodeHistory export with search_text, or in Go
-- core.MessageSearchTextAt), set after messages are appended: a message's
-- context lines name the message after it, which arrives later. ?1: a
-- conversation id; ?2: JSON object of message id to search text. An id
-- the conversation's active history does not hold is ignored, a message
-- whose text is unchanged is not written (its index row stays), and one
-- whose search text is '' stays unindexed (a replacement whose original
-- is in recall: the original is the hit).
-- The triggers of migration 6 re-index what changed. The Go, Python and
-- Node stores run this file.
WITH st (id, text) AS MATERIALIZED (SELECT key, value FROM json_each(?2) WHERE type = 'text')
UPDATE messages SET search_text = (SELECT text FROM st WHERE st.id = messages.id)
WHERE conversation_id = ?1 AND id IN (SELECT id FROM st)
	AND (search_text IS NULL OR search_text <> '')
	AND search_text IS NOT (SELECT text FROM st WHERE st.id = messages.id)
