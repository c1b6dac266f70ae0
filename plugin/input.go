//go:build wasip1

package main

import "encoding/binary"

// The Extism kernel's input, read without go-pdk's Input, which makes a
// new buffer per call: the kernel offers no bulk copy (its memory is not
// the plug-in's), so the input comes 8 bytes per input_load_u64 call, as
// in go-pdk, but into the one buffer every call reuses.

//go:wasmimport extism:host/env input_load_u64
func inputLoadU64(offset uint64) uint64

//go:wasmimport extism:host/env input_load_u8
func inputLoadU8(offset uint64) uint32

// inBuf is the input buffer of every call, staged or not, kept from call
// to call: a multi-megabyte buffer dropped per call is what TinyGo's
// collector leaves pinned (see api.Env.ReuseMemory). Nothing may keep a
// view into an input past its call (core.Breakers copies its keys).
var inBuf []byte

// inputBuffer returns inBuf resized to n bytes, grown when too small.
func inputBuffer(n int) []byte {
	if cap(inBuf) < n {
		inBuf = make([]byte, n)
	}
	return inBuf[:n]
}

// loadInput copies the call's Extism input into inputBuffer.
func loadInput() []byte {
	n := int(inputLength())
	b := inputBuffer(n)
	i := 0
	for ; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], inputLoadU64(uint64(i)))
	}
	for ; i < n; i++ {
		b[i] = byte(inputLoadU8(uint64(i)))
	}
	return b
}
