package wasmtimehost

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	wt "github.com/bytecodealliance/wasmtime-go/v39"
	"github.com/clipfold/clipfold/harness"
)

// Instance is one plug-in instance. It keeps state between calls (the
// per-conversation circuit breakers) and must not be used concurrently.
// It replaces itself with a fresh instance of the same Runtime (the
// breakers start over) after a trap, since a Go module that trapped has
// lost its runtime's state, and when a call left its memory above
// Options.MaxMemory.
type Instance struct {
	r        *Runtime
	s        *store // nil after a failed replacement: the next Call retries
	closed   bool
	replaced int // times the instance was replaced
}

// NewInstance instantiates the kernel and the plug-in in a new store.
func (r *Runtime) NewInstance(ctx context.Context) (*Instance, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s, err := r.newStore()
	if err != nil {
		return nil, err
	}
	return &Instance{r: r, s: s}, nil
}

// Close releases the instance.
func (i *Instance) Close(context.Context) error {
	i.closed = true
	if i.s != nil {
		i.s.close()
		i.s = nil
	}
	return nil
}

// Staging reports whether Call stages large inputs on this instance.
func (i *Instance) Staging() bool { return i.s != nil && i.s.stage != nil }

// Replaced is how many times the instance was replaced by a fresh one.
func (i *Instance) Replaced() int { return i.replaced }

// Call runs export with input and returns its output. An export failure
// is a *harness.CallError; anything else (a trap, a cancelled context) is
// a plain error. The context is checked before the call; host functions
// see their own (hostfuncs.Host.Context), as with package harness.
func (i *Instance) Call(ctx context.Context, export string, input []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("clipfold: %s: %w", export, err)
	}
	if i.closed {
		return nil, fmt.Errorf("clipfold: %s: %w", export, ErrClosed)
	}
	if i.s == nil {
		s, err := i.r.newStore()
		if err != nil {
			return nil, err
		}
		i.s = s
	}
	out, err := i.s.call(export, input, i.r.stageMin)
	if i.s.broken || (i.r.maxMemory > 0 && uint64(i.s.mem.DataSize(i.s.st)) > i.r.maxMemory) {
		i.replace()
	}
	return out, err
}

// replace swaps in a fresh store; when one cannot be made, the next Call
// tries again (and reports why).
func (i *Instance) replace() {
	i.s.close()
	i.s = nil
	if s, err := i.r.newStore(); err == nil {
		i.s = s
	}
	i.replaced++
}

// store is one Wasmtime store holding the kernel and the plug-in.
type store struct {
	r         *Runtime
	st        *wt.Store
	mem, kmem *wt.Memory // the plug-in's and the kernel's linear memory
	exports   map[string]*wt.Func
	// stage and release are the staging exports (plugin/stage.go); nil
	// when the plug-in lacks them or Options.NoStaging is set.
	stage, release *wt.Func
	k              kernel
	direct         bool // in a staged call: host functions may read the plug-in's memory
	broken         bool // trapped: replace before the next call
	stagedCalls    int
}

// kernel holds the Extism kernel's exports the host calls itself.
type kernel struct {
	reset, alloc, free, length, inputSet, outputOffset, outputLength, errorGet *wt.Func
}

// ErrClosed is the error of calls on a closed Instance, and of new
// instances (or replacements) of a closed Runtime.
var ErrClosed = errors.New("closed")

func (r *Runtime) newStore() (*store, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, fmt.Errorf("clipfold: the runtime is %w", ErrClosed)
	}
	s := &store{r: r, st: wt.NewStore(r.engine), exports: map[string]*wt.Func{}}
	// Default WASI: no arguments, environment, files or inherited
	// output; real clocks (compress needs them for its deadline, retry
	// backoff and breaker cooldown) and real randomness.
	s.st.SetWasi(wt.NewWasiConfig())
	linker := wt.NewLinker(r.engine)
	defer linker.Close()
	if err := linker.DefineWasi(); err != nil {
		return nil, s.fail("defining WASI", err)
	}
	kinst, err := linker.Instantiate(s.st, r.kernel)
	if err != nil {
		return nil, s.fail("instantiating the Extism kernel", err)
	}
	if err := linker.DefineInstance(s.st, "extism:host/env", kinst); err != nil {
		return nil, s.fail("linking the Extism kernel", err)
	}
	for name, f := range map[string]**wt.Func{
		"reset": &s.k.reset, "alloc": &s.k.alloc, "free": &s.k.free, "length": &s.k.length,
		"input_set": &s.k.inputSet, "output_offset": &s.k.outputOffset,
		"output_length": &s.k.outputLength, "error_get": &s.k.errorGet,
	} {
		if *f = kinst.GetFunc(s.st, name); *f == nil {
			return nil, s.fail("the Extism kernel", errors.New("no export "+name))
		}
	}
	if s.kmem = memoryOf(kinst, s.st); s.kmem == nil {
		return nil, s.fail("the Extism kernel", errors.New("no memory export"))
	}
	if err := s.defineImports(linker); err != nil {
		return nil, s.fail("defining host functions", err)
	}
	inst, err := linker.Instantiate(s.st, r.plugin)
	if err != nil {
		return nil, s.fail("instantiating the plug-in", err)
	}
	if s.mem = memoryOf(inst, s.st); s.mem == nil {
		return nil, s.fail("instantiating the plug-in", errors.New("it exports no memory"))
	}
	for _, e := range r.plugin.Exports() {
		if e.Type().FuncType() != nil {
			s.exports[e.Name()] = inst.GetFunc(s.st, e.Name())
		}
	}
	// A WASI reactor (both compilers build one) initializes its runtime
	// in _initialize, once, before any other export.
	if f := s.exports["_initialize"]; f != nil {
		if _, err := f.Call(s.st); err != nil {
			return nil, s.fail("initializing the plug-in", err)
		}
	}
	if !r.opts.NoStaging {
		s.stage, s.release = s.exports["clipfold_stage"], s.exports["clipfold_release"]
		if s.stage == nil || s.release == nil || len(s.stage.Type(s.st).Params()) != 2 {
			s.stage, s.release = nil, nil // not a clipfold built with this protocol
		}
	}
	return s, nil
}

func memoryOf(inst *wt.Instance, st *wt.Store) *wt.Memory {
	if e := inst.GetExport(st, "memory"); e != nil {
		return e.Memory()
	}
	return nil
}

func (s *store) fail(what string, err error) error {
	s.close()
	return fmt.Errorf("clipfold: %s: %w", what, err)
}

func (s *store) close() {
	if s.st != nil {
		s.st.Close()
		s.st = nil
	}
}

// stageDirectHostArgs is clipfold_stage's flag (plugin/stage.go) for a
// host whose functions read their inputs from the plug-in's memory.
const stageDirectHostArgs = 1

// call runs one export: the input is staged in the plug-in's memory when
// it is large and the plug-in supports it, else set as the kernel's input.
func (s *store) call(export string, input []byte, stageMin int) ([]byte, error) {
	f := s.exports[export]
	if f == nil || export == "_initialize" || export == "clipfold_stage" || export == "clipfold_release" {
		return nil, harness.ExportError(export, "unknown function: "+export, nil)
	}
	if _, err := s.k.reset.Call(s.st); err != nil {
		s.broken = true
		return nil, fmt.Errorf("clipfold: %s: resetting the Extism kernel: %w", export, err)
	}
	staged, err := s.put(input, stageMin)
	if err != nil {
		return nil, fmt.Errorf("clipfold: %s: %w", export, err)
	}
	s.direct = staged
	res, err := f.Call(s.st)
	s.direct = false
	if err != nil {
		// A trap or a WASI exit (a Go panic exits with status 2): the
		// guest runtime's state is gone with it.
		s.broken = true
		return nil, harness.ExportError(export, s.errorMessage(), err)
	}
	if rc, _ := res.(int32); rc != 0 {
		msg := s.errorMessage()
		if msg == "" {
			msg = fmt.Sprintf("the export returned %d without an error message", rc)
		}
		return nil, harness.ExportError(export, msg, nil)
	}
	out, err := s.output()
	if err != nil {
		return nil, fmt.Errorf("clipfold: %s: %w", export, err)
	}
	if !staged {
		return out, nil
	}
	return s.take(out)
}

// put hands the input to the plug-in. staged is true when it was written
// straight into the plug-in's memory (see harness/stage.go); otherwise it
// goes through the kernel, which the plug-in reads eight bytes per call.
func (s *store) put(input []byte, stageMin int) (staged bool, err error) {
	if s.stage != nil && len(input) >= stageMin {
		res, err := s.stage.Call(s.st, int32(len(input)), int32(stageDirectHostArgs))
		if err != nil {
			s.broken = true
			return false, fmt.Errorf("staging: %w", err)
		}
		if p := uint32(res.(int32)); p != 0 {
			mem := s.mem.UnsafeData(s.st)
			if uint64(p)+uint64(len(input)) > uint64(len(mem)) {
				return false, errors.New("staging: the plug-in's buffer is outside its memory")
			}
			copy(mem[p:], input)
			s.stagedCalls++
			return true, nil
		}
	}
	if len(input) == 0 {
		return false, nil
	}
	off, err := s.writeKernel(s.st, input)
	if err != nil {
		return false, fmt.Errorf("setting the input: %w", err)
	}
	if _, err := s.k.inputSet.Call(s.st, int64(off), int64(len(input))); err != nil {
		s.broken = true
		return false, fmt.Errorf("setting the input: %w", err)
	}
	return false, nil
}

// output copies out the kernel's output of the last call.
func (s *store) output() ([]byte, error) {
	off, err := s.k.outputOffset.Call(s.st)
	if err != nil {
		return nil, err
	}
	n, err := s.k.outputLength.Call(s.st)
	if err != nil {
		return nil, err
	}
	return s.readKernelRange(s.st, uint64(off.(int64)), uint64(n.(int64)))
}

// take copies out the staged output that desc describes and lets the
// plug-in free it.
func (s *store) take(desc []byte) ([]byte, error) {
	if len(desc) != 8 {
		return nil, errors.New("clipfold: staging: the plug-in answered without an output descriptor")
	}
	p, n := binary.LittleEndian.Uint32(desc), binary.LittleEndian.Uint32(desc[4:])
	mem := s.mem.UnsafeData(s.st)
	if uint64(p)+uint64(n) > uint64(len(mem)) {
		return nil, errors.New("clipfold: staging: the output descriptor points outside the plug-in's memory")
	}
	out := make([]byte, n)
	copy(out, mem[p:])
	if _, err := s.release.Call(s.st); err != nil {
		s.broken = true
		return nil, fmt.Errorf("clipfold: staging: releasing the output: %w", err)
	}
	return out, nil
}

// errorMessage is the Extism error the plug-in set, or "".
func (s *store) errorMessage() string {
	off, err := s.k.errorGet.Call(s.st)
	if err != nil || off.(int64) == 0 {
		return ""
	}
	b, err := s.readKernel(s.st, uint64(off.(int64)))
	if err != nil {
		return ""
	}
	return string(b)
}

// readKernel copies the kernel memory block at off (its length is the
// kernel's record of it).
func (s *store) readKernel(c wt.Storelike, off uint64) ([]byte, error) {
	n, err := s.k.length.Call(c, int64(off))
	if err != nil {
		return nil, err
	}
	return s.readKernelRange(c, off, uint64(n.(int64)))
}

func (s *store) readKernelRange(c wt.Storelike, off, n uint64) ([]byte, error) {
	mem := s.kmem.UnsafeData(c)
	if off > uint64(len(mem)) || n > uint64(len(mem))-off {
		return nil, fmt.Errorf("kernel memory range %d+%d is outside its %d bytes", off, n, len(mem))
	}
	return append([]byte(nil), mem[off:off+n]...), nil
}

// writeKernel allocates a kernel block, copies b into it and returns its
// offset.
func (s *store) writeKernel(c wt.Storelike, b []byte) (uint64, error) {
	res, err := s.k.alloc.Call(c, int64(len(b)))
	if err != nil {
		return 0, err
	}
	off := uint64(res.(int64))
	if off == 0 {
		return 0, fmt.Errorf("the Extism kernel could not allocate %d bytes", len(b))
	}
	mem := s.kmem.UnsafeData(c)
	if off+uint64(len(b)) > uint64(len(mem)) {
		return 0, errors.New("the Extism kernel allocated outside its memory")
	}
	copy(mem[off:], b)
	return off, nil
}
