-- one search index over recalled messages and archived batches
ALTER TABLE recall ADD COLUMN search_text TEXT;

DROP TRIGGER blocks_fts_insert;
DROP TRIGGER blocks_fts_delete;
DROP TRIGGER blocks_fts_update;
DROP TRIGGER recall_fts_insert;
DROP TRIGGER recall_fts_delete;
DROP TRIGGER recall_fts_update;
DROP TABLE blocks_fts;
DROP TABLE recall_fts;

-- What each recalled message and each block contributes to the index.
-- A message's text is the search_text its commit gave (text, tool names,
-- tool inputs and outputs), else its content; a superseded clip-archive
-- stays in recall but is not searchable. A block's text is its content
-- without the batch metadata line; "at" is when it happened (a message's
-- created_at, a batch's end), for ties.
CREATE VIEW search_recall_docs AS
SELECT pos, COALESCE(search_text, content) AS body, conversation_id, created_at AS at,
	NOT (role = 'system' AND substr(content, 1, 16) = '[Context Summary')
	AND COALESCE(search_text, content) <> '' AS searchable
FROM recall;

CREATE VIEW search_block_docs AS
SELECT pos,
	CASE WHEN substr(content, 1, 1) = '{' OR substr(content, 1, 7) = '[depth:'
		THEN substr(content, instr(content, char(10)) + 1)
		ELSE content END AS body,
	COALESCE(conversation_id, '') AS conversation_id,
	COALESCE(CASE WHEN substr(content, 1, 1) = '{' AND json_valid(substr(content, 1, instr(content || char(10), char(10)) - 1))
		THEN CASE WHEN json_type(substr(content, 1, instr(content || char(10), char(10)) - 1), '$.end') = 'text'
			THEN json_extract(substr(content, 1, instr(content || char(10), char(10)) - 1), '$.end') END END,
		created_at) AS at,
	CASE WHEN substr(content, 1, 1) = '{' OR substr(content, 1, 7) = '[depth:'
		THEN substr(content, instr(content, char(10)) + 1)
		ELSE content END <> '' AS searchable
FROM blocks;

-- One FTS5 table for both kinds, so bm25 scores share one corpus and are
-- comparable: rowid = recall.pos * 2 for a message, blocks.pos * 2 + 1
-- for a block. Kept in sync by the triggers below; never write it.
CREATE VIRTUAL TABLE search_fts USING fts5(body, conversation_id UNINDEXED, at UNINDEXED,
	tokenize = 'porter unicode61 remove_diacritics 2');

CREATE TRIGGER search_recall_insert AFTER INSERT ON recall BEGIN
	INSERT INTO search_fts (rowid, body, conversation_id, at)
	SELECT pos * 2, body, conversation_id, at FROM search_recall_docs WHERE pos = new.pos AND searchable;
END;
CREATE TRIGGER search_recall_delete AFTER DELETE ON recall BEGIN
	DELETE FROM search_fts WHERE rowid = old.pos * 2;
END;
CREATE TRIGGER search_recall_update AFTER UPDATE OF pos, conversation_id, role, content, created_at, search_text ON recall BEGIN
	DELETE FROM search_fts WHERE rowid = old.pos * 2;
	INSERT INTO search_fts (rowid, body, conversation_id, at)
	SELECT pos * 2, body, conversation_id, at FROM search_recall_docs WHERE pos = new.pos AND searchable;
END;

CREATE TRIGGER search_blocks_insert AFTER INSERT ON blocks BEGIN
	INSERT INTO search_fts (rowid, body, conversation_id, at)
	SELECT pos * 2 + 1, body, conversation_id, at FROM search_block_docs WHERE pos = new.pos AND searchable;
END;
CREATE TRIGGER search_blocks_delete AFTER DELETE ON blocks BEGIN
	DELETE FROM search_fts WHERE rowid = old.pos * 2 + 1;
END;
CREATE TRIGGER search_blocks_update AFTER UPDATE OF pos, content, conversation_id, created_at ON blocks BEGIN
	DELETE FROM search_fts WHERE rowid = old.pos * 2 + 1;
	INSERT INTO search_fts (rowid, body, conversation_id, at)
	SELECT pos * 2 + 1, body, conversation_id, at FROM search_block_docs WHERE pos = new.pos AND searchable;
END;

INSERT INTO search_fts (rowid, body, conversation_id, at)
SELECT pos * 2, body, conversation_id, at FROM search_recall_docs WHERE searchable ORDER BY pos;
INSERT INTO search_fts (rowid, body, conversation_id, at)
SELECT pos * 2 + 1, body, conversation_id, at FROM search_block_docs WHERE searchable ORDER BY pos;
