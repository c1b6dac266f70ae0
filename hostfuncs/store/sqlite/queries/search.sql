-- Ranked search over recalled messages and archived blocks in one list
-- (SCHEMA.md, "Full-text search"). ?1: an FTS5 MATCH expression (the
-- searchQuery export's "fts5"); ?2: a conversation id, or '' for all;
-- ?3: the most hits. Best first: bm25 (negated: higher is better), ties
-- to the more recent, then to the later written. The Go and Python
-- stores both run this file.
WITH top AS (
	SELECT rowid AS doc, bm25(search_fts) AS rank, at
	FROM search_fts
	WHERE search_fts MATCH ?1 AND (?2 = '' OR conversation_id = ?2)
	ORDER BY rank, at DESC, doc DESC
	LIMIT ?3
)
SELECT
	CASE WHEN top.doc & 1 = 1 THEN 'batch' ELSE 'message' END AS kind,
	COALESCE(r.id, b.id) AS id,
	COALESCE(r.conversation_id, b.conversation_id, '') AS conversation_id,
	COALESCE(r.role, '') AS role,
	COALESCE(b.label, '') AS label,
	COALESCE(r.created_at, b.created_at) AS created_at,
	COALESCE(r.operation_id, b.operation_id, '') AS operation_id,
	COALESCE(r.search_text, r.content, b.content) AS text,
	-top.rank AS score,
	(SELECT snippet(search_fts, 0, '[', ']', '…', 16) FROM search_fts
		WHERE search_fts MATCH ?1 AND rowid = top.doc) AS snippet
FROM top
LEFT JOIN recall r ON top.doc & 1 = 0 AND r.pos = top.doc >> 1
LEFT JOIN blocks b ON top.doc & 1 = 1 AND b.pos = top.doc >> 1
WHERE COALESCE(r.id, b.id) IS NOT NULL
ORDER BY top.rank, top.at DESC, top.doc DESC
