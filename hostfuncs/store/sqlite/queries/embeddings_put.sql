-- Stores one document's vector of a model, replacing an older one; a
-- vector of a document that no longer exists (a block deleted by a
-- compaction meanwhile) is not stored. ?1: kind ('message' or 'batch');
-- ?2: ref id; ?3: conversation id (a message's; a block's, '' for a block
-- without one: a message id is unique within its conversation only);
-- ?4: model; ?5: dims; ?6: the vector (dims float32, little-endian, unit
-- length); ?7: created_at.
INSERT OR REPLACE INTO embeddings (kind, ref_id, conversation_id, model, dims, vector, created_at)
SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7
WHERE (?1 = 'message' AND EXISTS (SELECT 1 FROM recall WHERE conversation_id = ?3 AND id = ?2))
	OR (?1 = 'batch' AND EXISTS (SELECT 1 FROM blocks WHERE id = ?2 AND COALESCE(conversation_id, '') = ?3))
