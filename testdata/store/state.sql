-- What a SQLite store holds, as the store vectors compare it (README.md):
-- one JSON object of the three tables' rows, each in its order — the
-- active history by conversation and position, recall storage and blocks
-- in the order they were written. Block ids are random, so left out. The
-- Go, Python and Node runners run this file.
SELECT json_object(
	'messages', json((SELECT json_group_array(json_object('conversation_id', conversation_id, 'seq', seq, 'id', id, 'role', role,
		'content', content, 'created_at', created_at, 'raw', raw, 'search_text', search_text))
		FROM (SELECT * FROM messages ORDER BY conversation_id, seq))),
	'recall', json((SELECT json_group_array(json_object('conversation_id', conversation_id, 'seq', seq, 'id', id, 'role', role,
		'content', content, 'created_at', created_at, 'raw', raw, 'removed_at', removed_at, 'operation_id', operation_id,
		'search_text', search_text))
		FROM (SELECT * FROM recall ORDER BY conversation_id, pos))),
	'blocks', json((SELECT json_group_array(json_object('tier', tier, 'label', label, 'content', content, 'created_at', created_at,
		'conversation_id', conversation_id, 'reason', reason, 'operation_id', operation_id))
		FROM (SELECT * FROM blocks ORDER BY pos)))
)
