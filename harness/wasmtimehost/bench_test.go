package wasmtimehost_test

import (
	"testing"

	"github.com/clipfold/clipfold/harness/wasmtimehost"
	"github.com/clipfold/clipfold/internal/benchdata"
	"github.com/clipfold/clipfold/internal/benchdata/compare"
)

// The benchmarks carry the names of package harness's (BenchmarkSplit,
// BenchmarkScore, BenchmarkPerfPerTurn; sub-benchmarks native, wasm =
// staged, wasm-extism = through the Extism kernel) so tools/benchreport
// reads both runs with one table; native runs again here so that each
// run's ratio compares the same minutes of machine load.

func BenchmarkSplit(b *testing.B) { benchExport(b, "split") }
func BenchmarkScore(b *testing.B) { benchExport(b, "score") }

func benchExport(b *testing.B, export string) {
	staged, plain := benchInstances(b)
	compare.ExportSizes(b, export, staged, plain)
}

// BenchmarkPerfPerTurn: shouldCompact, score and split of a 100-message
// history (~41 KB, staged), what an agent pays on every turn.
func BenchmarkPerfPerTurn(b *testing.B) {
	staged, plain := benchInstances(b)
	in := benchdata.History(100)
	for _, export := range []string{"shouldCompact", "score", "split"} {
		compare.Export(b, export, in, staged, plain, func(kind string) string { return export + "/" + kind })
	}
}

func benchInstances(b *testing.B) (staged, plain *wasmtimehost.Instance) {
	return newInstance(b, wasmtimehost.Options{}), newInstance(b, wasmtimehost.Options{NoStaging: true})
}
