package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/clipfold/clipfold/harness"
	"github.com/clipfold/clipfold/hostfuncs"
	extism "github.com/extism/go-sdk"
	"github.com/tidwall/gjson"
)

// pluginFlags choose the plug-in.
type pluginFlags struct {
	wasm string
}

func (pf *pluginFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&pf.wasm, "wasm", "", "load the plug-in from this `file` instead of the embedded one (or $CLIPFOLD_WASM)")
}

// locate finds the plug-in: --wasm, $CLIPFOLD_WASM, the copy embedded in
// this binary, clipfold.wasm next to the binary, or build/clipfold.wasm in
// the current directory or a parent (a source checkout).
func (pf *pluginFlags) locate(e *env) (wasm []byte, source string, err error) {
	read := func(path, what string) ([]byte, string, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, "", failf("%s: plug-in %s does not exist", what, path)
			}
			return nil, "", failf("%s: reading the plug-in: %v", what, err)
		}
		return b, path, nil
	}
	if pf.wasm != "" {
		return read(pf.wasm, "--wasm")
	}
	if p := e.getenv("CLIPFOLD_WASM"); p != "" {
		return read(p, "$CLIPFOLD_WASM")
	}
	if b := embeddedWasm(); b != nil {
		return b, "embedded", nil
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "clipfold.wasm")
		if _, err := os.Stat(p); err == nil {
			return read(p, "next to the binary")
		}
	}
	if p, err := harness.FindWasm(); err == nil {
		return read(p, "build/")
	}
	return nil, "", failf("the plug-in is not embedded in this binary and was not found: " +
		"build it with 'make build' (then 'make' embeds it), or pass --wasm PATH / set CLIPFOLD_WASM")
}

// hostStats is what the host did during plug-in calls.
type hostStats struct {
	llmCalls  int
	llmFailed int
	llmTime   time.Duration
	hostTime  time.Duration // every host function, the LLM included
	storeTime time.Duration
}

// stats counts hostStats as host functions are called (OnCall).
type stats struct {
	mu sync.Mutex
	hostStats
	onLLM func(took time.Duration, failed bool)
}

func (s *stats) observe(name string, took time.Duration, failed bool) {
	s.mu.Lock()
	s.hostTime += took
	var cb func(time.Duration, bool)
	if name == "llm_complete" {
		s.llmCalls++
		if failed {
			s.llmFailed++
		}
		s.llmTime += took
		cb = s.onLLM
	} else {
		s.storeTime += took
	}
	s.mu.Unlock()
	if cb != nil {
		cb(took, failed)
	}
}

func (s *stats) reset() {
	s.mu.Lock()
	s.hostStats = hostStats{}
	s.mu.Unlock()
}

func (s *stats) snapshot() hostStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hostStats
}

// plugin is one loaded plug-in instance and its host.
type plugin struct {
	rt     *harness.Runtime
	inst   *harness.Instance
	source string
	stats  *stats
	config []byte // the "config" object of every call
}

// loadPlugin compiles and instantiates the plug-in with host (nil: the
// pure exports only). Plug-in log lines (warnings) go to warn.
func loadPlugin(e *env, pf *pluginFlags, host *hostfuncs.Host, config []byte, warn func(string)) (*plugin, error) {
	wasm, source, err := pf.locate(e)
	if err != nil {
		return nil, err
	}
	p := &plugin{source: source, stats: &stats{}, config: config}
	opts := harness.Options{
		Wasm: wasm,
		Logger: func(level extism.LogLevel, msg string) {
			if level >= extism.LogLevelWarn && warn != nil {
				warn("plug-in: " + msg)
			}
		},
	}
	if host != nil {
		host.OnCall = p.stats.observe
		host.Context = e.ctx
		opts.Host = host
	}
	rt, err := harness.NewRuntime(e.ctx, opts)
	if err != nil {
		return nil, failf("loading the plug-in (%s): %v", source, err)
	}
	inst, err := rt.NewInstance(e.ctx)
	if err != nil {
		_ = rt.Close(e.ctx)
		return nil, failf("loading the plug-in (%s): %v", source, err)
	}
	p.rt, p.inst = rt, inst
	return p, nil
}

func (p *plugin) Close(ctx context.Context) {
	_ = p.inst.Close(ctx)
	_ = p.rt.Close(ctx)
}

// call runs an export. An export's refusal is a failure naming the field.
func (p *plugin) call(ctx context.Context, export string, input []byte) (gjson.Result, []byte, error) {
	out, err := p.inst.Call(ctx, export, input)
	if err != nil {
		var ce *harness.CallError
		if errors.As(err, &ce) {
			return gjson.Result{}, nil, failf("the plug-in refused the input (%s): %s: %s", export, ce.Code, ce.Message)
		}
		if ctx.Err() != nil {
			return gjson.Result{}, nil, failf("interrupted")
		}
		return gjson.Result{}, nil, failf("the plug-in failed (%s): %v", export, err)
	}
	return gjson.ParseBytes(out), out, nil
}

// messagesInput builds {"messages":[…],"config":{…}}.
func (p *plugin) messagesInput(msgs [][]byte) []byte {
	n := 32 + len(p.config)
	for _, m := range msgs {
		n += len(m) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, `{"messages":`...)
	b = appendArray(b, msgs)
	b = append(b, `,"config":`...)
	b = append(b, p.config...)
	return append(b, '}')
}

func appendArray(b []byte, msgs [][]byte) []byte {
	b = append(b, '[')
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, m...)
	}
	return append(b, ']')
}

// expectedCalls asks the plug-in how many summarization calls a compaction
// of history will make: split, then chunk the part to compress. It is an
// estimate for the progress bar (re-summarization adds one, a target_tokens
// compaction may need fewer).
func (p *plugin) expectedCalls(ctx context.Context, history [][]byte) (toCompress, calls int) {
	res, _, err := p.call(ctx, "split", p.messagesInput(history))
	if err != nil {
		return 0, 0
	}
	tc := res.Get("to_compress").Array()
	if len(tc) == 0 {
		return 0, 0
	}
	msgs := make([][]byte, len(tc))
	for i, m := range tc {
		msgs[i] = []byte(m.Raw)
	}
	ch, _, err := p.call(ctx, "chunk", p.messagesInput(msgs))
	if err != nil {
		return len(tc), 0
	}
	return len(tc), int(ch.Get("chunks.#").Int())
}

// version returns the plug-in's version export output.
func (p *plugin) version(ctx context.Context) (string, int64, error) {
	res, _, err := p.call(ctx, "version", []byte(`{}`))
	if err != nil {
		return "", 0, err
	}
	return res.Get("version").String(), res.Get("abi").Int(), nil
}

func describeSource(source string) string {
	if source == "embedded" {
		return "embedded in the binary"
	}
	return source
}

// warner writes warnings to stderr, even with --quiet: each one is
// something to fix in the command line or the config file.
func warner(e *env) func(string) {
	return func(msg string) {
		fmt.Fprintln(e.stderr, "clipfold: warning: "+strings.TrimPrefix(msg, "clipfold: "))
	}
}
