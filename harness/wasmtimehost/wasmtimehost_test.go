package wasmtimehost_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	wt "github.com/bytecodealliance/wasmtime-go/v39"
	"github.com/clipfold/clipfold/api"
	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/harness"
	"github.com/clipfold/clipfold/harness/wasmtimehost"
	"github.com/clipfold/clipfold/hostfuncs"
	"github.com/clipfold/clipfold/hostfuncs/llm"
	"github.com/clipfold/clipfold/hostfuncs/llm/llmtest"
	"github.com/clipfold/clipfold/hostfuncs/store/sqlite"
	"github.com/clipfold/clipfold/hostfuncs/store/storetest"
	"github.com/clipfold/clipfold/internal/benchdata"
	extism "github.com/extism/go-sdk"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

var ctx = context.Background()

func newRuntime(t testing.TB, opts wasmtimehost.Options) *wasmtimehost.Runtime {
	t.Helper()
	if opts.CacheDir == "" {
		opts.CacheDir = testCacheDir
	}
	rt, err := wasmtimehost.NewRuntime(ctx, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close(ctx) })
	return rt
}

func newInstance(t testing.TB, opts wasmtimehost.Options) *wasmtimehost.Instance {
	t.Helper()
	inst, err := newRuntime(t, opts).NewInstance(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = inst.Close(ctx) })
	return inst
}

// testCacheDir is one compilation cache for the whole run (each test
// would otherwise compile the plug-in anew, ~1.3 s).
var testCacheDir string

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "clipfold-wasmtime-cache-")
	if err != nil {
		panic(err)
	}
	testCacheDir = d
	code := m.Run()
	_ = os.RemoveAll(d)
	os.Exit(code)
}

// TestKernelMatchesGoSDK: kernel.wasm is byte for byte the kernel of the
// go-sdk version in go.mod, so both Go hosts run the same Extism.
func TestKernelMatchesGoSDK(t *testing.T) {
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/extism/go-sdk").Output()
	require.NoError(t, err)
	want, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(dir)), "extism-runtime.wasm"))
	require.NoError(t, err)
	got, err := os.ReadFile("kernel.wasm")
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got), "kernel.wasm differs from go-sdk's extism-runtime.wasm: copy it again")
	ver, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "github.com/extism/go-sdk").Output()
	require.NoError(t, err)
	v, err := os.ReadFile("kernel.wasm.version")
	require.NoError(t, err)
	require.Equal(t, strings.TrimSpace(string(ver)), strings.TrimSpace(string(v)))
}

// TestVectors runs every conformance vector on one instance, through the
// kernel and with every input staged.
func TestVectors(t *testing.T) {
	vs, err := harness.LoadVectors(filepath.Join("..", "..", "testdata", "vectors"))
	require.NoError(t, err)
	require.NotEmpty(t, vs)
	for _, mode := range []struct {
		name string
		opts wasmtimehost.Options
	}{{"kernel", wasmtimehost.Options{NoStaging: true}}, {"staged", wasmtimehost.Options{StageMin: 1}}} {
		t.Run(mode.name, func(t *testing.T) {
			inst := newInstance(t, mode.opts)
			require.Equal(t, mode.name == "staged", inst.Staging())
			for _, v := range vs {
				t.Run(v.Export+"/"+v.Name, func(t *testing.T) {
					out, err := inst.Call(ctx, v.Export, v.InputBytes())
					require.NoError(t, v.Check(out, err))
				})
			}
		})
	}
}

// TestSameAsWazero: every pure export answers a realistic history byte
// for byte as the wazero host does, staged and not, at sizes on both sides
// of harness.StageMin.
func TestSameAsWazero(t *testing.T) {
	wz, err := harness.NewRuntime(ctx, harness.Options{CacheDir: "-"})
	require.NoError(t, err)
	defer wz.Close(ctx)
	ref, err := wz.NewInstance(ctx)
	require.NoError(t, err)
	staged := newInstance(t, wasmtimehost.Options{})
	kernel := newInstance(t, wasmtimehost.Options{NoStaging: true})
	for _, n := range []int{3, 100, 2000} {
		in := benchdata.History(n)
		for _, export := range []string{"split", "score", "shouldCompact", "estimateTokens", "chunk", "extractiveSummary", "buildSummarizationRequest"} {
			want, werr := ref.Call(ctx, export, in)
			for name, inst := range map[string]*wasmtimehost.Instance{"staged": staged, "kernel": kernel} {
				got, err := inst.Call(ctx, export, in)
				require.Equal(t, werr, err, "%s %s n=%d", name, export, n)
				require.True(t, bytes.Equal(want, got), "%s %s n=%d: outputs differ", name, export, n)
			}
		}
	}
}

// TestErrors: failures are harness.CallErrors naming the field, exactly as
// on wazero, and the instance stays usable after each.
func TestErrors(t *testing.T) {
	inst := newInstance(t, wasmtimehost.Options{StageMin: 1})
	for _, c := range []struct{ export, input, code, contains string }{
		{"split", `{"messages": [`, "invalid_json", ""},
		{"split", `{"messages": [{"role": "wizard", "content": "x"}]}`, "invalid_input", "messages[0].role"},
		{"score", `{"messages": 7}`, "invalid_input", "messages"},
	} {
		_, err := inst.Call(ctx, c.export, []byte(c.input))
		var ce *harness.CallError
		require.ErrorAs(t, err, &ce, c.input)
		require.Equal(t, c.code, ce.Code, ce.Message)
		require.Contains(t, ce.Message, c.contains)
		out, err := inst.Call(ctx, "version", []byte("{}"))
		require.NoError(t, err)
		require.True(t, gjson.ValidBytes(out))
	}
	_, err := inst.Call(ctx, "noSuchExport", []byte("{}"))
	require.ErrorContains(t, err, "unknown function: noSuchExport")
	_, err = inst.Call(ctx, "_initialize", nil)
	require.ErrorContains(t, err, "unknown function")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = inst.Call(cancelled, "version", []byte("{}"))
	require.ErrorIs(t, err, context.Canceled)
}

// TestConfigAndLogs: the manifest config reaches the plug-in (config_get)
// and its warnings reach the Logger (log_warn) at or above LogLevel.
func TestConfigAndLogs(t *testing.T) {
	var mu sync.Mutex
	var logs []string
	logger := func(level extism.LogLevel, msg string) {
		mu.Lock()
		defer mu.Unlock()
		logs = append(logs, level.String()+" "+msg)
	}
	msgs := gjson.GetBytes(benchdata.History(40), "messages").Raw
	plain := newInstance(t, wasmtimehost.Options{})
	base, err := plain.Call(ctx, "split", []byte(`{"messages":`+msgs+`}`))
	require.NoError(t, err)
	inst := newInstance(t, wasmtimehost.Options{Config: map[string]string{"keep_recent": "9"}, Logger: logger})
	out, err := inst.Call(ctx, "split", []byte(`{"config":{"no_such_key":1},"messages":`+msgs+`}`))
	require.NoError(t, err)
	require.Equal(t, int64(9), gjson.GetBytes(out, "to_keep.#").Int())
	require.NotEqual(t, int64(9), gjson.GetBytes(base, "to_keep.#").Int())
	mu.Lock()
	require.Len(t, logs, 1)
	require.Contains(t, logs[0], "WARN")
	require.Contains(t, logs[0], "no_such_key")
	mu.Unlock()

	logs = nil
	quiet := newInstance(t, wasmtimehost.Options{Logger: logger, LogLevel: extism.LogLevelError})
	_, err = quiet.Call(ctx, "split", []byte(`{"config":{"no_such_key":1},"messages":`+msgs+`}`))
	require.NoError(t, err)
	require.Empty(t, logs, "a warning below LogLevel was delivered")

	bad := newInstance(t, wasmtimehost.Options{Config: map[string]string{"keep_recent": "many"}})
	_, err = bad.Call(ctx, "version", []byte("{}"))
	var ce *harness.CallError
	require.ErrorAs(t, err, &ce)
	require.Contains(t, ce.Message, "keep_recent")
}

// TestMaxMemory: an instance left above MaxMemory is replaced, and the
// replacement answers the same.
func TestMaxMemory(t *testing.T) {
	inst := newInstance(t, wasmtimehost.Options{MaxMemory: 1})
	in := benchdata.History(200)
	first, err := inst.Call(ctx, "split", in)
	require.NoError(t, err)
	require.Equal(t, 1, inst.Replaced())
	again, err := inst.Call(ctx, "split", in)
	require.NoError(t, err)
	require.Equal(t, first, again)
	require.Equal(t, 2, inst.Replaced())
}

// TestCompilationCache: the second runtime loads the first one's compiled
// code; a damaged cache file is compiled again, not trusted.
func TestCompilationCache(t *testing.T) {
	dir := t.TempDir()
	a := newRuntime(t, wasmtimehost.Options{CacheDir: dir})
	require.False(t, a.CacheHit)
	b := newRuntime(t, wasmtimehost.Options{CacheDir: dir})
	require.True(t, b.CacheHit)
	files, err := filepath.Glob(filepath.Join(dir, "*.cwasm"))
	require.NoError(t, err)
	require.Len(t, files, 2, "the plug-in and the kernel")
	for _, f := range files {
		require.NoError(t, os.WriteFile(f, []byte("not a module"), 0o644))
	}
	c := newRuntime(t, wasmtimehost.Options{CacheDir: dir})
	require.False(t, c.CacheHit)
	inst, err := c.NewInstance(ctx)
	require.NoError(t, err)
	defer inst.Close(ctx)
	_, err = inst.Call(ctx, "version", []byte("{}"))
	require.NoError(t, err)
	d := newRuntime(t, wasmtimehost.Options{CacheDir: dir})
	require.True(t, d.CacheHit, "the damaged file was not replaced")
}

// TestNoHost: without a Host, compress fails honestly instead of trapping.
func TestNoHost(t *testing.T) {
	inst := newInstance(t, wasmtimehost.Options{})
	hist := loadConversation(t, "support-chat.json")
	out, err := inst.Call(ctx, "compress", compressInput(t, hist))
	require.NoError(t, err)
	res := gjson.ParseBytes(out)
	require.True(t, res.Get("failed").Bool(), res.Raw)
	require.Contains(t, res.Raw, "this host provides no")
}

// panicHost panics in every host call after the first n.
type panicHost struct {
	h hostfuncs.Host
	n int
}

func (p *panicHost) CallHost(name string, in []byte) ([]byte, error) {
	if p.n--; p.n < 0 {
		panic("injected")
	}
	return p.h.CallHost(name, in)
}

// TestHostPanic: a host function that panics becomes a failed compaction
// with its message, not a panic through Wasmtime, and nothing is lost.
func TestHostPanic(t *testing.T) {
	s := openSQLite(t)
	hist := loadConversation(t, "support-chat.json")
	conv := gjson.GetBytes(hist[0], "conversation_id").String()
	require.NoError(t, s.AppendMessages(ctx, conv, storetest.Messages(t, hist)))
	inst := newInstance(t, wasmtimehost.Options{Host: &panicHost{h: hostfuncs.Host{LLM: llm.NewExtractive(), Store: s}, n: 1}})
	out, err := inst.Call(ctx, "compress", compressInput(t, hist))
	require.NoError(t, err)
	res := gjson.ParseBytes(out)
	require.True(t, res.Get("failed").Bool(), res.Raw)
	require.Contains(t, res.Raw, "host panicked")
	require.Len(t, storetest.ActiveRaw(t, s, conv), len(hist), "a failed compaction changed the store")
}

// TestConcurrentCompaction: 4 goroutines compact the same conversation at
// once through a pool of Wasmtime instances on one SQLite store. Exactly
// one commit wins, the rest get commit_conflict, and every original
// message is either active or in recall covered by a batch — and the
// winner matches what the wazero host computes for the same conversation.
func TestConcurrentCompaction(t *testing.T) {
	s := openSQLite(t)
	hist := loadConversation(t, "debugging-session.json")
	conv := gjson.GetBytes(hist[0], "conversation_id").String()
	require.NoError(t, s.AppendMessages(ctx, conv, storetest.Messages(t, hist)))
	rt := newRuntime(t, wasmtimehost.Options{Host: &hostfuncs.Host{LLM: llm.NewExtractive(), Store: s}})
	pool := wasmtimehost.NewPool(rt, 4)
	defer pool.Close(ctx)
	in := compressInput(t, hist)
	results := make([]gjson.Result, 4)
	var wg sync.WaitGroup
	for g := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := pool.Call(ctx, "compress", in)
			if err == nil {
				results[g] = gjson.ParseBytes(out)
			} else {
				results[g] = gjson.Parse(`{"failed":true,"failure_code":"call error","failure_message":` + jsonString(err.Error()) + `}`)
			}
		}()
	}
	wg.Wait()
	var winner gjson.Result
	wins := 0
	for _, r := range results {
		switch {
		case !r.Get("failed").Bool():
			wins++
			winner = r
		case r.Get("failure_code").String() != "commit_conflict":
			t.Fatalf("unexpected failure %s: %s", r.Get("failure_code"), r.Get("failure_message"))
		}
	}
	require.Equal(t, 1, wins)
	require.Positive(t, winner.Get("messages_compressed").Int())
	storetest.RequireNothingLost(t, s, conv, hist, winner)

	// The same compaction on wazero, on a store of its own.
	s2 := openSQLite(t)
	require.NoError(t, s2.AppendMessages(ctx, conv, storetest.Messages(t, hist)))
	wz, err := harness.NewRuntime(ctx, harness.Options{Host: &hostfuncs.Host{LLM: llm.NewExtractive(), Store: s2}, CacheDir: "-"})
	require.NoError(t, err)
	defer wz.Close(ctx)
	ref, err := wz.NewInstance(ctx)
	require.NoError(t, err)
	out, err := ref.Call(ctx, "compress", in)
	require.NoError(t, err)
	want := gjson.ParseBytes(out)
	require.False(t, want.Get("failed").Bool(), want.Raw)
	for _, k := range []string{"messages_compressed", "batches_created", "llm_calls", "history.#", "batches.#.source_message_ids"} {
		require.Equal(t, want.Get(k).Raw, winner.Get(k).Raw, k)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func openSQLite(t *testing.T) *sqlite.Store {
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "clipfold.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func loadConversation(t testing.TB, name string) []json.RawMessage {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "conversations", name))
	require.NoError(t, err)
	var msgs []json.RawMessage
	require.NoError(t, json.Unmarshal(data, &msgs))
	return msgs
}

// compressInput is compress's input for hist; config entries override
// the defaults here.
func compressInput(t testing.TB, hist []json.RawMessage, config ...map[string]any) []byte {
	conv := gjson.GetBytes(hist[0], "conversation_id").String()
	cfg := map[string]any{"chunk_size": 10, "keep_recent": 6, "backoff_base_ms": 1, "max_summary_tokens": 200}
	for _, c := range config {
		for k, v := range c {
			cfg[k] = v
		}
	}
	b, err := json.Marshal(map[string]any{"conversation_id": conv, "history": hist, "now": "2026-11-21T12:00:00Z", "config": cfg})
	require.NoError(t, err)
	return b
}

// TestTrapReplacesInstance: a call that traps fails with a plain error
// (not a CallError), and the instance is replaced so the next call runs on
// a fresh one. A tiny hand-written module stands in for a plug-in that
// traps; clipfold itself never should.
func TestTrapReplacesInstance(t *testing.T) {
	wasm, err := wt.Wat2Wasm(`(module
	  (memory (export "memory") 1)
	  (global $calls (mut i32) (i32.const 0))
	  (func (export "boom") (result i32) unreachable)
	  (func (export "calls") (result i32)
	    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
	    (global.get $calls)))`)
	require.NoError(t, err)
	inst := newInstance(t, wasmtimehost.Options{Wasm: wasm, CacheDir: "-"})
	require.False(t, inst.Staging(), "the module has no staging exports")
	// A non-zero return without an Extism error is reported as such.
	_, err = inst.Call(ctx, "calls", nil)
	require.ErrorContains(t, err, "returned 1 without an error message")
	_, err = inst.Call(ctx, "calls", nil)
	require.ErrorContains(t, err, "returned 2", "state kept between calls")
	_, err = inst.Call(ctx, "boom", nil)
	var ce *harness.CallError
	require.Error(t, err)
	require.False(t, errors.As(err, &ce), "a trap is not an export failure: %v", err)
	require.ErrorContains(t, err, "boom")
	require.Equal(t, 1, inst.Replaced())
	_, err = inst.Call(ctx, "calls", nil)
	require.ErrorContains(t, err, "returned 1", "the replacement starts fresh")
}

// TestOversizedInput: an input over api.MaxInputBytes is refused by the
// staging export and by the plug-in as too_large, naming the limit, and
// the instance goes on.
func TestOversizedInput(t *testing.T) {
	inst := newInstance(t, wasmtimehost.Options{})
	big := bytes.Repeat([]byte(" "), api.MaxInputBytes+1)
	_, err := inst.Call(ctx, "split", big)
	var ce *harness.CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "too_large", ce.Code, ce.Message)
	out, err := inst.Call(ctx, "split", benchdata.History(20))
	require.NoError(t, err)
	require.True(t, gjson.ValidBytes(out))
}

// TestDeadline: compress reads Wasmtime's WASI clocks for its deadline, so
// every llm_complete request carries timeout_ms = the time left before
// compaction_timeout, shrinking call by call, and the compaction fails
// with deadline_exceeded (or llm_timeout) without touching the store.
func TestDeadline(t *testing.T) {
	s := openSQLite(t)
	hist := loadConversation(t, "support-chat.json")
	conv := gjson.GetBytes(hist[0], "conversation_id").String()
	require.NoError(t, s.AppendMessages(ctx, conv, storetest.Messages(t, hist)))
	llm := &llmtest.Slow{Delay: 120 * time.Millisecond}
	inst := newInstance(t, wasmtimehost.Options{Host: &hostfuncs.Host{LLM: llm, Store: s}})
	out, err := inst.Call(ctx, "compress", compressInput(t, hist, map[string]any{"compaction_timeout": 400}))
	require.NoError(t, err)
	res := gjson.ParseBytes(out)
	require.True(t, res.Get("failed").Bool(), res.Raw)
	require.Contains(t, []string{"deadline_exceeded", "llm_timeout"}, res.Get("failure_code").String(), res.Get("failure_message").String())
	require.Len(t, storetest.ActiveRaw(t, s, conv), len(hist), "a failed compaction changed the store")
	llm.RequireShrinkingTimeouts(t, 400)
}

// flakyLLM fails every request with a retryable error, recording when
// each arrived.
type flakyLLM struct{ at []time.Time }

func (l *flakyLLM) Complete(context.Context, *core.ModelRequest) (core.ModelResponse, error) {
	l.at = append(l.at, time.Now())
	return core.ModelResponse{}, &core.LLMError{Code: core.LLMRateLimited, Message: "slow down", Retryable: true}
}

// TestRetryBackoffSleeps: retries wait (WASI poll_oneoff sleeps for real
// on Wasmtime): each attempt after the first comes at least the backoff
// base after the one before.
func TestRetryBackoffSleeps(t *testing.T) {
	s := openSQLite(t)
	hist := loadConversation(t, "support-chat.json")
	conv := gjson.GetBytes(hist[0], "conversation_id").String()
	require.NoError(t, s.AppendMessages(ctx, conv, storetest.Messages(t, hist)))
	llm := &flakyLLM{}
	inst := newInstance(t, wasmtimehost.Options{Host: &hostfuncs.Host{LLM: llm, Store: s}})
	out, err := inst.Call(ctx, "compress", compressInput(t, hist, map[string]any{"backoff_base_ms": 40}))
	require.NoError(t, err)
	res := gjson.ParseBytes(out)
	require.True(t, res.Get("failed").Bool(), res.Raw)
	require.GreaterOrEqual(t, len(llm.at), 2, "no retry happened")
	for i := 1; i < len(llm.at); i++ {
		require.GreaterOrEqual(t, llm.at[i].Sub(llm.at[i-1]), 40*time.Millisecond, "attempt %d came without a backoff", i)
	}
}

// TestClose: a closed instance refuses calls; a closed runtime makes no
// instances, while one made before keeps working until it needs a
// replacement.
func TestClose(t *testing.T) {
	rt, err := wasmtimehost.NewRuntime(ctx, wasmtimehost.Options{CacheDir: testCacheDir, MaxMemory: 1})
	require.NoError(t, err)
	a, err := rt.NewInstance(ctx)
	require.NoError(t, err)
	b, err := rt.NewInstance(ctx)
	require.NoError(t, err)
	require.NoError(t, a.Close(ctx))
	_, err = a.Call(ctx, "version", []byte("{}"))
	require.ErrorIs(t, err, wasmtimehost.ErrClosed)

	require.NoError(t, rt.Close(ctx))
	require.NoError(t, rt.Close(ctx), "closing twice")
	_, err = rt.NewInstance(ctx)
	require.ErrorIs(t, err, wasmtimehost.ErrClosed)
	_, err = b.Call(ctx, "version", []byte("{}")) // runs, then is due for replacement (MaxMemory 1)
	require.NoError(t, err)
	_, err = b.Call(ctx, "version", []byte("{}"))
	require.ErrorIs(t, err, wasmtimehost.ErrClosed)
	require.NoError(t, b.Close(ctx))
}
