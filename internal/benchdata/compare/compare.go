// Package compare times one export natively and through plug-in instances
// in the same benchmark, for every Go host (harness, harness/wasmtimehost),
// under the sub-benchmark names tools/benchreport reads.
package compare

import (
	"context"
	"testing"

	"github.com/clipfold/clipfold/api"
	"github.com/clipfold/clipfold/internal/benchdata"
)

// Caller is a plug-in instance on any Go host.
type Caller interface {
	Call(ctx context.Context, export string, input []byte) ([]byte, error)
}

// Export times export on in natively (api.Exports) and through staged
// and plain (staging off: input and output through the Extism kernel),
// as sub-benchmarks name("native"), name("wasm") and name("wasm-extism").
func Export(b *testing.B, export string, in []byte, staged, plain Caller, name func(kind string) string) {
	env := api.DefaultEnv()
	h := api.Exports[export]
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
