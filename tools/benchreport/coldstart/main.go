// Command coldstart measures clipfold's cold start in a fresh process:
// compile (or load from wazero's compilation cache), instantiate, first
// call. It prints one JSON object; tools/benchreport runs it many times.
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

	"github.com/clipfold/clipfold/harness"
)

func main() {
	start := time.Now()
	wasmPath := flag.String("wasm", "", "plug-in to load (default: harness.FindWasm)")
	cache := flag.String("cache", "-", `wazero compilation cache directory; "-" disables it`)
	export := flag.String("export", "version", "export to call once")
	input := flag.String("input", "{}", "input of that call")
	flag.Parse()
	ctx := context.Background()

	path := *wasmPath
	if path == "" {
		var err error
		if path, err = harness.FindWasm(); err != nil {
			fail(err)
		}
	}
	t0 := time.Now()
	wasm, err := os.ReadFile(path)
	if err != nil {
		fail(err)
	}
	t1 := time.Now()
	rt, err := harness.NewRuntime(ctx, harness.Options{Wasm: wasm, CacheDir: *cache})
	if err != nil {
		fail(err)
	}
	t2 := time.Now()
	inst, err := rt.NewInstance(ctx)
	if err != nil {
		fail(err)
	}
	t3 := time.Now()
	if _, err := inst.Call(ctx, *export, []byte(*input)); err != nil {
		fail(err)
	}
	t4 := time.Now()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	_ = json.NewEncoder(os.Stdout).Encode(map[string]float64{
		"read_ms":        ms(t1.Sub(t0)),
		"compile_ms":     ms(t2.Sub(t1)),
		"instantiate_ms": ms(t3.Sub(t2)),
		"first_call_ms":  ms(t4.Sub(t3)),
		"in_process_ms":  ms(t4.Sub(start)),
	})
	_ = rt.Close(ctx)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "coldstart:", err)
	os.Exit(1)
}
