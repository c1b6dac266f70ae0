package sqlite_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/hostfuncs/store/sqlite"
)

// TestReleasedMigrationsUnchanged pins every released step: databases in
// the field were made by exactly this SQL (and the Python store runs the
// same files). Change the schema with a new step, never by editing one.
func TestReleasedMigrationsUnchanged(t *testing.T) {
	released := map[int]string{
		1: "e8268954aa0a8470c8b4826e3d02c9c5d0f3684023964277748e1ed9308dcc68",
		2: "9f7f8b629c240342487eb134af33a9559edf57260d37c5fd4ddcd1628efcdb66",
		3: "8fa4958e7c9018d97d3e0687113e4dcf7acb4a68ff05f36e6e20d9a599bc675c",
		4: "2b47c6e6603810d00ab51320b83ab639b3d9a549e0d8b1e5ce1108a911df89db",
	}
	steps := sqlite.MigrationSQL()
	for v, want := range released {
		step, ok := steps[v]
		require.True(t, ok, "released step %d is gone", v)
		sum := sha256.Sum256([]byte("-- " + step[0] + "\n" + step[1]))
		assert.Equal(t, want, hex.EncodeToString(sum[:]), "migrations/%04d.sql was edited after its release", v)
	}
	assert.Len(t, steps, len(released), "a new step: pin its hash here when it is released")
}

// TestUpgradeFromVersion1: a database written before the unified search
// index is migrated in place: the old FTS tables go, every recalled
// message and block is indexed, superseded clip-archives are not.
func TestUpgradeFromVersion1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	old, err := sqlite.OpenAt(path, 1)
	require.NoError(t, err)
	batch := core.FormatBatchBlock("c1", &core.Batch{Content: "The walrus outage was fixed by a rollback.", Start: base(0), End: base(30),
		MessageCount: 1, SourceMessageIDs: []string{"m1"}, OperationID: "op1", Method: core.MethodLLM})
	_, err = old.DB().ExecContext(ctx, `
INSERT INTO recall (id, conversation_id, seq, role, content, created_at, raw, removed_at, operation_id) VALUES
	('m1', 'c1', 1, 'user', 'the walrus service is down again', '2026-02-28T10:00:00.000Z', '{}', '2026-03-01T00:00:00.000Z', 'op1'),
	('ca0', 'c1', 0, 'system', '[Context Summary — 1 messages compressed]
walrus', '2026-02-28T09:00:00.000Z', '{}', '2026-03-01T00:00:00.000Z', 'op1'),
	('m2', 'c2', 1, 'tool', '', '', '{}', '2026-03-01T00:00:00.000Z', 'op2');
INSERT INTO blocks (id, tier, label, content, created_at, conversation_id, reason, operation_id) VALUES
	('blk_a', 'archival', 'compaction-batch-c1-2026-02-28T10:30:00.000Z', ?1, '2026-03-01T00:00:00.000Z', 'c1', '', 'op1'),
	('blk_b', 'archival', 'compaction-batch-c1-2026-02-28T09:00:00.000Z', '[depth:0|start:2026-02-28T08:00:00.000Z|end:2026-02-28T09:00:00.000Z|count:1]
legacy walrus notes', '2026-02-28T09:00:00.000Z', 'c1', '', NULL);`, batch)
	require.NoError(t, err)
	var n int
	require.NoError(t, old.DB().QueryRowContext(ctx, `SELECT count(*) FROM recall_fts WHERE recall_fts MATCH 'walrus'`).Scan(&n))
	require.Equal(t, 2, n, "version 1 indexed the clip-archive too")
	require.NoError(t, old.Close())

	s, err := sqlite.Open(path)
	require.NoError(t, err)
	defer s.Close()
	var tables string
	require.NoError(t, s.DB().QueryRowContext(ctx, `SELECT group_concat(name, ' ') FROM (SELECT name FROM sqlite_master
WHERE name LIKE '%fts%' AND type IN ('table', 'trigger') AND name NOT LIKE 'search_fts_%' ORDER BY name)`).Scan(&tables))
	assert.Equal(t, "search_fts", tables, "the old indexes and triggers are gone")

	hits, err := s.Search(ctx, "walrus", store.SearchOptions{})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"m1", "blk_a", "blk_b"}, ids(hits), "backfilled, without the clip-archive")
	for _, h := range hits {
		if h.ID == "blk_a" {
			require.NotNil(t, h.Batch)
			assert.Equal(t, "The walrus outage was fixed by a rollback.", h.Text)
			assert.True(t, base(30).Equal(h.End))
		}
	}
	_, err = s.Recall(ctx, "ca0")
	require.NoError(t, err, "the clip-archive itself stays in recall")

	// The upgraded file takes commits with search_text like a new one.
	require.NoError(t, s.AppendMessages(ctx, "c1", []store.Message{{ID: "m3", Role: "assistant", Content: ""}}))
	require.NoError(t, s.Commit(ctx, &core.Commit{ConversationID: "c1", OperationID: "op3", RemoveMessageIDs: []string{"m3"},
		Insert: core.InsertMessage{ID: "ca3", Content: "[Context Summary]"}, SearchText: []core.SearchText{{MessageID: "m3", Text: "restart_walrus {}"}}}))
	hits, err = s.Search(ctx, "restart_walrus", store.SearchOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "m3", hits[0].ID)
}

// TestUpgradeFromVersion2: search texts written before context had its
// own column are split at core.SearchContextSep when the index is
// rebuilt: own words outrank the same words as context, and a hit found
// only through its context next to a better hit is folded into it.
func TestUpgradeFromVersion2(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v2.db")
	old, err := sqlite.OpenAt(path, 2)
	require.NoError(t, err)
	sep := core.SearchContextSep
	_, err = old.DB().ExecContext(ctx, `
INSERT INTO recall (id, conversation_id, seq, role, content, created_at, raw, removed_at, operation_id, search_text) VALUES
	('m1', 'c1', 1, 'user', 'any news?', '2026-02-28T10:00:00.000Z', '{}', '2026-03-01T00:00:00.000Z', 'op1', 'any news?' || ?1 || 'we adopted a walrus'),
	('m2', 'c1', 2, 'user', 'we adopted a walrus', '2026-02-28T10:01:00.000Z', '{}', '2026-03-01T00:00:00.000Z', 'op1', 'we adopted a walrus' || ?1 || 'any news?'),
	('m3', 'c1', 9, 'assistant', 'later', '2026-02-28T10:09:00.000Z', '{}', '2026-03-01T00:00:00.000Z', 'op1', 'later' || ?1 || 'the walrus again');`, sep)
	require.NoError(t, err)
	require.NoError(t, old.Close())

	s, err := sqlite.Open(path)
	require.NoError(t, err)
	defer s.Close()
	hits, err := s.Search(ctx, "walrus", store.SearchOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"m2", "m3"}, ids(hits), "m1 is m2's context only, next to it; m3 has no better neighbour")
	assert.Greater(t, hits[0].Score, hits[1].Score)
	assert.Equal(t, "we adopted a walrus"+sep+"any news?", hits[0].Text, "the hit's text is what was indexed")
}

func ids(hits []store.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

// TestSearchPlan: the commit's join with its search_text and the search
// use indexes, not scans per row (a 10,000-message commit or archive must
// not go quadratic).
func TestSearchPlan(t *testing.T) {
	ctx := context.Background()
	s := openOrFail(t, sqlite.MemoryPath)
	plan := func(q string, args ...any) string {
		rows, err := s.DB().QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, args...)
		require.NoError(t, err)
		defer rows.Close()
		var lines []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			require.NoError(t, rows.Scan(&id, &parent, &notused, &detail))
			lines = append(lines, detail)
		}
		return strings.Join(lines, "\n")
	}
	p := plan(sqlite.MoveToRecallSQL, "c1", `["a"]`, "", "", `{"a":"x"}`)
	assert.Contains(t, p, "AUTOMATIC", "search_text is joined through an automatic index:\n%s", p)
	p = plan(sqlite.SearchSQL, `"x"`, "", 10)
	assert.Contains(t, p, "VIRTUAL TABLE INDEX", p)
	assert.Contains(t, p, "USING INTEGER PRIMARY KEY", "hits are looked up by rowid:\n%s", p)
}

// base is 2026-02-28T10:00Z plus minutes.
func base(minutes int) time.Time {
	return time.Date(2026, 2, 28, 10, minutes, 0, 0, time.UTC)
}
