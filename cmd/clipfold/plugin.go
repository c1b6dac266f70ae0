package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/clipfold/clipfold"
	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/embed"
	"github.com/clipfold/clipfold/hostfuncs/llm"
	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/internal/redact"
	"github.com/tidwall/gjson"
)

// pluginFlags choose the plug-in.
type pluginFlags struct {
	wasm string
}

func (pf *pluginFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&pf.wasm, "wasm", "", "load the plug-in from this `file` instead of the embedded one (or $CLIPFOLD_WASM)")
}

// locate finds the plug-in: --wasm, $CLIPFOLD_WASM, or the build embedded
// in this binary (package embed).
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
	return embed.Wasm, "embedded", nil
}

// hostStats is what the host did during plug-in calls.
type hostStats struct {
	llmCalls  int
	llmFailed int
	llmTime   time.Duration
	hostTime  time.Duration // every host function, the LLM included
	storeTime time.Duration
	// llmError is the code (core.LLMAuth, core.LLMUnavailable, …) of the
	// last model call that failed with a *core.LLMError, "" when none did:
	// what a failed compaction's hint is chosen by.
	llmError string
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

// observedLLM is the LLM client the plug-in calls: client, with the code
// of each failure kept in stats.
type observedLLM struct {
	llm.Client
	stats *stats
}

func (o observedLLM) Complete(ctx context.Context, req *core.ModelRequest) (core.ModelResponse, error) {
	resp, err := o.Client.Complete(ctx, req)
	var le *core.LLMError
	if errors.As(err, &le) {
		o.stats.mu.Lock()
		o.stats.llmError = le.Code
		o.stats.mu.Unlock()
	}
	return resp, err
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

// plugin is the loaded plug-in with its LLM and store.
type plugin struct {
	c      *clipfold.Compactor
	source string
	stats  *stats
	config []byte // the "config" object of every call
}

// loadPlugin loads the plug-in with client and st (nil: the pure exports
// only). Plug-in log lines (warnings) go to warn.
func loadPlugin(e *env, pf *pluginFlags, client llm.Client, st store.Store, config []byte, warn func(string)) (*plugin, error) {
	wasm, source, err := pf.locate(e)
	if err != nil {
		return nil, err
	}
	p := &plugin{source: source, stats: &stats{}, config: config}
	if client != nil {
		client = observedLLM{Client: client, stats: p.stats}
	}
	opts := clipfold.Options{Wasm: wasm, LLM: client, Store: st, OnHostCall: p.stats.observe,
		Logger: slog.New(warnHandler{warn})}
	c, err := clipfold.Open(e.ctx, opts)
	if err != nil {
		return nil, failf("loading the plug-in (%s): %v", source, err)
	}
	p.c = c
	return p, nil
}

// warnHandler passes the plug-in's warnings, and worse, to warn.
type warnHandler struct{ warn func(string) }

func (h warnHandler) Enabled(_ context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.warn != nil
}
func (h warnHandler) Handle(_ context.Context, r slog.Record) error {
	h.warn("plug-in: " + r.Message)
	return nil
}
func (h warnHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h warnHandler) WithGroup(string) slog.Handler      { return h }

// Close releases the plug-in (not the store, which the caller opened).
func (p *plugin) Close(context.Context) { _ = p.c.Close() }

// call runs an export. An export's refusal is a failure naming the field.
func (p *plugin) call(ctx context.Context, export string, input []byte) (gjson.Result, []byte, error) {
	out, err := p.c.Call(ctx, export, input)
	if err != nil {
		var ce *clipfold.CallError
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
		fmt.Fprintln(e.stderr, "clipfold: warning: "+redact.Text(strings.TrimPrefix(msg, "clipfold: ")))
	}
}
