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
	{2, "one search index over recalled messages and archived batches", `
-- English stemming without a stop list: questions made only of stop words
-- still find them, and phrases match as written (the stores drop stop
-- words from the query themselves, see core.AnalyzeSearchQuery).
CREATE TEXT SEARCH DICTIONARY clipfold_english_stem (TEMPLATE = snowball, Language = english);
CREATE TEXT SEARCH CONFIGURATION clipfold_english (COPY = english);
ALTER TEXT SEARCH CONFIGURATION clipfold_english
	ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part WITH clipfold_english_stem;

-- Punctuation becomes space before parsing, so words split as SQLite's
-- unicode61 and the query analysis split them: PostgreSQL's parser would
-- keep "v2.13.2", "internal/orders/service.go" or "foo_bar" whole, and a
-- query for their words would not find them.
--
-- A message's text is the search_text its commit gave (text, tool names,
-- tool inputs and outputs), else its content; a superseded clip-archive
-- stays in recall but is not searchable (fts NULL).
ALTER TABLE recall ADD COLUMN search_text text;
ALTER TABLE recall DROP COLUMN fts;
ALTER TABLE recall ADD COLUMN fts tsvector GENERATED ALWAYS AS (
	CASE WHEN role = 'system' AND starts_with(content, '[Context Summary') THEN NULL
	ELSE to_tsvector('clipfold_english', regexp_replace(COALESCE(search_text, content), '[[:punct:]]+', ' ', 'g')) END) STORED;
CREATE INDEX recall_fts ON recall USING gin (fts);

-- A block's text is its content without the batch metadata line, with
-- the same weight as a message's (the label is not searched); "at" is
-- the batch's end, for ties.
ALTER TABLE blocks DROP COLUMN fts;
ALTER TABLE blocks ADD COLUMN fts tsvector GENERATED ALWAYS AS (
	to_tsvector('clipfold_english', regexp_replace(` + blockBody + `, '[[:punct:]]+', ' ', 'g'))) STORED;
CREATE INDEX blocks_fts ON blocks USING gin (fts);
ALTER TABLE blocks ADD COLUMN at text GENERATED ALWAYS AS (COALESCE(
	CASE WHEN left(content, 1) = '{' THEN substring(split_part(content, E'\n', 1) from '"end":"([0-9T:.Z+-]+)"') END,
	created_at)) STORED;
`},
	{3, "embedding vectors of recalled messages and archived blocks, per model", `
-- The SQLite store's table (SCHEMA.md, "Embeddings"): one row per
-- document and model, the vector as dims float32 values, little-endian,
-- at unit length, in a bytea, so both stores read and rank it alike;
-- plus seq, for the store's cache.
CREATE TABLE embeddings (
	kind            text NOT NULL,
	ref_id          text NOT NULL,
	conversation_id text NOT NULL,
	model           text NOT NULL,
	dims            integer NOT NULL,
	vector          bytea NOT NULL,
	created_at      text NOT NULL,
	seq             bigint GENERATED ALWAYS AS IDENTITY,
	PRIMARY KEY (kind, ref_id, model)
);
-- seq never repeats, so (count, max(seq)) of a scope changes whenever its
-- vectors do: the store's cache of decoded vectors is keyed on it.
CREATE INDEX embeddings_by_model ON embeddings (model, conversation_id, seq);

-- A document's vectors go with it, or when its indexed text changes.
CREATE FUNCTION clipfold_embeddings_forget_message() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
	DELETE FROM embeddings WHERE kind = 'message' AND ref_id = OLD.id;
	RETURN NULL;
END $$;
CREATE FUNCTION clipfold_embeddings_forget_block() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
	DELETE FROM embeddings WHERE kind = 'batch' AND ref_id = OLD.id;
	RETURN NULL;
END $$;
CREATE TRIGGER embeddings_recall_delete AFTER DELETE ON recall
	FOR EACH ROW EXECUTE FUNCTION clipfold_embeddings_forget_message();
CREATE TRIGGER embeddings_recall_update AFTER UPDATE OF id, conversation_id, role, content, search_text ON recall
	FOR EACH ROW EXECUTE FUNCTION clipfold_embeddings_forget_message();
CREATE TRIGGER embeddings_blocks_delete AFTER DELETE ON blocks
	FOR EACH ROW EXECUTE FUNCTION clipfold_embeddings_forget_block();
CREATE TRIGGER embeddings_blocks_update AFTER UPDATE OF id, content, conversation_id ON blocks
	FOR EACH ROW EXECUTE FUNCTION clipfold_embeddings_forget_block();

-- pgvector, when the server offers it and the extension can be created:
-- a column of its type beside the bytea, ranked with <=> by the server.
-- Otherwise (Debian 12's PostgreSQL 15 packages do not ship it) nothing
-- changes and the store ranks the bytea itself.
DO $pgvector$
DECLARE ext_schema text;
BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') THEN
		RETURN;
	END IF;
	BEGIN
		CREATE EXTENSION IF NOT EXISTS vector;
		SELECT extnamespace::regnamespace::text INTO ext_schema FROM pg_extension WHERE extname = 'vector';
		EXECUTE format('ALTER TABLE embeddings ADD COLUMN embedding %s.vector', ext_schema);
	EXCEPTION WHEN OTHERS THEN
		RAISE NOTICE 'clipfold: pgvector is available but not used: %', SQLERRM;
	END;
END $pgvector$;
`},
	{4, "a message's context weighs half in the search index", `
-- A recalled message's search text is its own words, then, after the
-- first E'\n\n» ' (core.SearchContextSep), context lines: the request
-- that opened its turn, the call a tool result answers, the message after
-- it. Own words and context get a tsvector each, each ranked (and
-- length-normalized) on its own, as SQLite's FTS5 columns are: the search
-- adds half the context's rank to the own words' (one vector would let a
-- long context drown a short message's own match).
ALTER TABLE recall DROP COLUMN fts;
ALTER TABLE recall ADD COLUMN fts tsvector GENERATED ALWAYS AS (
	CASE WHEN role = 'system' AND starts_with(content, '[Context Summary') THEN NULL
	ELSE to_tsvector('clipfold_english', regexp_replace(` + ownWords + `, '[[:punct:]]+', ' ', 'g')) END) STORED;
ALTER TABLE recall ADD COLUMN fts_context tsvector GENERATED ALWAYS AS (
	CASE WHEN role = 'system' AND starts_with(content, '[Context Summary') THEN NULL
	ELSE to_tsvector('clipfold_english', regexp_replace(` + contextWords + `, '[[:punct:]]+', ' ', 'g')) END) STORED;
CREATE INDEX recall_fts ON recall USING gin (fts);
CREATE INDEX recall_fts_context ON recall USING gin (fts_context);
`},
	{5, "message ids unique per conversation", `
-- Message ids are the caller's, and callers number each conversation on
-- its own (msg_0, msg_1, … in every conversation): a message is known by
-- (conversation_id, id) in messages, recall and embeddings. Every row is
-- kept; only the keys change.
ALTER TABLE messages DROP CONSTRAINT messages_pkey;
ALTER TABLE messages ADD CONSTRAINT messages_pkey PRIMARY KEY (conversation_id, id);
ALTER TABLE recall DROP CONSTRAINT recall_id_key;
ALTER TABLE recall ADD CONSTRAINT recall_conversation_id_id_key UNIQUE (conversation_id, id);
-- Reading a message by id alone (any conversation, Store.Recall).
CREATE INDEX recall_by_id ON recall (id);
-- A block's vector is stored under the block's conversation ('' for none).
DELETE FROM embeddings e WHERE e.kind = 'batch'
	AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.id = e.ref_id AND COALESCE(b.conversation_id, '') = e.conversation_id);
ALTER TABLE embeddings DROP CONSTRAINT embeddings_pkey;
ALTER TABLE embeddings ADD CONSTRAINT embeddings_pkey PRIMARY KEY (kind, conversation_id, ref_id, model);

CREATE OR REPLACE FUNCTION clipfold_embeddings_forget_message() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
	DELETE FROM embeddings WHERE kind = 'message' AND conversation_id = OLD.conversation_id AND ref_id = OLD.id;
	RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION clipfold_embeddings_forget_block() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
	DELETE FROM embeddings WHERE kind = 'batch' AND conversation_id = COALESCE(OLD.conversation_id, '') AND ref_id = OLD.id;
	RETURN NULL;
END $$;
`},
	{6, "the active history is searchable", `
-- A message still in the context is searched like a recalled one, ranked
-- in the same query on the same scale (SQLite: migration 6). search_text
-- is what the index holds for it while active, as the plug-in renders it
-- (its text, tool names, inputs and outputs, then the context lines of
-- its exchange); NULL means its content. Never a clip-archive.
ALTER TABLE messages ADD COLUMN search_text text;
ALTER TABLE messages ADD COLUMN fts tsvector GENERATED ALWAYS AS (
	CASE WHEN role = 'system' AND starts_with(content, '[Context Summary') THEN NULL
	ELSE to_tsvector('clipfold_english', regexp_replace(` + ownWords + `, '[[:punct:]]+', ' ', 'g')) END) STORED;
ALTER TABLE messages ADD COLUMN fts_context tsvector GENERATED ALWAYS AS (
	CASE WHEN role = 'system' AND starts_with(content, '[Context Summary') THEN NULL
	ELSE to_tsvector('clipfold_english', regexp_replace(` + contextWords + `, '[[:punct:]]+', ' ', 'g')) END) STORED;
CREATE INDEX messages_fts ON messages USING gin (fts);
CREATE INDEX messages_fts_context ON messages USING gin (fts_context);
`},
}

// ownWords and contextWords split a message's search text at the
// first core.SearchContextSep ("\n\n» ", four characters).
const (
	ownWords     = `split_part(COALESCE(search_text, content), E'\n\n» ', 1)`
	contextWords = `(CASE WHEN strpos(COALESCE(search_text, content), E'\n\n» ') > 0
		THEN substr(COALESCE(search_text, content), strpos(COALESCE(search_text, content), E'\n\n» ') + 4)
		ELSE '' END)`
)
