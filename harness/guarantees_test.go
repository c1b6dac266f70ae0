package harness_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/clipfold/clipfold/api"
	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs"
	"github.com/stretchr/testify/require"
)

// bothPaths runs f through the .wasm and natively with the same host.
func bothPaths(t *testing.T, f func(t *testing.T, mk func(api.HostCaller) compressor)) {
	t.Run("wasm", func(t *testing.T) {
		f(t, func(h api.HostCaller) compressor { return newWasmCompressor(t, h) })
	})
	t.Run("native", func(t *testing.T) {
		f(t, func(h api.HostCaller) compressor { return nativeCompressor{api.DefaultEnv(), h} })
	})
}

// failNth fails the nth llm_complete call (0-based) with a fatal error and
// passes everything else to a real Host.
type failNth struct {
	inner *hostfuncs.Host
	n     int
	seen  int
}

func (f *failNth) CallHost(name string, in []byte) ([]byte, error) {
	if name == "llm_complete" {
		f.seen++
		if f.seen-1 == f.n {
			return faultOutput("fatal"), nil
		}
	}
	return f.inner.CallHost(name, in)
}

// docs/spec.md#re-summarization (compaction-v2.AC1.6 path): a failed
// re-summarization is not fatal — the new batches are committed as they
// are and a warning says so. When it succeeds, the old batches are
// replaced by one batch of depth max+1 in the same commit.
func TestResummarization(t *testing.T) {
	bothPaths(t, func(t *testing.T, mk func(api.HostCaller) compressor) {
		hist := conversation("cr", 60)
		cfg := map[string]any{"config": map[string]any{"chunk_size": 8, "clip_first": 1, "clip_last": 1}}
		// Clean run: how many calls, and that re-summarization happened.
		store := newMemStore(hist)
		llm := &scriptLLM{}
		res := mk(&hostfuncs.Host{LLM: llm, Store: store}).compress(t, compressInput(t, "cr", hist, cfg))
		require.False(t, res.Get("failed").Bool())
		created := int(res.Get("batches_created").Int())
		require.Greater(t, created, 4)
		require.Equal(t, created+1, int(res.Get("llm_calls").Int()), "one call per chunk plus the re-summary")
		last := llm.calls[len(llm.calls)-1]
		require.True(t, strings.HasPrefix(last.Messages[0].Content, core.SummaryBatchPrefix), "the last call re-summarizes")
		depths := map[int64]int{}
		for _, b := range res.Get("batches").Array() {
			depths[b.Get("depth").Int()]++
		}
		require.Equal(t, 1, depths[1], "one re-summarized batch of depth 1")
		require.Contains(t, res.Get("history.0.content").String(), "compaction cycles]")

		// The re-summary fails: still committed, with a warning.
		store = newMemStore(hist)
		fh := &failNth{inner: &hostfuncs.Host{LLM: &scriptLLM{}, Store: store}, n: created}
		res = mk(fh).compress(t, compressInput(t, "cr", hist, cfg))
		require.False(t, res.Get("failed").Bool(), res.Get("failure_message").String())
		require.Equal(t, 1, store.commits)
		require.Equal(t, int64(created), res.Get("batches.#").Int(), "the new batches, as they are")
		require.Contains(t, res.Get("warnings").Raw, "re-summarization failed")
	})
}

// Guarantee 5: a compaction that would not shrink the history commits
// nothing and fails with no_gain.
func TestNoGain(t *testing.T) {
	bothPaths(t, func(t *testing.T, mk func(api.HostCaller) compressor) {
		hist := conversation("cn", 12)
		store := newMemStore(hist)
		before := store.dump()
		verbose := &verboseLLM{text: strings.Repeat("A very long summary that says more than the messages did. ", 80)}
		res := mk(&hostfuncs.Host{LLM: verbose, Store: store}).compress(t, compressInput(t, "cn", hist, nil))
		require.True(t, res.Get("failed").Bool())
		require.Equal(t, "no_gain", res.Get("failure_code").String())
		require.Equal(t, before, store.dump())
	})
}

type verboseLLM struct{ text string }

func (v *verboseLLM) Complete(context.Context, *core.ModelRequest) (core.ModelResponse, error) {
	return core.ModelResponse{Content: []core.ContentBlock{{Type: "text", Text: v.text}}}, nil
}

// Guarantee 6: conversation c1 never touches c1-x's batches, although
// their labels share c1's prefix; a legacy-header block of c1 is read.
func TestOwnBatchesOnly(t *testing.T) {
	bothPaths(t, func(t *testing.T, mk func(api.HostCaller) compressor) {
		hist := conversation("c1", 40)
		store := newMemStore(hist)
		theirs := core.Batch{Content: "c1-x's summary", Start: ts(0), End: ts(1), MessageCount: 3, SourceMessageIDs: []string{"x1"}}
		store.addBlock(core.BatchLabel("c1-x", &theirs), core.FormatBatchBlock("c1-x", &theirs))
		store.addBlock("compaction-batch-c1-x-2026-01-01T00:00:00.000Z", "[depth:0|start:2026-01-01T00:00:00.000Z|end:2026-01-01T00:00:01.000Z|count:2]\nlegacy of c1-x")
		store.addBlock("compaction-batch-c1-2026-01-01T00:00:01.000Z", "[depth:2|start:2026-01-01T00:00:00.000Z|end:2026-01-01T00:00:01.000Z|count:7]\nlegacy summary of c1")
		res := mk(&hostfuncs.Host{LLM: &scriptLLM{}, Store: store}).compress(t, compressInput(t, "c1", hist, map[string]any{"dry_run": true}))
		require.False(t, res.Get("failed").Bool(), res.Get("failure_message").String())
		clip := res.Get("history.0.content").String()
		require.Contains(t, clip, "legacy summary of c1")
		require.Contains(t, clip, "compaction cycles]", "the legacy batch's depth 2 counts")
		require.NotContains(t, clip, "c1-x")
		require.Empty(t, res.Get("commit.archive_deletes").Array())
		require.Zero(t, store.commits, "a dry run commits nothing")
	})
}

// Guarantee 8: fallback "extractive" turns an LLM failure into an
// extractive summary; guarantee 7: dry_run returns the commit it would send.
func TestFallbackAndDryRun(t *testing.T) {
	bothPaths(t, func(t *testing.T, mk func(api.HostCaller) compressor) {
		hist := conversation("cx", 40)
		store := newMemStore(hist)
		before := store.dump()
		c := mk(&faultHostFixedLLM{inner: &hostfuncs.Host{LLM: &scriptLLM{}, Store: store}})
		res := c.compress(t, compressInput(t, "cx", hist, map[string]any{"dry_run": true, "config": map[string]any{"fallback": "extractive"}}))
		require.False(t, res.Get("failed").Bool(), res.Get("failure_message").String())
		for _, b := range res.Get("batches").Array() {
			require.Equal(t, "extractive", b.Get("method").String())
		}
		require.Contains(t, res.Get("warnings").Raw, "summarized extractively")
		commit := res.Get("commit")
		require.True(t, commit.Exists())
		require.Equal(t, res.Get("messages_compressed").Int(), commit.Get("remove_message_ids.#").Int())
		require.Equal(t, res.Get("history.0.id").String(), commit.Get("insert_message.id").String())
		require.Equal(t, before, store.dump(), "dry run leaves the store untouched")
		// Without the fallback the same failure fails the compaction.
		res = c.compress(t, compressInput(t, "cx", hist, nil))
		require.Equal(t, "llm_failed", res.Get("failure_code").String())
	})
}

type faultHostFixedLLM struct{ inner *hostfuncs.Host }

func (f *faultHostFixedLLM) CallHost(name string, in []byte) ([]byte, error) {
	if name == "llm_complete" {
		return faultOutput("fatal"), nil
	}
	return f.inner.CallHost(name, in)
}

// target_tokens: the newest messages that fit under the target (with room
// for the archive) stay verbatim, in original order; only the older rest
// is compressed.
func TestTargetTokens(t *testing.T) {
	bothPaths(t, func(t *testing.T, mk func(api.HostCaller) compressor) {
		hist := conversation("ct", 60)
		store := newMemStore(hist)
		full := mk(&hostfuncs.Host{LLM: &scriptLLM{}, Store: newMemStore(hist)}).compress(t, compressInput(t, "ct", hist, map[string]any{"dry_run": true}))
		before := int(full.Get("tokens_estimate_before").Int())
		target := before * 2 / 3
		res := mk(&hostfuncs.Host{LLM: &scriptLLM{}, Store: store}).compress(t, compressInput(t, "ct", hist,
			map[string]any{"config": map[string]any{"target_tokens": target, "max_summary_tokens": 50}}))
		require.False(t, res.Get("failed").Bool(), res.Get("failure_message").String())
		require.Less(t, int(res.Get("tokens_estimate_after").Int()), target)
		require.Less(t, res.Get("messages_compressed").Int(), full.Get("messages_compressed").Int())
		// Kept messages: verbatim, in original order.
		kept := res.Get("history").Array()[1:]
		pos := -1
		for _, k := range kept {
			i := indexOf(hist, k.Raw)
			require.GreaterOrEqual(t, i, 0, "kept message not byte-identical to an input message")
			require.Greater(t, i, pos, "kept messages out of order")
			pos = i
		}
	})
}

func indexOf(hist []json.RawMessage, raw string) int {
	for i, m := range hist {
		if string(m) == raw {
			return i
		}
	}
	return -1
}

// ts is a fixed instant plus m minutes.
func ts(m int) time.Time { return time.Date(2026, 1, 1, 0, m, 0, 0, time.UTC) }

// timeoutOnce answers the first llm_complete with a timeout error.
type timeoutOnce struct {
	inner     *hostfuncs.Host
	retryable bool
	n         int
}

func (f *timeoutOnce) CallHost(name string, in []byte) ([]byte, error) {
	if name == "llm_complete" {
		f.n++
		if f.n == 1 {
			if f.retryable {
				return faultOutput("timeout"), nil
			}
			return []byte(`{"error":{"code":"timeout","message":"injected","retryable":false}}`), nil
		}
	}
	return f.inner.CallHost(name, in)
}

// Guarantee 2: on timeout the remaining work is re-chunked with half the
// chunk size (20 → 10); a timeout the host marks non-retryable, at a chunk
// that cannot shrink, is not retried.
func TestTimeoutRechunking(t *testing.T) {
	bothPaths(t, func(t *testing.T, mk func(api.HostCaller) compressor) {
		hist := conversation("ck", 18) // 12 compressible with keep_recent 6
		res := mk(&timeoutOnce{inner: &hostfuncs.Host{LLM: &scriptLLM{}, Store: newMemStore(hist)}, retryable: true}).
			compress(t, compressInput(t, "ck", hist, map[string]any{"config": map[string]any{"chunk_size": 20}}))
		require.False(t, res.Get("failed").Bool(), res.Get("failure_message").String())
		var sizes []int64
		total := int64(0)
		for _, b := range res.Get("batches").Array() {
			sizes = append(sizes, b.Get("message_count").Int())
			total += b.Get("message_count").Int()
		}
		require.Greater(t, total, int64(10), "enough messages that half of chunk_size splits them")
		require.Equal(t, total, res.Get("messages_compressed").Int())
		require.LessOrEqual(t, sizes[0], int64(10), "the first chunk after the timeout holds at most half of chunk_size")
		require.Contains(t, res.Get("warnings").Raw, "half the chunk size")

		res = mk(&timeoutOnce{inner: &hostfuncs.Host{LLM: &scriptLLM{}, Store: newMemStore(hist)}}).
			compress(t, compressInput(t, "ck", hist, map[string]any{"config": map[string]any{"chunk_size": 2}}))
		require.Equal(t, "llm_timeout", res.Get("failure_code").String())
		require.Equal(t, int64(1), res.Get("llm_calls").Int(), "a non-retryable timeout is not retried")
	})
}
