// Command coldstart is tools/benchreport/coldstart for the Wasmtime host:
// the same measurement (internal/coldstart) and output.
//
//	coldstart -wasm build/clipfold.wasm -cache DIR|- [-export version] [-input '{}']
package main

import (
	"context"
	"time"

	"github.com/clipfold/clipfold/harness/wasmtimehost"
	"github.com/clipfold/clipfold/internal/coldstart"
)

func main() {
	coldstart.Main(time.Now(), func(ctx context.Context, wasm []byte, cache string) (func(context.Context) (*wasmtimehost.Instance, error), error) {
		rt, err := wasmtimehost.NewRuntime(ctx, wasmtimehost.Options{Wasm: wasm, CacheDir: cache})
		if err != nil {
			return nil, err
		}
		return rt.NewInstance, nil
	})
}
