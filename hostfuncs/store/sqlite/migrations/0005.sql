-- message ids unique per conversation; text after a NUL indexed
-- Message ids are the caller's, and callers number each conversation on
-- its own (msg_0, msg_1, … in every conversation): a message is known by
-- (conversation_id, id) in messages, recall and embeddings. The tables
-- are rebuilt with those keys, every row kept; recall keeps its pos
-- values (the search index's rowids), so the index stays as it was.
--
-- SQLite's substr() stops at a NUL character: the views of migrations 2
-- and 4 lost every word after one in a message's context and in a
-- block's summary. The views now cut texts as bytes (substr of a BLOB
-- does not stop at a NUL) and read the parts back as text; the documents
-- holding a NUL are indexed again at the end.

DROP TRIGGER search_recall_insert;
DROP TRIGGER search_recall_delete;
DROP TRIGGER search_recall_update;
DROP TRIGGER search_blocks_insert;
DROP TRIGGER search_blocks_delete;
DROP TRIGGER search_blocks_update;
DROP TRIGGER embeddings_recall_delete;
DROP TRIGGER embeddings_recall_update;
DROP TRIGGER embeddings_blocks_delete;
DROP TRIGGER embeddings_blocks_update;
DROP VIEW search_recall_docs;
DROP VIEW search_block_docs;

CREATE TABLE messages_v5 (
	id              TEXT NOT NULL,
	conversation_id TEXT NOT NULL,
	seq             INTEGER NOT NULL,
	role            TEXT NOT NULL,
	content         TEXT NOT NULL,
	created_at      TEXT NOT NULL,
	raw             TEXT NOT NULL,
	PRIMARY KEY (conversation_id, id),
	UNIQUE (conversation_id, seq)
);
INSERT INTO messages_v5 (id, conversation_id, seq, role, content, created_at, raw)
SELECT id, conversation_id, seq, role, content, created_at, raw FROM messages;
DROP TABLE messages;
ALTER TABLE messages_v5 RENAME TO messages;

CREATE TABLE recall_v5 (
	pos             INTEGER PRIMARY KEY,
	id              TEXT NOT NULL,
	conversation_id TEXT NOT NULL,
	seq             INTEGER NOT NULL,
	role            TEXT NOT NULL,
	content         TEXT NOT NULL,
	created_at      TEXT NOT NULL,
	raw             TEXT NOT NULL,
	removed_at      TEXT NOT NULL,
	operation_id    TEXT NOT NULL,
	search_text     TEXT,
	UNIQUE (conversation_id, id)
);
INSERT INTO recall_v5 (pos, id, conversation_id, seq, role, content, created_at, raw, removed_at, operation_id, search_text)
SELECT pos, id, conversation_id, seq, role, content, created_at, raw, removed_at, operation_id, search_text FROM recall;
DROP TABLE recall;
ALTER TABLE recall_v5 RENAME TO recall;
CREATE INDEX recall_by_conversation ON recall (conversation_id, seq);
-- Reading a message by id alone (any conversation, Store.Recall).
CREATE INDEX recall_by_id ON recall (id);

-- A message's vector is keyed with its conversation; a block's
-- conversation_id is the block's ('' for none), as before.
CREATE TABLE embeddings_v5 (
	kind            TEXT NOT NULL,
	ref_id          TEXT NOT NULL,
	conversation_id TEXT NOT NULL,
	model           TEXT NOT NULL,
	dims            INTEGER NOT NULL,
	vector          BLOB NOT NULL,
	created_at      TEXT NOT NULL,
	PRIMARY KEY (kind, conversation_id, ref_id, model)
);
INSERT INTO embeddings_v5 (kind, ref_id, conversation_id, model, dims, vector, created_at)
SELECT kind, ref_id, conversation_id, model, dims, vector, created_at FROM embeddings;
DROP TABLE embeddings;
ALTER TABLE embeddings_v5 RENAME TO embeddings;
CREATE INDEX embeddings_by_model ON embeddings (model, conversation_id);

-- What each recalled message and block contributes to the index, as in
-- migrations 2 and 4, cut as bytes. CAST(x AS BLOB) is the text's bytes
-- in the database's encoding, and the separators are cast the same way,
-- so the offsets agree whatever the encoding.
CREATE VIEW search_recall_docs AS
SELECT pos,
	CASE WHEN sep > 0 THEN CAST(substr(b, 1, sep - 1) AS TEXT) ELSE t END AS body,
	CASE WHEN sep > 0 THEN CAST(substr(b, sep + length(CAST(char(10, 10, 187, 32) AS BLOB))) AS TEXT) ELSE '' END AS context,
	conversation_id, at, searchable
FROM (SELECT pos, t, CAST(t AS BLOB) AS b, instr(CAST(t AS BLOB), CAST(char(10, 10, 187, 32) AS BLOB)) AS sep,
	conversation_id, at, searchable
FROM (SELECT pos, COALESCE(search_text, content) AS t, conversation_id, created_at AS at,
	NOT (role = 'system' AND substr(content, 1, 16) = '[Context Summary')
	AND COALESCE(search_text, content) <> '' AS searchable
FROM recall));

CREATE VIEW search_block_docs AS
SELECT pos, body, conversation_id, at, body <> '' AS searchable
FROM (SELECT pos,
	CASE WHEN substr(content, 1, 1) = '{' OR substr(content, 1, 7) = '[depth:'
		THEN CAST(substr(CAST(content AS BLOB), instr(CAST(content AS BLOB), CAST(char(10) AS BLOB)) + length(CAST(char(10) AS BLOB))) AS TEXT)
		ELSE content END AS body,
	COALESCE(conversation_id, '') AS conversation_id,
	COALESCE(CASE WHEN substr(content, 1, 1) = '{' AND json_valid(substr(content, 1, instr(content || char(10), char(10)) - 1))
		THEN CASE WHEN json_type(substr(content, 1, instr(content || char(10), char(10)) - 1), '$.end') = 'text'
			THEN json_extract(substr(content, 1, instr(content || char(10), char(10)) - 1), '$.end') END END,
		created_at) AS at
FROM blocks);

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

-- A vector describes the text it was computed from (migration 3): found
-- by its conversation too (a block's vector is stored under the block's
-- conversation, queries/embeddings_put.sql).
CREATE TRIGGER embeddings_recall_delete AFTER DELETE ON recall BEGIN
	DELETE FROM embeddings WHERE kind = 'message' AND conversation_id = old.conversation_id AND ref_id = old.id;
END;
CREATE TRIGGER embeddings_recall_update AFTER UPDATE OF id, conversation_id, role, content, search_text ON recall BEGIN
	DELETE FROM embeddings WHERE kind = 'message' AND conversation_id = old.conversation_id AND ref_id = old.id;
END;
CREATE TRIGGER embeddings_blocks_delete AFTER DELETE ON blocks BEGIN
	DELETE FROM embeddings WHERE kind = 'batch' AND conversation_id = COALESCE(old.conversation_id, '') AND ref_id = old.id;
END;
CREATE TRIGGER embeddings_blocks_update AFTER UPDATE OF id, content, conversation_id ON blocks BEGIN
	DELETE FROM embeddings WHERE kind = 'batch' AND conversation_id = COALESCE(old.conversation_id, '') AND ref_id = old.id;
END;

-- The documents holding a NUL, indexed again in full. A vector of one
-- was computed from the same cut text: it goes, and the next search with
-- an embedder computes it again.
DELETE FROM search_fts WHERE rowid IN (SELECT pos * 2 FROM recall WHERE instr(COALESCE(search_text, content), char(0)) > 0);
INSERT INTO search_fts (rowid, body, context, conversation_id, at)
SELECT pos * 2, body, context, conversation_id, at FROM search_recall_docs
WHERE searchable AND pos IN (SELECT pos FROM recall WHERE instr(COALESCE(search_text, content), char(0)) > 0);
DELETE FROM search_fts WHERE rowid IN (SELECT pos * 2 + 1 FROM blocks WHERE instr(content, char(0)) > 0);
INSERT INTO search_fts (rowid, body, context, conversation_id, at)
SELECT pos * 2 + 1, body, '', conversation_id, at FROM search_block_docs
WHERE searchable AND pos IN (SELECT pos FROM blocks WHERE instr(content, char(0)) > 0);
DELETE FROM embeddings WHERE kind = 'message'
	AND EXISTS (SELECT 1 FROM recall r WHERE r.conversation_id = embeddings.conversation_id AND r.id = embeddings.ref_id
		AND instr(COALESCE(r.search_text, r.content), char(0)) > 0);
DELETE FROM embeddings WHERE kind = 'batch'
	AND EXISTS (SELECT 1 FROM blocks b WHERE b.id = embeddings.ref_id AND instr(b.content, char(0)) > 0);
-- A block's vector under another conversation than the block's would
-- outlive the block (the triggers above look it up by the block's).
DELETE FROM embeddings WHERE kind = 'batch'
	AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.id = embeddings.ref_id AND COALESCE(b.conversation_id, '') = embeddings.conversation_id);
