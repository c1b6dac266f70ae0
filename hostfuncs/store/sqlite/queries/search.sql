-- Ranked search over the active history, recalled messages and archived
-- blocks in one list (SCHEMA.md, "Search"). ?1: an FTS5 MATCH expression
-- (the searchQuery export's "fts5"); ?2: a conversation id, or '' for all;
-- ?3: the most hits. Best first by bm25 (negated: higher is better);
-- a message's context (the words of its exchange, migration 0003) weighs
-- half its own words. Equal scores go to the more recent ("at": a
-- message's created_at, a batch's end). Reading "at" for every match
-- doubled the time of a search of 10,000 messages, so the first pass
-- orders by bm25 alone and keeps ?3 / 2 + 8 candidates past the limit;
-- ties are broken among those (past them, by the later written).
-- Snippets are made in the first pass, which makes them for the rows it
-- returns only (each costs a few hundred microseconds); a correlated
-- snippet() per hit re-ran the whole match and cost more than the search.
-- Two kinds of message hits are folded into a better one, so that five
-- hits are five places, not one place five times: a message whose own
-- words repeat a better hit's of the same conversation ("Did last night's
-- backup work?" asked every day), and a message found only through its
-- context (no own word matches) right next to a better hit, which its
-- context quotes. Active and recalled messages of a conversation are
-- neighbours by seq alike. An active message (rowid -pos, migration 6) is
-- a hit "in_context"; one whose id the conversation's recall also holds
-- is not a hit: the recalled original is. The active rows are read by
-- rowid and their text from the index, so this query also runs on a
-- database of version 4 or 5 opened read-only (it has no active rows in
-- the index). The Go, Python and Node stores run this file.
WITH candidates AS (
	SELECT rowid AS doc, bm25(search_fts, 1.0, 0.5) AS rank, bm25(search_fts, 1.0, 0.0) AS own,
		snippet(search_fts, -1, '[', ']', '…', 16) AS snippet
	FROM search_fts
	WHERE search_fts MATCH ?1 AND (?2 = '' OR conversation_id = ?2)
	ORDER BY rank, rowid DESC
	LIMIT ?3 + ?3 / 2 + 8
), ranked AS (
	SELECT c.doc, c.rank, c.own, c.snippet, f.at, f.body, f.context,
		ROW_NUMBER() OVER (ORDER BY c.rank, f.at DESC, c.doc DESC) AS n,
		COALESCE(r.conversation_id, m.conversation_id) AS conv, COALESCE(r.seq, m.seq) AS seq,
		c.doc < 0 AND EXISTS (SELECT 1 FROM recall x WHERE x.conversation_id = m.conversation_id AND x.id = m.id) AS shadowed
	FROM candidates c JOIN search_fts f ON f.rowid = c.doc
	LEFT JOIN recall r ON c.doc > 0 AND c.doc & 1 = 0 AND r.pos = c.doc >> 1
	LEFT JOIN messages m ON c.doc < 0 AND m.rowid = -c.doc
), marked AS (
	SELECT doc, rank, own, snippet, at, body, context, n, seq, shadowed,
		ROW_NUMBER() OVER (PARTITION BY conv, body ORDER BY n) AS copy,
		LAG(n) OVER w AS pn, LAG(seq) OVER w AS ps, LEAD(n) OVER w AS nn, LEAD(seq) OVER w AS ns
	FROM ranked WINDOW w AS (PARTITION BY conv ORDER BY seq)
), top AS (
	SELECT doc, rank, snippet, at, body, context, n FROM marked
	WHERE seq IS NULL OR (NOT shadowed AND copy = 1 AND (own < 0
		OR NOT COALESCE(ps = seq - 1 AND pn < n, 0) AND NOT COALESCE(ns = seq + 1 AND nn < n, 0)))
	ORDER BY n
	LIMIT ?3
)
SELECT
	CASE WHEN top.doc > 0 AND top.doc & 1 = 1 THEN 'batch' ELSE 'message' END AS kind,
	COALESCE(r.id, m.id, b.id) AS id,
	COALESCE(r.conversation_id, m.conversation_id, b.conversation_id, '') AS conversation_id,
	COALESCE(r.role, m.role, '') AS role,
	COALESCE(b.label, '') AS label,
	COALESCE(r.created_at, m.created_at, b.created_at) AS created_at,
	COALESCE(r.operation_id, b.operation_id, '') AS operation_id,
	CASE WHEN top.doc < 0 THEN top.body || CASE WHEN top.context <> '' THEN char(10, 10, 187, 32) || top.context ELSE '' END
		ELSE COALESCE(r.search_text, r.content, b.content) END AS text,
	-top.rank AS score,
	top.snippet,
	top.doc < 0 AS in_context
FROM top
LEFT JOIN recall r ON top.doc > 0 AND top.doc & 1 = 0 AND r.pos = top.doc >> 1
LEFT JOIN blocks b ON top.doc > 0 AND top.doc & 1 = 1 AND b.pos = top.doc >> 1
LEFT JOIN messages m ON top.doc < 0 AND m.rowid = -top.doc
WHERE COALESCE(r.id, m.id, b.id) IS NOT NULL
ORDER BY top.n
