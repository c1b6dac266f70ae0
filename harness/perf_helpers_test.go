package harness_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/clipfold/clipfold/internal/wasmhost"
	extism "github.com/extism/go-sdk"
	"github.com/stretchr/testify/require"
	wazeroapi "github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// memProbe is a wazero function listener on the plug-in's exports. The
// Extism SDK does not expose the plug-in module's linear memory, but a
// listener sees the calling module, and the Extism kernel module rides in
// the call's context: after each export returns, memProbe records both
// memories' sizes. Go's wasm runtime never shrinks linear memory, so the
// size after a call is the instance's peak so far.
type memProbe struct {
	exports map[string]bool
	mu      sync.Mutex
	main    uint32 // plug-in module memory, bytes
	kernel  uint32 // Extism kernel memory, bytes
}

func (p *memProbe) NewFunctionListener(def wazeroapi.FunctionDefinition) experimental.FunctionListener {
	for _, n := range def.ExportNames() {
		if p.exports[n] {
			return p
		}
	}
	return nil
}

func (p *memProbe) Before(context.Context, wazeroapi.Module, wazeroapi.FunctionDefinition, []uint64, experimental.StackIterator) {
}

func (p *memProbe) After(ctx context.Context, mod wazeroapi.Module, _ wazeroapi.FunctionDefinition, _ []uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if m := mod.Memory(); m != nil {
		p.main = m.Size()
	}
	if k, ok := ctx.Value(extism.PluginCtxKey("extism")).(wazeroapi.Module); ok && k.Memory() != nil {
		p.kernel = k.Memory().Size()
	}
}

func (p *memProbe) Abort(context.Context, wazeroapi.Module, wazeroapi.FunctionDefinition, error) {}

// sizes returns the memory sizes (bytes) seen after the last call.
func (p *memProbe) sizes() (main, kernel uint32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.main, p.kernel
}

// newProbedRuntime compiles the plug-in with a memProbe on exports. The
// compilation cache is off so that no listener-free code is reused.
func newProbedRuntime(t testing.TB, opts wasmhost.Options, exports ...string) (*wasmhost.Runtime, *memProbe) {
	t.Helper()
	p := &memProbe{exports: map[string]bool{}}
	for _, e := range exports {
		p.exports[e] = true
	}
	opts.Listeners = p
	opts.CacheDir = "-"
	rt, err := wasmhost.NewRuntime(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	return rt, p
}

// newRuntime compiles the plug-in (or opts.Wasm) with the default cache.
func newRuntime(t testing.TB, opts wasmhost.Options) *wasmhost.Runtime {
	t.Helper()
	rt, err := wasmhost.NewRuntime(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	return rt
}

var (
	echoOnce sync.Once
	echoWasm []byte
	echoErr  error
)

// echoPlugin returns tools/benchreport/echoplugin built like clipfold
// (same Go, flags and go-pdk): $CLIPFOLD_ECHO_WASM when set, else built
// once into a temporary directory.
func echoPlugin(t testing.TB) []byte {
	t.Helper()
	echoOnce.Do(func() {
		path := os.Getenv("CLIPFOLD_ECHO_WASM")
		if path == "" {
			dir, err := os.MkdirTemp("", "clipfold-echo")
			if err != nil {
				echoErr = err
				return
			}
			defer os.RemoveAll(dir)
			path = filepath.Join(dir, "echo.wasm")
			cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w", "-o", path, "../tools/benchreport/echoplugin")
			cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
			if out, err := cmd.CombinedOutput(); err != nil {
				echoErr = fmt.Errorf("building the echo plug-in: %v\n%s", err, out)
				return
			}
		}
		echoWasm, echoErr = os.ReadFile(path)
	})
	if echoErr != nil {
		t.Fatal(echoErr) // the Go toolchain is always there: a build failure is a failure
	}
	return echoWasm
}

// padded returns a JSON object of about n bytes: {"pad":"xxxx…"}.
func padded(n int) []byte {
	if n < 16 {
		n = 16
	}
	return []byte(`{"pad":"` + strings.Repeat("x", n-10) + `"}`)
}

// textInput returns {"text":"…"} of about n bytes of prose.
func textInput(n int) []byte {
	words := "the deploy failed because the config had a typo; we agreed to add validation "
	s := strings.Repeat(words, n/len(words)+1)[:max(n-11, 1)]
	return []byte(`{"text":"` + s + `"}`)
}

// withKeepRecent rewrites benchHistory's config to keep_recent k.
func withKeepRecent(in []byte, k int) []byte {
	s := string(in)
	i := strings.LastIndex(s, `"config":`)
	return []byte(s[:i] + fmt.Sprintf(`"config":{"keep_recent":%d}}`, k))
}
