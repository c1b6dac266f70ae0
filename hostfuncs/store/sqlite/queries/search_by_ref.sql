-- Recalled messages and blocks by id, in the columns of search.sql (no
-- score, no snippet): the hits only the vector ranking found. ?1: JSON
-- array of the messages as [conversation id, message id] pairs (a message
-- id is unique within its conversation only); ?2: JSON array of block ids.
SELECT 'message' AS kind, r.id, r.conversation_id, r.role, '' AS label, r.created_at, r.operation_id,
	COALESCE(r.search_text, r.content) AS text
FROM (SELECT json_extract(value, '$[0]') AS conversation_id, json_extract(value, '$[1]') AS id FROM json_each(?1)) k
JOIN recall r ON r.conversation_id = k.conversation_id AND r.id = k.id
UNION ALL
SELECT 'batch', b.id, COALESCE(b.conversation_id, ''), '', b.label, b.created_at, COALESCE(b.operation_id, ''), b.content
FROM blocks b WHERE b.id IN (SELECT value FROM json_each(?2))
