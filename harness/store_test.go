package harness_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clipfold/clipfold/hostfuncs"
	"github.com/clipfold/clipfold/hostfuncs/llm"
	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/hostfuncs/store/postgres"
	"github.com/clipfold/clipfold/hostfuncs/store/sqlite"
	"github.com/clipfold/clipfold/hostfuncs/store/storetest"
	"github.com/clipfold/clipfold/internal/wasmhost"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

type openStore func(t *testing.T) store.Store

func stores(t *testing.T) map[string]openStore {
	m := map[string]openStore{
		"sqlite": func(t *testing.T) store.Store {
			s, err := sqlite.Open(filepath.Join(t.TempDir(), "clipfold.db"))
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			return s
		},
	}
	url := os.Getenv("CLIPFOLD_TEST_POSTGRES_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but CLIPFOLD_TEST_POSTGRES_URL is unset: run scripts/start-postgres.sh")
		}
		t.Log("CLIPFOLD_TEST_POSTGRES_URL unset: PostgreSQL cases skipped (run `eval \"$(scripts/start-postgres.sh)\"`)")
		return m
	}
	m["postgres"] = func(t *testing.T) store.Store {
		ctx := context.Background()
		schema := fmt.Sprintf("harness_%d", time.Now().UnixNano())
		admin, err := postgres.Open(ctx, url)
		require.NoError(t, err)
		err = admin.Exec(ctx, "CREATE SCHEMA "+schema)
		require.NoError(t, err)
		sep := "?"
		if strings.Contains(url, "?") {
			sep = "&"
		}
		s, err := postgres.Open(ctx, url+sep+"search_path="+schema)
		require.NoError(t, err)
		t.Cleanup(func() {
			_ = s.Close()
			_ = admin.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
			_ = admin.Close()
		})
		return s
	}
	return m
}

// loadConversation reads a bundled conversation as raw messages.
func loadConversation(t testing.TB, name string) []json.RawMessage {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "conversations", name))
	require.NoError(t, err)
	var msgs []json.RawMessage
	require.NoError(t, json.Unmarshal(data, &msgs))
	return msgs
}

// TestConcurrentCompaction: 8 goroutines compact the same conversation at
// once through a pool of .wasm instances, on SQLite and PostgreSQL.
// Exactly one commit wins, the rest get commit_conflict, and every
// original message is either active or in recall covered by a batch.
func TestConcurrentCompaction(t *testing.T) {
	ctx := context.Background()
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			conv := "race"
			hist := conversation(conv, 120)
			require.NoError(t, s.AppendMessages(ctx, conv, storetest.Messages(t, hist)))
			host := &hostfuncs.Host{LLM: llm.NewExtractive(), Store: s}
			rt, err := wasmhost.NewRuntime(ctx, wasmhost.Options{HostFunctions: host.Functions()})
			require.NoError(t, err)
			t.Cleanup(func() { _ = rt.Close(ctx) })
			pool := wasmhost.NewPool(rt, 8)
			in := compressInput(t, conv, hist, nil)
			var wg sync.WaitGroup
			results := make([]gjson.Result, 8)
			for g := 0; g < 8; g++ {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					out, err := pool.Call(ctx, "compress", in)
					require.NoError(t, err)
					results[g] = gjson.ParseBytes(out)
				}(g)
			}
			wg.Wait()
			wins, conflicts := 0, 0
			var winner gjson.Result
			for _, r := range results {
				switch {
				case !r.Get("failed").Bool():
					wins++
					winner = r
				case r.Get("failure_code").String() == "commit_conflict":
					conflicts++
				default:
					t.Fatalf("unexpected failure %s: %s", r.Get("failure_code"), r.Get("failure_message"))
				}
			}
			require.Equal(t, 1, wins)
			require.Equal(t, 7, conflicts)
			storetest.RequireNothingLost(t, s, conv, hist, winner)
		})
	}
}

// TestEndToEndRepeatedCompaction compacts a bundled 884-message agent
// session five times with the extractive provider and SQLite through the
// .wasm, appending new turns between rounds: the history stays under
// budget, batches reach depth ≥ 1 (re-summarization), the clip-archive is
// well-formed, and search finds a fact from the first turns.
func TestEndToEndRepeatedCompaction(t *testing.T) {
	ctx := context.Background()
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			all := loadConversation(t, "debugging-session.json")
			conv := gjson.GetBytes(all[0], "conversation_id").String()
			host := &hostfuncs.Host{LLM: llm.NewExtractive(), Store: s}
			c := newWasmCompressor(t, host)
			cfg := map[string]any{"chunk_size": 40, "keep_recent": 30, "clip_first": 1, "clip_last": 1,
				"max_summary_tokens": 600, "model_max_tokens": 20000, "context_budget": 0.5}
			budget := 10000
			fed := 0
			maxDepth := 0
			for round := 1; round <= 5; round++ {
				next := min(len(all), fed+len(all)/5+1)
				require.NoError(t, s.AppendMessages(ctx, conv, storetest.Messages(t, all[fed:next])))
				fed = next
				hist := storetest.ActiveRaw(t, s, conv)
				res := c.compress(t, compressInput(t, conv, hist, map[string]any{"config": cfg}))
				require.False(t, res.Get("failed").Bool(), "round %d: %s %s", round, res.Get("failure_code"), res.Get("failure_message"))
				require.Less(t, int(res.Get("tokens_estimate_after").Int()), budget, "round %d over budget", round)
				for _, b := range res.Get("batches").Array() {
					maxDepth = max(maxDepth, int(b.Get("depth").Int()))
				}
				after := storetest.ActiveRaw(t, s, conv)
				require.Equal(t, len(res.Get("history").Array()), len(after))
				clip := gjson.GetBytes(after[0], "content").String()
				require.True(t, strings.HasPrefix(clip, "[Context Summary — "), "round %d: clip-archive first", round)
				require.Equal(t, 1, strings.Count(joinContents(after), "[Context Summary — "), "round %d: exactly one clip-archive", round)
			}
			require.GreaterOrEqual(t, maxDepth, 1, "re-summarization never happened")
			// context-compaction.AC4.3: a fact from the first turns is
			// findable by search (what memory_read points to).
			hits, err := s.Search(ctx, "ErrInsufficientStock rollback", store.SearchOptions{ConversationID: conv})
			require.NoError(t, err)
			require.NotEmpty(t, hits)
			// A hit counts only if it holds the fact: a batch whose snippet
			// shows it, or a recalled message whose text does (any message
			// hit alone proves nothing: "rollback" matches many).
			found := false
			for _, h := range hits {
				text := h.Snippet
				if h.Kind == store.HitMessage {
					m, err := s.Recall(ctx, h.ConversationID, h.ID)
					require.NoError(t, err, "hit %s", h.ID)
					text = m.Content
				}
				if strings.Contains(text, "ErrInsufficientStock") {
					found = true
					break
				}
			}
			require.True(t, found, "search did not find the root cause from the first turns")
		})
	}
}

func joinContents(msgs []json.RawMessage) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(gjson.GetBytes(m, "content").String())
		b.WriteByte('\n')
	}
	return b.String()
}
