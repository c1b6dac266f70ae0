//go:build wasip1

// Command plugin is the guest half of the TinyGo retention reproducer
// (see ../main.go): go-pdk exports that allocate input-sized buffers.
package main

import (
	"runtime"

	pdk "github.com/extism/go-pdk"
)

func main() {}

type item struct {
	raw  []byte
	text string
	n    int
}

// copyout: decode-like work: copy the input into per-"message" pieces,
// keep them in a slice of structs with pointers, build an output as large
// as the input by appending the pieces, return it.
//
//go:wasmexport copyout
func copyout() int32 {
	in := pdk.Input()
	const piece = 275
	items := make([]item, 0, len(in)/piece+1)
	for i := 0; i < len(in); i += piece {
		j := min(i+piece, len(in))
		raw := append(make([]byte, 0, j-i), in[i:j]...)
		items = append(items, item{raw: raw, text: string(raw[:10]), n: j - i})
	}
	out := make([]byte, 0, len(in)+64)
	for k := len(items) - 1; k >= 0; k-- {
		out = append(out, items[k].raw...)
	}
	pdk.Output(out)
	return 0
}

// bigout: only a large output, built from the input.
//
//go:wasmexport bigout
func bigout() int32 {
	in := pdk.Input()
	out := make([]byte, 0, len(in)+64)
	out = append(out, in...)
	pdk.Output(out)
	return 0
}

//go:wasmexport heap
func heap() int32 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	pdk.OutputString(itoa(ms.HeapAlloc) + " " + itoa(ms.HeapSys))
	return 0
}

func itoa(v uint64) string {
	if v == 0 {
		return "0"
	}
	var b []byte
	for v > 0 {
		b = append([]byte{byte('0' + v%10)}, b...)
		v /= 10
	}
	return string(b)
}

var sink byte

// alloconly allocates an input-sized buffer and drops it: nothing else.
//
//go:wasmexport alloconly
func alloconly() int32 {
	n := int(inputLen())
	b := make([]byte, n)
	b[n/2] = 1
	sink += b[n/2]
	pdk.Output([]byte{sink})
	return 0
}

//go:wasmimport extism:host/env input_length
func inputLen() uint64
