// Package llmtest has LLM stand-ins for host tests: real hostfuncs.LLM
// implementations whose timing is under the test's control.
package llmtest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/core"
)

// Slow answers after Delay and records the timeout_ms each request
// carried. It honours the context deadline the host derives from
// timeout_ms, as a real HTTP client would, failing with a retryable
// llm_timeout.
type Slow struct {
	Delay time.Duration

	mu       sync.Mutex
	timeouts []int
}

func (l *Slow) Complete(ctx context.Context, req *core.ModelRequest) (core.ModelResponse, error) {
	l.mu.Lock()
	l.timeouts = append(l.timeouts, req.TimeoutMs)
	l.mu.Unlock()
	select {
	case <-time.After(l.Delay):
		return core.ModelResponse{Content: []core.ContentBlock{{Type: "text", Text: "slow summary"}}}, nil
	case <-ctx.Done():
		return core.ModelResponse{}, &core.LLMError{Code: core.LLMTimeout, Message: ctx.Err().Error(), Retryable: true}
	}
}

// Timeouts are the timeout_ms of every request so far, in order.
func (l *Slow) Timeouts() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int(nil), l.timeouts...)
}

// RequireShrinkingTimeouts checks what a compaction under a deadline of
// limitMs must send: at least two requests, each with 0 < timeout_ms ≤
// limitMs, each less than the one before (the time left shrinks).
func (l *Slow) RequireShrinkingTimeouts(t testing.TB, limitMs int) {
	t.Helper()
	timeouts := l.Timeouts()
	require.GreaterOrEqual(t, len(timeouts), 2)
	for i, ms := range timeouts {
		require.LessOrEqual(t, ms, limitMs, "call %d", i)
		require.Greater(t, ms, 0, "call %d", i)
		if i > 0 {
			require.Less(t, ms, timeouts[i-1], "timeout_ms must shrink as the deadline nears")
		}
	}
}
