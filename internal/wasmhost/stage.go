package wasmhost

import (
	"context"
	"encoding/binary"
	"errors"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// Staged transfer (plugin/stage.go has the plug-in's half).
//
// Through Extism's own path a call's input and output cross the boundary
// eight bytes per host call (go-pdk reads with input_load_u64 and writes
// with store_u64, ~100 ns each): two thirds of a 10k-message split
// (docs/benchmarks.md: 114 ms through Extism memory, 35 ms staged, for
// 4 MB). The Go SDK gives host code no handle on the plug-in module's
// linear memory, so the Runtime compiles the module with a wazero function
// listener on its `version` export (experimental but public API); the
// listener sees the calling module, and NewInstance calls `version` once
// to capture it. With it, Call copies inputs of StageMin bytes or more
// straight into the plug-in's memory and its output straight out; and
// when the host functions are hostfuncs.Bind's (Options.Host), compress
// passes their inputs (summarization requests, commits) in place too.
//
// When any of it is missing (a plug-in without clipfold_stage, an input
// over the limit) the standard path is used; outputs and errors are the
// same either way (harness tests compare both paths byte for byte).

// StageMin is the input size from which Call stages, unless
// Options.StageMin says otherwise. Staging costs two
// extra calls into the module (a few microseconds); below this size the
// standard path's host calls cost about as much.
const StageMin = 16 << 10

// stageDirectHostArgs is clipfold_stage's flag (plugin/stage.go) for
// host functions that read their inputs from the plug-in's memory.
const stageDirectHostArgs = 1

type sinkKey struct{}

// moduleSink receives the plug-in module seen by the listener.
type moduleSink struct{ mod api.Module }

// captureFactory puts a listener on the `version` export only, so the
// rest of the module is compiled exactly as without it.
type captureFactory struct{}

func (captureFactory) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	for _, n := range def.ExportNames() {
		if n == "version" {
			return captureListener{}
		}
	}
	return nil
}

type captureListener struct{}

func (captureListener) Before(ctx context.Context, mod api.Module, _ api.FunctionDefinition, _ []uint64, _ experimental.StackIterator) {
	if s, ok := ctx.Value(sinkKey{}).(*moduleSink); ok && s.mod == nil {
		s.mod = mod
	}
}

func (captureListener) After(context.Context, api.Module, api.FunctionDefinition, []uint64) {}

func (captureListener) Abort(context.Context, api.Module, api.FunctionDefinition, error) {}

// stager moves one instance's large inputs and outputs directly.
type stager struct {
	mem            api.Memory
	stage, release api.Function
	direct         bool // host functions read their inputs from mem (hostfuncs.WithGuestMemory)
	calls          int  // staged calls so far (tests check the path is taken)
}

// newStager returns nil when the module lacks the staging exports.
func newStager(mod api.Module, direct bool) *stager {
	if mod == nil || mod.Memory() == nil {
		return nil
	}
	s := &stager{mem: mod.Memory(), stage: mod.ExportedFunction("clipfold_stage"), release: mod.ExportedFunction("clipfold_release"), direct: direct}
	if s.stage == nil || s.release == nil || len(s.stage.Definition().ParamTypes()) != 2 {
		return nil // not a clipfold built with this protocol
	}
	return s
}

// put reserves len(input) bytes in the plug-in and writes input there. ok
// is false when the plug-in declined (too large): use the standard path.
func (s *stager) put(ctx context.Context, input []byte) (ok bool, err error) {
	var flags uint64
	if s.direct {
		flags |= stageDirectHostArgs
	}
	res, err := s.stage.Call(ctx, uint64(len(input)), flags)
	if err != nil {
		return false, err
	}
	ptr := uint32(res[0])
	if ptr == 0 {
		return false, nil
	}
	if !s.mem.Write(ptr, input) {
		return false, errors.New("clipfold: staging: the plug-in's buffer is outside its memory")
	}
	s.calls++
	return true, nil
}

// take copies out the output that desc (the export's 8-byte Extism
// output) describes, and lets the plug-in free it.
func (s *stager) take(ctx context.Context, desc []byte) ([]byte, error) {
	if len(desc) != 8 {
		return nil, errors.New("clipfold: staging: the plug-in answered without an output descriptor")
	}
	ptr, n := binary.LittleEndian.Uint32(desc), binary.LittleEndian.Uint32(desc[4:])
	view, ok := s.mem.Read(ptr, n)
	if !ok {
		return nil, errors.New("clipfold: staging: the output descriptor points outside the plug-in's memory")
	}
	out := make([]byte, n)
	copy(out, view)
	if _, err := s.release.Call(ctx); err != nil {
		return nil, err
	}
	return out, nil
}

// Staging reports whether Call stages large inputs on this instance.
func (i *Instance) Staging() bool { return i.st != nil }
