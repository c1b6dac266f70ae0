// Package coldstart is the body of the cold-start probe that
// tools/benchreport runs in fresh processes (tools/benchreport/coldstart):
// read the module, compile it (or load
// it from the cache), instantiate it, call one export, and print one JSON
// object of the times.
//
//	coldstart -wasm build/clipfold.wasm -cache DIR|- [-export version] [-input '{}']
package coldstart

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/clipfold/clipfold/internal/wasmhost"
)

// Compile makes a host's runtime for wasm with the given cache directory
// ("-" disables it) and returns how to instantiate it.
type Compile[I wasmhost.Caller] func(ctx context.Context, wasm []byte, cache string) (newInstance func(context.Context) (I, error), err error)

// Main parses the flags, measures, prints, and exits non-zero on failure.
// start is the process's first instant (taken at the top of main).
func Main[I wasmhost.Caller](start time.Time, compile Compile[I]) {
	wasmPath := flag.String("wasm", "", "plug-in to load (default: wasmhost.FindWasm)")
	cache := flag.String("cache", "-", `compilation cache directory; "-" disables it`)
	export := flag.String("export", "version", "export to call once")
	input := flag.String("input", "{}", "input of that call")
	flag.Parse()
	ctx := context.Background()

	path := *wasmPath
	if path == "" {
		var err error
		if path, err = wasmhost.FindWasm(); err != nil {
			fail(err)
		}
	}
	t0 := time.Now()
	wasm, err := os.ReadFile(path)
	if err != nil {
		fail(err)
	}
	t1 := time.Now()
	newInstance, err := compile(ctx, wasm, *cache)
	if err != nil {
		fail(err)
	}
	t2 := time.Now()
	inst, err := newInstance(ctx)
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
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "coldstart:", err)
	os.Exit(1)
}
