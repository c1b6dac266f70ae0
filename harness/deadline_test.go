package harness_test

import (
	"testing"
	"time"

	"github.com/clipfold/clipfold/api"
	"github.com/clipfold/clipfold/hostfuncs"
	"github.com/clipfold/clipfold/hostfuncs/llm/llmtest"
	"github.com/stretchr/testify/require"
)

// TestDeadline: every llm_complete request carries timeout_ms = the time
// left before compaction_timeout, the time left shrinks call by call, and
// nothing outlives the deadline: the compaction fails with
// deadline_exceeded (or llm_timeout when the last call hit it) and
// changes nothing.
func TestDeadline(t *testing.T) {
	hist := conversation("cd", 60)
	for name, mk := range map[string]func(api.HostCaller) compressor{
		"wasm":   func(h api.HostCaller) compressor { return newWasmCompressor(t, h) },
		"native": func(h api.HostCaller) compressor { return nativeCompressor{api.DefaultEnv(), h} },
	} {
		t.Run(name, func(t *testing.T) {
			llm := &llmtest.Slow{Delay: 120 * time.Millisecond}
			store := newMemStore(hist)
			before := store.dump()
			c := mk(&hostfuncs.Host{LLM: llm, Store: store})
			start := time.Now()
			res := c.compress(t, compressInput(t, "cd", hist, map[string]any{"config": map[string]any{"compaction_timeout": 400}}))
			took := time.Since(start)
			require.True(t, res.Get("failed").Bool())
			require.Contains(t, []string{"deadline_exceeded", "llm_timeout"}, res.Get("failure_code").String(), res.Get("failure_message").String())
			require.Equal(t, before, store.dump())
			require.Less(t, took, 2*time.Second, "the compaction outlived its deadline by far")
			llm.RequireShrinkingTimeouts(t, 400)
		})
	}
}
