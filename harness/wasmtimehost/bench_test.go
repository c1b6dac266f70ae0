package wasmtimehost_test

import (
	"fmt"
	"testing"

	"github.com/clipfold/clipfold/api"
	"github.com/clipfold/clipfold/harness/wasmtimehost"
	"github.com/clipfold/clipfold/internal/benchdata"
)

// The benchmarks carry the names of package harness's (BenchmarkSplit,
// BenchmarkScore, BenchmarkPerfPerTurn; sub-benchmarks native, wasm =
// staged, wasm-extism = through the Extism kernel) so tools/benchreport
// reads both runs with one table; native runs again here so that each
// run's ratio compares the same minutes of machine load.

var benchSizes = []int{1_000, 10_000, 100_000}

func BenchmarkSplit(b *testing.B) { benchExport(b, "split") }
func BenchmarkScore(b *testing.B) { benchExport(b, "score") }

func benchExport(b *testing.B, export string) {
	staged, plain := benchInstances(b)
	for _, n := range benchSizes {
		benchCall(b, export, benchdata.History(n), staged, plain, func(kind string) string { return fmt.Sprintf("%s/n=%d", kind, n) })
	}
}

// BenchmarkPerfPerTurn: shouldCompact, score and split of a 100-message
// history (~41 KB, staged), what an agent pays on every turn.
func BenchmarkPerfPerTurn(b *testing.B) {
	staged, plain := benchInstances(b)
	in := benchdata.History(100)
	for _, export := range []string{"shouldCompact", "score", "split"} {
		benchCall(b, export, in, staged, plain, func(kind string) string { return export + "/" + kind })
	}
}

func benchInstances(b *testing.B) (staged, plain *wasmtimehost.Instance) {
	return newInstance(b, wasmtimehost.Options{}), newInstance(b, wasmtimehost.Options{NoStaging: true})
}

func benchCall(b *testing.B, export string, in []byte, staged, plain *wasmtimehost.Instance, name func(kind string) string) {
	env := api.DefaultEnv()
	h := api.Exports[export]
	b.Run(name("native"), func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := h(env, in); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, c := range []struct {
		name string
		inst *wasmtimehost.Instance
	}{{"wasm", staged}, {"wasm-extism", plain}} {
		b.Run(name(c.name), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.inst.Call(ctx, export, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
