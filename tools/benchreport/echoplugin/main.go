//go:build wasip1

// Command echoplugin is a trivial Extism plug-in built with the same
// toolchain, flags and go-pdk as clipfold. It isolates the cost of moving
// bytes across the Extism boundary from clipfold's own work:
//
//	sink  reads the input (go-pdk Input: one input_load_u64 host call per
//	      8 bytes) and writes nothing
//	echo  reads the input and writes it back as the output (go-pdk Output:
//	      one store_u64 host call per 8 bytes)
//	emit  reads a decimal byte count n and writes n bytes
//	nop   touches neither input nor output
//
// tools/benchreport builds it into a temporary directory; the harness
// benchmarks pick it up through $CLIPFOLD_ECHO_WASM.
package main

import (
	"strconv"

	pdk "github.com/extism/go-pdk"
)

func main() {}

var sunk int

//go:wasmexport sink
func sink() int32 {
	sunk += len(pdk.Input())
	return 0
}

//go:wasmexport echo
func echo() int32 {
	pdk.Output(pdk.Input())
	return 0
}

//go:wasmexport emit
func emit() int32 {
	n, err := strconv.Atoi(string(pdk.Input()))
	if err != nil {
		pdk.SetErrorString(err.Error())
		return 1
	}
	pdk.Output(make([]byte, n))
	return 0
}

//go:wasmexport nop
func nop() int32 { return 0 }
