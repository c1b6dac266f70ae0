package harness_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/clipfold/clipfold/harness"
	"github.com/stretchr/testify/require"
)

// TestHostileInput sends bad input of every kind through the real .wasm:
// each gets SPEC's error code naming the field, nothing traps or hangs,
// and the same instance keeps answering normal calls afterwards.
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
		{"NaN-ish number", "score", []byte(`{"messages":[],"config":{"recency_decay":-0.0000001}}`), "invalid_input", "config.recency_decay"},
		{"invalid UTF-8", "score", append([]byte(`{"messages":[{"role":"user","content":"`), 0xff, 0xfe, '"', '}', ']', '}'), "invalid_json", ""},
		{"lone surrogate escape is fine", "estimateTokens", []byte(`{"text":"\ud800"}`), "", ""},
		{"deep nesting", "score", []byte(strings.Repeat("[", 1_000_000)), "invalid_input", ""},
		{"deep nesting inside a message", "split", []byte(`{"messages":[{"role":"user","content":"a","x":` + strings.Repeat(`{"a":`, 10_000) + `1` + strings.Repeat("}", 10_000) + `}]}`), "invalid_input", ""},
		{"huge string", "estimateTokens", []byte(`{"text":"` + strings.Repeat("x", 20<<20) + `"}`), "", ""},
		{"too large", "split", []byte(`{"messages":[],"pad":"` + strings.Repeat("x", 65<<20) + `"}`), "too_large", ""},
		{"300k messages", "shouldCompact", many(300_000, `{"role":"user","content":"hi"}`), "", ""},
		{"300k messages, one bad", "split", append(many(299_999, `{"role":"user","content":"hi"}`)[:0:0], []byte(strings.Replace(string(many(300_000, `{"role":"user","content":"hi"}`)), `{"role":"user","content":"hi"}]}`, `{"role":7,"content":"hi"}]}`, 1))...), "invalid_input", "messages[299999].role"},
		{"searchQuery without query", "searchQuery", []byte(`{}`), "invalid_input", "query"},
		{"searchQuery query not a string", "searchQuery", []byte(`{"query":["a"]}`), "invalid_input", "query"},
		{"searchQuery unknown language", "searchQuery", []byte(`{"query":"a","language":"klingon"}`), "invalid_input", "language"},
		{"searchQuery of 1 MB of syntax", "searchQuery", []byte(`{"query":"` + strings.Repeat(`(\"*:^-' NOT `, 80_000) + `"}`), "", ""},
		{"compress without conversation_id", "compress", []byte(`{"history":[]}`), "invalid_input", "conversation_id"},
		{"compress message without id", "compress", []byte(`{"conversation_id":"c","history":[{"role":"user","content":"a","created_at":"2026-01-01T00:00:00Z"}]}`), "invalid_input", "history[0].id"},
		{"compress message without created_at", "compress", []byte(`{"conversation_id":"c","history":[{"id":"a","role":"user","content":"a"}]}`), "invalid_input", "history[0].created_at"},
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
				var ce *harness.CallError
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
