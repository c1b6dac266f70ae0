package harness_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clipfold/clipfold/api"
	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs"
	"github.com/clipfold/clipfold/internal/wasmhost"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// scriptLLM is a deterministic stand-in for a model: it summarizes by
// counting and quoting. It is honest about being a test double: its text
// says so.
type scriptLLM struct {
	mu    sync.Mutex
	calls []core.ModelRequest
}

func (l *scriptLLM) Complete(_ context.Context, req *core.ModelRequest) (core.ModelResponse, error) {
	l.mu.Lock()
	l.calls = append(l.calls, *req)
	n := len(l.calls)
	l.mu.Unlock()
	return core.ModelResponse{Content: []core.ContentBlock{{Type: "text",
		Text: fmt.Sprintf("[test summary %d of %d messages]", n, len(req.Messages)-1)}}, StopReason: "end_turn"}, nil
}

// conversation builds n messages with tool calls every 7th turn.
func conversation(conv string, n int) []json.RawMessage {
	base := time.Date(2026, 2, 28, 10, 0, 0, 0, time.UTC)
	var out []json.RawMessage
	add := func(m map[string]any) {
		b, _ := json.Marshal(m)
		out = append(out, b)
	}
	for i := 0; len(out) < n; i++ {
		t := core.FormatTime(base.Add(time.Duration(len(out)) * time.Minute))
		id := fmt.Sprintf("%s-m%d", conv, len(out))
		switch {
		case i%7 == 3 && len(out)+2 <= n:
			call := fmt.Sprintf("call_%d", i)
			add(map[string]any{"id": id, "conversation_id": conv, "role": "assistant", "content": "", "created_at": t,
				"tool_calls": []any{map[string]any{"id": call, "type": "function",
					"function": map[string]any{"name": "run_tests", "arguments": `{"pkg":"./..."}`}}}})
			add(map[string]any{"id": id + "r", "conversation_id": conv, "role": "tool", "tool_call_id": call,
				"content": fmt.Sprintf("FAIL: TestCase%d: error code E%d", i, 100+i), "created_at": t})
		case i%2 == 0:
			add(map[string]any{"id": id, "conversation_id": conv, "role": "user", "created_at": t,
				"content": fmt.Sprintf("Turn %d: please look at module %d and tell me what you think about it in some detail.", i, i)})
		default:
			add(map[string]any{"id": id, "conversation_id": conv, "role": "assistant", "created_at": t,
				"content": fmt.Sprintf("Turn %d: module %d looks fine, but the retry logic could be simpler; we agreed to keep it.", i, i)})
		}
	}
	return out
}

func compressInput(t testing.TB, conv string, history []json.RawMessage, extra map[string]any) []byte {
	in := map[string]any{"conversation_id": conv, "history": history,
		"config": map[string]any{"chunk_size": 10, "keep_recent": 6, "backoff_base_ms": 1, "max_summary_tokens": 200}}
	for k, v := range extra {
		if k == "config" {
			for ck, cv := range v.(map[string]any) {
				in["config"].(map[string]any)[ck] = cv
			}
			continue
		}
		in[k] = v
	}
	b, err := json.Marshal(in)
	require.NoError(t, err)
	return b
}

// compressor runs compress either through the .wasm or natively, with the
// same host.
type compressor interface {
	compress(t testing.TB, in []byte) gjson.Result
}

type wasmCompressor struct{ inst *wasmhost.Instance }

func (w wasmCompressor) compress(t testing.TB, in []byte) gjson.Result {
	out, err := w.inst.Call(context.Background(), "compress", in)
	require.NoError(t, err)
	return gjson.ParseBytes(out)
}

func newWasmCompressor(t testing.TB, h api.HostCaller) wasmCompressor {
	ctx := context.Background()
	rt, err := wasmhost.NewRuntime(ctx, wasmhost.Options{Host: h})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close(ctx) })
	inst, err := rt.NewInstance(ctx)
	require.NoError(t, err)
	return wasmCompressor{inst}
}

// TestCompressEndToEndWasm drives one compaction through the .wasm and
// checks the seed criteria it covers:
// context-compaction.AC1.1 (compressed into batches), AC1.2 (chunks),
// AC1.3 (fold-in), AC1.4 (depth, time range, count), AC1.5 (old messages
// removed from the active history — moved to recall), AC1.6 (recent kept
// verbatim), AC1.8 (first compaction: depth 0, no previous-summary
// message), AC3.3 (clip-archive is a system message, first), AC4.1/AC4.2
// (archived with compaction-batch-{conv}-{end} labels); and
// compaction-v2.AC4.1/AC4.2/AC4.3 (the configured prompt is the system
// prompt as is, and nothing else — no persona — enters the request).
func TestCompressEndToEndWasm(t *testing.T) {
	hist := conversation("c1", 60)
	store := newMemStore(hist)
	llm := &scriptLLM{}
	c := newWasmCompressor(t, &hostfuncs.Host{LLM: llm, Store: store})
	const prompt = "You are Lasa. Summarize as Lasa would, in first person."
	res := c.compress(t, compressInput(t, "c1", hist, map[string]any{"config": map[string]any{"prompt": prompt}}))
	require.False(t, res.Get("failed").Bool(), res.Raw)
	// context-compaction.AC1.2: 54 compressible messages in chunks of 10 (tool units whole)
	require.GreaterOrEqual(t, res.Get("batches_created").Int(), int64(6))
	require.Equal(t, int64(54), res.Get("messages_compressed").Int())
	out := res.Get("history").Array()
	// AC3.3: the clip-archive first: a system message, or a user turn when
	// the kept messages start without one (docs/spec.md#message-shapes).
	kept := hist[len(hist)-6:]
	b, _ := json.Marshal(kept)
	keptMsgs, _, err := api.DecodeHistory("c1", b)
	require.NoError(t, err)
	role := "system"
	if core.ArchiveAsUser(keptMsgs, nil) {
		role = "user"
	}
	require.Equal(t, role, out[0].Get("role").String())
	require.True(t, strings.HasPrefix(out[0].Get("content").String(), "[Context Summary — "))
	// AC1.6: the last keep_recent messages verbatim, byte for byte.
	for i, m := range out[1:] {
		require.Equal(t, string(hist[len(hist)-6+i]), m.Raw)
	}
	// The store holds what the result says.
	require.JSONEq(t, string(store.activeHistory()), "["+joinRaw(out)+"]")
	require.Equal(t, 1, store.commits)
	// AC4.1/4.2: batches archived with labels compaction-batch-{conv}-{end}.
	blocks, _ := store.ListBlocks(context.Background(), "archival", "compaction-batch-c1-")
	require.Len(t, blocks, int(res.Get("batches.#").Int()))
	for _, b := range res.Get("batches").Array() {
		require.Equal(t, "compaction-batch-c1-"+b.Get("end_time").String(), findLabel(blocks, b.Get("end_time").String()))
	}
	// AC1.3: fold-in: each call after the first carries the previous summary.
	require.Len(t, llm.calls, int(res.Get("llm_calls").Int()))
	for i := 1; i < int(res.Get("batches_created").Int()); i++ {
		require.Equal(t, core.RoleSystem, llm.calls[i].Messages[0].Role)
		require.Contains(t, llm.calls[i].Messages[0].Content, fmt.Sprintf("[test summary %d of", i))
	}
	// context-compaction.AC1.8: the first call has no previous summary.
	require.NotEqual(t, core.RoleSystem, llm.calls[0].Messages[0].Role)
	// context-compaction.AC1.4: depth 0, time range = min/max created_at, count.
	for _, b := range res.Get("batches").Array() {
		require.Equal(t, int64(0), b.Get("depth").Int())
		ids := b.Get("source_message_ids").Array()
		require.Equal(t, int64(len(ids)), b.Get("message_count").Int())
		lo, hi := "", ""
		for _, id := range ids {
			for _, m := range hist {
				if gjson.GetBytes(m, "id").String() == id.String() {
					ts := gjson.GetBytes(m, "created_at").String()
					if lo == "" || ts < lo {
						lo = ts
					}
					if ts > hi {
						hi = ts
					}
				}
			}
		}
		require.Equal(t, lo, b.Get("start_time").String())
		require.Equal(t, hi, b.Get("end_time").String())
	}
	// compaction-v2.AC4.1–AC4.3: the prompt as is; requests hold only the
	// previous summary, the chunk's messages and the directive.
	for i, req := range llm.calls {
		require.Equal(t, prompt, req.System)
		last := req.Messages[len(req.Messages)-1]
		require.Equal(t, core.DefaultDirective, last.Content)
		for j, m := range req.Messages[:len(req.Messages)-1] {
			if m.Role == core.RoleSystem {
				require.Equal(t, 0, j, "call %d: only the previous summary may be a system message", i)
				require.True(t, strings.HasPrefix(m.Content, core.PreviousSummaryPrefix))
			}
		}
	}
	// Every removed id is covered by a batch written in the commit.
	covered := map[string]bool{}
	for _, b := range res.Get("batches").Array() {
		for _, id := range b.Get("source_message_ids").Array() {
			covered[id.String()] = true
		}
	}
	for _, id := range store.recallIDs() {
		require.True(t, covered[id], "removed message %s is in no batch", id)
	}
	require.Len(t, store.recallIDs(), 54)
}

func joinRaw(rs []gjson.Result) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.Raw
	}
	return strings.Join(parts, ",")
}

func findLabel(blocks []core.Block, end string) string {
	for _, b := range blocks {
		if strings.HasSuffix(b.Label, end) {
			return b.Label
		}
	}
	return ""
}

func (s *memStore) recallIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id := range s.recall {
		ids = append(ids, id)
	}
	return ids
}
