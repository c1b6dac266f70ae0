package wasmtimehost

import (
	"errors"
	"fmt"
	"math"

	wt "github.com/bytecodealliance/wasmtime-go/v39"
	"github.com/clipfold/clipfold/api"
	"github.com/clipfold/clipfold/hostfuncs"
	extism "github.com/extism/go-sdk"
)

// defineImports defines what the plug-in imports beyond WASI and the
// kernel: the extism:host/env functions the Go SDK implements on the
// host (config_get, the log functions, get_log_level) and clipfold's host
// functions in extism:host/user.
func (s *store) defineImports(l *wt.Linker) error {
	i32, i64 := wt.NewValType(wt.KindI32), wt.NewValType(wt.KindI64)
	unary := wt.NewFuncType([]*wt.ValType{i64}, []*wt.ValType{i64})
	const env = "extism:host/env"
	if err := l.FuncNew(env, "config_get", unary, s.configGet); err != nil {
		return err
	}
	for name, level := range map[string]extism.LogLevel{
		"log_trace": extism.LogLevelTrace, "log_debug": extism.LogLevelDebug, "log_info": extism.LogLevelInfo,
		"log_warn": extism.LogLevelWarn, "log_error": extism.LogLevelError,
	} {
		if err := l.FuncNew(env, name, wt.NewFuncType([]*wt.ValType{i64}, nil), s.logFunc(level)); err != nil {
			return err
		}
	}
	if err := l.FuncNew(env, "get_log_level", wt.NewFuncType(nil, []*wt.ValType{i32}), s.getLogLevel); err != nil {
		return err
	}
	for _, name := range hostfuncs.Names {
		if err := l.FuncNew(hostfuncs.Namespace, name, unary, s.hostFunc(name)); err != nil {
			return err
		}
	}
	return nil
}

// configGet answers config_get as the Go SDK does: the value of the named
// key of Options.Config in kernel memory, or 0 when it is not set.
func (s *store) configGet(c *wt.Caller, args []wt.Val) ([]wt.Val, *wt.Trap) {
	key, err := s.readKernel(c, uint64(args[0].I64()))
	if err != nil {
		return nil, wt.NewTrap("config_get: reading the key: " + err.Error())
	}
	v, ok := s.r.opts.Config[string(key)]
	if !ok {
		return []wt.Val{wt.ValI64(0)}, nil
	}
	off, err := s.writeKernel(c, []byte(v))
	if err != nil {
		return nil, wt.NewTrap("config_get: writing the value: " + err.Error())
	}
	return []wt.Val{wt.ValI64(int64(off))}, nil
}

func (s *store) logFunc(level extism.LogLevel) func(*wt.Caller, []wt.Val) ([]wt.Val, *wt.Trap) {
	return func(c *wt.Caller, args []wt.Val) ([]wt.Val, *wt.Trap) {
		off := uint64(args[0].I64())
		msg, err := s.readKernel(c, off)
		if err != nil {
			return nil, wt.NewTrap("log: reading the message: " + err.Error())
		}
		_, _ = s.k.free.Call(c, int64(off))
		if lg := s.r.opts.Logger; lg != nil && level >= s.r.opts.LogLevel {
			lg(level, string(msg))
		}
		return nil, nil
	}
}

// getLogLevel tells the plug-in the lowest level worth formatting: none
// without a Logger.
func (s *store) getLogLevel(*wt.Caller, []wt.Val) ([]wt.Val, *wt.Trap) {
	level := int32(math.MaxInt32)
	if s.r.opts.Logger != nil {
		level = s.r.opts.LogLevel.ExtismCompat()
	}
	return []wt.Val{wt.ValI32(level)}, nil
}

// hostFunc binds one of SPEC §5's functions to Options.Host, with the
// same contract as hostfuncs.Bind: the answer is always JSON (failures
// are "other" error objects), and 0 only when kernel memory is exhausted.
func (s *store) hostFunc(name string) func(*wt.Caller, []wt.Val) ([]wt.Val, *wt.Trap) {
	return func(c *wt.Caller, args []wt.Val) ([]wt.Val, *wt.Trap) {
		var out []byte
		in, err := s.hostInput(c, uint64(args[0].I64()))
		if err != nil {
			out = api.AppendErrorObject(nil, "other", "reading the host-function input: "+err.Error(), false)
		} else {
			out = s.callHost(name, in)
		}
		off, err := s.writeKernel(c, out)
		if err != nil {
			return []wt.Val{wt.ValI64(0)}, nil
		}
		return []wt.Val{wt.ValI64(int64(off))}, nil
	}
}

// callHost calls Options.Host; a panic there becomes an error object
// instead of unwinding through Wasmtime.
func (s *store) callHost(name string, in []byte) (out []byte) {
	defer func() {
		if r := recover(); r != nil {
			out = api.AppendErrorObject(nil, "other", fmt.Sprintf("%s: host panicked: %v", name, r), false)
		}
	}()
	out, err := s.r.opts.Host.CallHost(name, in)
	if err != nil {
		return api.AppendErrorObject(nil, "other", name+": "+err.Error(), false)
	}
	return out
}

// hostInput reads a host function's input: a kernel offset, or during a
// staged call a range of the plug-in's own memory (bit 63 set, length in
// bits 32–62, address in bits 0–31; see hostfuncs.WithGuestMemory).
func (s *store) hostInput(c *wt.Caller, arg uint64) ([]byte, error) {
	if arg>>63 == 0 {
		return s.readKernel(c, arg)
	}
	if !s.direct {
		return nil, errors.New("the plug-in passed its own memory, but this call did not offer it")
	}
	p, n := uint64(uint32(arg)), (arg>>32)&(1<<31-1)
	mem := s.mem.UnsafeData(c)
	if p+n > uint64(len(mem)) {
		return nil, errors.New("the plug-in passed a range outside its memory")
	}
	return append([]byte(nil), mem[p:p+n]...), nil
}
