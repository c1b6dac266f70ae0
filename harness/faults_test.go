package harness_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/clipfold/clipfold/api"
	"github.com/clipfold/clipfold/hostfuncs"
	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/hostfuncs/store/storetest"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// faultHost sits between the plug-in and a real Host and fails one call
// of one host function (or that call and every later one) with a chosen
// fault. It is a fault injector, not a stand-in: every other call goes to
// the real host.
type faultHost struct {
	mu     sync.Mutex
	inner  api.HostCaller
	f      fault
	counts map[string]int
}

type fault struct {
	fn      string // host function to fail
	at      int    // 0-based index of its call
	kind    string // what to answer
	persist bool   // also fail every later call of fn
}

func (h *faultHost) reset(inner api.HostCaller, f fault) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.inner, h.f, h.counts = inner, f, map[string]int{}
}

func (h *faultHost) CallHost(name string, in []byte) ([]byte, error) {
	h.mu.Lock()
	n := h.counts[name]
	h.counts[name]++
	f, inner := h.f, h.inner
	h.mu.Unlock()
	if name == f.fn && (n == f.at || (f.persist && n > f.at)) {
		return faultOutput(f.kind), nil
	}
	return inner.CallHost(name, in)
}

func faultOutput(kind string) []byte {
	switch kind {
	case "retryable":
		return []byte(`{"error":{"code":"unavailable","message":"injected: 503 from the provider","retryable":true}}`)
	case "rate_limited":
		return []byte(`{"error":{"code":"rate_limited","message":"injected: 429","retryable":true}}`)
	case "fatal":
		return []byte(`{"error":{"code":"auth","message":"injected: invalid API key","retryable":false}}`)
	case "timeout":
		return []byte(`{"error":{"code":"timeout","message":"injected: request timed out","retryable":true}}`)
	case "empty":
		return []byte(`{"content":[{"type":"text","text":"  "}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":0}}`)
	case "garbage":
		return []byte(`{"content": [`)
	case "error":
		return []byte(`{"error":{"code":"unavailable","message":"injected: store is down","retryable":false}}`)
	case "conflict":
		return []byte(`{"error":{"code":"conflict","message":"injected: another compaction won","retryable":false}}`)
	}
	panic("unknown fault " + kind)
}

// outcome is what a fault must lead to: "" means the compaction succeeds.
type faultCase struct {
	f    fault
	want string
}

func faultMatrix(llmCalls int) []faultCase {
	var cases []faultCase
	for at := 0; at < llmCalls; at++ {
		for _, k := range []struct {
			kind          string
			once, persist string
		}{
			{"retryable", "", "llm_failed"},
			{"rate_limited", "", "llm_failed"},
			{"fatal", "llm_failed", "llm_failed"},
			{"timeout", "", "llm_timeout"},
			{"empty", "", "invalid_summary"},
			{"garbage", "host_error", "host_error"},
		} {
			cases = append(cases,
				faultCase{fault{"llm_complete", at, k.kind, false}, k.once},
				faultCase{fault{"llm_complete", at, k.kind, true}, k.persist})
		}
	}
	for _, kind := range []string{"error", "garbage"} {
		cases = append(cases, faultCase{fault{"memory_list", 0, kind, false}, "host_error"})
	}
	cases = append(cases,
		faultCase{fault{"compaction_commit", 0, "error", false}, "host_error"},
		faultCase{fault{"compaction_commit", 0, "garbage", false}, "host_error"},
		faultCase{fault{"compaction_commit", 0, "conflict", false}, "commit_conflict"})
	return cases
}

type nativeCompressor struct {
	env *api.Env
	h   api.HostCaller
}

func (n nativeCompressor) compress(t testing.TB, in []byte) gjson.Result {
	out, err := n.env.Compress(in, n.h, api.SystemClock{})
	require.NoError(t, err)
	return gjson.ParseBytes(out)
}

// TestFaultInjection (context-compaction.AC1.7: a failed model call returns
// the original history unchanged) fails each host call in turn, with every fault kind,
// through the real .wasm and natively, and checks
// docs/spec.md#nothing-is-lost: on failure the store is byte-identical, the
// history is returned byte-for-byte, the failure code is right and the breaker
// counts one (none for commit_conflict); a transient fault is retried (or
// re-chunked) to success.
func TestFaultInjection(t *testing.T) {
	const conv = "cf"
	hist := conversation(conv, 40)

	// A clean run tells how many LLM calls there are to fail.
	clean := newMemStore(hist)
	cleanRes := nativeCompressor{api.DefaultEnv(), &hostfuncs.Host{LLM: &scriptLLM{}, Store: clean}}.
		compress(t, compressInput(t, conv, hist, nil))
	require.False(t, cleanRes.Get("failed").Bool(), cleanRes.Raw)
	llmCalls := int(cleanRes.Get("llm_calls").Int())
	require.GreaterOrEqual(t, llmCalls, 4)

	fh := &faultHost{}
	paths := map[string]compressor{
		"wasm":   newWasmCompressor(t, fh),
		"native": nativeCompressor{api.DefaultEnv(), fh},
	}
	for name, c := range paths {
		t.Run(name, func(t *testing.T) {
			for i, fc := range faultMatrix(llmCalls) {
				fc := fc
				t.Run(fmt.Sprintf("%s#%d/%s/persist=%v", fc.f.fn, fc.f.at, fc.f.kind, fc.f.persist), func(t *testing.T) {
					// A conversation per case keeps the breaker counts apart.
					cid := fmt.Sprintf("%s%d", conv, i)
					h := conversation(cid, 40)
					hJSON, _ := json.Marshal(h)
					store := newMemStore(h)
					before := store.dump()
					fh.reset(&hostfuncs.Host{LLM: &scriptLLM{}, Store: store}, fc.f)
					res := c.compress(t, compressInput(t, cid, h, map[string]any{"operation_id": fmt.Sprintf("op_case_%d", i)}))
					if fc.want == "" {
						require.False(t, res.Get("failed").Bool(), res.Get("failure_message").String())
						require.Equal(t, 1, store.commits)
						require.Equal(t, int64(0), res.Get("consecutive_failures").Int())
						return
					}
					require.True(t, res.Get("failed").Bool(), "compress should have failed")
					require.Equal(t, fc.want, res.Get("failure_code").String(), res.Get("failure_message").String())
					require.NotEmpty(t, res.Get("failure_message").String())
					require.Equal(t, before, store.dump(), "the store changed on a failed compaction")
					require.Equal(t, string(hJSON), "["+joinRaw(res.Get("history").Array())+"]", "history not returned byte-for-byte")
					// Another compaction winning is not a failure of
					// summarizing: it does not count toward the breaker.
					counted := int64(1)
					if fc.want == "commit_conflict" {
						counted = 0
					}
					require.Equal(t, counted, res.Get("consecutive_failures").Int())
					require.Equal(t, int64(0), res.Get("batches.#").Int())
				})
			}
		})
	}
}

// TestBreaker: after max_consecutive_failures failures compress fails
// fast with breaker_open and calls nothing; after the cooldown one probe
// runs; its failure re-opens the breaker, its success closes it.
func TestBreaker(t *testing.T) {
	const conv = "cb"
	hist := conversation(conv, 30)
	fh := &faultHost{}
	for name, c := range map[string]compressor{"wasm": newWasmCompressor(t, fh), "native": nativeCompressor{api.DefaultEnv(), fh}} {
		t.Run(name, func(t *testing.T) {
			store := newMemStore(hist)
			before := store.dump()
			t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
			call := func(now time.Time, f fault) gjson.Result {
				fh.reset(&hostfuncs.Host{LLM: &scriptLLM{}, Store: store}, f)
				return c.compress(t, compressInput(t, conv, hist, map[string]any{"now": now.Format(time.RFC3339Nano),
					"config": map[string]any{"breaker_cooldown_ms": 60000}}))
			}
			down := fault{"llm_complete", 0, "fatal", true}
			for i := 1; i <= 3; i++ {
				res := call(t0.Add(time.Duration(i)*time.Second), down)
				require.Equal(t, "llm_failed", res.Get("failure_code").String())
				require.Equal(t, int64(i), res.Get("consecutive_failures").Int())
			}
			res := call(t0.Add(10*time.Second), down)
			require.Equal(t, "breaker_open", res.Get("failure_code").String())
			require.Equal(t, int64(0), res.Get("llm_calls").Int())
			require.Equal(t, 0, fh.counts["llm_complete"]+fh.counts["memory_list"]+fh.counts["compaction_commit"], "an open breaker calls nothing")
			require.Equal(t, int64(3), res.Get("consecutive_failures").Int(), "breaker_open itself does not count")
			// Cooldown passed: one probe runs and fails: open again.
			res = call(t0.Add(3*time.Second+61*time.Second), down)
			require.Equal(t, "llm_failed", res.Get("failure_code").String())
			require.Equal(t, int64(4), res.Get("consecutive_failures").Int())
			res = call(t0.Add(3*time.Second+62*time.Second), down)
			require.Equal(t, "breaker_open", res.Get("failure_code").String())
			require.Equal(t, before, store.dump())
			// Next cooldown: one probe runs, succeeds and closes the breaker.
			res = call(t0.Add(3*time.Second+61*time.Second+61*time.Second), fault{})
			require.False(t, res.Get("failed").Bool(), res.Get("failure_message").String())
			require.Equal(t, int64(0), res.Get("consecutive_failures").Int())
		})
	}
}

// TestFaultInjectionSQLite runs the same matrix through the .wasm against
// the real SQLite store: a failed compaction leaves every table
// byte-identical (the store's full dump).
func TestFaultInjectionSQLite(t *testing.T) {
	ctx := context.Background()
	clean := nativeCompressor{api.DefaultEnv(), &hostfuncs.Host{LLM: &scriptLLM{}, Store: newMemStore(conversation("cs", 40))}}.
		compress(t, compressInput(t, "cs", conversation("cs", 40), nil))
	fh := &faultHost{}
	c := newWasmCompressor(t, fh)
	open := stores(t)["sqlite"]
	for i, fc := range faultMatrix(int(clean.Get("llm_calls").Int())) {
		if fc.want == "" {
			continue
		}
		t.Run(fmt.Sprintf("%s_%d/%s/persist=%v", fc.f.fn, fc.f.at, fc.f.kind, fc.f.persist), func(t *testing.T) {
			cid := fmt.Sprintf("cs%d", i)
			h := conversation(cid, 40)
			s := open(t)
			require.NoError(t, s.AppendMessages(ctx, cid, storetest.Messages(t, h)))
			before, err := s.(store.Dumper).Dump(ctx)
			require.NoError(t, err)
			fh.reset(&hostfuncs.Host{LLM: &scriptLLM{}, Store: s}, fc.f)
			res := c.compress(t, compressInput(t, cid, h, nil))
			require.Equal(t, fc.want, res.Get("failure_code").String(), res.Get("failure_message").String())
			after, err := s.(store.Dumper).Dump(ctx)
			require.NoError(t, err)
			require.Equal(t, before, after, "the SQLite store changed on a failed compaction")
		})
	}
}
