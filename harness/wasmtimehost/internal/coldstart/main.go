// Command coldstart is tools/benchreport/coldstart for the Wasmtime host:
// compile (or load from the cache), instantiate, first call, in a fresh
// process; one JSON object with the same fields.
//
//	coldstart -wasm build/clipfold.wasm -cache DIR|- [-export version] [-input '{}']
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/clipfold/clipfold/harness/wasmtimehost"
)

func main() {
	start := time.Now()
	wasmPath := flag.String("wasm", "", "plug-in to load (default: harness.FindWasm)")
	cache := flag.String("cache", "-", `compilation cache directory; "-" disables it`)
	export := flag.String("export", "version", "export to call once")
	input := flag.String("input", "{}", "input of that call")
	flag.Parse()
	ctx := context.Background()
	t0 := time.Now()
	rt, err := wasmtimehost.NewRuntime(ctx, wasmtimehost.Options{WasmPath: *wasmPath, CacheDir: *cache})
	if err != nil {
		fail(err)
	}
	t1 := time.Now()
	inst, err := rt.NewInstance(ctx)
	if err != nil {
		fail(err)
	}
	t2 := time.Now()
	if _, err := inst.Call(ctx, *export, []byte(*input)); err != nil {
		fail(err)
	}
	t3 := time.Now()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	_ = json.NewEncoder(os.Stdout).Encode(map[string]float64{
		"compile_ms":     ms(t1.Sub(t0)),
		"instantiate_ms": ms(t2.Sub(t1)),
		"first_call_ms":  ms(t3.Sub(t2)),
		"in_process_ms":  ms(t3.Sub(start)),
	})
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "coldstart:", err)
	os.Exit(1)
}
