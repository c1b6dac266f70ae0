-- The messages in a caller's context, indexed for one search (SCHEMA.md,
-- "Search", a caller-owned conversation: the store holds no active
-- history for it). The host runs this, then search.sql, in one
-- transaction it rolls back, so they are ranked in the same index as
-- everything else and nothing stays. ?1: the conversation id; ?2: JSON
-- array of [id, role, content, created_at, search_text], in order, as the
-- decodeHistory export gives them. A message the conversation's recall
-- holds is left out (the recalled original is the hit), and so is one
-- already active (indexed already). Positions follow every seq the
-- conversation has, so neighbours fold as in the active history. The Go,
-- Python and Node stores run this file.
INSERT OR IGNORE INTO messages (id, conversation_id, seq, role, content, created_at, raw, search_text)
SELECT json_extract(j.value, '$[0]'), ?1, base.s + j.key + 1, json_extract(j.value, '$[1]'),
	COALESCE(json_extract(j.value, '$[2]'), ''), COALESCE(json_extract(j.value, '$[3]'), ''), '',
	json_extract(j.value, '$[4]')
FROM json_each(?2) j,
	(SELECT max(COALESCE((SELECT MAX(seq) FROM messages WHERE conversation_id = ?1), 0),
		COALESCE((SELECT MAX(seq) FROM recall WHERE conversation_id = ?1), 0)) AS s) base
WHERE NOT EXISTS (SELECT 1 FROM recall r WHERE r.conversation_id = ?1 AND r.id = json_extract(j.value, '$[0]'))
ORDER BY j.key
