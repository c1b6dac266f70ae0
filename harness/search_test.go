package harness_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/clipfold/clipfold/api"
	"github.com/clipfold/clipfold/hostfuncs"
	"github.com/clipfold/clipfold/hostfuncs/llm"
	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/hostfuncs/store/storetest"
)

type fact struct {
	Fact       string   `json:"fact"`
	Query      string   `json:"query"`
	MessageIDs []string `json:"message_ids"`
}

// TestSearchAfterCompaction compacts each bundled conversation in five
// rounds through the real .wasm (extractive summarizer) into SQLite and
// PostgreSQL, as an agent would, and then searches the archive the way
// the clip-archive invites (memory_read, docs/spec.md#search):
//   - each planted fact, asked as its keyword query and as its whole
//     sentence, is found in the top 5 — the message holding it, or a batch
//     summarizing it — for most facts (rates logged);
//   - the four clip-archives the later rounds replaced are in recall
//     storage but never hits;
//   - tool names and arguments (the plug-in's search_text) find their
//     calls;
//   - every hit reads back in full by id (an in-context one is in the
//     active history).
func TestSearchAfterCompaction(t *testing.T) {
	ctx := context.Background()
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			found, asked := map[string]int{}, 0
			for _, file := range []string{"debugging-session", "planning-discussion", "support-chat"} {
				s := open(t)
				all := loadConversation(t, file+".json")
				conv := gjson.GetBytes(all[0], "conversation_id").String()
				host := &hostfuncs.Host{LLM: llm.NewExtractive(), Store: s}
				c := newWasmCompressor(t, host)
				cfg := map[string]any{"chunk_size": 20, "keep_recent": 20, "model_max_tokens": 8000, "context_budget": 0.5}
				fed := 0
				for round := 1; round <= 5; round++ {
					next := min(len(all), fed+len(all)/5+1)
					require.NoError(t, s.AppendMessages(ctx, conv, storetest.Messages(t, all[fed:next])))
					fed = next
					res := c.compress(t, compressInput(t, conv, storetest.ActiveRaw(t, s, conv), map[string]any{"config": cfg}))
					require.False(t, res.Get("failed").Bool(), "%s round %d: %s", file, round, res.Get("failure_message"))
				}

				var facts []fact
				b, err := os.ReadFile(filepath.Join("..", "testdata", "conversations", file+".facts.json"))
				require.NoError(t, err)
				require.NoError(t, json.Unmarshal(b, &facts))
				for _, f := range facts {
					asked++
					for kind, q := range map[string]string{"keywords": f.Query, "sentence": f.Fact} {
						hits, err := s.Search(ctx, q, store.SearchOptions{ConversationID: conv, Limit: 5})
						require.NoError(t, err)
						if coversAny(hits, f.MessageIDs) {
							found[kind]++
						} else if os.Getenv("CLIPFOLD_SEARCH_DEBUG") != "" {
							var got []string
							for _, h := range hits {
								got = append(got, h.ID)
							}
							t.Logf("%s %s: %q wants %v, got %v", file, kind, q, f.MessageIDs, got)
						}
					}
				}

				// Superseded clip-archives stay in recall but are never hits.
				superseded := 0
				for _, q := range []string{"Context Summary compaction cycle", "Batch depth Earliest context", "summaries omitted searchable memory_read"} {
					hits, err := s.Search(ctx, q, store.SearchOptions{Limit: 100})
					require.NoError(t, err)
					for _, h := range hits {
						require.False(t, strings.HasPrefix(h.ID, "clip_"), "%s: clip-archive %s is a hit for %q", file, h.ID, q)
						if h.InContext {
							active, err := s.ActiveMessages(ctx, h.ConversationID)
							require.NoError(t, err)
							require.True(t, slices.ContainsFunc(active, func(m store.Message) bool { return m.ID == h.ID }),
								"an in-context hit is in the active history")
							continue
						}
						r, err := store.Read(ctx, s, h.ConversationID, h.ID)
						require.NoError(t, err, "every hit reads back by id")
						require.Equal(t, h.Kind, r.Kind)
					}
				}
				for _, m := range storetest.ActiveRaw(t, s, conv)[:1] {
					require.True(t, strings.HasPrefix(gjson.GetBytes(m, "id").String(), "clip_"))
				}
				hits, err := s.Search(ctx, "checkout", store.SearchOptions{ConversationID: conv, Limit: 1000})
				require.NoError(t, err)
				for _, h := range hits {
					if strings.HasPrefix(h.ID, "clip_") {
						superseded++
					}
				}
				require.Zero(t, superseded)

				// Tool calls are found by their name and arguments.
				if file == "debugging-session" {
					var call gjson.Result
					for _, m := range all {
						if tc := gjson.GetBytes(m, "tool_calls.0"); tc.Exists() && gjson.GetBytes(m, "content").String() == "" {
							if _, err := s.Recall(ctx, conv, gjson.GetBytes(m, "id").String()); err == nil {
								call = gjson.ParseBytes(m)
								break
							}
						}
					}
					require.True(t, call.Exists(), "a recalled tool call with no text")
					args := call.Get("tool_calls.0.function.arguments").String()
					hits, err := s.Search(ctx, call.Get("tool_calls.0.function.name").String()+" "+args, store.SearchOptions{ConversationID: conv, Limit: 5})
					require.NoError(t, err)
					var hit *store.Hit
					for i := range hits {
						if hits[i].ID == call.Get("id").String() {
							hit = &hits[i]
						}
					}
					// Top 5, not first: PostgreSQL's parser reads "v2.13.2..v2.14.0"
					// as its own kind of token, so other git commands outrank it there.
					if hit == nil {
						for _, h := range hits {
							t.Logf("hit %s %s %.4f %q", h.Kind, h.ID, h.Score, h.Text[:min(len(h.Text), 200)])
						}
					}
					require.NotNil(t, hit, "the call's own name and arguments find it in the top 5: %s", args)
					assert.Contains(t, hit.Text, call.Get("tool_calls.0.function.name").String())
					assert.Contains(t, hit.Text, args)
				}
			}
			t.Logf("%s: facts found in the top 5 — by keyword query %d/%d, by the fact's sentence %d/%d",
				name, found["keywords"], asked, found["sentence"], asked)
			assert.GreaterOrEqual(t, found["keywords"]*10, asked*6, "at least 60%% of the facts by keywords")
			assert.GreaterOrEqual(t, found["sentence"]*10, asked*8, "at least 80%% of the facts by their sentence")
		})
	}
}

// coversAny reports whether a hit is one of ids, or a batch summarizing
// one of them.
func coversAny(hits []store.Hit, ids []string) bool {
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	for _, h := range hits {
		if want[h.ID] {
			return true
		}
		if h.Batch != nil {
			for _, id := range h.Batch.SourceMessageIDs {
				if want[id] {
					return true
				}
			}
		}
	}
	return false
}

// TestCommitSearchText: the commit tells the host what to index for every
// message it removes — text, each tool call's name and arguments, a tool
// result's output, then the words of its exchange; "" for the clip-archive
// it replaces — natively and through the .wasm alike.
func TestCommitSearchText(t *testing.T) {
	msg := func(id, role, content string, minute int, extra string) json.RawMessage {
		c, _ := json.Marshal(content)
		return json.RawMessage(`{"id":"` + id + `","conversation_id":"c1","role":"` + role + `","content":` + string(c) +
			`,"created_at":"2026-02-28T10:` + twoDigits(minute) + `:00.000Z"` + extra + `}`)
	}
	hist := []json.RawMessage{
		msg("ca0", "system", "[Context Summary — 4 messages compressed across 1 compaction cycle(s)]\n\nold", 0, ""),
		msg("u1", "user", "Why is the build red?", 1, ""),
		msg("a2", "assistant", "", 2, `,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"run_tests","arguments":"{\"pkg\":\"./orders\"}"}},{"id":"call_2","type":"function","function":{"name":"grep","arguments":"{\"pattern\":\"ErrStock\"}"}}]`),
		msg("t3", "tool", "FAIL orders TestReserve: ErrInsufficientStock", 3, `,"tool_call_id":"call_1"`),
		msg("t4", "tool", "orders/service.go:88: return ErrStock", 4, `,"tool_call_id":"call_2"`),
		msg("a5", "assistant", "Let me look.", 5, `,"tool_calls":[{"id":"call_3","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"orders/service.go\"}"}}]`),
		msg("t6", "tool", "package orders", 6, `,"tool_call_id":"call_3"`),
	}
	for i := 7; i < 20; i++ {
		hist = append(hist, msg("m"+twoDigits(i), []string{"user", "assistant"}[i%2], "turn number "+twoDigits(i)+" of a long talk", i, ""))
	}
	in := compressInput(t, "c1", hist, map[string]any{"dry_run": true, "operation_id": "op_fixed", "config": map[string]any{"keep_recent": 4}})
	host := func() *hostfuncs.Host { return &hostfuncs.Host{LLM: &scriptLLM{}, Store: newMemStore(hist)} }
	var commits []string
	for _, c := range []compressor{nativeCompressor{api.DefaultEnv(), host()}, newWasmCompressor(t, host())} {
		res := c.compress(t, in)
		require.False(t, res.Get("failed").Bool(), res.Raw)
		commit := res.Get("commit")
		commits = append(commits, commit.Raw)
		st := commit.Get("search_text")
		require.True(t, st.IsObject(), commit.Raw)
		var keys []string
		st.ForEach(func(k, _ gjson.Result) bool { keys = append(keys, k.Str); return true })
		var removed []string
		for _, id := range commit.Get("remove_message_ids").Array() {
			removed = append(removed, id.Str)
		}
		assert.Equal(t, removed, keys, "one entry per removed message, in the same order")
		assert.Equal(t, "", st.Get("ca0").String(), "the replaced clip-archive is not to be indexed")
		assert.True(t, st.Get("ca0").Exists())
		// Each message's own text (a tool result's with its call), then
		// its exchange after core.SearchContextSep: the request that
		// opened the turn, the message after it.
		assert.Equal(t, "Why is the build red?\n\n» run_tests {\"pkg\":\"./orders\"} grep {\"pattern\":\"ErrStock\"}", st.Get("u1").String())
		assert.Equal(t, "run_tests {\"pkg\":\"./orders\"}\ngrep {\"pattern\":\"ErrStock\"}\n\n» Why is the build red?\n» FAIL orders TestReserve: ErrInsufficientStock", st.Get("a2").String())
		assert.Equal(t, "FAIL orders TestReserve: ErrInsufficientStock\nrun_tests {\"pkg\":\"./orders\"}\n\n» Why is the build red?\n» orders/service.go:88: return ErrStock", st.Get("t3").String())
		assert.Equal(t, "Let me look.\nread_file {\"path\":\"orders/service.go\"}\n\n» Why is the build red?\n» package orders", st.Get("a5").String())
	}
	assert.Equal(t, commits[0], commits[1], "the native and the .wasm commit are the same bytes")
}

func twoDigits(i int) string {
	return string([]byte{byte('0' + i/10), byte('0' + i%10)})
}
