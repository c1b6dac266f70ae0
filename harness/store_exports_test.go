package harness_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/api"
)

// TestStoreExportsMatchNative: the store exports (planCommit, planAppend,
// parseBlocks) answer through the .wasm exactly as natively, for every
// commit, append and block of the store vectors (testdata/store) and
// malformed inputs. The Go stores apply the native plan, the Python and
// Node stores the plug-in's: an answer that differs between compilers (Go
// leaves some evaluation orders unspecified; TinyGo reads them otherwise)
// is a store that writes other rows.
func TestStoreExportsMatchNative(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "store", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	type call struct{ export, input string }
	var calls []call
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var vf struct {
			Cases []struct {
				Steps []struct {
					Append *struct {
						ConversationID string            `json:"conversation_id"`
						Messages       []json.RawMessage `json:"messages"`
					} `json:"append"`
					Commit json.RawMessage `json:"commit"`
					Now    string          `json:"now"`
				} `json:"steps"`
			} `json:"cases"`
		}
		require.NoError(t, json.Unmarshal(b, &vf), f)
		for _, c := range vf.Cases {
			for _, st := range c.Steps {
				if st.Commit != nil {
					in, _ := json.Marshal(map[string]any{"commit": st.Commit, "now": st.Now})
					calls = append(calls, call{"planCommit", string(in)})
					var cm struct {
						ArchiveWrites []struct {
							Content string `json:"content"`
						} `json:"archive_writes"`
					}
					if json.Unmarshal(st.Commit, &cm) == nil && len(cm.ArchiveWrites) > 0 {
						var contents []string
						for _, w := range cm.ArchiveWrites {
							contents = append(contents, w.Content)
						}
						in, _ := json.Marshal(map[string]any{"contents": contents})
						calls = append(calls, call{"parseBlocks", string(in)})
					}
				}
				if st.Append != nil {
					in, _ := json.Marshal(map[string]any{"conversation_id": st.Append.ConversationID, "messages": st.Append.Messages})
					calls = append(calls, call{"planAppend", string(in)})
				}
			}
		}
	}
	// A caller-owned commit with recall writes (one repeated), and inputs
	// each export refuses.
	msg := `{"id":"r1","role":"user","content":"a\u0000b kangaroo"}`
	calls = append(calls,
		call{"planCommit", `{"commit":{"conversation_id":"c","operation_id":"op","history_owner":"caller","insert_message":null,` +
			`"recall_writes":[{"id":"r1","role":"user","content":"hello","search_text":"hello","message":` + msg + `},` +
			`{"id":"r1","role":"user","content":"again","message":` + msg + `},{"id":"r2","role":"tool","content":"x","message":{}}]},"now":"2026-02-28T10:00:00Z"}`},
		call{"planCommit", `{"commit":{"conversation_id":"c","operation_id":"op","history_owner":"caller","insert_message":null,"remove_message_ids":["m1"]}}`},
		call{"planCommit", `{"commit":{"conversation_id":"c","operation_id":"op","insert_message":{"id":"","role":"system","content":"x"}}}`},
		call{"planAppend", `{"conversation_id":"c","messages":[{"id":"m1","role":"user","content":"a"},{"id":"m1","role":"user","content":"b"}]}`},
		call{"parseBlocks", `{"contents":["{\"depth\":\"2\",\"count\":1}\nx","plain"]}`},
	)
	inst := newInstance(t)
	env := api.DefaultEnv()
	recallWrites := 0
	for i, c := range calls {
		h, ok := api.Lookup(c.export)
		require.True(t, ok, c.export)
		want, wantErr := h(env, []byte(c.input))
		got, gotErr := inst.Call(context.Background(), c.export, []byte(c.input))
		if wantErr != nil {
			require.Error(t, gotErr, "%d %s %s", i, c.export, c.input)
			require.Contains(t, gotErr.Error(), wantErr.Error(), "%d %s", i, c.export)
			continue
		}
		require.NoError(t, gotErr, "%d %s %s", i, c.export, c.input)
		require.JSONEq(t, string(want), string(got), "%d %s %s", i, c.export, c.input)
		var p struct {
			RecallWrites []json.RawMessage `json:"recall_writes"`
		}
		if c.export == "planCommit" && json.Unmarshal(got, &p) == nil {
			recallWrites += len(p.RecallWrites)
		}
	}
	require.Greater(t, recallWrites, 0, "some plan writes recall rows: the comparison saw them")
}
