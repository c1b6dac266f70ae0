-- messages, recall, blocks and their full-text indexes

CREATE TABLE messages (
	id              TEXT PRIMARY KEY,
	conversation_id TEXT NOT NULL,
	seq             INTEGER NOT NULL,
	role            TEXT NOT NULL,
	content         TEXT NOT NULL,
	created_at      TEXT NOT NULL,
	raw             TEXT NOT NULL,
	UNIQUE (conversation_id, seq)
);

CREATE TABLE recall (
	pos             INTEGER PRIMARY KEY,
	id              TEXT NOT NULL UNIQUE,
	conversation_id TEXT NOT NULL,
	seq             INTEGER NOT NULL,
	role            TEXT NOT NULL,
	content         TEXT NOT NULL,
	created_at      TEXT NOT NULL,
	raw             TEXT NOT NULL,
	removed_at      TEXT NOT NULL,
	operation_id    TEXT NOT NULL
);
CREATE INDEX recall_by_conversation ON recall (conversation_id, seq);

CREATE TABLE blocks (
	pos             INTEGER PRIMARY KEY,
	id              TEXT NOT NULL UNIQUE,
	tier            TEXT NOT NULL,
	label           TEXT NOT NULL,
	content         TEXT NOT NULL,
	created_at      TEXT NOT NULL,
	conversation_id TEXT,
	reason          TEXT NOT NULL DEFAULT '',
	operation_id    TEXT
);
CREATE INDEX blocks_by_label ON blocks (tier, label);
CREATE INDEX blocks_by_conversation ON blocks (conversation_id);

CREATE VIRTUAL TABLE blocks_fts USING fts5(label, body, tokenize = 'porter unicode61 remove_diacritics 2');
CREATE TRIGGER blocks_fts_insert AFTER INSERT ON blocks BEGIN
	INSERT INTO blocks_fts (rowid, label, body) VALUES (new.pos, new.label, CASE WHEN substr(new.content, 1, 1) = '{' OR substr(new.content, 1, 7) = '[depth:'
	THEN substr(new.content, instr(new.content, char(10)) + 1)
	ELSE new.content END);
END;
CREATE TRIGGER blocks_fts_delete AFTER DELETE ON blocks BEGIN
	DELETE FROM blocks_fts WHERE rowid = old.pos;
END;
CREATE TRIGGER blocks_fts_update AFTER UPDATE OF pos, label, content ON blocks BEGIN
	DELETE FROM blocks_fts WHERE rowid = old.pos;
	INSERT INTO blocks_fts (rowid, label, body) VALUES (new.pos, new.label, CASE WHEN substr(new.content, 1, 1) = '{' OR substr(new.content, 1, 7) = '[depth:'
	THEN substr(new.content, instr(new.content, char(10)) + 1)
	ELSE new.content END);
END;

CREATE VIRTUAL TABLE recall_fts USING fts5(content, tokenize = 'porter unicode61 remove_diacritics 2');
CREATE TRIGGER recall_fts_insert AFTER INSERT ON recall BEGIN
	INSERT INTO recall_fts (rowid, content) VALUES (new.pos, new.content);
END;
CREATE TRIGGER recall_fts_delete AFTER DELETE ON recall BEGIN
	DELETE FROM recall_fts WHERE rowid = old.pos;
END;
CREATE TRIGGER recall_fts_update AFTER UPDATE OF pos, content ON recall BEGIN
	DELETE FROM recall_fts WHERE rowid = old.pos;
	INSERT INTO recall_fts (rowid, content) VALUES (new.pos, new.content);
END;
