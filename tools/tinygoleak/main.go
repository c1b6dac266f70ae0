// Command tinygoleak reproduces TinyGo's memory retention outside
// clipfold: a 60-line go-pdk plug-in (./plugin) whose exports allocate
// buffers as large as their input, called 30 times with a 2.9 MB input
// from the Extism Go SDK. After each few calls it asks the plug-in for
// runtime.MemStats after runtime.GC().
//
//	bash scripts/build-tinygo.sh /tmp/leak.wasm ./tools/tinygoleak/plugin
//	go run ./tools/tinygoleak /tmp/leak.wasm bigout    # or copyout, alloconly
//
// With TinyGo 0.41.1 (-gc=precise or conservative) the live heap grows
// call after call (bigout: 95 MB after 25 calls for a 2.9 MB input, i.e.
// ~33 dead inputs or outputs kept) before levelling off; alloconly, which
// only allocates an input-sized []byte and drops it, keeps 72 MB after 30
// calls. The same plug-in built with standard Go keeps 35 KB. See
// docs/benchmarks-history.md.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	extism "github.com/extism/go-sdk"
)

func main() {
	ctx := context.Background()
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: tinygoleak PLUGIN.wasm bigout|copyout|alloconly")
		os.Exit(2)
	}
	wasm, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	exp := os.Args[2]
	p, err := extism.NewPlugin(ctx, extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: wasm}}}, extism.PluginConfig{EnableWasi: true}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	in := []byte(strings.Repeat(`{"id":"m1","role":"user","content":"the deploy failed because the config had a typo; we agreed"}`, 30000))
	for i := 1; i <= 30; i++ {
		if _, _, err := p.Call(exp, in); err != nil {
			panic(err)
		}
		if i%5 == 0 || i <= 3 {
			_, h, _ := p.Call("heap", nil)
			fmt.Printf("%s call %d: heap alloc/sys %s\n", exp, i, h)
		}
	}
}
