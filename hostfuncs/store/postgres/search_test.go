package postgres_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/hostfuncs/store/postgres"
	"github.com/clipfold/clipfold/hostfuncs/store/storetest"
)

// TestReleasedMigrationsUnchanged pins every released step (see the
// SQLite store's test of the same name).
func TestReleasedMigrationsUnchanged(t *testing.T) {
	released := map[int]string{
		1: "0f5347bb00441f9fc6294be0e68b9d4a76a63c013b144435c791faed3e489f52",
		2: "ed614a47ab880afe9b061fc3564a8634baf1cb1f783aafb5367f2a902b40db5b",
		3: "cfe7e0f2f398bbb63258b7027b430124dd80352ea8dc5af67685bba17d57579e",
		4: "7e3db8194e7dec9bd6c5d3c2c4d01399b073ce08fd392debe6132da8d505f4d8",
		5: "e0d11883d7851e9a1728f97f1fc00bd3833bdddda294fc6b6708d397023c6243",
		6: "6ebcb95440a217f8f60213f3f47d03adafb934176330a29134ec5d614eed23a1",
	}
	steps := postgres.MigrationSQL()
	for v, want := range released {
		step, ok := steps[v]
		require.True(t, ok, "released step %d is gone", v)
		sum := sha256.Sum256([]byte(step[0] + "\n" + step[1]))
		assert.Equal(t, want, hex.EncodeToString(sum[:]), "migration %d was edited after its release", v)
	}
	assert.Len(t, steps, len(released), "a new step: pin its hash here when it is released")
}

// tsqueryCheck runs one analysis through PostgreSQL as the store does:
// to_tsquery with the store's configuration (and PostgreSQL's english, in
// case a host indexes with that), matched and ranked against doc.
func tsqueryCheck(t *testing.T, conn *pgx.Conn, q, doc string) (matched bool) {
	t.Helper()
	ctx := context.Background()
	a, err := core.AnalyzeSearchQuery(q, "")
	require.NoError(t, err)
	if a.TSQuery == "" {
		require.Empty(t, a.FTS5)
		return false
	}
	require.True(t, utf8.ValidString(a.TSQuery))
	require.NotContains(t, a.TSQuery, "\x00")
	var rank float64
	err = conn.QueryRow(ctx, `SELECT COALESCE(to_tsvector('english', $2) @@ to_tsquery('english', $1), false),
	to_tsvector('clipfold_english', $2) @@ to_tsquery('clipfold_english', $1),
	ts_rank_cd(to_tsvector('clipfold_english', $2), to_tsquery('clipfold_english', $1), 1)`, a.TSQuery, doc).Scan(new(bool), &matched, &rank)
	require.NoError(t, err, "query %.80q: tsquery %.200q", q, a.TSQuery)
	return matched
}

// TestHostileQueriesTSQuery: every hostile query's tsquery runs through
// to_tsquery, @@ and ts_rank_cd without error.
func TestHostileQueriesTSQuery(t *testing.T) {
	u := freshSchema(t)
	openOrFail(t, u) // creates the clipfold_english configuration
	conn := connect(t, u)
	var queries []string
	queries = append(queries, storetest.HostileQueries...)
	queries = append(queries, `'`, `\'`, `''''`, `a'b`, `a\b`, `a:b:c`, `x:*`, `x<->y`, `x <1> y`, `(a|b)&!c`,
		"ǅemal", "ﬁle", "𝐛𝐨𝐥𝐝", "日本語", "עברית", "\u200b", "a\u00adb", strings.Repeat("z", 2047), strings.Repeat("z", 255),
		strings.Repeat("ü", 127)+"x")
	doc := "the deploy script failed at step 3; what is it? e.g. a.b.c"
	for _, q := range queries {
		tsqueryCheck(t, conn, q, doc)
	}
	// Natural questions find the text holding their words.
	for _, q := range []string{"why did the deploy fail?", `"deploy script"`, "STEP three", "what is it", "Deploying scripts"} {
		assert.True(t, tsqueryCheck(t, conn, q, doc), "query %q", q)
	}
}

func connect(t testing.TB, u string) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, u)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(ctx) })
	return conn
}

// FuzzTSQuery: any query text gives a tsquery PostgreSQL parses, matches
// and ranks without error.
func FuzzTSQuery(f *testing.F) {
	for _, q := range storetest.HostileQueries {
		if len(q) < 1000 {
			f.Add(q)
		}
	}
	u := freshSchema(f)
	openOrFail(f, u)
	conn := connect(f, u)
	f.Fuzz(func(t *testing.T, q string) {
		tsqueryCheck(t, conn, q, "the deploy script failed at step 3")
	})
}

// TestUpgradeFromVersion1: a database written before the unified search
// index is migrated in place; everything is re-indexed, superseded
// clip-archives are not.
func TestUpgradeFromVersion1(t *testing.T) {
	ctx := context.Background()
	u := freshSchema(t)
	old, err := postgres.OpenAt(ctx, u, 1)
	require.NoError(t, err)
	start := time.Date(2026, 2, 28, 10, 0, 0, 0, time.UTC)
	batch := core.FormatBatchBlock("c1", &core.Batch{Content: "The walrus outage was fixed by a rollback.", Start: start,
		End: start.Add(30 * time.Minute), MessageCount: 1, SourceMessageIDs: []string{"m1"}, OperationID: "op1", Method: core.MethodLLM})
	require.NoError(t, old.Exec(ctx, `
INSERT INTO recall (id, conversation_id, seq, role, content, created_at, raw, removed_at, operation_id) VALUES
	('m1', 'c1', 1, 'user', 'the walrus service is down again', '2026-02-28T10:00:00.000Z', '{}', '2026-03-01T00:00:00.000Z', 'op1'),
	('ca0', 'c1', 0, 'system', '[Context Summary — 1 messages compressed] walrus', '2026-02-28T09:00:00.000Z', '{}', '2026-03-01T00:00:00.000Z', 'op1')`))
	require.NoError(t, old.Exec(ctx, `INSERT INTO blocks (id, tier, label, content, created_at, conversation_id, reason, operation_id)
VALUES ('blk_a', 'archival', 'compaction-batch-c1-x', $1, '2026-03-01T00:00:00.000Z', 'c1', '', 'op1')`, batch))
	n, err := old.QueryInt(ctx, `SELECT count(*) FROM recall WHERE fts @@ plainto_tsquery('english', 'walrus')`)
	require.NoError(t, err)
	require.EqualValues(t, 2, n, "version 1 indexed the clip-archive too")
	require.NoError(t, old.Close())

	s := openOrFail(t, u)
	hits, err := s.Search(ctx, "walrus", store.SearchOptions{})
	require.NoError(t, err)
	got := map[string]store.Hit{}
	for _, h := range hits {
		got[h.ID] = h
	}
	require.Len(t, got, 2, "backfilled, without the clip-archive: %v", hits)
	require.Contains(t, got, "m1")
	b := got["blk_a"]
	require.NotNil(t, b.Batch)
	assert.True(t, start.Add(30*time.Minute).Equal(b.End))
	at, err := s.QueryInt(ctx, `SELECT count(*) FROM blocks WHERE at = '2026-02-28T10:30:00.000Z'`)
	require.NoError(t, err)
	assert.EqualValues(t, 1, at, "a batch's at is its end")
}

// TestUpgradeFromVersion2: search texts written before context had its
// own weight are re-indexed by migration 4: own words outrank the same
// words as context (see the SQLite store's test of the same name).
func TestUpgradeFromVersion2(t *testing.T) {
	ctx := context.Background()
	u := freshSchema(t)
	old, err := postgres.OpenAt(ctx, u, 2)
	require.NoError(t, err)
	sep := core.SearchContextSep
	require.NoError(t, old.Exec(ctx, `
INSERT INTO recall (id, conversation_id, seq, role, content, created_at, raw, removed_at, operation_id, search_text) VALUES
	('m1', 'c1', 1, 'user', 'any news?', '2026-02-28T10:00:00.000Z', '{}', '2026-03-01T00:00:00.000Z', 'op1', 'any news?' || $1 || 'we adopted a walrus'),
	('m2', 'c1', 2, 'user', 'we adopted a walrus', '2026-02-28T10:01:00.000Z', '{}', '2026-03-01T00:00:00.000Z', 'op1', 'we adopted a walrus' || $1 || 'any news?'),
	('m3', 'c1', 9, 'assistant', 'later', '2026-02-28T10:09:00.000Z', '{}', '2026-03-01T00:00:00.000Z', 'op1', 'later' || $1 || 'the walrus again')`, sep))
	require.NoError(t, old.Close())

	s := openOrFail(t, u)
	hits, err := s.Search(ctx, "walrus", store.SearchOptions{})
	require.NoError(t, err)
	var got []string
	for _, h := range hits {
		got = append(got, h.ID)
	}
	assert.Equal(t, []string{"m2", "m3"}, got, "m1 is m2's context only, next to it; m3 has no better neighbour")
	assert.Greater(t, hits[0].Score, hits[1].Score)
}
