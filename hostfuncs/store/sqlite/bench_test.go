package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/embeddings/embeddingstest"
	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/hostfuncs/store/sqlite"
)

// archive10k writes a 10,000-message archive into a file store the way
// compaction does: 500 commits of 20 messages, each archiving one batch
// summary and replacing the previous clip-archive (so 499 superseded
// clip-archives sit in recall too). The messages are the bundled
// conversations' turns, renumbered, so the vocabulary is real prose,
// logs and tool output.
func archive10k(b *testing.B) (*sqlite.Store, []string) {
	b.Helper()
	ctx := context.Background()
	var turns []string
	var questions []string
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "conversations", "*.json"))
	require.NoError(b, err)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(b, err)
		if strings.HasSuffix(f, ".facts.json") {
			gjson.ParseBytes(data).ForEach(func(_, v gjson.Result) bool {
				questions = append(questions, v.Get("fact").String(), v.Get("query").String())
				return true
			})
			continue
		}
		gjson.ParseBytes(data).ForEach(func(_, m gjson.Result) bool {
			if c := m.Get("content").String(); c != "" {
				turns = append(turns, c)
			}
			return true
		})
	}
	require.NotEmpty(b, questions)
	s, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"))
	require.NoError(b, err)
	b.Cleanup(func() { _ = s.Close() })
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const total, chunk = 10_000, 20
	prevArchive := ""
	for op := 0; op < total/chunk; op++ {
		msgs := make([]store.Message, chunk)
		var ids []string
		var summary strings.Builder
		var st []core.SearchText
		for i := range msgs {
			n := op*chunk + i
			text := turns[n%len(turns)]
			if n >= len(turns) {
				text = fmt.Sprintf("(session %d) %s", n/len(turns), text)
			}
			id := fmt.Sprintf("m%05d", n)
			msgs[i] = store.Message{ID: id, Role: []string{"user", "assistant"}[i%2], Content: text, CreatedAt: t0.Add(time.Duration(n) * time.Minute)}
			ids = append(ids, id)
			st = append(st, core.SearchText{MessageID: id, Text: text})
			if i%4 == 0 {
				first, _, _ := strings.Cut(text, ". ")
				summary.WriteString(first + ". ")
			}
		}
		require.NoError(b, s.AppendMessages(ctx, "bench", msgs))
		bt := &core.Batch{Content: summary.String(), Start: msgs[0].CreatedAt, End: msgs[chunk-1].CreatedAt, MessageCount: chunk,
			SourceMessageIDs: ids, OperationID: fmt.Sprint("op", op), Method: core.MethodExtractive}
		remove := ids
		if prevArchive != "" {
			remove = append([]string{prevArchive}, ids...)
			st = append([]core.SearchText{{MessageID: prevArchive}}, st...)
		}
		archive := fmt.Sprintf("clip_%d", op)
		require.NoError(b, s.Commit(ctx, &core.Commit{ConversationID: "bench", OperationID: bt.OperationID,
			ArchiveWrites:    []core.ArchiveWrite{{Label: core.BatchLabel("bench", bt), Content: core.FormatBatchBlock("bench", bt), Tier: "archival"}},
			RemoveMessageIDs: remove, SearchText: st,
			Insert: core.InsertMessage{ID: archive, Role: core.RoleSystem, Content: "[Context Summary — " + summary.String(), CreatedAt: bt.End}}))
		prevArchive = archive
	}
	return s, questions
}

// BenchmarkSearch10k: one search (the default 20 hits) of a
// 10,000-message archive, questions and keyword queries of the bundled
// conversations' facts in turn. Reports the p50 and p95 latency of the
// calls made.
func BenchmarkSearch10k(b *testing.B) {
	ctx := context.Background()
	s, queries := archive10k(b)
	var lat []time.Duration
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		q := queries[i%len(queries)]
		t := time.Now()
		hits, err := s.Search(ctx, q, store.SearchOptions{})
		lat = append(lat, time.Since(t))
		if err != nil || len(hits) == 0 {
			b.Fatalf("query %q: %d hits, %v", q, len(hits), err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
}

// BenchmarkSearch10kVectors: BenchmarkSearch10k with an embedder: the
// query embedded by a local embeddings server (embeddingstest, OpenAI's wire
// format, over HTTP), the lexical ranking, the brute-force cosine ranking
// of the archive's 10,500 vectors (10,000 messages, 500 batches) and
// their fusion — everything a search with embeddings does once the
// archive is embedded (it is embedded before timing starts), at the
// dimensions of common embedding models. Reports p50 and p95.
func BenchmarkSearch10kVectors(b *testing.B) {
	ctx := context.Background()
	s, queries := archive10k(b)
	for _, dims := range []int{384, 768, 1536} {
		b.Run(fmt.Sprintf("dims=%d", dims), func(b *testing.B) {
			srv := embeddingstest.NewServer(b)
			srv.Dims = dims
			e := srv.Embedder(b, fmt.Sprintf("bench-%d", dims))
			_, err := store.EmbedMissing(ctx, s, e, "") // once: a benchmark function runs more than once
			require.NoError(b, err)
			missing, err := s.MissingVectors(ctx, "", e.Model(), 0, 10)
			require.NoError(b, err)
			require.Empty(b, missing)
			var lat []time.Duration
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				q := queries[i%len(queries)]
				t := time.Now()
				hits, err := s.Search(ctx, q, store.SearchOptions{Embedder: e, ConversationID: "bench",
					Warn: func(err error) { b.Fatalf("query %q: %v", q, err) }})
				lat = append(lat, time.Since(t))
				if err != nil || len(hits) == 0 {
					b.Fatalf("query %q: %d hits, %v", q, len(hits), err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
			slices.Sort(lat)
			pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.95), "p95-ms")
		})
	}
}

// cpuTime is the CPU time the process has used (user and system): on a
// shared machine, wall-clock latencies include waiting for a core, and
// cpu-ms/op says how much work one search is.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
