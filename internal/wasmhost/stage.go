package wasmhost

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"unsafe"

	"github.com/clipfold/clipfold/hostfuncs"
	extism "github.com/extism/go-sdk"
	wazeroapi "github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// Staged transfer and direct calls (plugin/stage.go has the plug-in's
// half).
//
// Through the Extism Go SDK's call, a call's input and output cross the
// boundary eight bytes per host call (go-pdk reads with input_load_u64
// and writes with store_u64, ~100 ns each), and the SDK looks up seven
// kernel functions per call, each lookup a new wazero call engine with
// its own stack (~190 KB of garbage and ~80 µs per call, more than a
// 100-message shouldCompact's work). The SDK gives host code no handle on
// the plug-in module or the Extism kernel module; sdkModules reads them
// out of the SDK's Plugin. With them, Call looks the plug-in's functions up once,
// writes the input straight into the plug-in's memory
// (clipfold_stage), calls the export itself with the context the SDK's
// call would give it (its kernel imports and host functions read it),
// and copies the output or error straight out (clipfold_result). When
// the host functions are hostfuncs.Bind's (Options.Host), compress passes
// their inputs (summarization requests, commits) in place too.
//
// When any of it is missing (a plug-in without clipfold_result, an input
// over the limit) the SDK's call is used; outputs and errors are the same
// either way (harness tests compare both paths byte for byte).

// clipfold_stage's flags (plugin/stage.go).
const (
	// stageDirectHostArgs: host functions read their inputs from the
	// plug-in's memory.
	stageDirectHostArgs = 1
	// stageResult: the host calls the export itself and reads its output
	// or error through clipfold_result; the call never touches the
	// Extism kernel's input, output or error.
	stageResult = 2
)

// sdkModules returns the plug-in module and the Extism kernel module of
// p's instance. The SDK keeps both in unexported fields of Plugin
// (mainModule, extism) and hands host code neither, so they are read by
// reflection, each checked by name and type: after a go-sdk change that
// renames or retypes one, it is nil and every call takes the SDK's path
// (TestStagingMatchesStandardPath then fails, so an upgrade cannot lose
// the direct path silently). A wazero function listener sees both too
// (the first version of this did that), but compiling with one costs
// every cold start ~3 ms: wazero builds listener trampolines for every
// function type of both modules, also when the code comes from the
// cache.
func sdkModules(p *extism.Plugin) (mod, kernel wazeroapi.Module) {
	v := reflect.ValueOf(p).Elem()
	return moduleField(v, "mainModule"), moduleField(v, "extism")
}

var moduleType = reflect.TypeFor[wazeroapi.Module]()

// readSDKModules is sdkModules; tests replace it to play a go-sdk whose
// Plugin fields moved.
var readSDKModules = sdkModules

// noStagingWarning is said once per process when an instance of a
// plug-in that stages cannot be staged (see warnNoStaging).
var noStagingWarning sync.Once

// warnNoStaging says, once per process, that calls take the SDK's path:
// the plug-in has the staging exports, but the SDK's modules could not
// be reached (a go-sdk upgrade moved Plugin's fields) or the exports are
// not of this protocol. Calls still work and memory is still bounded
// (the allocator in memory.go does not depend on the SDK); they are
// slower, which a program should hear about rather than find out.
func (r *Runtime) warnNoStaging() {
	noStagingWarning.Do(func() {
		const msg = "clipfold: cannot stage calls: the Extism Go SDK's Plugin no longer has the fields clipfold reads " +
			"(mainModule, extism; see RATIONALE.md \"The Go host calls exports itself\"), or the plug-in's staging exports are of another version. " +
			"Every call takes the SDK's slower path; Options.MaxMemory still holds."
		if r.logger != nil {
			r.logger(extism.LogLevelWarn, msg)
			return
		}
		slog.Warn(msg)
	})
}

func moduleField(plugin reflect.Value, name string) wazeroapi.Module {
	f := plugin.FieldByName(name)
	if !f.IsValid() || f.Type() != moduleType {
		return nil
	}
	m, _ := reflect.NewAt(moduleType, unsafe.Pointer(f.UnsafeAddr())).Elem().Interface().(wazeroapi.Module)
	return m
}

// stager moves one instance's large inputs and outputs directly.
type stager struct {
	mem            wazeroapi.Memory
	stage, release wazeroapi.Function
	direct         bool // host functions read their inputs from mem (hostfuncs.WithGuestMemory)
	calls          int  // staged calls so far (tests check the path is taken)

	mod, kernel   wazeroapi.Module
	plugin        *extism.Plugin // the SDK's instance of mod, which host functions are handed
	result, reset wazeroapi.Function
	exports       map[string]wazeroapi.Function // the plug-in's exports, looked up once
}

// newStager returns nil when the module lacks the staging exports or
// the SDK's modules cannot be reached.
func newStager(p *extism.Plugin, direct bool) *stager {
	mod, kernel := readSDKModules(p)
	if mod == nil || mod.Memory() == nil || kernel == nil {
		return nil
	}
	s := &stager{mem: mod.Memory(), mod: mod, kernel: kernel, plugin: p, direct: direct, exports: map[string]wazeroapi.Function{},
		stage: mod.ExportedFunction("clipfold_stage"), release: mod.ExportedFunction("clipfold_release"),
		result: mod.ExportedFunction("clipfold_result"), reset: kernel.ExportedFunction("reset")}
	if s.stage == nil || s.release == nil || s.result == nil || s.reset == nil ||
		len(s.stage.Definition().ParamTypes()) != 2 || len(s.result.Definition().ResultTypes()) != 1 {
		return nil // not a clipfold built with this protocol
	}
	return s
}

// callDirect runs export on input as the SDK's call would, but with the
// functions looked up once (the SDK looks up seven per call, and wazero
// makes a call engine with its own stack for each lookup): input staged,
// the export called, its output or error read through clipfold_result.
// ok is false when the plug-in declined the input (use the SDK's call).
func (s *stager) callDirect(ctx context.Context, export string, input []byte) (out []byte, ok bool, err error) {
	fn := s.exports[export]
	if fn == nil {
		if fn = s.mod.ExportedFunction(export); fn == nil {
			return nil, true, ExportError(export, "", fmt.Errorf("unknown function: %s", export))
		}
		s.exports[export] = fn
	}
	flags := uint64(stageResult)
	if s.direct {
		flags |= stageDirectHostArgs
	}
	if staged, err := s.put(ctx, input, flags); err != nil {
		return nil, true, fmt.Errorf("clipfold: %s: %w", export, err)
	} else if !staged {
		return nil, false, nil
	}
	// Kernel memory the call's host functions allocate is dropped as the
	// SDK's call drops it.
	if _, err := s.reset.Call(ctx); err != nil {
		return nil, true, fmt.Errorf("clipfold: %s: %w", export, err)
	}
	// What the SDK's call puts in the context for the kernel functions the
	// plug-in imports and for host functions (extism.PluginCtxKey).
	ctx = context.WithValue(ctx, extism.PluginCtxKey("extism"), s.kernel)
	ctx = context.WithValue(ctx, extism.PluginCtxKey("plugin"), s.plugin)
	if s.direct {
		ctx = hostfuncs.WithGuestMemory(ctx, s.mem)
	}
	res, err := fn.Call(ctx)
	if exit, isExit := err.(*sys.ExitError); isExit && exit.ExitCode() == 0 {
		err = nil
	}
	if err != nil {
		return nil, true, ExportError(export, err.Error(), err)
	}
	// The output, or the error's text: copied out, then freed.
	r, err := s.result.Call(ctx)
	if err != nil {
		return nil, true, err
	}
	view, inMemory := s.mem.Read(uint32(r[0]), uint32(r[0]>>32))
	if !inMemory {
		return nil, true, errors.New("clipfold: staging: the result points outside the plug-in's memory")
	}
	out = bytes.Clone(view)
	if _, err := s.release.Call(ctx); err != nil {
		return nil, true, err
	}
	if len(res) == 1 && wazeroapi.DecodeI32(res[0]) != 0 {
		return nil, true, ExportError(export, string(out), nil)
	}
	if out == nil {
		out = []byte{}
	}
	return out, true, nil
}

// put reserves len(input) bytes in the plug-in and writes input there. ok
// is false when the plug-in declined (too large): use the standard path.
func (s *stager) put(ctx context.Context, input []byte, flags uint64) (ok bool, err error) {
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

// Staging reports whether Call stages inputs and calls exports directly on
// this instance.
func (i *Instance) Staging() bool { return i.st != nil }
