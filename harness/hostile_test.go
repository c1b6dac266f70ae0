package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clipfold/clipfold/hostfuncs"
	"github.com/clipfold/clipfold/internal/wasmhost"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// TestHostileInput sends bad input of every kind through the real .wasm:
// each gets an error code of docs/spec.md#errors-and-limits naming the field,
// nothing traps or hangs, and the same instance keeps answering normal calls
// afterwards.
//
// The time bound is a hang detector, not a performance claim (those are
// benchmarks): it is generous on purpose.
func TestHostileInput(t *testing.T) {
	inst := newInstance(t)
	ctx := context.Background()
	normal := func() {
		out, err := inst.Call(ctx, "score", []byte(`{"messages":[{"role":"user","content":"hello"}]}`))
		require.NoError(t, err)
		require.JSONEq(t, `{"scores":[5.05]}`, string(out))
	}
	many := func(n int, msg string) []byte {
		var b strings.Builder
		b.WriteString(`{"messages":[`)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(msg)
		}
		b.WriteString(`]}`)
		return []byte(b.String())
	}
	cases := []struct {
		name, export string
		in           []byte
		code, field  string // code "" means the call must succeed
	}{
		{"empty input", "split", nil, "invalid_json", ""},
		{"whitespace", "split", []byte("  \n "), "invalid_json", ""},
		{"invalid JSON", "split", []byte(`{"messages":[{"role":"user",]}`), "invalid_json", ""},
		{"trailing garbage", "score", []byte(`{"messages":[]} x`), "invalid_json", ""},
		{"not an object", "chunk", []byte(`"hello"`), "invalid_input", ""},
		{"wrong type for messages", "score", []byte(`{"messages":"many"}`), "invalid_input", "messages"},
		{"unknown role", "split", []byte(`{"messages":[{"role":"user","content":"a"},{"role":"wizard","content":"b"}]}`), "invalid_input", "messages[1].role"},
		{"chunk_size 0", "chunk", []byte(`{"messages":[{"role":"user","content":"a"}],"config":{"chunk_size":0}}`), "invalid_input", "config.chunk_size"},
		{"chunk_size huge", "chunk", []byte(`{"messages":[{"role":"user","content":"a"}],"config":{"chunk_size":1e300}}`), "invalid_input", "config.chunk_size"},
		{"recency_decay just below 0", "score", []byte(`{"messages":[],"config":{"recency_decay":-0.0000001}}`), "invalid_input", "config.recency_decay"},
		{"recency_decay 1e999 (+Inf)", "score", []byte(`{"messages":[],"config":{"recency_decay":1e999}}`), "invalid_input", "config.recency_decay"},
		{"recency_decay -1e999 (-Inf)", "score", []byte(`{"messages":[],"config":{"recency_decay":-1e999}}`), "invalid_input", "config.recency_decay"},
		{"recency_decay NaN (not JSON)", "score", []byte(`{"messages":[],"config":{"recency_decay":NaN}}`), "invalid_json", ""},
		{"clip window at its maximum", "buildClipArchive", []byte(`{"batches":[` + strings.Repeat(`{"content":"s","depth":0,"start_time":"2026-02-28T10:00:00.000Z","end_time":"2026-02-28T11:00:00.000Z","message_count":1},`, 2) +
			`{"content":"s","depth":2147483647,"start_time":"2026-02-28T10:00:00.000Z","end_time":"2026-02-28T11:00:00.000Z","message_count":1}],"config":{"clip_first":2147483647,"clip_last":2147483647}}`), "", ""},
		{"invalid UTF-8", "score", append([]byte(`{"messages":[{"role":"user","content":"`), 0xff, 0xfe, '"', '}', ']', '}'), "invalid_json", ""},
		{"lone surrogate escape is fine", "estimateTokens", []byte(`{"text":"\ud800"}`), "", ""},
		{"deep nesting", "score", []byte(strings.Repeat("[", 1_000_000)), "invalid_input", ""},
		{"deep nesting inside a message", "split", []byte(`{"messages":[{"role":"user","content":"a","x":` + strings.Repeat(`{"a":`, 10_000) + `1` + strings.Repeat("}", 10_000) + `}]}`), "invalid_input", ""},
		{"huge string", "estimateTokens", []byte(`{"text":"` + strings.Repeat("x", 20<<20) + `"}`), "", ""},
		{"too large", "split", []byte(`{"messages":[],"pad":"` + strings.Repeat("x", 65<<20) + `"}`), "too_large", ""},
		{"250k messages (the most an array may have)", "shouldCompact", many(250_000, `{"role":"user","content":"hi"}`), "", ""},
		{"250k messages, the last bad", "split", []byte(strings.Replace(string(many(250_000, `{"role":"user","content":"hi"}`)), `{"role":"user","content":"hi"}]}`, `{"role":7,"content":"hi"}]}`, 1)), "invalid_input", "messages[249999].role"},
		{"300k messages: too many", "shouldCompact", many(300_000, `{"role":"user","content":"hi"}`), "too_large", "messages"},
		{"300k tool calls in one message: too many", "split", []byte(`{"messages":[{"role":"assistant","content":"","tool_calls":[` + strings.TrimSuffix(strings.Repeat(`{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}},`, 300_000), ",") + `]}]}`), "too_large", "messages[0].tool_calls"},
		{"compress now: last millisecond of year 9999", "compress", []byte(`{"conversation_id":"c","history":[],"now":253402300799999}`), "", ""},
		{"compress now: past year 9999", "compress", []byte(`{"conversation_id":"c","history":[],"now":253402300800000}`), "invalid_input", "now"},
		{"compress now: 1e999 (+Inf)", "compress", []byte(`{"conversation_id":"c","history":[],"now":1e999}`), "invalid_input", "now"},
		{"searchQuery without query", "searchQuery", []byte(`{}`), "invalid_input", "query"},
		{"searchQuery query not a string", "searchQuery", []byte(`{"query":["a"]}`), "invalid_input", "query"},
		{"searchQuery unknown language", "searchQuery", []byte(`{"query":"a","language":"klingon"}`), "invalid_input", "language"},
		{"searchQuery of 1 MB of syntax", "searchQuery", []byte(`{"query":"` + strings.Repeat(`(\"*:^-' NOT `, 80_000) + `"}`), "", ""},
		{"compress without conversation_id", "compress", []byte(`{"history":[]}`), "invalid_input", "conversation_id"},
		// Ids and times are optional since messages come in any shape
		// (derived ids; undated messages are dated at the compaction's now).
		{"compress message without id", "compress", []byte(`{"conversation_id":"c","history":[{"role":"user","content":"a","created_at":"2026-01-01T00:00:00Z"}]}`), "", ""},
		{"compress message without created_at", "compress", []byte(`{"conversation_id":"c","history":[{"id":"a","role":"user","content":"a"}]}`), "", ""},
		{"compress history_ids not matching", "compress", []byte(`{"conversation_id":"c","history":[{"id":"a","role":"user","content":"a"}],"history_ids":["b"]}`), "invalid_input", "history_ids[0]"},
		{"compress history_ids too short", "compress", []byte(`{"conversation_id":"c","history":[{"role":"user","content":"a"}],"history_ids":[]}`), "invalid_input", "history_ids"},
		{"compress unknown history_owner", "compress", []byte(`{"conversation_id":"c","history":[],"history_owner":"me"}`), "invalid_input", "history_owner"},
		{"compress a given id equal to another message's derived one", "compress", []byte(`{"conversation_id":"c","history":[{"role":"user","content":"a"},{"id":"d_70b405eb662aadc92ec1bd42","role":"user","content":"b"}]}`), "invalid_input", "history[1].id"},
		// Message shapes (docs/spec.md#message-shapes).
		{"shapes: Anthropic and Chat mixed", "split", []byte(`{"messages":[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"c","content":"x"}]}]}`), "invalid_input", "messages[1]"},
		{"shapes: Responses item among LangChain messages", "score", []byte(`{"messages":[{"type":"human","content":"a"},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"}]}`), "invalid_input", "messages[1]"},
		{"shapes: tool_result without its tool_use", "split", []byte(`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"gone","content":"x"}]},{"role":"assistant","content":"y"}],"config":{"keep_recent":0}}`), "", ""},
		{"shapes: unknown block types", "buildSummarizationRequest", []byte(`{"messages":[{"role":"user","content":[{"type":"hologram","data":{"x":[1,2,3]}},{"type":7},{"text":5},{}]}]}`), "", ""},
		{"shapes: a content part that is not an object", "score", []byte(`{"messages":[{"role":"user","content":[{"type":"text","text":"a"},[1]]}]}`), "invalid_input", "messages[0].content[1]"},
		{"shapes: deeply nested tool input", "estimateTokens", []byte(`{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":` + strings.Repeat(`{"a":`, 200) + `1` + strings.Repeat("}", 200) + `}]}]}`), "", ""},
		{"shapes: nesting past the limit inside a tool result", "split", []byte(`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":` + strings.Repeat(`[`, 5000) + strings.Repeat("]", 5000) + `}]}]}`), "invalid_input", ""},
		{"shapes: huge tool arguments", "shouldCompact", []byte(`{"messages":[{"type":"function_call","call_id":"c","name":"f","arguments":"` + strings.Repeat("x", 20<<20) + `"}]}`), "", ""},
		{"shapes: 100k tool results answering one call", "split", many(100_000, `{"role":"tool","content":[{"type":"tool-result","toolCallId":"c","output":{"type":"json","value":[1]}}]}`), "", ""},
		{"shapes: unknown shape", "chunk", []byte(`{"messages":[],"shape":"gemini"}`), "invalid_input", "shape"},
		{"compress duplicate ids", "compress", []byte(`{"conversation_id":"c","history":[{"id":"a","role":"user","content":"a","created_at":"2026-01-01T00:00:00Z"},{"id":"a","role":"user","content":"b","created_at":"2026-01-01T00:00:01Z"}]}`), "invalid_input", "history[1].id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := inst.Call(ctx, tc.export, tc.in)
			require.Less(t, time.Since(start), 20*time.Second, "hang detector")
			if tc.code == "" {
				require.NoError(t, err)
			} else {
				var ce *wasmhost.CallError
				require.True(t, errors.As(err, &ce), "want a reported error, got %v", err)
				require.Equal(t, tc.code, ce.Code, ce.Message)
				if tc.field != "" {
					require.True(t, strings.HasPrefix(ce.Message, tc.field+": "), "error %q should name %q", ce.Message, tc.field)
				}
				require.NotEmpty(t, ce.Message)
			}
			normal() // the instance still answers
		})
	}
}

// TestHostileNonFiniteNumbers: JSON has no NaN or Infinity literal, so
// those are syntax errors, located at the offending token; 1e999 and
// -1e999 are valid JSON that overflow to ±Inf, and every numeric field
// must refuse them with invalid_input naming the field.
func TestHostileNonFiniteNumbers(t *testing.T) {
	inst := newInstance(t)
	ctx := context.Background()
	const batch = `"content":"s","start_time":"2026-02-28T10:00:00.000Z","end_time":"2026-02-28T11:00:00.000Z"`
	cases := []struct {
		export, before, after, field string
	}{
		{"score", `{"messages":[],"config":{"recency_decay":`, `}}`, "config.recency_decay"},
		{"score", `{"messages":[],"config":{"role_weight_user":`, `}}`, "config.role_weight_user"},
		{"chunk", `{"messages":[],"config":{"chunk_size":`, `}}`, "config.chunk_size"},
		{"chunk", `{"messages":[],"config":{"max_chunk_tokens":`, `}}`, "config.max_chunk_tokens"},
		{"shouldCompact", `{"messages":[],"config":{"context_budget":`, `}}`, "config.context_budget"},
		{"buildSummarizationRequest", `{"messages":[],"max_tokens":`, `}`, "max_tokens"},
		{"buildClipArchive", `{"batches":[{` + batch + `,"message_count":1,"depth":`, `}]}`, "batches[0].depth"},
		{"buildClipArchive", `{"batches":[],"total_messages_compressed":`, `}`, "total_messages_compressed"},
		{"providerRequest", `{"provider":"openai","request":{"messages":[{"role":"user","content":"x"}],"temperature":`, `}}`, "request.temperature"},
		{"providerResponse", `{"provider":"openai","body":{},"status":`, `}`, "status"},
		{"compress", `{"conversation_id":"c","history":[],"now":`, `}`, "now"},
		{"compress", `{"conversation_id":"c","history":[],"config":{"compaction_timeout":`, `}}`, "config.compaction_timeout"},
	}
	for _, tc := range cases {
		for _, v := range []string{"NaN", "Infinity", "-Infinity", "1e999", "-1e999"} {
			t.Run(tc.field+"="+v, func(t *testing.T) {
				_, err := inst.Call(ctx, tc.export, []byte(tc.before+v+tc.after))
				var ce *wasmhost.CallError
				require.True(t, errors.As(err, &ce), "want a reported error, got %v", err)
				if strings.HasPrefix(v, "1e") || strings.HasPrefix(v, "-1e") {
					require.Equal(t, "invalid_input", ce.Code, ce.Message)
					require.True(t, strings.HasPrefix(ce.Message, tc.field+": "), "error %q should name %q", ce.Message, tc.field)
					return
				}
				// A syntax error: located where the literal starts (after
				// the sign for -Infinity: "-" alone may begin a number).
				at := len(tc.before)
				if v[0] == '-' {
					at++
				}
				require.Equal(t, "invalid_json", ce.Code, ce.Message)
				require.Contains(t, ce.Message, "(byte "+strconv.Itoa(at)+")")
			})
		}
	}
}

// TestHostileConfigExtremes: every integer key at the largest value
// validation accepts (2147483647), alone and together, with archived
// batches in the store so the clip window and re-summarization run. The
// shipped plug-in is TinyGo's, whose int has 32 bits: sums such as
// clip_first + clip_last + 2 must not wrap around. compress must answer
// with a result, never trap or fail with "internal".
func TestHostileConfigExtremes(t *testing.T) {
	const max = 2147483647
	type tc struct {
		cfg  map[string]any
		noop bool // nothing to compress: keep_recent or target_tokens covers the history
	}
	all := map[string]any{}
	var cases []tc
	for _, k := range []string{"chunk_size", "keep_recent", "max_summary_tokens", "clip_first", "clip_last",
		"compaction_timeout", "compaction_max_retries", "backoff_base_ms", "max_chunk_tokens",
		"max_consecutive_failures", "breaker_cooldown_ms", "model_max_tokens", "target_tokens", "max_message_chars"} {
		noop := k == "keep_recent" || k == "target_tokens"
		cases = append(cases, tc{map[string]any{k: max}, noop})
		if !noop {
			all[k] = max
		}
	}
	cases = append(cases, tc{cfg: all},
		tc{cfg: map[string]any{"clip_first": max, "clip_last": max}},
		tc{cfg: map[string]any{"clip_first": max, "clip_last": 1}},
		tc{cfg: map[string]any{"clip_first": 0, "clip_last": max - 1}},
		tc{cfg: map[string]any{"clip_first": 0, "clip_last": 0}})
	for _, c := range cases {
		name, _ := json.Marshal(c.cfg)
		t.Run(string(name), func(t *testing.T) {
			hist := conversation("c1", 60)
			store := newMemStore(hist)
			for i := 0; i < 8; i++ {
				end := fmt.Sprintf("2026-01-01T00:00:0%d.000Z", i)
				store.addBlock("compaction-batch-c1-"+end, `{"conversation_id":"c1","depth":0,"start":"2026-01-01T00:00:00.000Z","end":"`+end+
					`","count":1,"source_message_ids":["old`+strconv.Itoa(i)+`"]}`+"\nolder summary")
			}
			comp := newWasmCompressor(t, &hostfuncs.Host{LLM: &scriptLLM{}, Store: store})
			out, err := comp.inst.Call(context.Background(), "compress", compressInput(t, "c1", hist, map[string]any{"config": c.cfg}))
			require.NoError(t, err)
			res := gjson.ParseBytes(out)
			require.False(t, res.Get("failed").Bool(), res.Get("failure_message").String())
			if c.noop {
				require.Equal(t, int64(0), res.Get("messages_compressed").Int())
				require.Equal(t, 0, store.commits)
				return
			}
			require.Positive(t, res.Get("messages_compressed").Int())
			require.True(t, strings.HasPrefix(res.Get("history.0.content").String(), "[Context Summary — "), res.Get("history.0.content").String())
			require.Equal(t, 1, store.commits)
		})
	}
}
