package sqlite_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/hostfuncs/store/sqlite"
	"github.com/clipfold/clipfold/hostfuncs/store/storetest"
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
		5: "99326d9fab2946709afa2e6413b5798f847b7b02c8a738e41ddd7bbb0ed66e0e",
		6: "eee3ee8e4bd2080ae01517e9889f58fce5718c57d411d30723c5d01a7e565fd0",
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
	_, err = s.Recall(ctx, "c1", "ca0")
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
	p = plan(sqlite.SearchByRefSQL, `[["c1","m1"]]`, `["blk_x"]`)
	assert.Contains(t, p, "(conversation_id=? AND id=?)", "vector hits are read by their key:\n%s", p)
	p = plan(sqlite.RecallHolders, "m1", 11)
	assert.Contains(t, p, "INDEX recall_by_id", "a message read without its conversation:\n%s", p)
}

// base is 2026-02-28T10:00Z plus minutes.
func base(minutes int) time.Time {
	return time.Date(2026, 2, 28, 10, minutes, 0, 0, time.UTC)
}

// TestUpgradeFromVersion4: a database written while message ids were
// unique across the store becomes one keyed by (conversation, id): every
// row of messages, recall, blocks and embeddings is kept (recall.pos, the
// search index's rowid, included), search finds what it found, and now
// the words after a NUL too; another conversation may then reuse the ids.
func TestUpgradeFromVersion4(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v4.db")
	old, err := sqlite.OpenAt(path, 4)
	require.NoError(t, err)
	sep := core.SearchContextSep
	batch := core.FormatBatchBlock("c1", &core.Batch{Content: "The walrus outage\x00 then the narwhal fix.", Start: base(0), End: base(30),
		MessageCount: 2, SourceMessageIDs: []string{"msg_0", "msg_1"}, OperationID: "op1", Method: core.MethodExtractive})
	vec := string(store.EncodeVector([]float32{1, 2, 3}))
	_, err = old.DB().ExecContext(ctx, `
INSERT INTO messages (id, conversation_id, seq, role, content, created_at, raw) VALUES
	('ca1', 'c1', 0, 'system', '[Context Summary — 2 messages compressed]', '2026-02-28T11:00:00.000Z', '{"id":"ca1"}'),
	('msg_2', 'c1', 3, 'user', 'still active', '2026-02-28T10:02:00.000Z', '{"id":"msg_2","content":"still active"}');
INSERT INTO recall (pos, id, conversation_id, seq, role, content, created_at, raw, removed_at, operation_id, search_text) VALUES
	(7, 'msg_0', 'c1', 1, 'user', 'the walrus service is down', '2026-02-28T10:00:00.000Z', '{"id":"msg_0"}', '2026-03-01T00:00:00.000Z', 'op1',
		'the walrus service is down' || ?1 || 'asked about the pager'),
	(9, 'msg_1', 'c1', 2, 'assistant', 'restarted' || char(0) || ' the quokka pool', '2026-02-28T10:01:00.000Z', '{"id":"msg_1"}',
		'2026-03-01T00:00:00.000Z', 'op1', 'restarted' || char(0) || ' the quokka pool' || ?1 || 'why' || char(0) || ' platypus');
INSERT INTO blocks (pos, id, tier, label, content, created_at, conversation_id, reason, operation_id) VALUES
	(3, 'blk_a', 'archival', 'compaction-batch-c1-2026-02-28T10:30:00.000Z', ?2, '2026-03-01T00:00:00.000Z', 'c1', '', 'op1'),
	(5, 'blk_b', 'archival', 'notes', 'kept as written, about the pelican', '2026-03-01T00:00:00.000Z', NULL, '', NULL);
INSERT INTO embeddings (kind, ref_id, conversation_id, model, dims, vector, created_at) VALUES
	('message', 'msg_0', 'c1', 'm', 3, CAST(?3 AS BLOB), '2026-03-01T00:00:00.000Z'),
	('message', 'msg_1', 'c1', 'm', 3, CAST(?3 AS BLOB), '2026-03-01T00:00:00.000Z'),
	('batch', 'blk_a', 'c1', 'm', 3, CAST(?3 AS BLOB), '2026-03-01T00:00:00.000Z'),
	('batch', 'blk_b', '', 'm', 3, CAST(?3 AS BLOB), '2026-03-01T00:00:00.000Z');`, sep, batch, vec)
	require.NoError(t, err)
	// Version 4 indexed a text up to its first NUL only (a context or a
	// batch summary cut with substr): the failure this step repairs.
	var n int
	require.NoError(t, old.DB().QueryRowContext(ctx, `SELECT count(*) FROM search_fts WHERE search_fts MATCH 'narwhal OR platypus OR quokka'`).Scan(&n))
	require.Zero(t, n, "version 4 lost the words after a NUL")
	rows := func(s *sqlite.Store, q string) string {
		t.Helper()
		r, err := s.DB().QueryContext(ctx, q)
		require.NoError(t, err)
		defer r.Close()
		cols, err := r.Columns()
		require.NoError(t, err)
		var out []string
		for r.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			require.NoError(t, r.Scan(ptrs...))
			out = append(out, fmt.Sprintf("%q", vals))
		}
		require.NoError(t, r.Err())
		return strings.Join(out, "\n")
	}
	tables := map[string]string{
		"messages":   `SELECT id, conversation_id, seq, role, content, created_at, raw FROM messages ORDER BY conversation_id, seq`,
		"recall":     `SELECT pos, id, conversation_id, seq, role, content, created_at, raw, removed_at, operation_id, search_text FROM recall ORDER BY pos`,
		"blocks":     `SELECT * FROM blocks ORDER BY pos`,
		"embeddings": `SELECT kind, ref_id, conversation_id, model, dims, vector, created_at FROM embeddings WHERE ref_id NOT IN ('msg_1', 'blk_a') ORDER BY kind, ref_id`,
		"fts":        `SELECT rowid, body, context, conversation_id, at FROM search_fts WHERE rowid > 0 AND rowid <> 18 AND rowid <> 7 ORDER BY rowid`,
	}
	before := map[string]string{}
	for name, q := range tables {
		before[name] = rows(old, q)
	}
	require.NoError(t, old.Close())

	s, err := sqlite.Open(path)
	require.NoError(t, err)
	defer s.Close()
	for name, q := range tables {
		assert.Equal(t, before[name], rows(s, q), "%s: every row kept as it was", name)
	}
	assert.Contains(t, before["embeddings"], "msg_0", "the kept vectors are there to compare")
	assert.Contains(t, before["embeddings"], "blk_b")
	assert.Equal(t, "", rows(s, `SELECT ref_id FROM embeddings WHERE ref_id IN ('msg_1', 'blk_a')`),
		"the vectors of texts holding a NUL were computed from a cut text: they go, to be computed again")

	for q, want := range map[string]string{"service": "msg_0", "pager": "msg_0", "pelican": "blk_b", "quokka": "msg_1", "platypus": "msg_1", "narwhal": "blk_a"} {
		hits, err := s.Search(ctx, q, store.SearchOptions{})
		require.NoError(t, err)
		require.NotEmpty(t, hits, q)
		assert.Equal(t, want, hits[0].ID, q)
	}
	r, err := s.Recall(ctx, "", "msg_1")
	require.NoError(t, err)
	assert.Equal(t, `{"id":"msg_1"}`, string(r.Raw))
	// Version 6 indexes the active history: the message still active is
	// found, in context; the clip-archive is not.
	hits, err := s.Search(ctx, "still active", store.SearchOptions{})
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Equal(t, "msg_2", hits[0].ID)
	assert.True(t, hits[0].InContext)
	hits, err = s.Search(ctx, "Context Summary compressed", store.SearchOptions{})
	require.NoError(t, err)
	assert.Empty(t, hits)

	// Another conversation numbering its messages alike now just works.
	storetest.ReuseIDsAfterUpgrade(t, s)
}
