//go:build wasip1

package main

import (
	"errors"
	"runtime"
	"unsafe"

	"github.com/clipfold/clipfold/api"
	pdk "github.com/extism/go-pdk"
)

// The host functions of docs/spec.md#host-functions: each takes the offset of
// a JSON input in Extism memory and returns the offset of a JSON output. (In a
// staged call of a host that asked for it, the input stays in this module's
// memory; see CallHost and stage.go.)

//go:wasmimport extism:host/user llm_complete
func hostLLMComplete(offset uint64) uint64

//go:wasmimport extism:host/user memory_list
func hostMemoryList(offset uint64) uint64

//go:wasmimport extism:host/user compaction_commit
func hostCompactionCommit(offset uint64) uint64

// extismHost implements api.HostCaller over the imports.
type extismHost struct{}

func (extismHost) CallHost(name string, input []byte) ([]byte, error) {
	var arg uint64
	if directHostArgs && len(input) > 0 {
		// The host reads the input where it is (staged calls of the Go
		// host): bit 63 set, the length above bit 32, the address below.
		arg = 1<<63 | uint64(len(input))<<32 | uint64(uintptr(unsafe.Pointer(&input[0])))
	} else {
		in := pdk.AllocateBytes(input)
		defer in.Free()
		arg = in.Offset()
	}
	var off uint64
	switch name {
	case "llm_complete":
		off = hostLLMComplete(arg)
	case "memory_list":
		off = hostMemoryList(arg)
	case "compaction_commit":
		off = hostCompactionCommit(arg)
	default:
		return nil, errors.New("no host function " + name)
	}
	runtime.KeepAlive(input)
	if off == 0 {
		return nil, errors.New("the host returned no output")
	}
	out := pdk.FindMemory(off)
	defer out.Free()
	return out.ReadBytes(), nil
}

//go:wasmexport compress
func compress() int32 {
	return run(func(e *api.Env, in []byte) ([]byte, error) {
		return e.Compress(in, extismHost{}, api.SystemClock{})
	})
}
