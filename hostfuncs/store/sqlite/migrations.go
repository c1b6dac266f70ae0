package sqlite

// migration is one step of the schema. Steps are applied in version order,
// each in the transaction that records it in schema_migrations, so a crash
// half-way leaves the previous version intact. Never edit a released step:
// add a new one. The SQL is plain SQLite (no driver-specific types) because
// the Python host opens the same files with Python's sqlite3; SCHEMA.md in
// the parent directory describes the tables.
type migration struct {
	version int
	name    string
	sql     string
}

var migrations = []migration{
	{1, "messages, recall, blocks and their full-text indexes", `
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
	INSERT INTO blocks_fts (rowid, label, body) VALUES (new.pos, new.label, ` + batchBodyNew + `);
END;
CREATE TRIGGER blocks_fts_delete AFTER DELETE ON blocks BEGIN
	DELETE FROM blocks_fts WHERE rowid = old.pos;
END;
CREATE TRIGGER blocks_fts_update AFTER UPDATE OF pos, label, content ON blocks BEGIN
	DELETE FROM blocks_fts WHERE rowid = old.pos;
	INSERT INTO blocks_fts (rowid, label, body) VALUES (new.pos, new.label, ` + batchBodyNew + `);
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
`},
}

// batchBodyNew is the part of a new block's content worth searching: the
// summary without the JSON metadata line (or legacy header) in front of
// it, so snippets show words, not JSON. With no newline, instr is 0 and
// substr(content, 1) is the whole content.
const batchBodyNew = `CASE WHEN substr(new.content, 1, 1) = '{' OR substr(new.content, 1, 7) = '[depth:'
	THEN substr(new.content, instr(new.content, char(10)) + 1)
	ELSE new.content END`
