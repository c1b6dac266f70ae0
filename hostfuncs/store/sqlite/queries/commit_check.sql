-- Step 1 and 2 of the commit (SCHEMA.md): the checks the plug-in's plan
-- lists (core.PlanCommit, the planCommit export), run before anything is
-- written. ?1: the conversation id; ?2: the plan's checks, a JSON array of
-- {"field", "must", "ids"}: "active", each id in the conversation's active
-- history; "block", an archival block; "new", held nowhere in the
-- conversation (neither active nor recalled). Returns the ids of the first
-- check that fails, in its order, with its field and must (a failed
-- "active" or "block" is a conflict: another compaction won; a failed
-- "new", ids already stored); no row when every check passes. The Go,
-- Python and Node stores run this file.
WITH failed (n, k, field, must, id) AS (
	SELECT c.key, i.key, json_extract(c.value, '$.field'), json_extract(c.value, '$.must'), i.value
	FROM json_each(?2) c, json_each(c.value, '$.ids') i
	WHERE CASE json_extract(c.value, '$.must')
		WHEN 'active' THEN NOT EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = ?1 AND m.id = i.value)
		WHEN 'block' THEN NOT EXISTS (SELECT 1 FROM blocks b WHERE b.id = i.value)
		WHEN 'new' THEN EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = ?1 AND m.id = i.value)
			OR EXISTS (SELECT 1 FROM recall r WHERE r.conversation_id = ?1 AND r.id = i.value)
		ELSE 1
	END
)
SELECT field, must, id FROM failed WHERE n = (SELECT MIN(n) FROM failed) ORDER BY k
