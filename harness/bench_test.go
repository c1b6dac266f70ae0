package harness_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/clipfold/clipfold/api"
	"github.com/clipfold/clipfold/hostfuncs"
	"github.com/clipfold/clipfold/internal/benchdata"
	"github.com/clipfold/clipfold/internal/benchdata/compare"
	"github.com/clipfold/clipfold/internal/wasmhost"
	"github.com/stretchr/testify/require"
)

// benchHistory is n messages of ~400 bytes each (internal/benchdata),
// JSON-encoded as the input of split/score.
func benchHistory(n int) []byte { return benchdata.History(n) }

var benchSizes = compare.Sizes

// BenchmarkSplit, BenchmarkScore and BenchmarkShouldCompact compare the
// same api function natively and through the .wasm, staged (the clipfold
// Go host) and through Extism memory (a plain Extism Go SDK), JSON
// decode and encode included on every side.
func BenchmarkSplit(b *testing.B)         { benchExport(b, "split") }
func BenchmarkScore(b *testing.B)         { benchExport(b, "score") }
func BenchmarkShouldCompact(b *testing.B) { benchExport(b, "shouldCompact") }

func benchExport(b *testing.B, export string) {
	staged, plain := benchInstances(b)
	compare.ExportSizes(b, export, staged, plain)
}

// benchInstances is a staged instance and one with staging off
// (Options.NoStaging): its input and output cross through Extism memory,
// as for hosts that cannot stage.
func benchInstances(b testing.TB) (staged, plain *wasmhost.Instance) {
	staged = newInstance(b)
	rt := newRuntime(b, wasmhost.Options{NoStaging: true})
	plain, err := rt.NewInstance(context.Background())
	require.NoError(b, err)
	return staged, plain
}

// BenchmarkCompressOverhead measures compress on a 2,000-message history
// with an LLM that answers at once: everything but model time.
func BenchmarkCompressOverhead(b *testing.B) {
	hist := conversation("cb", 2000)
	in := compressInput(b, "cb", hist, map[string]any{"dry_run": true,
		"config": map[string]any{"chunk_size": 20, "keep_recent": 20}})
	host := &hostfuncs.Host{LLM: &scriptLLM{}, Store: newMemStore(hist)}
	b.Run("native", func(b *testing.B) {
		env := api.DefaultEnv()
		for i := 0; i < b.N; i++ {
			out, err := env.Compress(in, host, api.SystemClock{})
			require.NoError(b, err)
			var r struct{ Failed bool }
			_ = json.Unmarshal(out[len(out)-200:], &r)
		}
	})
	b.Run("wasm", func(b *testing.B) {
		c := newWasmCompressor(b, host)
		for i := 0; i < b.N; i++ {
			res := c.compress(b, in)
			if res.Get("failed").Bool() {
				b.Fatal(res.Get("failure_message").String())
			}
		}
	})
}

// BenchmarkPerfPerTurn is what an agent pays on every turn: shouldCompact,
// score and split of a 100-message history (~41 KB), natively and
// through the plug-in (staged: it is over 16 KiB), and the same through
// Extism memory.
func BenchmarkPerfPerTurn(b *testing.B) {
	staged, plain := benchInstances(b)
	in := benchHistory(100)
	for _, export := range []string{"shouldCompact", "score", "split"} {
		compare.Export(b, export, in, staged, plain, func(kind string) string { return export + "/" + kind })
	}
}
