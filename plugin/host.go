//go:build wasip1

package main

import (
	"errors"

	"github.com/clipfold/clipfold/api"
	pdk "github.com/extism/go-pdk"
)

// The host functions of SPEC §5: each takes the offset of a JSON input in
// Extism memory and returns the offset of a JSON output.

//go:wasmimport extism:host/user llm_complete
func hostLLMComplete(offset uint64) uint64

//go:wasmimport extism:host/user memory_list
func hostMemoryList(offset uint64) uint64

//go:wasmimport extism:host/user compaction_commit
func hostCompactionCommit(offset uint64) uint64

// extismHost implements api.HostCaller over the imports.
type extismHost struct{}

func (extismHost) CallHost(name string, input []byte) ([]byte, error) {
	in := pdk.AllocateBytes(input)
	defer in.Free()
	var off uint64
	switch name {
	case "llm_complete":
		off = hostLLMComplete(in.Offset())
	case "memory_list":
		off = hostMemoryList(in.Offset())
	case "compaction_commit":
		off = hostCompactionCommit(in.Offset())
	default:
		return nil, errors.New("no host function " + name)
	}
	if off == 0 {
		return nil, errors.New("the host returned no output")
	}
	out := pdk.FindMemory(off)
	defer out.Free()
	return out.ReadBytes(), nil
}

//go:wasmexport compress
func compress() int32 {
	return call(func(e *api.Env, in []byte) ([]byte, error) {
		return e.Compress(in, extismHost{}, api.SystemClock{})
	}, false)
}
