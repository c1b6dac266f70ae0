package postgres

// migration is one step of the schema, applied in version order inside the
// transaction that records it in schema_migrations. Never edit a released
// step: add a new one. The tables are the SQLite store's (SCHEMA.md in the
// parent directory); PostgreSQL adds a generated tsvector column per
// searchable table instead of SQLite's separate FTS5 tables.
type migration struct {
	version int
	name    string
	sql     string
}

// blockBody is the part of a block's content worth searching: the summary
// without the JSON metadata line (or legacy header) in front of it, so
// ranking and headlines see words, not JSON. With no newline, strpos is 0
// and substr(content, 1) is the whole content.
const blockBody = `(CASE WHEN left(content, 1) = '{' OR left(content, 7) = '[depth:'
	THEN substr(content, strpos(content, E'\n') + 1)
	ELSE content END)`

var migrations = []migration{
	{1, "messages, recall, blocks and their full-text indexes", `
CREATE TABLE messages (
	id              text PRIMARY KEY,
	conversation_id text NOT NULL,
	seq             bigint NOT NULL,
	role            text NOT NULL,
	content         text NOT NULL,
	created_at      text NOT NULL,
	raw             text NOT NULL,
	UNIQUE (conversation_id, seq)
);

CREATE TABLE recall (
	pos             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id              text NOT NULL UNIQUE,
	conversation_id text NOT NULL,
	seq             bigint NOT NULL,
	role            text NOT NULL,
	content         text NOT NULL,
	created_at      text NOT NULL,
	raw             text NOT NULL,
	removed_at      text NOT NULL,
	operation_id    text NOT NULL,
	fts             tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED
);
CREATE INDEX recall_by_conversation ON recall (conversation_id, seq);
CREATE INDEX recall_fts ON recall USING gin (fts);

CREATE TABLE blocks (
	pos             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id              text NOT NULL UNIQUE,
	tier            text NOT NULL,
	label           text NOT NULL,
	content         text NOT NULL,
	created_at      text NOT NULL,
	conversation_id text,
	reason          text NOT NULL DEFAULT '',
	operation_id    text,
	fts             tsvector GENERATED ALWAYS AS (
		setweight(to_tsvector('english', label), 'C') ||
		setweight(to_tsvector('english', ` + blockBody + `), 'A')) STORED
);
CREATE INDEX blocks_by_label ON blocks (tier, label);
CREATE INDEX blocks_by_conversation ON blocks (conversation_id);
CREATE INDEX blocks_fts ON blocks USING gin (fts);
`},
}
