package wasmhost

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/clipfold/clipfold/api"
	"github.com/clipfold/clipfold/embed"
	"github.com/clipfold/clipfold/hostfuncs"
	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
)

// Options configure a Runtime.
type Options struct {
	// Wasm is the module's bytes; when nil, WasmPath is read, and when that
	// is empty too, DefaultWasm's: $CLIPFOLD_WASM's file, else the embedded
	// build.
	Wasm     []byte
	WasmPath string
	// HostFunctions are the extism:host/user imports
	// (docs/spec.md#host-functions). The plug-in imports them, so they must be
	// present even for hosts that only call the pure exports; NoHostFunctions
	// provides failing stubs.
	HostFunctions []extism.HostFunction
	// Host answers the host functions instead (a *hostfuncs.Host, or any
	// api.HostCaller): bound with hostfuncs.Bind, which also lets staged
	// calls pass host-function inputs without copying them into Extism
	// memory first. Set Host or HostFunctions, not both.
	Host api.HostCaller
	// Config is the Extism manifest config map: plug-in-wide defaults for
	// the [summarization] keys, values as strings.
	Config map[string]string
	// CacheDir is wazero's compilation cache directory. "" uses
	// DefaultCacheDir(); "-" disables the cache.
	CacheDir string
	// Logger receives the plug-in's log lines (warnings about unknown
	// config keys, for example). nil drops them. The Extism Go SDK drops
	// every log line unless its process-wide level is set
	// (extism.SetLogLevel), so the first Runtime with a Logger sets it to
	// warnings; a program that sets its own level afterwards keeps it.
	Logger func(level extism.LogLevel, msg string)
	// NoStaging makes every call go through the Extism SDK's call, its
	// input and output through the Extism kernel, as in a plain Extism
	// SDK, instead of staging them directly in the plug-in's memory and
	// calling the export directly (stage.go). For comparisons.
	NoStaging bool
	// MaxMemory bounds an instance's linear memory: when a call leaves it
	// larger, the instance is replaced by a fresh one before the next call
	// (its circuit breakers start over). 0 means DefaultMaxMemory; a
	// negative value never replaces. Wasm memory never shrinks, and
	// TinyGo's collector retains memory on long runs of multi-megabyte
	// calls (docs/benchmarks-history.md); this keeps such instances
	// bounded. It needs the module handle that staging captures, so it
	// does nothing with NoStaging.
	MaxMemory int64
	// Listeners are wazero function listeners compiled into the module
	// (measurements, tracing); they cost compile time, also when the
	// code comes from the cache.
	Listeners experimental.FunctionListenerFactory
}

// DefaultMaxMemory is Options.MaxMemory's default: 256 MiB, twenty times
// what a 10k-message split needs.
const DefaultMaxMemory = 256 << 20

// DefaultCacheDir is where compiled code is cached between processes:
// $CLIPFOLD_CACHE_DIR, else the user cache dir's clipfold/wazero.
func DefaultCacheDir() string {
	if d := os.Getenv("CLIPFOLD_CACHE_DIR"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "clipfold", "wazero")
}

// enableSDKLog sets the SDK's log level once (Options.Logger).
var enableSDKLog sync.Once

// Runtime is a compiled clipfold module from which instances are made.
type Runtime struct {
	compiled  *extism.CompiledPlugin
	logger    func(extism.LogLevel, string)
	staging   bool
	direct    bool   // host functions from hostfuncs.Bind: staged calls pass inputs in place
	maxMemory uint64 // 0: never replace an instance
}

// NewRuntime compiles the module. It is safe to share between goroutines.
func NewRuntime(ctx context.Context, opts Options) (*Runtime, error) {
	wasm := opts.Wasm
	if wasm == nil {
		var err error
		if opts.WasmPath == "" {
			wasm, _, err = DefaultWasm()
		} else if wasm, err = os.ReadFile(opts.WasmPath); err != nil {
			err = fmt.Errorf("clipfold: reading the plug-in: %w", err)
		}
		if err != nil {
			return nil, err
		}
	}
	rc := wazero.NewRuntimeConfig()
	if opts.CacheDir != "-" {
		dir := opts.CacheDir
		if dir == "" {
			dir = DefaultCacheDir()
		}
		if dir != "" {
			cache, err := wazero.NewCompilationCacheWithDir(dir)
			if err == nil {
				rc = rc.WithCompilationCache(cache)
			}
		}
	}
	manifest := extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: wasm}}, Config: opts.Config}
	hf := opts.HostFunctions
	direct := false
	switch {
	case opts.Host != nil && hf != nil:
		return nil, errors.New("clipfold: Options.Host and Options.HostFunctions are both set")
	case opts.Host != nil:
		hf, direct = hostfuncs.Bind(opts.Host), true
	case hf == nil:
		hf = NoHostFunctions()
	}
	if opts.Listeners != nil {
		ctx = experimental.WithFunctionListenerFactory(ctx, opts.Listeners)
	}
	compiled, err := extism.NewCompiledPlugin(ctx, manifest, extism.PluginConfig{EnableWasi: true, RuntimeConfig: rc}, hf)
	if err != nil {
		return nil, fmt.Errorf("clipfold: compiling the plug-in: %w", err)
	}
	if opts.Logger != nil {
		enableSDKLog.Do(func() { extism.SetLogLevel(extism.LogLevelWarn) })
	}
	r := &Runtime{compiled: compiled, logger: opts.Logger, staging: !opts.NoStaging, direct: direct}
	switch {
	case opts.MaxMemory == 0:
		r.maxMemory = DefaultMaxMemory
	case opts.MaxMemory > 0:
		r.maxMemory = uint64(opts.MaxMemory)
	}
	return r, nil
}

// Close releases the runtime and every instance made from it.
func (r *Runtime) Close(ctx context.Context) error { return r.compiled.Close(ctx) }

// Instance is one plug-in instance. It keeps state between calls (the
// per-conversation circuit breaker) and must not be used concurrently.
// When a call leaves its memory above Options.MaxMemory it is replaced by
// a fresh instance of the same Runtime (the breakers start over).
type Instance struct {
	r        *Runtime
	p        *extism.Plugin
	st       *stager   // nil: every call takes the standard path
	mems     *memories // the instance's linear memories (MaxMemory)
	replaced int       // times the instance was replaced (MaxMemory)
}

// NewInstance instantiates the module.
func (r *Runtime) NewInstance(ctx context.Context) (*Instance, error) {
	inst := &Instance{r: r}
	if err := r.instantiate(ctx, inst); err != nil {
		return nil, err
	}
	return inst, nil
}

// instantiate gives inst a new plug-in instance.
func (r *Runtime) instantiate(ctx context.Context, inst *Instance) error {
	// wazero's default clocks are fake (fixed walltime, nanosleep that
	// returns at once): compress needs the real ones for its deadline,
	// retry backoff and breaker cooldown.
	mc := wazero.NewModuleConfig().WithSysWalltime().WithSysNanotime().WithSysNanosleep()
	mems := &memories{}
	p, err := r.compiled.Instance(withMemory(ctx, mems), extism.PluginInstanceConfig{ModuleConfig: mc})
	if err != nil {
		return fmt.Errorf("clipfold: instantiating the plug-in: %w", err)
	}
	if r.logger != nil {
		p.SetLogger(r.logger)
	}
	fresh := &Instance{r: r, p: p, mems: mems}
	if r.staging && p.FunctionExists("clipfold_stage") {
		// One `version` call through the SDK runs the guest's runtime
		// initialization, which the SDK does on an instance's first call
		// (direct calls cannot).
		// An export's error (a bad manifest config fails every call) is
		// left for the caller's calls to report, as without staging.
		if _, err := fresh.call(ctx, "version", []byte("{}")); err != nil {
			if ce := (*CallError)(nil); !errors.As(err, &ce) {
				_ = p.Close(ctx)
				return fmt.Errorf("clipfold: first call to the new instance: %w", err)
			}
		}
		fresh.st = newStager(p, r.direct)
		if fresh.st == nil {
			r.warnNoStaging()
		}
	}
	inst.p, inst.st, inst.mems = fresh.p, fresh.st, fresh.mems
	return nil
}

// bound replaces the instance when its memory has grown past MaxMemory.
// If a fresh instance cannot be made, the old one stays.
func (i *Instance) bound(ctx context.Context) {
	if i.r.maxMemory == 0 || i.mems.largest() <= i.r.maxMemory {
		return
	}
	old := i.p
	if err := i.r.instantiate(context.WithoutCancel(ctx), i); err != nil {
		return
	}
	_ = old.Close(context.WithoutCancel(ctx))
	i.replaced++
}

// Close releases the instance.
func (i *Instance) Close(ctx context.Context) error { return i.p.Close(ctx) }

// CallError is an export's failure: its code (docs/spec.md#errors-and-limits)
// and the message, which names the offending field.
type CallError struct {
	Export  string
	Code    string
	Message string
}

func (e *CallError) Error() string { return e.Export + ": " + e.Code + ": " + e.Message }

// Call runs export with input and returns its output. An export failure
// is a *CallError; anything else (a trap, a cancelled context) is a plain
// error.
func (i *Instance) Call(ctx context.Context, export string, input []byte) ([]byte, error) {
	out, err := i.call(ctx, export, input)
	i.bound(ctx)
	return out, err
}

func (i *Instance) call(ctx context.Context, export string, input []byte) ([]byte, error) {
	if i.st != nil {
		if out, ok, err := i.st.callDirect(ctx, export, input); ok {
			return out, err
		}
	}
	rc, out, err := i.p.CallWithContext(ctx, export, input)
	if err != nil || rc != 0 {
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if ge := i.p.GetErrorWithContext(ctx); ge != "" {
			msg = ge
		}
		return nil, ExportError(export, msg, err)
	}
	return out, nil // the SDK returns a copy
}

// ExportError is the error of a failed export call: a *CallError when
// msg, the plug-in's Extism error, is "code: message"
// (docs/spec.md#errors-and-limits); otherwise err (a trap, say), or msg as an
// error when err is nil, wrapped with the export's name.
func ExportError(export, msg string, err error) error {
	code, rest, ok := strings.Cut(msg, ": ")
	if ok && isCode(code) {
		return &CallError{Export: export, Code: code, Message: rest}
	}
	if err == nil {
		err = errors.New(msg)
	}
	return fmt.Errorf("clipfold: %s: %w", export, err)
}

func isCode(s string) bool {
	switch s {
	case "invalid_json", "invalid_input", "too_large", "host_error", "internal":
		return true
	}
	return false
}

// DefaultWasm is the plug-in that tests and tools load unless told
// otherwise: the file $CLIPFOLD_WASM names when it is set (path is that
// name), else the embedded build, embed.Wasm (path is ""), the committed
// TinyGo build that embed's TestEmbeddedIsFresh holds to today's sources.
// So `go test ./...` needs nothing built, and CLIPFOLD_WASM points the
// same tests at another build (make test runs them against
// build/clipfold.wasm and build/clipfold-tinygo.wasm).
func DefaultWasm() (wasm []byte, path string, err error) {
	path = os.Getenv("CLIPFOLD_WASM")
	if path == "" {
		return embed.Wasm, "", nil
	}
	if wasm, err = os.ReadFile(path); err != nil {
		return nil, "", fmt.Errorf("clipfold: reading the plug-in $CLIPFOLD_WASM names: %w", err)
	}
	return wasm, path, nil
}

// FindWasm locates a plug-in file, for the tools that need a file rather
// than bytes: $CLIPFOLD_WASM, else build/clipfold.wasm in the current
// directory or one of its parents (the standard-Go build `make build`
// writes at the repository root).
func FindWasm() (string, error) {
	if p := os.Getenv("CLIPFOLD_WASM"); p != "" {
		return p, nil
	}
	start, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := start; ; {
		p := filepath.Join(dir, "build", "clipfold.wasm")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("clipfold: no plug-in file: $CLIPFOLD_WASM is unset and there is no build/clipfold.wasm in %s or a parent directory; "+
				"run `make build` at the repository root (the standard-Go build) or set CLIPFOLD_WASM to a .wasm file", start)
		}
		dir = parent
	}
}

// Stats describes what an Instance did, for tests and monitoring.
type Stats struct {
	StagedCalls    int    // calls whose input and output were staged (stage.go)
	DirectHostArgs bool   // staged calls pass host-function inputs in place (Options.Host)
	Replaced       int    // times the instance was replaced for its memory (MaxMemory)
	MemorySize     uint32 // the instance's largest linear memory in bytes (the plug-in's, in practice)
}

// Stats returns what i did so far.
func (i *Instance) Stats() Stats {
	s := Stats{Replaced: i.replaced, MemorySize: uint32(min(i.mems.largest(), 1<<32-1))}
	if i.st != nil {
		s.StagedCalls, s.DirectHostArgs = i.st.calls, i.st.direct
	}
	return s
}
