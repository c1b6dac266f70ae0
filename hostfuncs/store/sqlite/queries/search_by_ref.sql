-- Recalled messages and blocks by id, in the columns of search.sql (no
-- score, no snippet): the hits only the vector ranking found. ?1: JSON
-- array of message ids; ?2: JSON array of block ids.
SELECT 'message' AS kind, r.id, r.conversation_id, r.role, '' AS label, r.created_at, r.operation_id,
	COALESCE(r.search_text, r.content) AS text
FROM recall r WHERE r.id IN (SELECT value FROM json_each(?1))
UNION ALL
SELECT 'batch', b.id, COALESCE(b.conversation_id, ''), '', b.label, b.created_at, COALESCE(b.operation_id, ''), b.content
FROM blocks b WHERE b.id IN (SELECT value FROM json_each(?2))
