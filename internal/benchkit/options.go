package benchkit

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/clipfold/clipfold/internal/wasmhost"
)

// Options are what every benchmark is told on its command line.
type Options struct {
	Bin    string   // the clipfold command
	Wasm   string   // the plug-in file ("": see Setup)
	Data   string   // the data directory
	Names  []string // the items to measure (default: all)
	Budget int      // the compaction limit in estimated tokens
	Limit  int      // search hits that count
	Extra  []string // extra flags for clipfold run
	Out    string   // the Markdown report ("" for none)
	JSON   string   // the JSON results ("" for none, "-" for stdout)
	Keep   string   // keep the databases here
	Label  string   // what the report says was measured
	Quiet  bool
}

// Defaults are a benchmark's own defaults and wording for Register.
type Defaults struct {
	Data, DataHelp string // -data's default and what the directory holds
	NamesFlag      string // the flag naming items, e.g. "conversations"
	Budget         int
	Out            string
	WasmHelp       string
}

// Register defines the common flags on fs; the returned function, called
// after fs.Parse, fills the list-valued options.
func (o *Options) Register(fs *flag.FlagSet, d Defaults) func() {
	var names, extra string
	fs.StringVar(&o.Bin, "clipfold", "build/clipfold", "the clipfold `command` to measure (make cli builds it)")
	fs.StringVar(&o.Wasm, "wasm", "", d.WasmHelp)
	fs.StringVar(&o.Data, "data", d.Data, "`directory` of "+d.DataHelp)
	fs.StringVar(&names, d.NamesFlag, "", "comma-separated `names` (default: all)")
	fs.IntVar(&o.Budget, "budget", d.Budget, "the compaction limit in estimated `tokens` (context_budget 0.8 × model_max_tokens), also the truncation budget")
	fs.IntVar(&o.Limit, "limit", 5, "search hits that count (top `N`)")
	fs.StringVar(&extra, "run-flags", "", "extra `flags` for clipfold run, space-separated (e.g. \"--keep-recent 10\")")
	fs.StringVar(&o.Out, "out", d.Out, "write the Markdown report to this `file` ('' for none)")
	fs.StringVar(&o.JSON, "json", "", "write the full results as JSON to this `file` ('-' for stdout)")
	fs.StringVar(&o.Keep, "keep", "", "keep the databases in this `directory` instead of a temporary one")
	fs.StringVar(&o.Label, "label", "", "what the report says was measured (default: the last commit touching the measured code)")
	fs.BoolVar(&o.Quiet, "quiet", false, "no progress on stderr")
	return func() {
		if names != "" {
			o.Names = strings.Split(names, ",")
		}
		o.Extra = strings.Fields(extra)
	}
}

// Bench is what a benchmark runs with: the command, the estimator and
// the directory of its databases.
type Bench struct {
	CLI *CLI
	Est *Estimator
	Dir string
	// Label is o.Label, else MeasuredCommit().
	Label string
	clean func()
}

// Setup finds the command and the plug-in, loads the estimator and
// makes the databases' directory. The estimator runs o.Wasm, else
// wasmhost.DefaultWasm: $CLIPFOLD_WASM, else the embedded build (nothing
// needs building). The command runs o.Wasm when set (through
// $CLIPFOLD_WASM), else what its environment says: $CLIPFOLD_WASM, else
// its embedded plug-in. With sameWasm it always runs the estimator's, so
// that the limit it compacts at is the one the benchmark counts with:
// the embedded build goes to the command as a temporary file.
func (o *Options) Setup(ctx context.Context, sameWasm bool) (*Bench, error) {
	bin, err := exec.LookPath(o.Bin)
	if err != nil {
		return nil, fmt.Errorf("the clipfold command %s: %w (run make cli)", o.Bin, err)
	}
	b := &Bench{CLI: &CLI{Bin: bin}, Label: o.Label}
	var cleanups []func()
	b.clean = func() {
		for _, f := range cleanups {
			f()
		}
	}
	fail := func(err error) (*Bench, error) {
		b.clean()
		return nil, err
	}
	var wasm []byte
	path := o.Wasm
	if path != "" {
		if wasm, err = os.ReadFile(path); err != nil {
			return nil, fmt.Errorf("the plug-in (-wasm): %w", err)
		}
	} else if wasm, path, err = wasmhost.DefaultWasm(); err != nil {
		return nil, err
	}
	if path == "" && sameWasm {
		f, err := os.CreateTemp("", "clipfold-bench-*.wasm")
		if err != nil {
			return nil, err
		}
		path = f.Name()
		cleanups = append(cleanups, func() { os.Remove(path) })
		_, err = f.Write(wasm)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fail(err)
		}
	}
	if path != "" {
		if path, err = filepath.Abs(path); err != nil {
			return fail(err)
		}
		b.CLI.Env = append(b.CLI.Env, "CLIPFOLD_WASM="+path)
	}
	b.Dir = o.Keep
	if b.Dir == "" {
		if b.Dir, err = os.MkdirTemp("", "clipfold-bench-"); err != nil {
			return fail(err)
		}
		dir := b.Dir
		cleanups = append(cleanups, func() { os.RemoveAll(dir) })
	} else if err := os.MkdirAll(b.Dir, 0o755); err != nil {
		return fail(err)
	}
	if b.Est, err = NewEstimator(ctx, wasm); err != nil {
		return fail(err)
	}
	if b.Label == "" {
		b.Label = MeasuredCommit()
	}
	return b, nil
}

// Close releases the estimator and removes a temporary directory.
func (b *Bench) Close(ctx context.Context) {
	b.Est.Close(ctx)
	b.clean()
}

// FreshDB returns the path of a database named name in the directory,
// removing what an earlier run left there.
func (b *Bench) FreshDB(name string) (string, error) {
	db := filepath.Join(b.Dir, name+".db")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(db + suffix); err != nil && !os.IsNotExist(err) {
			return "", err
		}
	}
	return db, nil
}

// ListNames returns the names of dir's files ending in suffix, without
// it, in order; an error when there are none.
func ListNames(dir, suffix string) ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(dir, "*"+suffix))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, m := range matches {
		names = append(names, strings.TrimSuffix(filepath.Base(m), suffix))
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil, fmt.Errorf("no *%s in %s", suffix, dir)
	}
	return names, nil
}

// RunProblems are what makes a benchmark fail for one item: messages
// lost or altered, compactions that failed otherwise than for lack of
// gain (no_gain, breaker_open).
func RunProblems(name string, lost, altered []string, failures map[string]int) []string {
	var out []string
	if len(lost) > 0 {
		out = append(out, fmt.Sprintf("%s: %d message(s) lost: %s", name, len(lost), head(lost)))
	}
	if len(altered) > 0 {
		out = append(out, fmt.Sprintf("%s: %d message(s) altered: %s", name, len(altered), head(altered)))
	}
	for code, n := range failures {
		if code != "no_gain" && code != "breaker_open" {
			out = append(out, fmt.Sprintf("%s: %d compaction(s) failed with %s", name, n, code))
		}
	}
	return out
}

func head(ids []string) string {
	if len(ids) > 10 {
		return strings.Join(ids[:10], ", ") + ", …"
	}
	return strings.Join(ids, ", ")
}

// Finish ends a benchmark's main: err (the run failed) or its problems
// on stderr, prefixed with the tool's name, and the exit status 1.
func Finish(tool string, err error, problems []string) {
	if err != nil {
		fmt.Fprintln(os.Stderr, tool+":", err)
		os.Exit(1)
	}
	sort.Strings(problems)
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, tool+":", p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
}

// BuildCommand builds ./cmd/clipfold of the module at root into dir and
// returns its path (the benchmarks' tests measure this checkout).
func BuildCommand(root, dir string) (string, error) {
	bin := filepath.Join(dir, "clipfold")
	build := exec.Command("go", "build", "-o", bin, "./cmd/clipfold")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the command: %w: %s", err, out)
	}
	return bin, nil
}
