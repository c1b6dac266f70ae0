package api

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/clipfold/clipfold/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// Tests of docs/spec.md#counting-tokens-and-the-window at the JSON layer:
// usage, overhead_tokens, image_tokens, token_estimator and what
// estimateTokens counts.

func callJSON(t *testing.T, export string, in any) (gjson.Result, error) {
	t.Helper()
	b, err := json.Marshal(in)
	require.NoError(t, err)
	out, err := exports[export](DefaultEnv(), b)
	return gjson.ParseBytes(out), err
}

func tokensOf(t *testing.T, export string, in any) int {
	t.Helper()
	r, err := callJSON(t, export, in)
	require.NoError(t, err)
	return int(r.Get("tokens").Int())
}

func chat(texts ...string) []map[string]any {
	out := make([]map[string]any, len(texts))
	for i, s := range texts {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		out[i] = map[string]any{"role": role, "content": s}
	}
	return out
}

func TestUsageIsTheProvidersCountPlusTheRest(t *testing.T) {
	msgs := chat("first question about the deploy", "an answer", "a follow-up with more detail", "ok")
	rest := tokensOf(t, "estimateTokens", map[string]any{"messages": msgs[2:]})
	cfg := map[string]any{"overhead_tokens": 5000} // not added on top of usage
	got := tokensOf(t, "shouldCompact", map[string]any{"messages": msgs, "config": cfg,
		"usage": map[string]any{"input_tokens": 1234, "messages": 2}})
	assert.Equal(t, 1234+rest, got)
	// K = len: the provider saw everything.
	got = tokensOf(t, "shouldCompact", map[string]any{"messages": msgs, "usage": map[string]any{"input_tokens": 77, "messages": 4}})
	assert.Equal(t, 77, got)
	// Without usage: the estimate plus overhead_tokens.
	all := tokensOf(t, "estimateTokens", map[string]any{"messages": msgs})
	got = tokensOf(t, "shouldCompact", map[string]any{"messages": msgs, "config": cfg})
	assert.Equal(t, all+5000, got)
	// The provider's count decides whether compaction is due.
	due, err := callJSON(t, "shouldCompact", map[string]any{"messages": msgs, "config": map[string]any{"model_max_tokens": 1000},
		"usage": map[string]any{"input_tokens": 900, "messages": 4}})
	require.NoError(t, err)
	assert.True(t, due.Get("due").Bool(), "900 > 0.8 × 1000")
}

func TestBadUsageNamesIt(t *testing.T) {
	msgs := chat("a", "b")
	for _, tc := range []struct {
		usage any
		field string
	}{
		{map[string]any{"input_tokens": 10, "messages": 3}, "usage.messages"},
		{map[string]any{"input_tokens": -1, "messages": 1}, "usage.input_tokens"},
		{map[string]any{"input_tokens": 1.5, "messages": 1}, "usage.input_tokens"},
		{map[string]any{"input_tokens": "10", "messages": 1}, "usage.input_tokens"},
		{map[string]any{"input_tokens": 10, "messages": -2}, "usage.messages"},
		{map[string]any{"input_tokens": 10, "messages": "all"}, "usage.messages"},
		{map[string]any{"input_tokens": 10, "messages": nil}, "usage.messages"},
		{map[string]any{"input_tokens": 10}, "usage.messages"},
		{map[string]any{"messages": 1}, "usage.input_tokens"},
		{[]int{10, 1}, "usage"},
		{"10", "usage"},
	} {
		for _, export := range []string{"shouldCompact", "split", "compress"} {
			in := map[string]any{"messages": msgs, "usage": tc.usage}
			if export == "compress" {
				in = map[string]any{"conversation_id": "c", "history": msgs, "usage": tc.usage}
			}
			b, _ := json.Marshal(in)
			var err error
			if export == "compress" {
				_, err = DefaultEnv().Compress(b, fuzzHost{}, SystemClock{})
			} else {
				_, err = exports[export](DefaultEnv(), b)
			}
			var e *core.Error
			require.True(t, errors.As(err, &e), "%s %v: %v", export, tc.usage, err)
			assert.Equal(t, core.CodeInvalidInput, e.Code, "%s %v", export, tc.usage)
			assert.Equal(t, tc.field, e.Field, "%s %v: %v", export, tc.usage, err)
		}
	}
	// null is no usage.
	_, err := callJSON(t, "split", map[string]any{"messages": msgs, "usage": nil})
	assert.NoError(t, err)
}

func TestCompressUsage(t *testing.T) {
	hist := make([]map[string]any, 12)
	for i := range hist {
		hist[i] = map[string]any{"id": "m" + strconv.Itoa(i), "role": []string{"user", "assistant"}[i%2],
			"content": strings.Repeat("the deploy failed because the config had a typo ", 3), "created_at": "2026-02-28T10:00:00Z"}
	}
	run := func(extra map[string]any) gjson.Result {
		in := map[string]any{"conversation_id": "c", "history": hist, "dry_run": true,
			"config": map[string]any{"keep_recent": 4, "summarizer": "extractive"}}
		for k, v := range extra {
			in[k] = v
		}
		b, _ := json.Marshal(in)
		out, err := DefaultEnv().Compress(b, fuzzHost{}, SystemClock{})
		require.NoError(t, err)
		return gjson.ParseBytes(out)
	}
	plain := run(nil)
	require.False(t, plain.Get("failed").Bool(), plain.Get("failure_message").String())
	rest := tokensOf(t, "estimateTokens", map[string]any{"messages": hist[10:]})
	withUsage := run(map[string]any{"usage": map[string]any{"input_tokens": 50000, "messages": 10}})
	assert.Equal(t, int64(50000+rest), withUsage.Get("tokens_estimate_before").Int())
	// The provider counted far more than the estimate of what it saw: the
	// difference (system prompt, tools) stays in the count after.
	over := 50000 - tokensOf(t, "estimateTokens", map[string]any{"messages": hist[:10]})
	assert.Equal(t, plain.Get("tokens_estimate_after").Int()+int64(over), withUsage.Get("tokens_estimate_after").Int())
	// only_if_due follows the provider's count.
	due := run(map[string]any{"only_if_due": true, "usage": map[string]any{"input_tokens": 10, "messages": 12}})
	assert.Zero(t, due.Get("messages_compressed").Int(), "10 tokens are not due")
	due = run(map[string]any{"only_if_due": true, "config": map[string]any{"keep_recent": 4, "summarizer": "extractive", "model_max_tokens": 1000},
		"usage": map[string]any{"input_tokens": 990, "messages": 12}})
	assert.Positive(t, due.Get("messages_compressed").Int(), "990 of 1000 are due")
}

func TestMediaCountImageTokens(t *testing.T) {
	text := map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "what is in this picture?"}}}
	img := map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "what is in this picture?"},
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,AAAA"}}}}
	base := tokensOf(t, "estimateTokens", map[string]any{"messages": []any{text}})
	// The placeholder "[image]" is in the text, and the image costs image_tokens.
	withImg := tokensOf(t, "estimateTokens", map[string]any{"messages": []any{img}})
	assert.Equal(t, base+core.ConservativeTokens("\n[image]")+1600, withImg)
	set := tokensOf(t, "estimateTokens", map[string]any{"messages": []any{img}, "config": map[string]any{"image_tokens": 1000}})
	assert.Equal(t, withImg-600, set)

	// Anthropic: an image and a document, and an image inside a tool result.
	anth := []any{
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": "AAAA"}},
			map[string]any{"type": "document", "source": map[string]any{"type": "base64", "media_type": "application/pdf", "data": "AAAA"}}}},
		map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "t1", "name": "screenshot", "input": map[string]any{}}}},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t1",
			"content": []any{map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": "AAAA"}}}}}},
	}
	zero := tokensOf(t, "estimateTokens", map[string]any{"messages": anth, "config": map[string]any{"image_tokens": 0}})
	full := tokensOf(t, "estimateTokens", map[string]any{"messages": anth})
	assert.Equal(t, 3*1600, full-zero, "two parts of the user turn and the screenshot in the tool result")

	// The count decides shouldCompact: an image is not 8 tokens.
	due, err := callJSON(t, "shouldCompact", map[string]any{"messages": []any{img}, "config": map[string]any{"model_max_tokens": 2000}})
	require.NoError(t, err)
	assert.True(t, due.Get("due").Bool(), "one image is over 0.8 × 2000")
}

func TestEstimateTokensCountsToolsAndFraming(t *testing.T) {
	call := map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{"id": "c1", "type": "function",
		"function": map[string]any{"name": "read_file", "arguments": `{"path":"/etc/hosts"}`}}}}
	result := map[string]any{"role": "tool", "tool_call_id": "c1", "content": "127.0.0.1 localhost"}
	got := tokensOf(t, "estimateTokens", map[string]any{"messages": []any{call, result}})
	want := core.ConservativeTokens("read_file") + core.ConservativeTokens(`{"path":"/etc/hosts"}`) + // the call
		core.ConservativeTokens("127.0.0.1 localhost") + // the output
		2*4 + 8 + 4 // framing: two messages, one call, one result
	assert.Equal(t, want, got)
	// A text alone has no framing.
	assert.Equal(t, core.ConservativeTokens("127.0.0.1 localhost"), tokensOf(t, "estimateTokens", map[string]any{"text": "127.0.0.1 localhost"}))
	// chars4: the seeds' ⌈code points / 4⌉, one ceiling over everything.
	assert.Equal(t, (len("read_file")+len(`{"path":"/etc/hosts"}`)+len("127.0.0.1 localhost")+3)/4,
		tokensOf(t, "estimateTokens", map[string]any{"messages": []any{call, result}, "config": map[string]any{"token_estimator": "chars4"}}))
}

func TestTokenConfigKeys(t *testing.T) {
	for _, tc := range []struct {
		cfg   map[string]any
		field string
	}{
		{map[string]any{"token_estimator": "tiktoken"}, "config.token_estimator"},
		{map[string]any{"token_estimator": 4}, "config.token_estimator"},
		{map[string]any{"image_tokens": -1}, "config.image_tokens"},
		{map[string]any{"image_tokens": 1.5}, "config.image_tokens"},
		{map[string]any{"overhead_tokens": -3}, "config.overhead_tokens"},
		{map[string]any{"overhead_tokens": "many"}, "config.overhead_tokens"},
	} {
		_, err := callJSON(t, "shouldCompact", map[string]any{"messages": chat("a"), "config": tc.cfg})
		var e *core.Error
		require.True(t, errors.As(err, &e), "%v: %v", tc.cfg, err)
		assert.Equal(t, core.CodeInvalidInput, e.Code)
		assert.Equal(t, tc.field, e.Field, "%v", tc.cfg)
	}
	// The manifest's string form.
	c := core.DefaultConfig()
	require.NoError(t, c.SetString("token_estimator", "chars4", ""))
	require.NoError(t, c.SetString("image_tokens", "800", ""))
	require.NoError(t, c.SetString("overhead_tokens", "2500", ""))
	assert.Equal(t, core.EstimatorChars4, c.TokenEstimator)
	assert.Equal(t, 800, c.ImageTokens)
	assert.Equal(t, 2500, c.OverheadTokens)
	assert.Error(t, c.SetString("token_estimator", "words", ""))
}

// FuzzUsage: whatever usage a call carries, shouldCompact's tokens are
// the provider's count plus the estimate of the messages it did not see,
// or the error is invalid_input naming usage; split and compress read it
// alike.
func FuzzUsage(f *testing.F) {
	f.Add(uint8(3), []byte(`{"input_tokens":100,"messages":2}`))
	f.Add(uint8(0), []byte(`{"input_tokens":0,"messages":0}`))
	f.Add(uint8(2), []byte(`{"input_tokens":5,"messages":3}`))
	f.Add(uint8(1), []byte(`{"input_tokens":-1,"messages":1}`))
	f.Add(uint8(4), []byte(`{"input_tokens":1e300,"messages":1}`))
	f.Add(uint8(4), []byte(`{"input_tokens":2147483647,"messages":4,"extra":true}`))
	f.Add(uint8(1), []byte(`[1,2]`))
	f.Add(uint8(1), []byte(`null`))
	f.Add(uint8(2), []byte(`{"messages":1.0,"input_tokens":3.0}`))
	env := DefaultEnv()
	f.Fuzz(func(t *testing.T, n uint8, usage []byte) {
		if !json.Valid(usage) || !utf8.Valid(usage) {
			return // not JSON the exports read (invalid_json)
		}
		n %= 8
		msgs := make([]string, n)
		for i := range msgs {
			msgs[i] = `{"role":"user","content":"message ` + strconv.Itoa(i) + ` of the history"}`
		}
		list := "[" + strings.Join(msgs, ",") + "]"
		out, err := env.ShouldCompact([]byte(`{"messages":` + list + `,"usage":` + string(usage) + `}`))
		_, serr := env.Split([]byte(`{"messages":` + list + `,"usage":` + string(usage) + `}`))
		_, cerr := env.Compress([]byte(`{"conversation_id":"c","dry_run":true,"history":`+list+`,"usage":`+string(usage)+`}`), fuzzHost{}, SystemClock{})
		if err != nil {
			var e *core.Error
			if !errors.As(err, &e) || e.Code != core.CodeInvalidInput || !strings.HasPrefix(e.Field, "usage") {
				t.Fatalf("usage %s: %v", usage, err)
			}
			if serr == nil || serr.Error() != err.Error() || cerr == nil || cerr.Error() != err.Error() {
				t.Fatalf("usage %s: shouldCompact says %v, split %v, compress %v", usage, err, serr, cerr)
			}
			return
		}
		if serr != nil || cerr != nil {
			t.Fatalf("usage %s: split %v, compress %v", usage, serr, cerr)
		}
		u := gjson.ParseBytes(usage)
		tokens := gjson.GetBytes(out, "tokens").Int()
		if u.Type == gjson.Null {
			return
		}
		k := int(u.Get("messages").Int())
		rest, err := env.EstimateTokens([]byte(`{"messages":[` + strings.Join(msgs[k:], ",") + `]}`))
		if err != nil {
			t.Fatal(err)
		}
		// Counts stop at core.MaxCount, far over any window.
		if want := min(u.Get("input_tokens").Int()+gjson.GetBytes(rest, "tokens").Int(), core.MaxCount); tokens != want {
			t.Fatalf("usage %s: tokens %d, want %d", usage, tokens, want)
		}
	})
}
