-- embedding vectors of recalled messages and archived blocks, per model
-- One row per document and embedding model: kind 'message' (ref_id a
-- recall.id) or 'batch' (ref_id a blocks.id), the document's
-- conversation ('' for a block written without one), the model's name
-- as the host's embedder gives it, and the vector: dims float32 values,
-- little-endian, scaled to unit length (cosine similarity = dot product).
-- Hosts without an embeddings provider never read or write it. Vectors
-- are written after a compaction commits, never inside its transaction.
CREATE TABLE embeddings (
	kind            TEXT NOT NULL,
	ref_id          TEXT NOT NULL,
	conversation_id TEXT NOT NULL,
	model           TEXT NOT NULL,
	dims            INTEGER NOT NULL,
	vector          BLOB NOT NULL,
	created_at      TEXT NOT NULL,
	PRIMARY KEY (kind, ref_id, model)
);
CREATE INDEX embeddings_by_model ON embeddings (model, conversation_id);

-- A vector describes the text it was computed from: when the document
-- goes or its indexed text changes, its vectors go too (and are computed
-- again, lazily, by the next search with an embedder).
CREATE TRIGGER embeddings_recall_delete AFTER DELETE ON recall BEGIN
	DELETE FROM embeddings WHERE kind = 'message' AND ref_id = old.id;
END;
CREATE TRIGGER embeddings_recall_update AFTER UPDATE OF id, conversation_id, role, content, search_text ON recall BEGIN
	DELETE FROM embeddings WHERE kind = 'message' AND ref_id = old.id;
END;
CREATE TRIGGER embeddings_blocks_delete AFTER DELETE ON blocks BEGIN
	DELETE FROM embeddings WHERE kind = 'batch' AND ref_id = old.id;
END;
CREATE TRIGGER embeddings_blocks_update AFTER UPDATE OF id, content, conversation_id ON blocks BEGIN
	DELETE FROM embeddings WHERE kind = 'batch' AND ref_id = old.id;
END;
