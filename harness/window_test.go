package harness_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/clipfold/clipfold/hostfuncs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// TestWindowCountsWasm: through the .wasm, compress and shouldCompact
// count what docs/spec.md#counting-tokens-and-the-window says: the
// provider's usage for the first K messages plus the estimate of the
// rest, overhead_tokens otherwise, and image_tokens per image.
func TestWindowCountsWasm(t *testing.T) {
	hist := conversation("w1", 30)
	inst := newInstance(t)
	call := func(export string, in any) gjson.Result {
		b, err := json.Marshal(in)
		require.NoError(t, err)
		out, err := inst.Call(context.Background(), export, b)
		require.NoError(t, err)
		return gjson.ParseBytes(out)
	}
	estimate := func(msgs []json.RawMessage) int64 {
		return call("estimateTokens", map[string]any{"messages": msgs}).Get("tokens").Int()
	}

	// shouldCompact: usage, then overhead_tokens.
	sc := call("shouldCompact", map[string]any{"messages": hist, "usage": map[string]any{"input_tokens": 12345, "messages": 20},
		"config": map[string]any{"overhead_tokens": 999}})
	assert.Equal(t, 12345+estimate(hist[20:]), sc.Get("tokens").Int())
	sc = call("shouldCompact", map[string]any{"messages": hist, "config": map[string]any{"overhead_tokens": 999}})
	assert.Equal(t, 999+estimate(hist), sc.Get("tokens").Int())

	// compress: the same counts in tokens_estimate_before, and the
	// provider's overhead kept in tokens_estimate_after.
	c := newWasmCompressor(t, &hostfuncs.Host{LLM: &scriptLLM{}, Store: newMemStore(hist)})
	plain := c.compress(t, compressInput(t, "w1", hist, map[string]any{"dry_run": true}))
	require.False(t, plain.Get("failed").Bool(), plain.Raw)
	used := c.compress(t, compressInput(t, "w1", hist, map[string]any{"dry_run": true,
		"usage": map[string]any{"input_tokens": 12345, "messages": 20}}))
	require.False(t, used.Get("failed").Bool(), used.Raw)
	assert.Equal(t, 12345+estimate(hist[20:]), used.Get("tokens_estimate_before").Int())
	beside := 12345 - estimate(hist[:20])
	assert.Equal(t, plain.Get("tokens_estimate_after").Int()+beside, used.Get("tokens_estimate_after").Int())
	over := c.compress(t, compressInput(t, "w1", hist, map[string]any{"dry_run": true, "config": map[string]any{"overhead_tokens": 777}}))
	assert.Equal(t, estimate(hist)+777, over.Get("tokens_estimate_before").Int())
	assert.Equal(t, plain.Get("tokens_estimate_after").Int()+777, over.Get("tokens_estimate_after").Int())

	// An image counts image_tokens, not its placeholder: one screenshot
	// makes a short history due at a 2,000-token window.
	shot := []map[string]any{{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": "what is wrong on this screen?"},
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,iVBORw0KGgo="}}}}}
	due := call("shouldCompact", map[string]any{"messages": shot, "config": map[string]any{"model_max_tokens": 2000}})
	assert.True(t, due.Get("due").Bool(), due.Raw)
	assert.Greater(t, due.Get("tokens").Int(), int64(1600))
	seeds := call("shouldCompact", map[string]any{"messages": shot, "config": map[string]any{"model_max_tokens": 2000, "token_estimator": "chars4"}})
	assert.False(t, seeds.Get("due").Bool(), "chars4 counts the placeholder: %s", seeds.Raw)
}
