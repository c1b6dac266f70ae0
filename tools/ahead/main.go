// Command ahead measures what compaction costs an agent loop: how long a
// model call waits for compaction, with compaction ahead of time and
// without it, against a fake OpenAI-compatible summarizer of fixed
// latency (internal/fakellm). For each session of testdata/conversations
// it replays the file as an agent loop (a model call before each
// assistant message, each turn starting -turn-interval after the one
// before, a summarizer answering in -latency to -max-latency):
//
//   - Go: `clipfold run FILE --turn-interval D --json`, synchronous and
//     with --ahead (its report gives every model call's wait);
//   - Python: tools/ahead/ahead.py through Compactor.compact_if_due and
//     Compactor.compact_ahead, a caller-owned list on a SQLite store;
//   - Node: tools/ahead/ahead.mjs through compactIfDue and compactAhead,
//     the same way;
//
// and reports the waits (every model call's and those at compactions),
// the summarizer calls, the compactions, the model calls sent over the
// limit, the wall time, and checks that no message was lost (each is in
// the final history or in recall storage). Then it compacts the
// 884-message session at once with a summarizer of -compact-latency
// (`clipfold compact`), and checks that a compaction after it still folds
// the earlier summary in; and times the per-turn check on the same 100,
// 1,000 and 10,000 messages: Python's count_context against LangChain's
// count_tokens_approximately, Node's countContext against LangChain.js's
// countTokensApproximately (the langchain package).
//
// -scale multiplies the replays' durations (turn interval, latencies): full
// scale takes minutes per session. The report says which scale was
// used. Usage (from the repository root):
//
//	make ahead                                   # builds the command, writes docs/ahead.md
//	go run ./tools/ahead -scale 0.1 -out ''      # a quick run
//
// The waits are measurements; the command exits non-zero only when
// something breaks (a command fails, a compaction fails, a message is
// lost).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clipfold/clipfold/internal/benchkit"
)

type options struct {
	bin, wasm, data, python, script  string
	pySrc, node, nodeScript, nodeSrc string
	sessions                         []string
	windows                          map[string]int
	scale                            float64
	turn, latency, maxLatency        time.Duration
	compactLatency                   time.Duration
	turns, jobs, countRuns           int
	countSizes                       string
	out, json, keep, label           string
	quiet                            bool
}

func (o *options) register(fs *flag.FlagSet) func() error {
	var sessions, windows string
	fs.StringVar(&o.bin, "clipfold", "build/clipfold", "the clipfold `command` to measure (make cli builds it)")
	fs.StringVar(&o.wasm, "wasm", "build/clipfold.wasm", "the plug-in `file` the command and the Python rows run ('' : the command's embedded one, and no Python rows)")
	fs.StringVar(&o.data, "data", "testdata/conversations", "`directory` of the sessions")
	fs.StringVar(&sessions, "sessions", "", "comma-separated session `names` (default: every *.json but *.facts.json)")
	fs.StringVar(&windows, "model-max-tokens", "debugging-session=20000,planning-discussion=5000,support-chat=5000",
		"each session's window, `name=tokens,…` (a bare number for every session; 20000 for one not named)")
	fs.Float64Var(&o.scale, "scale", 1, "multiply the replays' durations (turn interval, latencies) by `s`: 0.1 runs ten times faster")
	fs.DurationVar(&o.turn, "turn-interval", 2*time.Second, "each turn starts this `duration` after the one before (at scale 1)")
	fs.DurationVar(&o.latency, "latency", time.Second, "the summarizer's shortest answer `time` (at scale 1)")
	fs.DurationVar(&o.maxLatency, "max-latency", 3*time.Second, "the summarizer's longest answer `time` (at scale 1)")
	fs.DurationVar(&o.compactLatency, "compact-latency", time.Second, "the summarizer's answer `time` for the session compacted at once (at any scale)")
	fs.IntVar(&o.turns, "turns", 0, "replay only the first `N` turns of each session (default: all)")
	fs.IntVar(&o.jobs, "jobs", 1, "replays run at once (each has a summarizer of its own; more than 1 shares the CPU)")
	fs.StringVar(&o.python, "python", "bindings/python/.venv/bin/python", "the Python with the clipfold package and langchain-core ('' for no Python rows)")
	fs.StringVar(&o.script, "python-script", "tools/ahead/ahead.py", "the Python rows' `script`")
	fs.StringVar(&o.pySrc, "python-src", "bindings/python/src", "the `directory` of the clipfold package the Python rows measure (PYTHONPATH)")
	fs.StringVar(&o.node, "node", "node", "the Node.js `command` for the Node rows ('' for none)")
	fs.StringVar(&o.nodeScript, "node-script", "tools/ahead/ahead.mjs", "the Node rows' `script`")
	fs.StringVar(&o.nodeSrc, "node-src", "bindings/node/src/index.js", "the clipfold `module` the Node rows measure (the checkout's; bindings/node needs npm ci)")
	fs.IntVar(&o.countRuns, "count-runs", 20, "per-turn check: the fastest of `N` turns at each size")
	fs.StringVar(&o.countSizes, "count-sizes", "100,1000,10000", "per-turn check: the history `sizes`")
	fs.StringVar(&o.out, "out", "docs/ahead.md", "write the Markdown report to this `file` ('' for none)")
	fs.StringVar(&o.json, "json", "", "write the full results as JSON to this `file` ('-' for stdout)")
	fs.StringVar(&o.keep, "keep", "", "keep the databases in this `directory` instead of a temporary one")
	fs.StringVar(&o.label, "label", "", "what the report says was measured (default: the last commit touching the measured code)")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress on stderr")
	return func() error {
		if !(o.scale > 0 && o.scale <= 1) {
			return fmt.Errorf("-scale: must be a number in (0, 1], got %v", o.scale)
		}
		if o.latency < 0 || o.maxLatency < o.latency {
			return fmt.Errorf("-latency, -max-latency: want 0 ≤ latency ≤ max-latency, got %v and %v", o.latency, o.maxLatency)
		}
		if o.jobs < 1 || o.countRuns < 1 || o.turns < 0 {
			return fmt.Errorf("-jobs and -count-runs must be ≥ 1 and -turns ≥ 0")
		}
		if sessions != "" {
			o.sessions = strings.Split(sessions, ",")
		}
		o.windows = map[string]int{}
		for _, kv := range strings.Split(windows, ",") {
			name, v, named := strings.Cut(kv, "=")
			if !named {
				name, v = "", kv
			}
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n <= 0 {
				return fmt.Errorf("-model-max-tokens: %q is not name=tokens or tokens > 0", kv)
			}
			o.windows[strings.TrimSpace(name)] = n
		}
		if o.wasm == "" {
			o.python, o.node = "", ""
		}
		return nil
	}
}

// scaled is d at the run's scale.
func (o *options) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * o.scale)
}

// window is a session's model_max_tokens.
func (o *options) window(name string) int {
	if n, ok := o.windows[name]; ok {
		return n
	}
	if n, ok := o.windows[""]; ok {
		return n
	}
	return 20000
}

func main() {
	var o options
	parsed := o.register(flag.CommandLine)
	flag.Parse()
	err := parsed()
	var rep *report
	if err == nil {
		rep, err = run(context.Background(), &o)
	}
	if err == nil {
		err = benchkit.WriteOutputs(o.json, rep, o.out, markdown(rep))
	}
	var problems []string
	if err == nil {
		if o.out != "" && !o.quiet {
			fmt.Fprintf(os.Stderr, "ahead: wrote %s\n", o.out)
		}
		problems = rep.problems()
	}
	benchkit.Finish("ahead", err, problems)
}

// run measures every session, the one-off compaction and the per-turn
// check.
func run(ctx context.Context, o *options) (*report, error) {
	names := o.sessions
	if names == nil {
		all, err := benchkit.ListNames(o.data, ".json")
		if err != nil {
			return nil, err
		}
		for _, n := range all {
			if !strings.HasSuffix(n, ".facts") {
				names = append(names, n)
			}
		}
	}
	m, err := newMeasurer(o)
	if err != nil {
		return nil, err
	}
	defer m.close()
	rep := &report{Label: m.label, Scale: o.scale, TurnInterval: o.scaled(o.turn).String(),
		Latency: o.scaled(o.latency).String(), MaxLatency: o.scaled(o.maxLatency).String(), Turns: o.turns, Jobs: o.jobs,
		Command: m.cli.Version(ctx), Load: loadAverage()}

	var cases []*replayResult
	for _, name := range names {
		for _, host := range []string{"Go", "Python", "Node"} {
			if host == "Python" && o.python == "" || host == "Node" && o.node == "" {
				continue
			}
			for _, ahead := range []bool{false, true} {
				cases = append(cases, &replayResult{Session: name, Host: host, Ahead: ahead, Window: o.window(name)})
			}
		}
	}
	errs := make([]error, len(cases))
	sem := make(chan struct{}, o.jobs)
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if !o.quiet {
				fmt.Fprintf(os.Stderr, "ahead: %s, %s, %s…\n", c.Session, c.Host, c.mode())
			}
			errs[i] = m.replay(ctx, c)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("%s (%s, %s): %w", c.Session, c.Host, c.mode(), errs[i])
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	rep.Replays = cases

	if slicesContain(names, "debugging-session") {
		if !o.quiet {
			fmt.Fprintln(os.Stderr, "ahead: the 884-message session at once…")
		}
		if rep.Compact, err = m.compactOnce(ctx, filepath.Join(o.data, "debugging-session.json")); err != nil {
			return nil, fmt.Errorf("compact: %w", err)
		}
	}
	for host, bin := range map[string]string{"Python": o.python, "Node": o.node} {
		if bin == "" {
			continue
		}
		if !o.quiet {
			fmt.Fprintf(os.Stderr, "ahead: the per-turn check, %s…\n", host)
		}
		cr, err := m.count(ctx, host, filepath.Join(o.data, names[0]+".json"))
		if err != nil {
			return nil, fmt.Errorf("per-turn check (%s): %w", host, err)
		}
		if host == "Node" {
			rep.NodeCount = cr
		} else {
			rep.Count = cr
		}
	}
	rep.LoadAfter = loadAverage()
	return rep, nil
}

func slicesContain(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// loadAverage is the machine's 1-, 5- and 15-minute load averages and
// its CPUs ("" where /proc does not say).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return fmt.Sprintf("%s %s %s on %d CPUs", f[0], f[1], f[2], runtime.NumCPU())
}
