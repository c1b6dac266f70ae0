// Package wasmtimehost runs clipfold.wasm on Wasmtime (through cgo and
// wasmtime-go) instead of wazero. It gives the same answers, errors and
// host-function behaviour as package harness, and it is the faster Go host:
// Wasmtime's Cranelift compiles standard Go's Wasm into quicker code than
// wazero does (docs/benchmarks.md: a 10k-message split in about half the
// time). The price is cgo and a ~200 MB module download (Wasmtime's
// prebuilt static libraries), which is why it is a module of its own:
// programs that import only harness stay pure Go.
//
// A Runtime is the compiled module; an Instance is one plug-in instance
// (one Wasmtime store), not safe for concurrent use; a Pool hands instances
// to goroutines, as harness.Pool does.
//
// Extism on Wasmtime without the Extism SDK: the plug-in imports
// extism:host/env, which the Extism kernel (kernel.wasm, the same 3 KB
// module the Go SDK embeds, checked by TestKernelMatchesGoSDK) exports;
// this package instantiates the kernel next to the plug-in, links one to
// the other, and implements the few imports the kernel leaves to the host
// (config_get, the log functions) plus clipfold's own (SPEC §5).
package wasmtimehost

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"

	wt "github.com/bytecodealliance/wasmtime-go/v39"
	"github.com/clipfold/clipfold/api"
	"github.com/clipfold/clipfold/harness"
	extism "github.com/extism/go-sdk"
)

// kernelWasm is the Extism kernel of go-sdk v1.7.1 (kernel.wasm.version).
//
//go:embed kernel.wasm
var kernelWasm []byte

// Options configure a Runtime. They mirror harness.Options.
type Options struct {
	// Wasm is the module's bytes; when nil, WasmPath is read, and when that
	// is empty too, harness.FindWasm locates build/clipfold.wasm.
	Wasm     []byte
	WasmPath string
	// Host answers the host functions of SPEC §5 (a *hostfuncs.Host, or
	// any api.HostCaller). nil answers every host call with an
	// "unavailable" error object, which is enough for the pure exports.
	Host api.HostCaller
	// Config is the Extism manifest config map: plug-in-wide defaults for
	// the [summarization] keys, values as strings.
	Config map[string]string
	// CacheDir keeps compiled code between processes. "" uses
	// DefaultCacheDir(); "-" disables the cache.
	CacheDir string
	// Logger receives the plug-in's log lines at LogLevel or above. nil
	// drops them (and the plug-in does not format them).
	Logger   func(level extism.LogLevel, msg string)
	LogLevel extism.LogLevel // 0 means extism.LogLevelInfo
	// NoStaging moves every input and output through the Extism kernel,
	// as hosts without access to the plug-in's memory do. For comparisons.
	NoStaging bool
	// StageMin is the smallest input that is staged in the plug-in's
	// memory; 0 means harness.StageMin.
	StageMin int
	// MaxMemory bounds an instance's linear memory as in harness.Options:
	// an instance left larger by a call is replaced before the next one.
	// 0 means harness.DefaultMaxMemory; a negative value never replaces.
	MaxMemory int64
}

// DefaultCacheDir is where compiled code is kept between processes: a
// "wasmtime" directory beside wazero's (harness.DefaultCacheDir).
func DefaultCacheDir() string {
	d := harness.DefaultCacheDir()
	if d == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(d), "wasmtime")
}

// Runtime is the compiled plug-in and kernel. It is safe to share between
// goroutines; instances made from it are not.
type Runtime struct {
	engine         *wt.Engine
	plugin, kernel *wt.Module
	mu             sync.Mutex // guards closed against stores being made
	closed         bool
	opts           Options
	maxMemory      uint64 // 0: never replace
	stageMin       int
	// CacheHit reports whether the plug-in's compiled code came from the
	// cache directory.
	CacheHit bool
}

// NewRuntime compiles the plug-in (or loads it from the cache).
func NewRuntime(ctx context.Context, opts Options) (*Runtime, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	wasm := opts.Wasm
	if wasm == nil {
		path := opts.WasmPath
		if path == "" {
			var err error
			if path, err = harness.FindWasm(); err != nil {
				return nil, err
			}
		}
		var err error
		if wasm, err = os.ReadFile(path); err != nil {
			return nil, fmt.Errorf("clipfold: reading the plug-in: %w", err)
		}
	}
	engine := wt.NewEngine()
	dir := opts.CacheDir
	switch dir {
	case "-":
		dir = ""
	case "":
		dir = DefaultCacheDir()
	}
	plugin, hit, err := compile(engine, wasm, dir)
	if err != nil {
		return nil, fmt.Errorf("clipfold: compiling the plug-in: %w", err)
	}
	kernel, _, err := compile(engine, kernelWasm, dir)
	if err != nil {
		return nil, fmt.Errorf("clipfold: compiling the Extism kernel: %w", err)
	}
	r := &Runtime{engine: engine, plugin: plugin, kernel: kernel, opts: opts, stageMin: opts.StageMin, CacheHit: hit}
	if r.stageMin <= 0 {
		r.stageMin = harness.StageMin
	}
	switch {
	case opts.MaxMemory == 0:
		r.maxMemory = harness.DefaultMaxMemory
	case opts.MaxMemory > 0:
		r.maxMemory = uint64(opts.MaxMemory)
	}
	if r.opts.Host == nil {
		r.opts.Host = noHost{}
	}
	if r.opts.LogLevel == 0 {
		r.opts.LogLevel = extism.LogLevelInfo
	}
	return r, nil
}

// Close releases the compiled modules. Instances keep what they need
// alive until they are closed themselves, but no new ones are made (nor
// replacements: a replaced instance's next call fails with ErrClosed).
func (r *Runtime) Close(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	r.plugin.Close()
	r.kernel.Close()
	r.engine.Close()
	return nil
}

// compile compiles wasm, or deserializes it from dir when an earlier
// process left it there. A cached file Wasmtime rejects (another Wasmtime
// version or configuration, a torn write) is compiled again and replaced;
// files are written to a temporary name and renamed, so readers never see
// half of one, and a file rewritten later cannot disturb a runtime that
// loaded it. Like wazero's cache, the directory must be the user's own:
// Wasmtime trusts the native code it deserializes.
func compile(engine *wt.Engine, wasm []byte, dir string) (m *wt.Module, hit bool, err error) {
	if dir == "" {
		m, err = wt.NewModule(engine, wasm)
		return m, false, err
	}
	sum := sha256.Sum256(wasm)
	path := filepath.Join(dir, "clipfold-"+wasmtimeVersion()+"-"+hex.EncodeToString(sum[:16])+".cwasm")
	// Read, not NewModuleDeserializeFile: that maps the file, and a file
	// changed in place while mapped (by anyone) kills the process with
	// SIGBUS. Reading costs a few milliseconds.
	if b, err := os.ReadFile(path); err == nil {
		if m, err := wt.NewModuleDeserialize(engine, b); err == nil {
			return m, true, nil
		}
	}
	if m, err = wt.NewModule(engine, wasm); err != nil {
		return nil, false, err
	}
	if b, err := m.Serialize(); err == nil {
		_ = writeAtomic(dir, path, b) // a cache that cannot be written only costs time
	}
	return m, false, nil
}

func writeAtomic(dir, path string, b []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".clipfold-*.tmp")
	if err != nil {
		return err
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}

// wasmtimeVersion is the linked wasmtime-go module's version, part of the
// cache file name so an upgrade never tries another version's files.
func wasmtimeVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/bytecodealliance/wasmtime-go/v39" {
				if d.Replace != nil {
					d = d.Replace
				}
				return "wasmtime-" + d.Version
			}
		}
	}
	return "wasmtime-v39"
}

// noHost answers every host-function call as harness.NoHostFunctions does.
type noHost struct{}

func (noHost) CallHost(name string, _ []byte) ([]byte, error) {
	return api.AppendErrorObject(nil, "unavailable", "this host provides no "+name, false), nil
}

// NewPool makes a pool of at most size instances of r, as harness.NewPool
// does for wazero.
func NewPool(r *Runtime, size int) *harness.PoolOf[*Instance] {
	return harness.NewPoolOf(size, r.NewInstance)
}
