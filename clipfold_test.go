package clipfold_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/clipfold/clipfold"
	"github.com/clipfold/clipfold/hostfuncs/store/sqlite"
	"github.com/clipfold/clipfold/internal/wasmhost"
	"github.com/stretchr/testify/require"
)

// pluginUnderTest is the build these tests run: the file $CLIPFOLD_WASM
// names (make test points it at build/clipfold.wasm, then at
// build/clipfold-tinygo.wasm), else the embedded build, so that go test
// needs nothing built (wasmhost.DefaultWasm).
func pluginUnderTest(t *testing.T) []byte {
	t.Helper()
	wasm, _, err := wasmhost.DefaultWasm()
	require.NoError(t, err)
	return wasm
}

// openBuilt opens a Compactor on the plug-in under test.
func openBuilt(t *testing.T, cfg map[string]any) *clipfold.Compactor {
	t.Helper()
	c, err := clipfold.Open(context.Background(), clipfold.Options{Wasm: pluginUnderTest(t), Config: cfg})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// frameworkTurn is a LangChain-style turn as frameworks keep it: message
// dicts without ids or times.
func frameworkTurn(i int) []json.RawMessage {
	out := []json.RawMessage{}
	for _, m := range []map[string]any{
		{"role": "user", "content": fmt.Sprintf("Question %d: what did we decide about module %d and its retry budget?", i, i)},
		{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{"id": fmt.Sprintf("call_%d", i), "type": "function",
			"function": map[string]any{"name": "search_notes", "arguments": fmt.Sprintf(`{"module":%d}`, i)}}}},
		{"role": "tool", "tool_call_id": fmt.Sprintf("call_%d", i), "content": fmt.Sprintf("notes: module %d keeps a retry budget of %d; decided on the %dth", i, 10+i, i)},
		{"role": "assistant", "content": fmt.Sprintf("We agreed module %d keeps a retry budget of %d; the decision was recorded in the notes.", i, 10+i)},
	} {
		b, _ := json.Marshal(m)
		out = append(out, b)
	}
	return out
}

// frameworkConfig counts tokens as the seeds do (chars4): these tests are
// about who owns the list. Counted conservatively, the clip-archive's four
// dated batch headers alone (about 45 tokens each) leave a 600-token
// window no room.
var frameworkConfig = map[string]any{"keep_recent": 4, "chunk_size": 8, "max_summary_tokens": 80, "model_max_tokens": 1200, "context_budget": 0.5,
	"token_estimator": "chars4"}

// Frameworks keep their messages (no ids, no times) and either
// replace their list with the compacted one or send all of it every
// turn. Both work, store-owned or caller-owned, with no duplicate, no
// no_gain and no commit_conflict.
func TestCompressFrameworkPatterns(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		callerOwned bool
		replace     bool
	}{
		{"store-owned, list replaced", false, true},
		{"store-owned, whole list every turn", false, false},
		{"caller-owned, list replaced", true, true},
		{"caller-owned, whole list every turn", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := openBuilt(t, frameworkConfig)
			var list, everything []json.RawMessage
			var last *clipfold.Result
			compactions := 0
			for turn := 0; turn < 20; turn++ {
				list = append(list, frameworkTurn(turn)...)
				everything = append(everything, frameworkTurn(turn)...)
				res, err := c.Compress(ctx, "fw", list, &clipfold.CompressOptions{CallerOwned: tc.callerOwned, OnlyIfDue: true})
				require.NoError(t, err, "turn %d", turn)
				require.False(t, res.Failed, "turn %d: %s %s", turn, res.FailureCode, res.FailureMessage)
				if res.MessagesCompressed > 0 {
					compactions++
					require.NotNil(t, res.ClipArchive)
					require.True(t, strings.HasPrefix(*res.ClipArchive, "[Context Summary"))
					require.JSONEq(t, `{"role":"system","content":`+string(mustQuote(*res.ClipArchive))+`}`, string(res.History[0]),
						"plain Chat messages get a plain system message, nothing added")
				}
				if tc.replace {
					list = res.History
				}
				last = res
			}
			require.GreaterOrEqual(t, compactions, 3)
			require.Less(t, len(last.History), len(everything)/2, "the history sent back is compacted")
			// Nothing lost, nothing twice: every message is in the history
			// returned last or, once, in recall storage.
			msgs, err := clipfold.DecodeHistory("fw", everything)
			require.NoError(t, err)
			returned := map[string]bool{}
			for _, m := range last.History {
				returned[string(m)] = true
			}
			removed := 0
			for _, m := range msgs {
				if returned[string(m.Raw)] {
					continue
				}
				removed++
				r, err := c.Store().Recall(ctx, "fw", m.ID)
				require.NoError(t, err, "lost: %s", m.Raw)
				require.Equal(t, string(m.Raw), string(r.Raw))
			}
			var rows int
			require.NoError(t, c.Store().(*sqlite.Store).DB().QueryRow(`SELECT COUNT(*) FROM recall WHERE role <> 'system'`).Scan(&rows))
			require.Equal(t, removed, rows, "each removed message is in recall once")
			// No duplicates: every recalled message is one the caller sent,
			// and the store's active history (store-owned) is the list.
			if !tc.callerOwned && tc.replace {
				active, err := c.Store().ActiveMessages(ctx, "fw")
				require.NoError(t, err)
				require.Len(t, active, len(list))
				for i := range list {
					require.Equal(t, string(list[i]), string(active[i].Raw))
				}
			}
		})
	}
}

func mustQuote(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}
