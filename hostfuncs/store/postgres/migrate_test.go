package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/hostfuncs/store/postgres"
	"github.com/clipfold/clipfold/hostfuncs/store/storetest"
)

// TestUpgradeFromVersion4: a database written while message ids were
// unique across the store is keyed by (conversation, id) after step 5:
// every row of messages, recall, blocks and embeddings kept (identity
// positions included), search finds what it found, and another
// conversation may then reuse the ids.
func TestUpgradeFromVersion4(t *testing.T) {
	ctx := context.Background()
	u := freshSchema(t)
	old, err := postgres.OpenAt(ctx, u, 4)
	at := time.Date(2026, 2, 28, 10, 0, 0, 0, time.UTC)
	require.NoError(t, err)
	batch := core.FormatBatchBlock("c1", &core.Batch{Content: "The walrus outage was fixed.", Start: at, End: at,
		MessageCount: 1, SourceMessageIDs: []string{"msg_0"}, OperationID: "op1", Method: core.MethodExtractive})
	vec := store.EncodeVector([]float32{1, 2, 3})
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO messages (id, conversation_id, seq, role, content, created_at, raw) VALUES
	('ca1', 'c1', 0, 'system', '[Context Summary]', '2026-02-28T11:00:00.000Z', '{"id":"ca1"}'),
	('msg_2', 'c1', 3, 'user', 'still active', '', '{"id":"msg_2"}')`, nil},
		{`INSERT INTO recall (id, conversation_id, seq, role, content, created_at, raw, removed_at, operation_id, search_text) VALUES
	('msg_0', 'c1', 1, 'user', 'the walrus service is down', '2026-02-28T10:00:00.000Z', '{"id":"msg_0"}', '2026-03-01T00:00:00.000Z', 'op1', NULL),
	('msg_1', 'c1', 2, 'assistant', 'restarted the pool', '2026-02-28T10:01:00.000Z', '{"id":"msg_1"}', '2026-03-01T00:00:00.000Z', 'op1',
		'restarted the pool' || E'\n\n» ' || 'asked about the pager')`, nil},
		{`INSERT INTO blocks (id, tier, label, content, created_at, conversation_id, reason, operation_id) VALUES
	('blk_a', 'archival', 'compaction-batch-c1-2026-02-28T10:30:00.000Z', $1, '2026-03-01T00:00:00.000Z', 'c1', '', 'op1'),
	('blk_b', 'archival', 'notes', 'about the pelican', '2026-03-01T00:00:00.000Z', NULL, '', NULL)`, []any{batch}},
		{`INSERT INTO embeddings (kind, ref_id, conversation_id, model, dims, vector, created_at) VALUES
	('message', 'msg_0', 'c1', 'm', 3, $1, 'x'), ('message', 'msg_1', 'c1', 'm', 3, $1, 'x'),
	('batch', 'blk_a', 'c1', 'm', 3, $1, 'x'), ('batch', 'blk_b', '', 'm', 3, $1, 'x')`, []any{vec}},
	} {
		require.NoError(t, old.Exec(ctx, q.sql, q.args...))
	}
	require.NoError(t, old.Close())

	conn, err := pgx.Connect(ctx, u)
	require.NoError(t, err)
	defer conn.Close(ctx)
	tables := map[string]string{
		"messages":   `SELECT id, conversation_id, seq, role, content, created_at, raw FROM messages ORDER BY conversation_id, seq`,
		"recall":     `SELECT pos, id, conversation_id, seq, role, content, created_at, raw, removed_at, operation_id, search_text, fts, fts_context FROM recall ORDER BY pos`,
		"blocks":     `SELECT pos, id, tier, label, content, created_at, conversation_id, reason, operation_id, fts, at FROM blocks ORDER BY pos`,
		"embeddings": `SELECT kind, ref_id, conversation_id, model, dims, vector, created_at, seq FROM embeddings ORDER BY seq`,
	}
	rows := func(q string) string {
		t.Helper()
		var out string
		require.NoError(t, conn.QueryRow(ctx, `SELECT COALESCE(string_agg(t::text, E'\n'), '') FROM (`+q+`) t`).Scan(&out))
		return out
	}
	before := map[string]string{}
	for name, q := range tables {
		before[name] = rows(q)
		require.NotEmpty(t, before[name], name)
	}

	s := openOrFail(t, u)
	for name, q := range tables {
		assert.Equal(t, before[name], rows(q), "%s: every row kept as it was", name)
	}
	for q, want := range map[string]string{"service": "msg_0", "pager": "msg_1", "pelican": "blk_b", "outage": "blk_a"} {
		hits, err := s.Search(ctx, q, store.SearchOptions{})
		require.NoError(t, err)
		require.NotEmpty(t, hits, q)
		assert.Equal(t, want, hits[0].ID, q)
	}

	// Another conversation numbering its messages alike now just works.
	storetest.ReuseIDsAfterUpgrade(t, s)
}
