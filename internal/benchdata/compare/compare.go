// Package compare times one export natively and through plug-in instances
// in the same benchmark, for the Go host (harness),
// under the sub-benchmark names tools/benchreport reads.
package compare

import (
	"context"
	"fmt"
	"testing"

	"github.com/clipfold/clipfold/api"
	"github.com/clipfold/clipfold/internal/benchdata"
)

// Caller is a plug-in instance on any Go host.
type Caller interface {
	Call(ctx context.Context, export string, input []byte) ([]byte, error)
}

// Export times export on in natively (api.Lookup) and through staged
// and plain (staging off: input and output through the Extism kernel),
// as sub-benchmarks name("native"), name("wasm") and name("wasm-extism").
func Export(b *testing.B, export string, in []byte, staged, plain Caller, name func(kind string) string) {
	env := api.DefaultEnv()
	h, _ := api.Lookup(export)
	b.Run(name("native"), func(b *testing.B) {
		benchdata.Run(b, in, func(in []byte) error { _, err := h(env, in); return err })
	})
	for _, c := range []struct {
		name string
		inst Caller
	}{{"wasm", staged}, {"wasm-extism", plain}} {
		b.Run(name(c.name), func(b *testing.B) {
			benchdata.Run(b, in, func(in []byte) error { _, err := c.inst.Call(context.Background(), export, in); return err })
		})
	}
}

// Sizes are the history sizes, in messages, at which the exports are
// compared: an agent's turn (100) to the largest history of the targets
// (100k).
var Sizes = []int{100, 1_000, 10_000, 100_000}

// ExportSizes runs Export on a benchdata history of each of Sizes, as
// sub-benchmarks "native/n=1000", "wasm/n=1000", … (the names
// tools/benchreport reads).
func ExportSizes(b *testing.B, export string, staged, plain Caller) {
	for _, n := range Sizes {
		Export(b, export, benchdata.History(n), staged, plain, func(kind string) string { return fmt.Sprintf("%s/n=%d", kind, n) })
	}
}
