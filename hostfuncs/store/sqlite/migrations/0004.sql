-- a message's context weighs half in the search index
-- A recalled message's search text is its own words, then, after the
-- first "\n\n» " (core.SearchContextSep), context lines: the request that
-- opened its turn, the call a tool result answers, the message after it.
-- The index keeps the two in separate columns, so a query ranks them
-- apart (queries/search.sql weighs context half): a neighbour that only
-- quotes the evidence's words must not outrank the evidence.
DROP TRIGGER search_recall_insert;
DROP TRIGGER search_recall_delete;
DROP TRIGGER search_recall_update;
DROP TRIGGER search_blocks_insert;
DROP TRIGGER search_blocks_delete;
DROP TRIGGER search_blocks_update;
DROP TABLE search_fts;
DROP VIEW search_recall_docs;

CREATE VIEW search_recall_docs AS
SELECT pos,
	CASE WHEN sep > 0 THEN substr(t, 1, sep - 1) ELSE t END AS body,
	CASE WHEN sep > 0 THEN substr(t, sep + 4) ELSE '' END AS context,
	conversation_id, at, searchable
FROM (SELECT pos, COALESCE(search_text, content) AS t,
	instr(COALESCE(search_text, content), char(10, 10, 187, 32)) AS sep,
	conversation_id, created_at AS at,
	NOT (role = 'system' AND substr(content, 1, 16) = '[Context Summary')
	AND COALESCE(search_text, content) <> '' AS searchable
FROM recall);

CREATE VIRTUAL TABLE search_fts USING fts5(body, context, conversation_id UNINDEXED, at UNINDEXED,
	tokenize = 'porter unicode61 remove_diacritics 2');

CREATE TRIGGER search_recall_insert AFTER INSERT ON recall BEGIN
	INSERT INTO search_fts (rowid, body, context, conversation_id, at)
	SELECT pos * 2, body, context, conversation_id, at FROM search_recall_docs WHERE pos = new.pos AND searchable;
END;
CREATE TRIGGER search_recall_delete AFTER DELETE ON recall BEGIN
	DELETE FROM search_fts WHERE rowid = old.pos * 2;
END;
CREATE TRIGGER search_recall_update AFTER UPDATE OF pos, conversation_id, role, content, created_at, search_text ON recall BEGIN
	DELETE FROM search_fts WHERE rowid = old.pos * 2;
	INSERT INTO search_fts (rowid, body, context, conversation_id, at)
	SELECT pos * 2, body, context, conversation_id, at FROM search_recall_docs WHERE pos = new.pos AND searchable;
END;

CREATE TRIGGER search_blocks_insert AFTER INSERT ON blocks BEGIN
	INSERT INTO search_fts (rowid, body, context, conversation_id, at)
	SELECT pos * 2 + 1, body, '', conversation_id, at FROM search_block_docs WHERE pos = new.pos AND searchable;
END;
CREATE TRIGGER search_blocks_delete AFTER DELETE ON blocks BEGIN
	DELETE FROM search_fts WHERE rowid = old.pos * 2 + 1;
END;
CREATE TRIGGER search_blocks_update AFTER UPDATE OF pos, content, conversation_id, created_at ON blocks BEGIN
	DELETE FROM search_fts WHERE rowid = old.pos * 2 + 1;
	INSERT INTO search_fts (rowid, body, context, conversation_id, at)
	SELECT pos * 2 + 1, body, '', conversation_id, at FROM search_block_docs WHERE pos = new.pos AND searchable;
END;

INSERT INTO search_fts (rowid, body, context, conversation_id, at)
SELECT pos * 2, body, context, conversation_id, at FROM search_recall_docs WHERE searchable ORDER BY pos;
INSERT INTO search_fts (rowid, body, context, conversation_id, at)
SELECT pos * 2 + 1, body, '', conversation_id, at FROM search_block_docs WHERE searchable ORDER BY pos;
