package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clipfold/clipfold/internal/benchkit"
	"github.com/clipfold/clipfold/internal/fakellm"
	"github.com/clipfold/clipfold/internal/waitstats"
	"github.com/tidwall/gjson"
)

// keyEnv names the variable the command reads the summarizer's key from.
const keyEnv = "CLIPFOLD_AHEAD_BENCH_KEY"

// measurer runs the command and the Python script.
type measurer struct {
	o    *options
	cli  *benchkit.CLI
	wasm string // the plug-in, absolute ("" for the command's own)
	// pySrc and sqlDir: the checkout's Python package and SQL, absolute.
	pySrc, sqlDir string
	// nodeSrc: the checkout's Node package's entry, absolute.
	nodeSrc string
	dir     string
	label   string
	clean   func()
}

func newMeasurer(o *options) (*measurer, error) {
	bin, err := exec.LookPath(o.bin)
	if err != nil {
		return nil, fmt.Errorf("the clipfold command %s: %w (run make cli)", o.bin, err)
	}
	m := &measurer{o: o, cli: &benchkit.CLI{Bin: bin, Env: []string{keyEnv + "=k"}}, label: o.label, clean: func() {}}
	if o.wasm != "" {
		if m.wasm, err = filepath.Abs(o.wasm); err != nil {
			return nil, err
		}
		if _, err := os.Stat(m.wasm); err != nil {
			return nil, fmt.Errorf("the plug-in (-wasm): %w (run make build)", err)
		}
		m.cli.Env = append(m.cli.Env, "CLIPFOLD_WASM="+m.wasm)
	}
	if m.pySrc, err = filepath.Abs(o.pySrc); err != nil {
		return nil, err
	}
	if m.sqlDir, err = filepath.Abs(filepath.Join("hostfuncs", "store", "sqlite")); err != nil {
		return nil, err
	}
	if m.nodeSrc, err = filepath.Abs(o.nodeSrc); err != nil {
		return nil, err
	}
	m.dir = o.keep
	if m.dir == "" {
		if m.dir, err = os.MkdirTemp("", "clipfold-ahead-"); err != nil {
			return nil, err
		}
		dir := m.dir
		m.clean = func() { os.RemoveAll(dir) }
	} else if err := os.MkdirAll(m.dir, 0o755); err != nil {
		return nil, err
	}
	if m.label == "" {
		// The Go API's compactAhead at the root, the packages' own, and
		// the scripts that drive them are measured too.
		m.label = benchkit.MeasuredCommit(":(glob)*.go", "bindings/python/src", "bindings/node/src", "tools/ahead")
	}
	return m, nil
}

func (m *measurer) close() { m.clean() }

// freshDB is the path of a database named name, what an earlier run left
// there removed.
func (m *measurer) freshDB(name string) (string, error) {
	db := filepath.Join(m.dir, name+".db")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(db + suffix); err != nil && !os.IsNotExist(err) {
			return "", err
		}
	}
	return db, nil
}

// summarizer serves srv over HTTP, recording each request's body.
type summarizer struct {
	srv    *fakellm.Server
	http   *httptest.Server
	mu     sync.Mutex
	bodies []string
}

func newSummarizer(latency, maxLatency time.Duration) *summarizer {
	s := &summarizer{srv: &fakellm.Server{Latency: latency, MaxLatency: maxLatency}}
	s.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.bodies = append(s.bodies, string(b))
		s.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		s.srv.ServeHTTP(w, r)
	}))
	return s
}

func (s *summarizer) flags() []string {
	return []string{"--provider", "openai-compat", "--base-url", s.http.URL, "--model", "m", "--api-key-env", keyEnv}
}

func (s *summarizer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.bodies)
}

// waitStats summarizes waits in milliseconds, as the command's report
// does (internal/waitstats).
type waitStats = waitstats.Stats

func statsOf(ms []float64) waitStats { return waitstats.Of(ms) }

func statsFrom(r gjson.Result) waitStats {
	return waitStats{N: int(r.Get("n").Int()), P50: r.Get("p50").Float(), P95: r.Get("p95").Float(),
		P99: r.Get("p99").Float(), Max: r.Get("max").Float()}
}

// replay replays one session, one host, one mode.
func (m *measurer) replay(ctx context.Context, c *replayResult) error {
	file := filepath.Join(m.o.data, c.Session+".json")
	msgs, conv, err := readSession(file)
	if err != nil {
		return err
	}
	s := newSummarizer(m.o.scaled(m.o.latency), m.o.scaled(m.o.maxLatency))
	defer s.http.Close()
	db, err := m.freshDB(fmt.Sprintf("%s-%s-%s", c.Session, strings.ToLower(c.Host), c.mode()))
	if err != nil {
		return err
	}
	interval := m.o.scaled(m.o.turn)
	var final []string
	replayed := 0
	if c.Host == "Go" {
		args := []string{"run", file, "--model-max-tokens", strconv.Itoa(c.Window), "--db", db, "--json", "--quiet",
			"--turn-interval", interval.String()}
		if c.Ahead {
			args = append(args, "--ahead")
		}
		if m.o.turns > 0 {
			args = append(args, "--turns", strconv.Itoa(m.o.turns))
		}
		out, err := m.cli.Exec(ctx, append(args, s.flags()...)...)
		if err != nil {
			return err
		}
		r := gjson.ParseBytes(out)
		c.ModelCalls, c.Compactions = int(r.Get("model_calls").Int()), int(r.Get("compactions").Int())
		c.Failed, c.OverLimit = int(r.Get("compactions_failed").Int()), int(r.Get("calls_over_limit").Int())
		c.WallSeconds = float64(r.Get("total_ms").Int()) / 1000
		replayed = int(r.Get("messages_appended").Int())
		if a := r.Get("ahead"); a.Exists() {
			c.Started, c.Applied, c.AtLimit = int(a.Get("started").Int()), int(a.Get("applied").Int()), int(a.Get("at_limit").Int())
			a.Get("discarded").ForEach(func(_, v gjson.Result) bool { c.Discarded += int(v.Int()); return true })
			c.Waits, c.CompactionWaits = statsFrom(a.Get("wait_ms")), statsFrom(a.Get("compaction_wait_ms"))
		} else if c.Compactions > 0 {
			// The synchronous path does not time each call: its
			// compactions' summarizer time, on average.
			c.MeanCompactionWaitMs = float64(r.Get("llm_ms").Int()) / float64(c.Compactions)
		}
		shown, err := m.cli.Show(ctx, conv, db)
		if err != nil {
			return err
		}
		for _, msg := range shown {
			final = append(final, msg.ID)
		}
	} else {
		args := []string{"replay", "--wasm", m.wasm, "--session", file, "--url", s.http.URL, "--db", db,
			"--model-max-tokens", strconv.Itoa(c.Window), "--turn-interval", strconv.FormatFloat(interval.Seconds(), 'f', -1, 64),
			"--turns", strconv.Itoa(m.o.turns)}
		if !c.Ahead {
			args = append(args, "--sync")
		}
		var r struct {
			ModelCalls      int       `json:"model_calls"`
			Compactions     int       `json:"compactions"`
			Failed          int       `json:"compactions_failed"`
			OverLimit       int       `json:"calls_over_limit"`
			Started         int       `json:"started"`
			Applied         int       `json:"applied"`
			AtLimit         int       `json:"at_limit"`
			Discarded       int       `json:"discarded"`
			WallMs          float64   `json:"wall_ms"`
			Waits           []float64 `json:"waits_ms"`
			CompactionWaits []float64 `json:"compaction_waits_ms"`
			Replayed        int       `json:"replayed"`
			FinalIDs        []string  `json:"final_ids"`
		}
		if err := m.script(ctx, c.Host, &r, args...); err != nil {
			return err
		}
		c.ModelCalls, c.Compactions, c.Failed, c.OverLimit = r.ModelCalls, r.Compactions, r.Failed, r.OverLimit
		c.Started, c.Applied, c.AtLimit, c.Discarded = r.Started, r.Applied, r.AtLimit, r.Discarded
		c.WallSeconds = r.WallMs / 1000
		c.Waits, c.CompactionWaits = statsOf(r.Waits), statsOf(r.CompactionWaits)
		replayed, final = r.Replayed, r.FinalIDs
	}
	c.SummarizerCalls = s.srv.Calls()
	if replayed > len(msgs) {
		return fmt.Errorf("replayed %d messages of %d", replayed, len(msgs))
	}
	c.Messages = replayed
	c.Lost, err = lost(ctx, db, conv, msgs[:replayed], final)
	return err
}

// script runs host's script (Python: ahead.py with the checkout's
// package; Node: ahead.mjs with the checkout's bindings/node) and decodes
// what it prints into v.
func (m *measurer) script(ctx context.Context, host string, v any, args ...string) error {
	var cmd *exec.Cmd
	if host == "Node" {
		cmd = exec.CommandContext(ctx, m.o.node, append([]string{m.o.nodeScript, args[0], "--src", m.nodeSrc}, args[1:]...)...)
	} else {
		cmd = exec.CommandContext(ctx, m.o.python, append([]string{m.o.script}, args...)...)
		// The checkout's package and SQL, not a copy installed earlier.
		cmd.Env = append(os.Environ(), "PYTHONPATH="+m.pySrc, "CLIPFOLD_SQL_DIR="+m.sqlDir)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", host, args[0], err, strings.TrimSpace(stderr.String()))
	}
	if err := json.Unmarshal(stdout.Bytes(), v); err != nil {
		return fmt.Errorf("%s %s: %w: %.200s", host, args[0], err, stdout.String())
	}
	return nil
}

// readSession reads a session's message ids and its conversation id.
func readSession(file string) (ids []string, conv string, err error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, "", err
	}
	r := gjson.ParseBytes(b)
	if !r.IsArray() {
		return nil, "", fmt.Errorf("%s: not a JSON array of messages", file)
	}
	for _, msg := range r.Array() {
		id := msg.Get("id").String()
		if id == "" {
			return nil, "", fmt.Errorf("%s: a message without an id", file)
		}
		ids = append(ids, id)
		if conv == "" {
			conv = msg.Get("conversation_id").String()
		}
	}
	if conv == "" {
		return nil, "", fmt.Errorf("%s: no conversation_id", file)
	}
	return ids, conv, nil
}

// lost returns the ids neither in the final history nor in db's recall
// storage.
func lost(ctx context.Context, db, conv string, ids, final []string) ([]string, error) {
	arch, err := benchkit.OpenArchive(db, conv)
	if err != nil {
		return nil, err
	}
	defer arch.Close()
	var out []string
	for _, id := range ids {
		if slices.Contains(final, id) {
			continue
		}
		_, _, ok, err := arch.Recall(ctx, id)
		if err != nil {
			return nil, err
		}
		if !ok {
			out = append(out, id)
		}
	}
	return out, nil
}

// compactOnce compacts the session at once with a summarizer of
// -compact-latency, then checks the fold-in: a compaction of the first
// half, then of the whole, whose requests carry the first one's summary.
func (m *measurer) compactOnce(ctx context.Context, file string) (*compactResult, error) {
	ids, conv, err := readSession(file)
	if err != nil {
		return nil, err
	}
	latency := m.o.compactLatency // not scaled: one run of a few seconds
	res := &compactResult{Messages: len(ids), LatencySeconds: latency.Seconds()}
	s := newSummarizer(latency, latency)
	defer s.http.Close()
	db, err := m.freshDB("compact")
	if err != nil {
		return nil, err
	}
	start := time.Now()
	out, err := m.cli.Exec(ctx, append([]string{"compact", file, "--json", "--quiet", "--db", db}, s.flags()...)...)
	res.WallSeconds = time.Since(start).Seconds()
	if err != nil {
		return nil, err
	}
	r := gjson.ParseBytes(out)
	res.Failed = r.Get("failed").Bool()
	res.Compressed, res.LLMCalls = int(r.Get("messages_compressed").Int()), int(r.Get("llm_calls").Int())
	res.SummarizerCalls = s.srv.Calls()
	var final []string
	for _, msg := range r.Get("history").Array() {
		final = append(final, msg.Get("id").String())
	}
	if res.Lost, err = lost(ctx, db, conv, ids, final); err != nil {
		return nil, err
	}

	// The fold-in: the first half compacted, then the whole.
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var all []json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	half, err := json.Marshal(all[:len(all)/2])
	if err != nil {
		return nil, err
	}
	first := filepath.Join(m.dir, "compact-first-half.json")
	if err := os.WriteFile(first, half, 0o644); err != nil {
		return nil, err
	}
	fs := newSummarizer(0, 0)
	defer fs.http.Close()
	if db, err = m.freshDB("compact-fold-in"); err != nil {
		return nil, err
	}
	if _, err := m.cli.Exec(ctx, append([]string{"compact", first, "--json", "--quiet", "--db", db}, fs.flags()...)...); err != nil {
		return nil, err
	}
	earlier := len(fs.requests())
	if out, err = m.cli.Exec(ctx, append([]string{"compact", file, "--json", "--quiet", "--db", db}, fs.flags()...)...); err != nil {
		return nil, err
	}
	later := fs.requests()[earlier:]
	res.FoldInCalls = len(later)
	for _, body := range later {
		// fakellm's answers say "(answer N)": the first compaction's
		// summaries are answers 1 to earlier.
		for n := 1; n <= earlier; n++ {
			if strings.Contains(body, fmt.Sprintf("(answer %d)", n)) {
				res.FoldIn = true
			}
		}
	}
	res.FoldInFailed = gjson.GetBytes(out, "failed").Bool()
	return res, nil
}

// count times host's per-turn check.
func (m *measurer) count(ctx context.Context, host, file string) (*countResult, error) {
	var r countResult
	if err := m.script(ctx, host, &r, "count", "--wasm", m.wasm, "--session", file,
		"--sizes", m.o.countSizes, "--runs", strconv.Itoa(m.o.countRuns)); err != nil {
		return nil, err
	}
	return &r, nil
}
