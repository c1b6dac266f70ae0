package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/embeddings/embeddingstest"
	"github.com/clipfold/clipfold/hostfuncs/store"
)

func at(minutes int) time.Time { return base.Add(time.Duration(minutes) * time.Minute) }

// recallOne commits msgs of conv away into recall storage, with writes.
func recallOne(t *testing.T, s store.Store, conv, op string, msgs []store.Message, writes ...core.ArchiveWrite) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.AppendMessages(ctx, conv, msgs))
	c := &core.Commit{ConversationID: conv, OperationID: op, ArchiveWrites: writes,
		Insert: core.InsertMessage{ID: "ca-" + op, Role: core.RoleSystem, Content: "[Context Summary — x]", CreatedAt: at(60)}}
	for _, m := range msgs {
		c.RemoveMessageIDs = append(c.RemoveMessageIDs, m.ID)
	}
	require.NoError(t, s.Commit(ctx, c))
}

// SharedDatabase checks two stores open on one database (two processes,
// in life): what one commits, the other's semantic search sees — new
// documents are embedded and found, deleted ones are gone — and while
// nothing changes, only the query is embedded (vectors are cached).
func SharedDatabase(t *testing.T, a, b store.Store) {
	ctx := context.Background()
	srv := embeddingstest.NewServer(t)
	e := srv.Embedder(t, "synonyms-v1")
	batch := func(op, summary string) core.ArchiveWrite {
		bt := &core.Batch{Content: summary, Start: at(0), End: at(1), MessageCount: 1, SourceMessageIDs: []string{"x"}, OperationID: op, Method: core.MethodLLM}
		return core.ArchiveWrite{Label: core.BatchLabel("c1", bt), Content: core.FormatBatchBlock("c1", bt), Tier: "archival"}
	}
	recallOne(t, a, "c1", "op1", []store.Message{{ID: "m1", Role: "user", Content: "The birthday party is on the terrace.", CreatedAt: at(0)}},
		batch("op1", "A party on the terrace."))
	search := func(q string) []store.Hit {
		t.Helper()
		hits, err := a.Search(ctx, q, store.SearchOptions{Embedder: e, Warn: func(err error) { t.Errorf("warning: %v", err) }})
		require.NoError(t, err)
		return hits
	}
	require.NotEmpty(t, search("celebration"))
	srv.Reset()
	require.NotEmpty(t, search("celebration"))
	assert.Equal(t, [][]string{{"celebration"}}, srv.Requests(), "nothing changed: only the query is embedded")

	// Another writer archives the answer to a paraphrased question.
	recallOne(t, b, "c1", "op2", []store.Message{{ID: "m2", Role: "assistant", Content: "The sedan is at the workshop for repairs.", CreatedAt: at(5)}})
	srv.Reset()
	hits := search("When will my car be fixed?")
	require.NotEmpty(t, hits)
	assert.Equal(t, "m2", hits[0].ID, "the other writer's message is embedded and found")
	assert.Equal(t, [][]string{{"When will my car be fixed?"}, {"The sedan is at the workshop for repairs."}}, srv.Requests())

	// Another writer deletes the batch: its vector goes, and it is no hit.
	blocks, err := b.ListBlocks(ctx, "archival", core.BatchLabelPrefix("c1"))
	require.NoError(t, err)
	require.Len(t, blocks, 1)
	var before []string
	for _, h := range search("celebration") {
		before = append(before, h.ID)
	}
	require.Contains(t, before, blocks[0].ID)
	require.NoError(t, b.Commit(ctx, &core.Commit{ConversationID: "c1", OperationID: "op3", ArchiveDeletes: []string{blocks[0].ID},
		Insert: core.InsertMessage{ID: "ca-op3", Role: core.RoleSystem, Content: "[Context Summary — y]", CreatedAt: at(70)}}))
	for _, h := range search("celebration") {
		assert.NotEqual(t, blocks[0].ID, h.ID)
	}
}
