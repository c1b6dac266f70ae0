-- Ranked search over recalled messages and archived blocks in one list
-- (SCHEMA.md, "Full-text search"). ?1: an FTS5 MATCH expression (the
-- searchQuery export's "fts5"); ?2: a conversation id, or '' for all;
-- ?3: the most hits. Best first by bm25 (negated: higher is better);
-- equal scores go to the more recent ("at": a message's created_at, a
-- batch's end). Reading "at" for every match doubled the time of a
-- search of 10,000 messages, so the first pass orders by bm25 alone and
-- keeps 8 candidates past the limit; ties are broken among those (past
-- them, by the later written). Snippets are made in the first pass, which
-- makes them for the rows it returns only (each costs a few hundred
-- microseconds); a correlated snippet() per hit re-ran the whole match
-- and cost more than the search. The Go and Python stores run this file.
WITH candidates AS (
	SELECT rowid AS doc, bm25(search_fts) AS rank, snippet(search_fts, 0, '[', ']', '…', 16) AS snippet
	FROM search_fts
	WHERE search_fts MATCH ?1 AND (?2 = '' OR conversation_id = ?2)
	ORDER BY rank, rowid DESC
	LIMIT ?3 + 8
), top AS (
	SELECT c.doc, c.rank, c.snippet, f.at
	FROM candidates c JOIN search_fts f ON f.rowid = c.doc
	ORDER BY c.rank, f.at DESC, c.doc DESC
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
	top.snippet
FROM top
LEFT JOIN recall r ON top.doc & 1 = 0 AND r.pos = top.doc >> 1
LEFT JOIN blocks b ON top.doc & 1 = 1 AND b.pos = top.doc >> 1
WHERE COALESCE(r.id, b.id) IS NOT NULL
ORDER BY top.rank, top.at DESC, top.doc DESC
