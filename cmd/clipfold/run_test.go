package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clipfold/clipfold"
	"github.com/clipfold/clipfold/hostfuncs/store/sqlite"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// toolLoopBody is a request body {"system", "messages", "tools"}: one
// user message, then calls tool calls each answered by a log excerpt, then
// the final answer. usage, when set, gives the assistant message that
// makes call i (from 0) LangChain's usage_metadata.input_tokens.
func toolLoopBody(calls int, usage map[int]int) []byte {
	msgs := []map[string]any{{"role": "user", "content": "The nightly export failed again. Go through the ingest logs " +
		"of every shard and tell me which shards time out against the upstream, and since when."}}
	for i := 0; i < calls; i++ {
		call := map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{
			"id": fmt.Sprintf("call_%02d", i), "type": "function",
			"function": map[string]any{"name": "read_logs", "arguments": fmt.Sprintf(`{"shard":%d,"since":"24h"}`, i)}}}}
		if n, ok := usage[i]; ok {
			call["usage_metadata"] = map[string]any{"input_tokens": n, "output_tokens": 12}
		}
		var log []string
		for k := 0; k < 6; k++ {
			log = append(log, fmt.Sprintf("2026-03-0%d 02:%02d:%02d shard-%02d ingest: upstream timeout after %ds (attempt %d/3), "+
				"batch %d of %d, request id %08x", 1+k%3, 7*k%60, 13*i%60, i, 30+k, k%3+1, k+1, 6, 0x5eed0000+i*97+k), "")
		}
		msgs = append(msgs, call, map[string]any{"role": "tool", "tool_call_id": fmt.Sprintf("call_%02d", i),
			"content": strings.Join(log, "\n")})
	}
	msgs = append(msgs, map[string]any{"role": "assistant", "content": "Every shard times out against the upstream since 02:00 on March 1st."})
	body, _ := json.Marshal(map[string]any{
		"system": "You are the on-call assistant of the data platform team. Read logs with the tools; answer briefly.",
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{
			"name": "read_logs", "description": "Reads the ingest logs of one shard over a period.",
			"parameters": map[string]any{"type": "object", "required": []string{"shard"}, "properties": map[string]any{
				"shard": map[string]any{"type": "integer", "description": "the shard number"},
				"since": map[string]any{"type": "string", "description": "how far back, e.g. 24h"}}}}}},
		"messages": msgs,
	})
	return body
}

// A tool loop between two user messages is compacted inside the loop:
// the replay checks before every model call (each assistant message), so
// with one user message and 40 tool calls no model call is sent more
// than the limit, and nothing is lost.
func TestRunToolLoop(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "loop.json")
	require.NoError(t, os.WriteFile(file, toolLoopBody(40, nil), 0o644))
	r := ok(t, dir, "run", file, "--model-max-tokens", "3000", "--json", "--quiet")
	rep := gjson.Parse(r.stdout)
	require.Equal(t, int64(1), rep.Get("turns").Int(), "one user message: one turn")
	require.Equal(t, int64(42), rep.Get("model_calls").Int(), "41 assistant messages, and the call after the last message")
	require.Equal(t, int64(2400), rep.Get("limit").Int())
	require.GreaterOrEqual(t, rep.Get("compactions").Int(), int64(3), "compacted inside the tool loop: %s", r.stdout)
	require.Zero(t, rep.Get("compactions_failed").Int(), r.stdout)
	require.Zero(t, rep.Get("calls_over_limit").Int(), r.stdout)
	require.LessOrEqual(t, rep.Get("max_context_tokens").Int(), rep.Get("limit").Int(), r.stdout)
	require.Greater(t, rep.Get("peak_tokens").Int(), rep.Get("limit").Int(), "it was due: %s", r.stdout)
	overhead := rep.Get("overhead_tokens").Int()
	require.Greater(t, overhead, int64(40), "the tool schemas count")

	// The archive: every message of the file is active or in recall, the
	// active history's tool results each follow their call, and the
	// plug-in counts it (with the tools) under the limit.
	st, err := sqlite.Open(filepath.Join(dir, "clipfold.db"))
	require.NoError(t, err)
	defer st.Close()
	ctx := context.Background()
	conv := rep.Get("conversation_id").String()
	active, err := st.ActiveMessages(ctx, conv)
	require.NoError(t, err)
	decoded, err := clipfold.DecodeHistory(conv, rawMessages(t, file))
	require.NoError(t, err)
	isActive := map[string]bool{}
	calls := map[string]bool{}
	var raws []json.RawMessage
	for _, m := range active {
		isActive[m.ID] = true
		raws = append(raws, m.Raw)
		for _, c := range gjson.GetBytes(m.Raw, "tool_calls.#.id").Array() {
			calls[c.String()] = true
		}
		if id := gjson.GetBytes(m.Raw, "tool_call_id"); id.Exists() {
			require.True(t, calls[id.String()], "a tool result without its call: %s", m.Raw)
		}
	}
	for _, m := range decoded {
		if !isActive[m.ID] {
			_, err := st.Recall(ctx, conv, m.ID)
			require.NoError(t, err, "message %s is neither active nor in recall", m.ID)
		}
	}
	c, err := clipfold.Open(ctx, clipfold.Options{Wasm: wasmBytes, Config: map[string]any{"model_max_tokens": 3000, "overhead_tokens": overhead}})
	require.NoError(t, err)
	defer c.Close()
	due, err := c.ShouldCompact(ctx, raws, nil)
	require.NoError(t, err)
	require.False(t, due.Due, "the final context fits: %+v", due)
	require.Equal(t, rep.Get("final_tokens").Int(), int64(due.Tokens))
}

func rawMessages(t *testing.T, file string) []json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var body struct {
		System   string            `json:"system"`
		Messages []json.RawMessage `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(b, &body))
	sys, _ := json.Marshal(map[string]string{"role": "system", "content": body.System})
	return append([]json.RawMessage{sys}, body.Messages...)
}

// The provider's usage an assistant message carries is its count of the
// messages before it: a count larger than the estimate makes compaction
// due earlier. A count that is not an integer ≥ 0 is an error naming the
// message and the field; tools that are not an array are refused.
func TestRunUsageFromFile(t *testing.T) {
	dir := t.TempDir()
	run := func(name string, body []byte) gjson.Result {
		file := filepath.Join(dir, name+".json")
		require.NoError(t, os.WriteFile(file, body, 0o644))
		r := ok(t, dir, "run", file, "--model-max-tokens", "3000", "--db", name+".db", "--json", "--quiet")
		return gjson.Parse(r.stdout)
	}
	plain := run("plain", toolLoopBody(5, nil))
	require.Zero(t, plain.Get("compactions").Int(), "five tool calls fit the window by the estimate: %s", plain.Raw)
	require.Less(t, plain.Get("peak_tokens").Int(), int64(2400))

	// The request that made the fifth call held 10 messages and the
	// provider counted 2,200 tokens, more than the estimate: the next call
	// is due, and compacted under the limit.
	counted := run("counted", toolLoopBody(5, map[int]int{4: 2200}))
	require.Equal(t, int64(1), counted.Get("compactions").Int(), "due by the provider's count: %s", counted.Raw)
	require.Greater(t, counted.Get("peak_tokens").Int(), int64(2400))
	require.Zero(t, counted.Get("calls_over_limit").Int(), counted.Raw)

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(strings.Replace(string(toolLoopBody(2, map[int]int{1: 7})),
		`"input_tokens":7`, `"input_tokens":-7`, 1)), 0o644))
	r := runCLI(t, dir, nil, "run", bad, "--quiet")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "bad.json: message 5: usage_metadata.input_tokens: must be an integer ≥ 0, got -7")

	tools := filepath.Join(dir, "tools.json")
	require.NoError(t, os.WriteFile(tools, []byte(`{"tools":{"name":"x"},"messages":[{"role":"user","content":"hi"}]}`), 0o644))
	r = runCLI(t, dir, nil, "run", tools, "--quiet")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "tools.json: tools: expected an array of tool schemas, found an object")
}
