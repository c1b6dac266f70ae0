package harness_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/clipfold/clipfold/api"
	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs"
	"github.com/stretchr/testify/require"
)

// slowLLM answers after a delay and records the timeout_ms each request
// carried. It honours the context deadline the host derives from
// timeout_ms, as a real HTTP client would.
type slowLLM struct {
	delay    time.Duration
	mu       sync.Mutex
	timeouts []int
}

func (l *slowLLM) Complete(ctx context.Context, req *core.ModelRequest) (core.ModelResponse, error) {
	l.mu.Lock()
	l.timeouts = append(l.timeouts, req.TimeoutMs)
	l.mu.Unlock()
	select {
	case <-time.After(l.delay):
		return core.ModelResponse{Content: []core.ContentBlock{{Type: "text", Text: "slow summary"}}}, nil
	case <-ctx.Done():
		return core.ModelResponse{}, &core.LLMError{Code: core.LLMTimeout, Message: ctx.Err().Error(), Retryable: true}
	}
}

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
			llm := &slowLLM{delay: 120 * time.Millisecond}
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
			require.GreaterOrEqual(t, len(llm.timeouts), 2)
			for i, ms := range llm.timeouts {
				require.LessOrEqual(t, ms, 400, "call %d", i)
				require.Greater(t, ms, 0, "call %d", i)
				if i > 0 {
					require.Less(t, ms, llm.timeouts[i-1], "timeout_ms must shrink as the deadline nears")
				}
			}
		})
	}
}
