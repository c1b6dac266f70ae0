package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/embeddings/embeddingstest"
	"github.com/clipfold/clipfold/hostfuncs/store"
)

// BenchmarkSearch10kVectors: a search with embeddings of a 10,000-message
// archive (500 commits of 20 messages and a batch) on PostgreSQL, the
// archive embedded before timing (768 dimensions): the query's embedding,
// the check for documents without a vector, the transfer and brute-force
// ranking of the 10,500 vectors (cached until the scope's fingerprint
// changes), the lexical query and the fusion. Reports p50 and p95; -v
// logs the phases.
func BenchmarkSearch10kVectors(b *testing.B) {
	ctx := context.Background()
	s := openOrFail(b, freshSchema(b))
	words := strings.Fields(`deploy rollback database migration outage checkout payment invoice refund customer
ticket latency cache queue worker retry timeout certificate cluster node pod memory leak disk alert pager
meeting budget roadmap release sprint review design vendor contract travel flight hotel dinner birthday`)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for op := 0; op < 500; op++ {
		msgs := make([]store.Message, 20)
		ids := make([]string, 20)
		for i := range msgs {
			n := op*20 + i
			var text []string
			for j := 0; j < 12; j++ {
				text = append(text, words[(n*7+j*13+j*n)%len(words)])
			}
			ids[i] = fmt.Sprintf("m%05d", n)
			msgs[i] = store.Message{ID: ids[i], Role: "user", Content: strings.Join(text, " "), CreatedAt: t0.Add(time.Duration(n) * time.Minute)}
		}
		require.NoError(b, s.AppendMessages(ctx, "bench", msgs))
		bt := &core.Batch{Content: msgs[0].Content + ". " + msgs[10].Content, Start: msgs[0].CreatedAt, End: msgs[19].CreatedAt,
			MessageCount: 20, SourceMessageIDs: ids, OperationID: fmt.Sprint("op", op), Method: core.MethodExtractive}
		require.NoError(b, s.Commit(ctx, &core.Commit{ConversationID: "bench", OperationID: bt.OperationID,
			ArchiveWrites:    []core.ArchiveWrite{{Label: core.BatchLabel("bench", bt), Content: core.FormatBatchBlock("bench", bt), Tier: "archival"}},
			RemoveMessageIDs: ids,
			Insert:           core.InsertMessage{ID: fmt.Sprint("clip_", op), Role: core.RoleSystem, Content: "[Context Summary — x]", CreatedAt: bt.End}}))
	}
	srv := embeddingstest.NewServer(b)
	srv.Dims = 768
	e := srv.Embedder(b, "bench-768")
	_, err := store.EmbedMissing(ctx, s, e, "")
	require.NoError(b, err)
	queries := []string{"why did the checkout fail", "payment refund for the customer", "memory leak on the worker node",
		"when is the release review", "hotel and flight for the trip"}
	if testing.Verbose() { // the phases of a search, once cached

		qv, _ := e.Embed(ctx, []string{"why did the checkout fail"})
		for i := 0; i < 3; i++ {
			t1 := time.Now()
			_, err := s.MissingVectors(ctx, "bench", e.Model(), 768, 256)
			t2 := time.Now()
			_, err2 := s.NearestVectors(ctx, "bench", e.Model(), qv[0], 30)
			t3 := time.Now()
			_, err3 := s.Search(ctx, "why did the checkout fail", store.SearchOptions{ConversationID: "bench", Limit: 30})
			b.Logf("missing %v, nearest %v, lexical %v (%v %v %v)", t2.Sub(t1), t3.Sub(t2), time.Since(t3), err, err2, err3)
		}
	}
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := time.Now()
		hits, err := s.Search(ctx, queries[i%len(queries)], store.SearchOptions{Embedder: e, ConversationID: "bench",
			Warn: func(err error) { b.Fatal(err) }})
		lat = append(lat, time.Since(t))
		if err != nil || len(hits) == 0 {
			b.Fatalf("%d hits, %v", len(hits), err)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
}
