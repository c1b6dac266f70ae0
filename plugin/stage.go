//go:build wasip1

package main

import (
	"runtime"
	"unsafe"

	"github.com/clipfold/clipfold/api"
)

// Staged transfer: a host that can reach this module's linear memory
// (the Go and Node hosts can; see internal/wasmhost/stage.go) writes a large input
// straight into a buffer reserved here and reads the output straight from
// here, instead of moving both through the Extism kernel eight bytes per
// host call (go-pdk's Input and Output), which is about half the cost of
// a 10k-message split under wazero. Every other host uses the standard path; an
// export called with a non-empty Extism input ignores anything staged.
//
// Protocol, one call at a time (an instance is never used concurrently):
//
//  1. clipfold_stage(n, flags) reserves n bytes and returns their
//     address (0 when n is 0 or over api.MaxInputBytes: use the standard
//     path). flags bit 0 says the host's functions also take their input
//     straight from this memory (see extismHost.CallHost).
//  2. The host writes the input there and calls the export with an
//     empty Extism input.
//  3. On success the export's Extism output is 8 bytes, the little-endian
//     address and length of the real output in this memory; errors are
//     reported as usual. The host copies the output out and calls
//     clipfold_release.
//
// With flags bit 1 (stageResult) the call does not touch the Extism
// kernel at all: the host calls the export itself, not through its SDK's
// call (whose kernel bookkeeping — reset, alloc, input_set, error_get,
// output_offset, output_length, each a wazero call that allocates under
// the Go SDK — cost more than a 100-message shouldCompact's work), the
// export ignores the kernel's input, and leaves its output, or on failure
// (return code 1) its error text, for clipfold_result to describe. The
// host copies it out and calls clipfold_release as above.
var staged struct {
	in, out []byte
	large   bool // the staged call's input or output was large: collect on release
	direct  bool // the host reads host-function inputs from this memory
	result  bool // stageResult: the output or error goes to clipfold_result
}

// directHostArgs is true during a staged call whose host reads
// host-function inputs straight from this module's memory.
var directHostArgs bool

// clipfold_stage's flags.
const (
	stageDirectHostArgs = 1 // directHostArgs
	stageResult         = 2 // the result through clipfold_result, no Extism kernel
)

//go:wasmexport clipfold_stage
func stage(n, flags uint32) uint32 {
	staged.in, staged.out, staged.large = nil, nil, false
	staged.direct = flags&stageDirectHostArgs != 0
	staged.result = flags&stageResult != 0
	if n == 0 || uint64(n) > api.MaxInputBytes {
		return 0
	}
	staged.in = inputBuffer(int(n))
	return uint32(uintptr(unsafe.Pointer(&staged.in[0])))
}

//go:wasmexport clipfold_release
func release() {
	large := staged.large
	staged.out, staged.in, staged.large = nil, nil, false
	if large {
		collect()
	}
}

//go:wasmexport clipfold_result
func result() uint64 {
	var p uint64
	if len(staged.out) > 0 {
		p = uint64(uintptr(unsafe.Pointer(&staged.out[0])))
	}
	return p | uint64(len(staged.out))<<32
}

// takeStaged returns the staged input, if there is one and the Extism
// input is empty (a stageResult call never reads the kernel's input),
// and forgets it either way. It sets directHostArgs and answerToResult
// for the call.
func takeStaged() (in []byte, ok bool) {
	in, direct, result := staged.in, staged.direct, staged.result
	staged.in, staged.out, staged.large, staged.direct, staged.result = nil, nil, false, false, false
	directHostArgs, answerToResult = false, false
	if in == nil || (!result && inputLength() != 0) {
		return nil, false
	}
	directHostArgs, answerToResult = direct, result
	return in, true
}

// keepResult leaves b (an output, or an error's text) for clipfold_result;
// large says whether clipfold_release should collect.
func keepResult(b []byte, large bool) {
	staged.out, staged.large = b, large || len(b) > largeCall
}

// stagedOutput keeps out for the host and returns its 8-byte descriptor;
// large says whether clipfold_release should collect.
func stagedOutput(out []byte, large bool) []byte {
	keepResult(out, large)
	var p uint32
	if len(out) > 0 {
		p = uint32(uintptr(unsafe.Pointer(&out[0])))
	}
	n := uint32(len(out))
	return []byte{byte(p), byte(p >> 8), byte(p >> 16), byte(p >> 24), byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)}
}

// largeCall is the input or output size after which a call collects its
// garbage before returning.
const largeCall = 256 << 10

// collect runs the collector after a large call, with nothing of the
// call left alive, under standard Go: Wasm memory never shrinks, and
// collecting now keeps an instance at ~12 MiB across 10k-message calls
// instead of creeping towards 100 MiB, at no measured cost. Under TinyGo
// a call that reuses its buffers (inputBuffer, api.Env.ReuseMemory)
// leaves little garbage, and a collection costs a walk from every
// number in static data that falls inside a large live buffer, so the
// collector is left to run when the heap is full: a 10k-message split
// took 44 ms instead of 58 ms, with memory as flat (RATIONALE.md).
func collect() {
	if runtime.Compiler == "gc" {
		runtime.GC()
	}
}
