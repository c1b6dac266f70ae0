// Command wasmprof times one clipfold export on an input file, in a loop,
// with the plug-in's memory settings (api.Env.ReuseMemory). Its point is
// to be built with the plug-in's TinyGo target as a WASI command and run
// under Node's WASI with perf, which names every wasm function (V8 writes
// a perf map), so the TinyGo build's own profile can be read, collector
// included:
//
//	scripts/wasmprof.sh split testdata.json 100       # build, run, perf report
//
// or by hand:
//
//	tinygo build -target=clipfold-wasip1 -gc=precise -opt=z -scheduler=none -o /tmp/wasmprof.wasm ./tools/wasmprof
//	perf record -g node --perf-basic-prof tools/wasmprof/run.mjs /tmp/wasmprof.wasm split in.json 100
//	perf report --no-children --sort symbol
//
// It also runs natively (go run ./tools/wasmprof split in.json 10), for
// comparison. It prints each call's time and heap size for short runs,
// then the median and the fastest.
//
//	wasmprof EXPORT INPUT-FILE [CALLS]
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/clipfold/clipfold/api"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "wasmprof:", err)
		os.Exit(2)
	}
}

func run(args []string, w io.Writer) error {
	if len(args) < 2 || len(args) > 3 {
		return errors.New("usage: wasmprof EXPORT INPUT-FILE [CALLS]")
	}
	h, ok := api.Lookup(args[0])
	if !ok {
		return fmt.Errorf("no export %q", args[0])
	}
	in, err := os.ReadFile(args[1])
	if err != nil {
		return err
	}
	calls := 1
	if len(args) == 3 {
		if calls, err = strconv.Atoi(args[2]); err != nil || calls < 1 {
			return fmt.Errorf("CALLS must be a positive number, got %q", args[2])
		}
	}
	env := api.DefaultEnv()
	env.ReuseMemory() // as the plug-in does
	var ms runtime.MemStats
	ds := make([]time.Duration, 0, calls)
	for i := 0; i < calls; i++ {
		t := time.Now()
		out, err := h(env, in)
		d := time.Since(t)
		ds = append(ds, d)
		if calls <= 20 || i == calls-1 {
			runtime.ReadMemStats(&ms)
			fmt.Fprintf(w, "call %d: %v, %d bytes out, heap %d MiB, error: %v\n", i+1, d, len(out), ms.HeapSys>>20, err)
		}
		env.EndCall()
	}
	slices.Sort(ds)
	fmt.Fprintf(w, "%s: median %v, fastest %v of %d calls\n", args[0], ds[len(ds)/2], ds[0], calls)
	return nil
}
