-- The searchable documents without a vector of a model (SCHEMA.md,
-- "Embeddings"): recalled messages and blocks exactly as the search index
-- has them (the views: never a superseded clip-archive, never an empty
-- text). A vector is found by kind, conversation and id (a message id is
-- unique within its conversation only). ?1: a conversation id, or '' for
-- all; ?2: the model; ?3: the dimensions a vector must have to count (0:
-- any); ?4: the most rows.
SELECT 'message' AS kind, r.id, d.conversation_id, d.body
FROM search_recall_docs d JOIN recall r ON r.pos = d.pos
WHERE d.searchable AND (?1 = '' OR d.conversation_id = ?1)
	AND NOT EXISTS (SELECT 1 FROM embeddings e
		WHERE e.kind = 'message' AND e.conversation_id = r.conversation_id AND e.ref_id = r.id AND e.model = ?2
			AND (?3 = 0 OR e.dims = ?3))
UNION ALL
SELECT 'batch', b.id, d.conversation_id, d.body
FROM search_block_docs d JOIN blocks b ON b.pos = d.pos
WHERE d.searchable AND (?1 = '' OR d.conversation_id = ?1)
	AND NOT EXISTS (SELECT 1 FROM embeddings e
		WHERE e.kind = 'batch' AND e.conversation_id = d.conversation_id AND e.ref_id = b.id AND e.model = ?2
			AND (?3 = 0 OR e.dims = ?3))
LIMIT ?4
