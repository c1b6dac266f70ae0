package harness_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/clipfold/clipfold/api"
	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/harness"
	"github.com/clipfold/clipfold/hostfuncs"
	"github.com/clipfold/clipfold/hostfuncs/store/sqlite"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// The JSON Schemas in testdata/schema document the wire types for hosts
// in other languages. These tests keep them honest: they are checked
// against the Go config keys and against real traffic, so they cannot
// drift from what the plug-in reads and writes.

const schemaBase = "https://clipfold.dev/schema/"

func compileSchemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	dir := filepath.Join("..", "testdata", "schema")
	files, err := filepath.Glob(filepath.Join(dir, "*.schema.json"))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		require.NoError(t, err)
		require.NoError(t, c.AddResource(schemaBase+filepath.Base(f), doc))
	}
	out := map[string]*jsonschema.Schema{}
	for _, ref := range []string{"message.schema.json", "batch.schema.json", "config.schema.json",
		"model-request.schema.json", "model-response.schema.json", "compaction-result.schema.json",
		"memory-list.schema.json#/$defs/input", "memory-list.schema.json#/$defs/output",
		"compaction-commit.schema.json#/$defs/input", "compaction-commit.schema.json#/$defs/output"} {
		s, err := c.Compile(schemaBase + ref)
		require.NoError(t, err, ref)
		out[ref] = s
	}
	return out
}

func validate(t *testing.T, s *jsonschema.Schema, what string, data []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	require.NoError(t, err, what)
	require.NoError(t, s.Validate(v), "%s: %s", what, clipText(data))
}

func clipText(b []byte) string {
	if len(b) > 400 {
		return string(b[:400]) + "…"
	}
	return string(b)
}

func TestSchemaConfigKeysMatchGo(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "schema", "config.schema.json"))
	require.NoError(t, err)
	var keys []string
	gjson.GetBytes(data, "properties").ForEach(func(k, _ gjson.Result) bool {
		keys = append(keys, k.String())
		return true
	})
	want := append([]string(nil), core.Keys...)
	sort.Strings(keys)
	sort.Strings(want)
	require.Equal(t, want, keys, "config.schema.json and core.Keys differ")
}

func TestSchemaMessagesInVectorsAndConversations(t *testing.T) {
	s := compileSchemas(t)["message.schema.json"]
	vs, err := harness.LoadVectors(vectorDir)
	require.NoError(t, err)
	n := 0
	for _, v := range vs {
		if v.Error != nil {
			continue
		}
		for _, key := range []string{"messages", "history"} {
			gjson.GetBytes(v.InputBytes(), key).ForEach(func(_, m gjson.Result) bool {
				validate(t, s, v.Export+"/"+v.Name, []byte(m.Raw))
				n++
				return true
			})
		}
	}
	for _, f := range []string{"debugging-session.json", "planning-discussion.json", "support-chat.json"} {
		for _, m := range loadConversation(t, f) {
			validate(t, s, f, m)
			n++
		}
	}
	require.Greater(t, n, 1000)
}

// recordingHost keeps every host-function exchange for validation.
type recordingHost struct {
	inner api.HostCaller
	mu    sync.Mutex
	calls [][3][]byte // name, input, output
}

func (r *recordingHost) CallHost(name string, in []byte) ([]byte, error) {
	out, err := r.inner.CallHost(name, in)
	r.mu.Lock()
	r.calls = append(r.calls, [3][]byte{[]byte(name), append([]byte(nil), in...), append([]byte(nil), out...)})
	r.mu.Unlock()
	return out, err
}

func TestSchemaRealTraffic(t *testing.T) {
	sc := compileSchemas(t)
	hist := conversation("cs", 80)
	rec := &recordingHost{inner: &hostfuncs.Host{LLM: &scriptLLM{}, Store: newMemStore(hist)}}
	c := newWasmCompressor(t, rec)
	// A dry run (its result carries the commit) and a real one.
	for _, extra := range []map[string]any{{"dry_run": true}, nil} {
		res := c.compress(t, compressInput(t, "cs", hist, extra))
		require.False(t, res.Get("failed").Bool())
		validate(t, sc["compaction-result.schema.json"], "compress result", []byte(res.Raw))
	}
	// A failure result too.
	fail := nativeCompressor{api.DefaultEnv(), &faultHostFixed{kind: "fatal"}}.compress(t, compressInput(t, "cs", hist, nil))
	require.True(t, fail.Get("failed").Bool())
	validate(t, sc["compaction-result.schema.json"], "failed compress result", []byte(fail.Raw))
	seen := map[string]int{}
	for _, c := range rec.calls {
		name := string(c[0])
		seen[name]++
		switch name {
		case "llm_complete":
			validate(t, sc["model-request.schema.json"], "llm_complete input", c[1])
			validate(t, sc["model-response.schema.json"], "llm_complete output", c[2])
		case "memory_list":
			validate(t, sc["memory-list.schema.json#/$defs/input"], "memory_list input", c[1])
			validate(t, sc["memory-list.schema.json#/$defs/output"], "memory_list output", c[2])
		case "compaction_commit":
			validate(t, sc["compaction-commit.schema.json#/$defs/input"], "compaction_commit input", c[1])
			validate(t, sc["compaction-commit.schema.json#/$defs/output"], "compaction_commit output", c[2])
		}
	}
	require.Equal(t, 1, seen["compaction_commit"])
	require.Greater(t, seen["llm_complete"], 2)
	// Error objects too.
	validate(t, sc["model-response.schema.json"], "llm error", faultOutput("retryable"))
	validate(t, sc["compaction-commit.schema.json#/$defs/output"], "conflict", faultOutput("conflict"))
	// A caller-owned compaction of an Anthropic history: its commit
	// (recall_writes, insert_raw) and result (the clip-archive as a user
	// turn).
	anth := turns("anthropic", 0, 10)
	rec.calls = nil
	res := c.compress(t, shapeInput(t, "cs-anthropic", anth, map[string]any{"history_owner": "caller"}))
	require.False(t, res.Get("failed").Bool(), res.Get("failure_message").String())
	validate(t, sc["compaction-result.schema.json"], "caller-owned compress result", []byte(res.Raw))
	commits := 0
	for _, c := range rec.calls {
		if string(c[0]) == "compaction_commit" {
			commits++
			require.Equal(t, "caller", gjson.GetBytes(c[1], "history_owner").String())
			require.NotEmpty(t, gjson.GetBytes(c[1], "recall_writes").Array())
			validate(t, sc["compaction-commit.schema.json#/$defs/input"], "caller-owned compaction_commit input", c[1])
		}
	}
	require.Equal(t, 1, commits)
	// Commits that replace kept messages (docs/spec.md#keeping-the-window),
	// on a real store: clearing alone, store-owned
	// (replace_messages, insert_message null) and caller-owned (the
	// originals as recall_writes, a replacement record), and the
	// guarantee's clearing beside a summary; dry runs carry them too.
	st, err := sqlite.Open(sqlite.MemoryPath)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	rec = &recordingHost{inner: &hostfuncs.Host{LLM: &scriptLLM{}, Store: st}}
	c = newWasmCompressor(t, rec)
	loop := toolLoop("chat", 8)
	clearing := map[string]any{"clear_tool_results": 1, "model_max_tokens": 12000}
	for i, extra := range []map[string]any{
		{"config": clearing, "dry_run": true},
		{"config": clearing},
		{"config": clearing, "history_owner": "caller"},
		{"config": map[string]any{"keep_recent": 12, "target_tokens": 2500, "summarizer": "llm"}},
	} {
		conv := fmt.Sprintf("replace-%d", i)
		if extra["history_owner"] == nil {
			active, ids := syncNew(t, st, conv, loop)
			extra["history_ids"] = ids
			res := c.compress(t, shapeInput(t, conv, active, extra))
			require.False(t, res.Get("failed").Bool(), res.Get("failure_message").String())
			require.Positive(t, res.Get("tool_results_cleared").Int())
			validate(t, sc["compaction-result.schema.json"], "compress result with replacements", []byte(res.Raw))
			continue
		}
		res := c.compress(t, shapeInput(t, conv, loop, extra))
		require.False(t, res.Get("failed").Bool(), res.Get("failure_message").String())
		validate(t, sc["compaction-result.schema.json"], "caller-owned compress result with replacements", []byte(res.Raw))
	}
	kinds := map[string]int{}
	for _, c := range rec.calls {
		if string(c[0]) != "compaction_commit" {
			continue
		}
		validate(t, sc["compaction-commit.schema.json#/$defs/input"], "compaction_commit input with replacements", c[1])
		validate(t, sc["compaction-commit.schema.json#/$defs/output"], "compaction_commit output", c[2])
		switch in := gjson.ParseBytes(c[1]); {
		case in.Get("history_owner").String() == "caller":
			require.NotEmpty(t, in.Get("recall_writes").Array())
			kinds["caller"]++
		case in.Get("insert_message").Type == gjson.Null:
			require.NotEmpty(t, in.Get("replace_messages").Array())
			kinds["clearing alone"]++
		default:
			require.NotEmpty(t, in.Get("replace_messages").Array())
			kinds["beside a summary"]++
		}
	}
	require.Equal(t, map[string]int{"caller": 1, "clearing alone": 1, "beside a summary": 1}, kinds)
	// The request builders' output is a ModelRequest.
	out, err := newInstance(t).Call(context.Background(), "buildSummarizationRequest", compressInputMessages(hist))
	require.NoError(t, err)
	validate(t, sc["model-request.schema.json"], "buildSummarizationRequest", out)
}

// faultHostFixed answers every llm_complete with one fault.
type faultHostFixed struct{ kind string }

func (f *faultHostFixed) CallHost(name string, in []byte) ([]byte, error) {
	return faultOutput(f.kind), nil
}

func compressInputMessages(hist []json.RawMessage) []byte {
	parts := make([][]byte, len(hist))
	for i := range hist {
		parts[i] = hist[i]
	}
	var b bytes.Buffer
	b.WriteString(`{"messages":[`)
	b.Write(bytes.Join(parts, []byte(",")))
	b.WriteString(`]}`)
	return b.Bytes()
}
