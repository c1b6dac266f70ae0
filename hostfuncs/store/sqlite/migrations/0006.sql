-- the active history is searchable
-- A message still in the context is searched like a recalled one (a
-- question about it must find it, not only what compaction removed), in
-- the same FTS5 table, so bm25's statistics and scores stay comparable
-- with recalled messages and batches. messages is rebuilt with a stable
-- key for the index, pos (an INTEGER PRIMARY KEY keeps its values through
-- VACUUM; an implicit rowid does not), and search_text: what the index
-- holds for the message while it is active, rendered by the plug-in as
-- for recall (its text, tool names, inputs and outputs, then after the
-- first "\n\n» " the context lines of its exchange); NULL means its
-- content. An active message's rowid in search_fts is -pos (recalled
-- messages are pos * 2, blocks pos * 2 + 1): the commit that moves a
-- message to recall deletes the one and inserts the other, so a message
-- is one document, never two.

CREATE TABLE messages_v6 (
	pos             INTEGER PRIMARY KEY,
	id              TEXT NOT NULL,
	conversation_id TEXT NOT NULL,
	seq             INTEGER NOT NULL,
	role            TEXT NOT NULL,
	content         TEXT NOT NULL,
	created_at      TEXT NOT NULL,
	raw             TEXT NOT NULL,
	search_text     TEXT,
	UNIQUE (conversation_id, id),
	UNIQUE (conversation_id, seq)
);
INSERT INTO messages_v6 (id, conversation_id, seq, role, content, created_at, raw)
SELECT id, conversation_id, seq, role, content, created_at, raw FROM messages ORDER BY conversation_id, seq;
DROP TABLE messages;
ALTER TABLE messages_v6 RENAME TO messages;

-- What an active message contributes to the index: the recalled
-- messages' view over messages (cut as bytes, migration 5), never a
-- clip-archive, never an empty text.
CREATE VIEW search_active_docs AS
SELECT pos,
	CASE WHEN sep > 0 THEN CAST(substr(b, 1, sep - 1) AS TEXT) ELSE t END AS body,
	CASE WHEN sep > 0 THEN CAST(substr(b, sep + length(CAST(char(10, 10, 187, 32) AS BLOB))) AS TEXT) ELSE '' END AS context,
	conversation_id, at, searchable
FROM (SELECT pos, t, CAST(t AS BLOB) AS b, instr(CAST(t AS BLOB), CAST(char(10, 10, 187, 32) AS BLOB)) AS sep,
	conversation_id, at, searchable
FROM (SELECT pos, COALESCE(search_text, content) AS t, conversation_id, created_at AS at,
	NOT (role = 'system' AND substr(content, 1, 16) = '[Context Summary')
	AND COALESCE(search_text, content) <> '' AS searchable
FROM messages));

CREATE TRIGGER search_active_insert AFTER INSERT ON messages BEGIN
	INSERT INTO search_fts (rowid, body, context, conversation_id, at)
	SELECT -pos, body, context, conversation_id, at FROM search_active_docs WHERE pos = new.pos AND searchable;
END;
CREATE TRIGGER search_active_delete AFTER DELETE ON messages BEGIN
	DELETE FROM search_fts WHERE rowid = -old.pos;
END;
CREATE TRIGGER search_active_update AFTER UPDATE OF pos, conversation_id, role, content, created_at, search_text ON messages BEGIN
	DELETE FROM search_fts WHERE rowid = -old.pos;
	INSERT INTO search_fts (rowid, body, context, conversation_id, at)
	SELECT -pos, body, context, conversation_id, at FROM search_active_docs WHERE pos = new.pos AND searchable;
END;

INSERT INTO search_fts (rowid, body, context, conversation_id, at)
SELECT -pos, body, context, conversation_id, at FROM search_active_docs WHERE searchable ORDER BY pos;
