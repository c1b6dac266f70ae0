// Command benchreport measures clipfold's performance, for both builds of
// the plug-in, in every host, and writes docs/benchmarks.md and
// docs/benchmarks.svg. Run it from the repository root:
//
//	go run ./tools/benchreport [flags]     (make bench)
//
// It builds both plug-ins (make build build-tinygo), then for each:
//
//   - the Go benchmarks (go test ./harness -bench): split, score and
//     shouldCompact at 100, 1k, 10k and 100k messages, natively, from the
//     clipfold Go host (staged) and through Extism memory (a plain Extism
//     Go SDK), in interleaved rounds so that a change of load hits both
//     builds alike; benchstat over them;
//   - BenchmarkPerfMemory: 1,000 10k-message splits on one instance;
//   - BenchmarkLargeInputs: the targets' 200k-element and 64 MiB inputs;
//   - cold starts of the Go host in fresh processes (./coldstart), with
//     and without wazero's compilation cache;
//   - the Node host (bindings/node/bench.mjs) and the Python host, a plain
//     Extism SDK on Wasmtime (bindings/python/bench.py), on the same input
//     files, with their cold starts;
//   - for the TinyGo build, split through the other plain Extism SDKs:
//     @extism/extism on Node (harness/sdks/js/bench.mjs) and the Chicory
//     SDK on Java, compiled (AoT) and interpreted
//     (harness/sdks/java, org.clipfold.sdkcheck.Bench).
//
// The load average is recorded before and after every step.
//
// Flags:
//
//	-count N       rounds of the Go benchmarks (default 6: benchstat's minimum for a confidence interval)
//	-cold-runs N   fresh processes per cold-start case (default 10)
//	-large         also run BenchmarkLargeInputs (default true; minutes)
//	-node, -python also run those hosts (default true)
//	-sdks          also run the plain JavaScript and Java SDKs (default true)
//	-quick         -count 1, -cold-runs 3, sizes up to 10k for Node and Python, no large inputs
//	-raw DIR       keep raw outputs there (default: a temporary directory)
//	-rerender J    only rewrite the report from the report.json a run left in -raw
//	-md, -svg      output paths (default docs/benchmarks.md, docs/benchmarks.svg)
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/clipfold/clipfold/internal/benchdata"
	"github.com/clipfold/clipfold/internal/benchdata/compare"
)

// build is one plug-in and everything measured on it.
type build struct {
	Name  string // "TinyGo", "Go"
	Path  string
	Bytes int64
	Go    *benchRun           // the Go benchmarks, every round
	Mem   *benchRun           // BenchmarkPerfMemory
	Large *benchRun           // BenchmarkLargeInputs
	Cold  map[string]coldStat // the Go host: "cache", "nocache"
	Node  *hostRun
	Py    *hostRun
	SDKs  map[string]*hostRun // plain SDKs, TinyGo build only: "js", "chicory-aot", "chicory"
}

// hostRun is a Node or Python bench run: its JSON and the load around it.
type hostRun struct {
	Out        map[string]any
	Err        string
	LoadBefore string
	LoadAfter  string
}

type report struct {
	Date                      time.Time
	CPU                       string
	NProc                     int
	GoVersion                 string
	SDKVersion, WazeroVersion string
	TinyGoVersion             string
	Count                     int
	Builds                    []*build
	Benchstat                 map[string]string // build name → benchstat output
	Errors                    []string
}

func main() {
	count := flag.Int("count", 6, "rounds of the Go benchmarks")
	coldRuns := flag.Int("cold-runs", 10, "fresh processes per cold-start case")
	doLarge := flag.Bool("large", true, "run BenchmarkLargeInputs")
	doNode := flag.Bool("node", true, "run bindings/node/bench.mjs")
	doPy := flag.Bool("python", true, "run bindings/python/bench.py")
	doSDKs := flag.Bool("sdks", true, "run the plain JavaScript and Java SDKs (harness/sdks)")
	quick := flag.Bool("quick", false, "smoke run")
	rawDir := flag.String("raw", "", "keep raw outputs in this directory")
	rerender := flag.String("rerender", "", "only rewrite the report from a report.json kept by an earlier run's -raw")
	mdPath := flag.String("md", "docs/benchmarks.md", "Markdown report")
	svgPath := flag.String("svg", "docs/benchmarks.svg", "SVG chart")
	flag.Parse()
	hostSizes := compare.Sizes
	if *quick {
		*count, *coldRuns, *doLarge = 1, 3, false
		hostSizes = hostSizes[:3]
	}
	if _, err := os.Stat("go.mod"); err != nil {
		fatal("run from the repository root")
	}
	if *rerender != "" {
		r := &report{}
		b, err := os.ReadFile(*rerender)
		if err == nil {
			err = json.Unmarshal(b, r)
		}
		if err != nil {
			fatal(err.Error())
		}
		for _, bd := range r.Builds {
			for _, run := range []*benchRun{bd.Go, bd.Mem, bd.Large} {
				if run != nil {
					run.results = parseBench(run.Raw)
				}
			}
		}
		write(r, *mdPath, *svgPath)
		return
	}
	tmp, err := os.MkdirTemp("", "benchreport")
	if err != nil {
		fatal(err.Error())
	}
	defer os.RemoveAll(tmp)
	if *rawDir == "" {
		*rawDir = tmp
	} else if err := os.MkdirAll(*rawDir, 0o755); err != nil {
		fatal(err.Error())
	}

	r := &report{Date: time.Now().UTC(), NProc: runtime.NumCPU(), CPU: cpuModel(), Count: *count, Benchstat: map[string]string{}}
	if out, err := sh(nil, "go", "version"); err == nil {
		r.GoVersion = strings.TrimSpace(string(out))
	}
	if out, err := sh(nil, "go", "list", "-m", "-f", "{{.Version}}", "github.com/extism/go-sdk", "github.com/tetratelabs/wazero"); err == nil {
		if v := strings.Fields(string(out)); len(v) == 2 {
			r.SDKVersion, r.WazeroVersion = v[0], v[1]
		}
	}
	must(sh(nil, "make", "build", "build-tinygo"))
	if out, err := sh(nil, "bash", "-c", `. "$(bash scripts/install-tinygo.sh --env)" && "$TINYGO" version`); err == nil {
		r.TinyGoVersion = strings.TrimSpace(string(out))
	}
	r.Builds = []*build{{Name: "TinyGo", Path: "build/clipfold-tinygo.wasm"}, {Name: "Go", Path: "build/clipfold.wasm"}}
	for _, bd := range r.Builds {
		if st, err := os.Stat(bd.Path); err == nil {
			bd.Bytes = st.Size()
		}
	}
	coldBin := filepath.Join(tmp, "coldstart")
	must(sh(nil, "go", "build", "-o", coldBin, "./tools/benchreport/coldstart"))
	// Every host reads the same bytes: the Go generator's.
	inputs := filepath.Join(*rawDir, "inputs")
	must(nil, os.MkdirAll(inputs, 0o755))
	for _, n := range compare.Sizes {
		must(nil, os.WriteFile(filepath.Join(inputs, fmt.Sprintf("history-%d.json", n)), benchdata.History(n), 0o644))
	}
	env := func(bd *build) []string { return []string{"CLIPFOLD_WASM=" + abs(bd.Path)} }

	// The Go benchmarks, in interleaved rounds.
	for round := 1; round <= *count; round++ {
		for _, bd := range r.Builds {
			run, err := runBench(fmt.Sprintf("%s round %d", bd.Name, round), env(bd),
				"^(BenchmarkSplit|BenchmarkScore|BenchmarkShouldCompact)$", 1, "", *rawDir)
			if err != nil {
				r.Errors = append(r.Errors, bd.Name+" benchmarks: "+tail(err.Error(), 600))
				continue
			}
			bd.Go = bd.Go.add(run)
		}
	}
	for _, bd := range r.Builds {
		if bd.Go == nil {
			continue
		}
		f := filepath.Join(*rawDir, "bench-"+slug(bd.Name)+"-all.txt")
		_ = os.WriteFile(f, []byte(bd.Go.Raw), 0o644)
		bs, err := findBenchstat()
		if err == nil {
			var out []byte
			if out, err = sh(nil, bs, f); err == nil {
				r.Benchstat[bd.Name] = string(out)
			}
		}
		if err != nil {
			r.Errors = append(r.Errors, "benchstat: "+tail(err.Error(), 600))
		}
	}

	for _, bd := range r.Builds {
		// Memory over 1,000 calls.
		if run, err := runBench(bd.Name+" memory", env(bd), "^BenchmarkPerfMemory$", 1, "1x", *rawDir); err == nil {
			bd.Mem = run
		} else {
			r.Errors = append(r.Errors, bd.Name+" BenchmarkPerfMemory: "+tail(err.Error(), 600))
		}
		// The targets' largest inputs.
		if *doLarge {
			run, err := runBench(bd.Name+" large", env(bd), "^BenchmarkLargeInputs$", 1, "1x", *rawDir)
			if err != nil {
				// A failing case (a wrong answer) is reported; the others' times are kept.
				r.Errors = append(r.Errors, bd.Name+" BenchmarkLargeInputs: "+tail(err.Error(), 600))
				run.results = parseBench(run.Raw)
			}
			bd.Large = run
		}
		// Cold starts of the Go host.
		bd.Cold = map[string]coldStat{}
		cache := filepath.Join(tmp, "cache-"+slug(bd.Name))
		if _, err := exec.Command(coldBin, "-wasm", bd.Path, "-cache", cache).Output(); err != nil { // fill the cache
			r.Errors = append(r.Errors, bd.Name+" cold start: "+err.Error())
		} else {
			for mode, dir := range map[string]string{"cache": cache, "nocache": "-"} {
				logf("cold start %s %s × %d", bd.Name, mode, *coldRuns)
				s, err := coldStart(coldBin, bd.Path, dir, *coldRuns)
				if err != nil {
					r.Errors = append(r.Errors, err.Error())
					continue
				}
				s.Load = loadavg()
				bd.Cold[mode] = s
			}
		}
		sizes := joinInts(hostSizes)
		if *doNode {
			if err := npmDeps("bindings/node", "node-sqlite3-wasm"); err != nil {
				bd.Node = &hostRun{Err: err.Error()}
			} else {
				bd.Node = hostBench(env(bd), filepath.Join(*rawDir, "node-"+slug(bd.Name)+".json"), true, "node",
					"--disable-warning=ExperimentalWarning", "bindings/node/bench.mjs", "--json", "--sizes="+sizes,
					fmt.Sprintf("--cold-runs=%d", *coldRuns), "--inputs="+abs(inputs))
			}
		}
		if *doPy {
			py, err := pythonHost()
			if err != nil {
				bd.Py = &hostRun{Err: err.Error()}
			} else {
				out := filepath.Join(*rawDir, "python-"+slug(bd.Name)+".json")
				bd.Py = hostBench(env(bd), out, false, py, "bindings/python/bench.py", "--sizes", sizes,
					"--cold-runs", strconv.Itoa(min(*coldRuns, 5)), "--inputs", abs(inputs), "--json", out)
			}
		}
	}

	if *doSDKs {
		r.build("TinyGo").SDKs = runPlainSDKs(abs(r.build("TinyGo").Path), abs(inputs), *quick)
	}

	if b, err := json.MarshalIndent(r, "", "  "); err == nil {
		_ = os.WriteFile(filepath.Join(*rawDir, "report.json"), b, 0o644)
	}
	write(r, *mdPath, *svgPath)
	logf("raw outputs in %s", *rawDir)
}

// hostBench runs a host's bench program. Its JSON is on stdout
// (stdoutJSON; then also written to jsonFile unless that is "") or in
// jsonFile (Python's bench.py, whose stdout is a table).
func hostBench(env []string, jsonFile string, stdoutJSON bool, name string, args ...string) *hostRun {
	h := &hostRun{LoadBefore: loadavg()}
	out, err := sh(env, name, args...)
	h.LoadAfter = loadavg()
	if err != nil {
		h.Err = tail(err.Error(), 800)
		return h
	}
	if !stdoutJSON {
		if out, err = os.ReadFile(jsonFile); err != nil {
			h.Err = err.Error()
			return h
		}
	} else if jsonFile != "" {
		_ = os.WriteFile(jsonFile, out, 0o644)
	}
	if err := json.Unmarshal(out, &h.Out); err != nil {
		h.Err = "bench output: " + err.Error()
	}
	return h
}

// npmDeps installs the npm dependencies of dir (npm ci, as make test-node
// and harness/sdks/run.sh do) when its node_modules lacks pkg.
func npmDeps(dir, pkg string) error {
	if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg)); err == nil {
		return nil
	}
	_, err := sh(nil, "npm", "ci", "--prefix", dir, "--no-audit", "--no-fund")
	return err
}

// runPlainSDKs times split through @extism/extism and the Chicory SDK, with
// nothing of clipfold's hosts: what a user of those SDKs pays (the
// targets' "a plain Extism SDK" row). Chicory's interpreter takes seconds at
// 10k, so it gets fewer runs.
func runPlainSDKs(wasm, inputs string, quick bool) map[string]*hostRun {
	sizes := "100,1000,10000"
	runs := map[bool]string{false: "21", true: "5"}[quick]
	out := map[string]*hostRun{}
	js := "harness/sdks/js"
	if err := npmDeps(js, "@extism/extism"); err != nil {
		out["js"] = &hostRun{Err: err.Error()}
	} else {
		out["js"] = hostBench(nil, "", true, "node", "--disable-warning=ExperimentalWarning", js+"/bench.mjs", wasm, inputs, sizes, runs)
	}
	java := "harness/sdks/java"
	_, err := sh(nil, "mvn", "-B", "-q", "--no-transfer-progress", "-Dstyle.color=never", "-f", java+"/pom.xml",
		"compile", "dependency:build-classpath", "-Dmdep.outputFile=target/classpath.txt")
	var deps []byte
	if err == nil {
		deps, err = os.ReadFile(filepath.Join(java, "target", "classpath.txt"))
	}
	if err != nil {
		out["chicory-aot"] = &hostRun{Err: err.Error()}
		out["chicory"] = out["chicory-aot"]
		return out
	}
	cp := filepath.Join(java, "target", "classes") + string(os.PathListSeparator) + strings.TrimSpace(string(deps))
	bench := []string{"-cp", cp, "org.clipfold.sdkcheck.Bench"}
	out["chicory-aot"] = hostBench(nil, "", true, "java", append(bench, "--aot", wasm, inputs, sizes, map[bool]string{false: "11", true: "3"}[quick])...)
	out["chicory"] = hostBench(nil, "", true, "java", append(bench, "--warmup=1", wasm, inputs, sizes, "3")...)
	return out
}

// pythonHost returns a Python with the clipfold package installed:
// $CLIPFOLD_PY, else bindings/python/.venv (made as run_tests.sh makes it).
func pythonHost() (string, error) {
	if p := os.Getenv("CLIPFOLD_PY"); p != "" {
		return p, nil
	}
	venv := "bindings/python/.venv"
	py := filepath.Join(venv, "bin", "python")
	if _, err := os.Stat(py); err != nil {
		if _, err := sh(nil, "python3", "-m", "venv", venv); err != nil {
			return "", err
		}
	}
	if _, err := sh(nil, py, "-m", "pip", "install", "-q", "--disable-pip-version-check", "./bindings/python"); err != nil {
		return "", err
	}
	return py, nil
}

func write(r *report, mdPath, svgPath string) {
	if err := os.MkdirAll(filepath.Dir(mdPath), 0o755); err != nil {
		fatal(err.Error())
	}
	must(nil, os.WriteFile(mdPath, []byte(r.markdown(svgPath, mdPath)), 0o644))
	must(nil, os.WriteFile(svgPath, []byte(r.chart()), 0o644))
	logf("wrote %s and %s", mdPath, svgPath)
}

// benchstatVersion is the golang.org/x/perf that benchreport installs
// when no benchstat is on the PATH or in the usual places.
const benchstatVersion = "v0.0.0-20260908200009-22c9c6c9d4da"

// findBenchstat returns a benchstat: on the PATH, in $GOBIN, ~/go/bin or
// build/bin, else installed into build/bin from the Go module proxy.
func findBenchstat() (string, error) {
	if p, err := exec.LookPath("benchstat"); err == nil {
		return p, nil
	}
	local := abs(filepath.Join("build", "bin"))
	for _, d := range []string{os.Getenv("GOBIN"), filepath.Join(os.Getenv("HOME"), "go", "bin"), local} {
		if d == "" {
			continue
		}
		p := filepath.Join(d, "benchstat")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if _, err := sh([]string{"GOBIN=" + local}, "go", "install", "golang.org/x/perf/cmd/benchstat@"+benchstatVersion); err != nil {
		return "", err
	}
	return filepath.Join(local, "benchstat"), nil
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

func must(_ []byte, err error) {
	if err != nil {
		fatal(err.Error())
	}
}

func fatal(msg string) {
	fmt.Fprintln(os.Stderr, "benchreport:", msg)
	os.Exit(1)
}
