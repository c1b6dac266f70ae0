// Command coldstart measures clipfold's cold start on the wazero Go host
// in a fresh process (see internal/coldstart); tools/benchreport runs it
// many times.
//
//	coldstart -wasm build/clipfold.wasm -cache DIR|- [-export version] [-input '{}']
package main

import (
	"context"
	"time"

	"github.com/clipfold/clipfold/internal/coldstart"
	"github.com/clipfold/clipfold/internal/wasmhost"
)

func main() {
	coldstart.Main(time.Now(), func(ctx context.Context, wasm []byte, cache string) (func(context.Context) (*wasmhost.Instance, error), error) {
		rt, err := wasmhost.NewRuntime(ctx, wasmhost.Options{Wasm: wasm, CacheDir: cache})
		if err != nil {
			return nil, err
		}
		return rt.NewInstance, nil
	})
}
