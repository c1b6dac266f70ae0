-- The ids of a list that a conversation holds, active or in recall
-- storage, in order (ids are unique within a conversation): what an
-- append refuses, or with AppendNew skips. ?1: JSON array of ids; ?2: the
-- conversation id. The Go, Python and Node stores run this file.
SELECT id FROM messages WHERE conversation_id = ?2 AND id IN (SELECT value FROM json_each(?1))
UNION SELECT id FROM recall WHERE conversation_id = ?2 AND id IN (SELECT value FROM json_each(?1))
ORDER BY 1
