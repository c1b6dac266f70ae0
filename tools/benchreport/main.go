// Command benchreport measures clipfold's performance and writes
// docs/benchmarks.md and docs/benchmarks.svg. Run it from the repository
// root:
//
//	go run ./tools/benchreport [flags]
//
// It runs `make build`, the harness benchmarks (`go test ./harness -bench`,
// -count times; BenchmarkSplit, BenchmarkScore, BenchmarkCompressOverhead
// and the BenchmarkPerf* ones), the memory-growth test, cold starts in
// fresh processes (./coldstart), binaryen's wasm-opt variants (checked
// against the conformance vectors), the TinyGo build when
// build/clipfold-tinygo.wasm exists, and the Node host's bench.mjs when
// present; then benchstat over the raw output.
//
// Flags:
//
//	-count N        benchmark repetitions (default 6: benchstat needs ≥ 6 for a confidence interval)
//	-cold-runs N    fresh processes per cold-start case (default 10)
//	-benchstat P    benchstat binary (default: $PATH, then $GOBIN, /tmp/bin)
//	-wasm-opt       also measure wasm-opt -O2/-Oz variants (default true)
//	-node           also run bindings/node/bench.mjs (default true)
//	-quick          -count 1, -cold-runs 3, no wasm-opt: a smoke run
//	-extra NAME=P   also measure module P (e.g. an experimental build) as variant NAME; repeatable
//	-raw DIR        keep raw outputs there (default: a temporary directory)
//	-rerender J     only rewrite the report from the report.json an earlier run left in -raw
//	-md, -svg       output paths (default docs/benchmarks.md, docs/benchmarks.svg)
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/clipfold/clipfold/internal/benchdata"
)

type variant struct {
	Name    string // "Go", "Go + wasm-opt -O2", "TinyGo"
	Path    string
	Bytes   int64
	Vectors string // "pass", "FAIL: …"
	Bench   *benchRun
	AB      *benchRun           // the interleaved rounds of §4
	Cold    map[string]coldStat // "cache", "nocache"
	Note    string
}

type report struct {
	Date      time.Time
	CPU       string
	NProc     int
	GoVersion string
	// SDKVersion and WazeroVersion are the Extism Go SDK's and wazero's.
	SDKVersion, WazeroVersion string
	Count                     int
	Main                      *benchRun
	Variants                  []*variant
	LeakLog                   string
	LeakOK                    bool
	LeakLoad                  string
	Node                      map[string]any
	NodeErr                   string
	NodeLoad                  string
	Benchstat                 string
	WasmOptVer                string
	Errors                    []string
}

func main() {
	count := flag.Int("count", 6, "benchmark repetitions (benchstat needs ≥ 6 for a confidence interval)")
	coldRuns := flag.Int("cold-runs", 10, "fresh processes per cold-start case")
	benchstat := flag.String("benchstat", "", "benchstat binary")
	doOpt := flag.Bool("wasm-opt", true, "measure wasm-opt variants")
	doNode := flag.Bool("node", true, "run bindings/node/bench.mjs")
	quick := flag.Bool("quick", false, "smoke run: -count 1, -cold-runs 3, no wasm-opt")
	rawDir := flag.String("raw", "", "keep raw outputs in this directory")
	var extra extraFlag
	flag.Var(&extra, "extra", "NAME=PATH.wasm: also measure this module (an experimental build); repeatable")
	rerender := flag.String("rerender", "", "only rewrite the report from a report.json kept by an earlier run's -raw")
	mdPath := flag.String("md", "docs/benchmarks.md", "Markdown report")
	svgPath := flag.String("svg", "docs/benchmarks.svg", "SVG chart")
	flag.Parse()
	if *quick {
		*count, *coldRuns, *doOpt = 1, 3, false
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
		for _, v := range r.Variants {
			for _, b := range []*benchRun{v.Bench, v.AB} {
				if b != nil {
					b.results = parseBench(b.Raw)
				}
			}
		}
		r.Main = r.Variants[0].Bench
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

	r := &report{Date: time.Now().UTC(), NProc: runtime.NumCPU(), CPU: cpuModel(), Count: *count}
	if out, err := sh(nil, "go", "version"); err == nil {
		r.GoVersion = strings.TrimSpace(string(out))
	}
	if out, err := sh(nil, "go", "list", "-m", "-f", "{{.Version}}", "github.com/extism/go-sdk", "github.com/tetratelabs/wazero"); err == nil {
		if v := strings.Fields(string(out)); len(v) == 2 {
			r.SDKVersion, r.WazeroVersion = v[0], v[1]
		}
	}
	must(sh(nil, "make", "build"))

	// Helpers: the cold-start child and the echo plug-in.
	coldBin := filepath.Join(tmp, "coldstart")
	must(sh(nil, "go", "build", "-o", coldBin, "./tools/benchreport/coldstart"))
	echo := filepath.Join(tmp, "echo.wasm")
	must(sh([]string{"GOOS=wasip1", "GOARCH=wasm"}, "go", "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w", "-o", echo, "./tools/benchreport/echoplugin"))

	// Variants of the module.
	main := &variant{Name: "Go", Path: "build/clipfold.wasm"}
	r.Variants = append(r.Variants, main)
	if _, err := os.Stat("build/clipfold-tinygo.wasm"); err == nil {
		r.Variants = append(r.Variants, &variant{Name: "TinyGo", Path: "build/clipfold-tinygo.wasm"})
	} else {
		logf("build/clipfold-tinygo.wasm not present: no TinyGo column")
	}
	if *doOpt {
		if _, err := exec.LookPath("wasm-opt"); err == nil {
			out, _ := sh(nil, "wasm-opt", "--version")
			r.WasmOptVer = strings.TrimSpace(string(out))
			for _, level := range []string{"-O2", "-Oz"} {
				dst := filepath.Join(tmp, "clipfold"+level+".wasm")
				args := []string{level, "--enable-sign-ext", "--enable-nontrapping-float-to-int", "--enable-bulk-memory", "--enable-mutable-globals", main.Path, "-o", dst}
				if _, err := sh(nil, "wasm-opt", args...); err != nil {
					r.Errors = append(r.Errors, "wasm-opt "+level+": "+err.Error())
					continue
				}
				r.Variants = append(r.Variants, &variant{Name: "Go + wasm-opt " + level, Path: dst, Note: "wasm-opt " + strings.Join(args[:len(args)-3], " ")})
			}
		} else {
			r.Errors = append(r.Errors, "wasm-opt not found (apt-get install binaryen): no optimized variants")
		}
	}
	for _, e := range extra {
		r.Variants = append(r.Variants, &variant{Name: e[0], Path: e[1], Note: "experimental build given with -extra"})
	}
	for _, v := range r.Variants {
		if st, err := os.Stat(v.Path); err == nil {
			v.Bytes = st.Size()
		}
		if _, err := sh([]string{"CLIPFOLD_WASM=" + abs(v.Path)}, "go", "test", "./harness", "-run", "Vectors", "-count=1"); err != nil {
			v.Vectors = "FAIL"
			r.Errors = append(r.Errors, v.Name+" conformance vectors: "+tail(err.Error(), 600))
		} else {
			v.Vectors = "pass"
		}
	}

	// 1, 2, 5, 6: the harness benchmarks on the standard build.
	echoEnv := "CLIPFOLD_ECHO_WASM=" + echo
	run, err := runBench("main", []string{echoEnv, "CLIPFOLD_WASM=" + abs(main.Path)},
		"^(BenchmarkSplit|BenchmarkScore|BenchmarkCompressOverhead|BenchmarkPerf.*)$", *count, "", *rawDir)
	if err != nil {
		fatal(err.Error())
	}
	r.Main, main.Bench = run, run
	// 4: every variant (the standard build too) in interleaved rounds, so
	// that a change of load hits all of them alike.
	if len(r.Variants) > 1 {
		for round := 0; round < *count; round++ {
			for _, v := range r.Variants {
				if v.Vectors != "pass" {
					continue
				}
				pattern := "^(BenchmarkSplit|BenchmarkScore)$/^wasm$"
				if v.Name != "TinyGo" {
					pattern = "^(BenchmarkSplit|BenchmarkScore)$/^wasm$/^n=10000$"
				}
				env := []string{"CLIPFOLD_WASM=" + abs(v.Path)}
				b, err := runBench(fmt.Sprintf("%s round %d", v.Name, round+1), env, pattern, 1, "", *rawDir)
				if err == nil {
					// A three-level -bench pattern skips two-level benchmarks.
					var c *benchRun
					if c, err = runBench(fmt.Sprintf("%s compress round %d", v.Name, round+1), env, "^BenchmarkCompressOverhead$/^wasm$", 1, "", *rawDir); err == nil {
						b.Raw += c.Raw
						b.LoadAfter = c.LoadAfter
					}
				}
				if err != nil {
					r.Errors = append(r.Errors, v.Name+" benchmarks: "+tail(err.Error(), 600))
					continue
				}
				if v.AB == nil {
					v.AB = &benchRun{Label: v.Name, LoadBefore: b.LoadBefore}
				}
				v.AB.Raw += b.Raw
				v.AB.LoadAfter = b.LoadAfter
				v.AB.results = parseBench(v.AB.Raw)
			}
		}
		for _, v := range r.Variants[1:] {
			v.Bench = v.AB
		}
	}

	// 5: the memory-growth test.
	r.LeakLoad = loadavg()
	out, err := sh(nil, "go", "test", "./harness", "-run", "^TestPerfNoMemoryGrowth$", "-count=1", "-v")
	r.LeakOK = err == nil
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "perf_test.go") || strings.HasPrefix(strings.TrimSpace(l), "--- ") || strings.Contains(l, "Error") {
			r.LeakLog += strings.TrimSpace(l) + "\n"
		}
	}

	// 3: cold start in fresh processes, with and without the cache.
	for _, v := range r.Variants {
		if v.Vectors != "pass" {
			continue
		}
		v.Cold = map[string]coldStat{}
		cache := filepath.Join(tmp, "cache-"+slug(v.Name))
		if _, err := exec.Command(coldBin, "-wasm", v.Path, "-cache", cache).Output(); err != nil { // fill the cache
			r.Errors = append(r.Errors, v.Name+" cold start: "+err.Error())
			continue
		}
		for mode, dir := range map[string]string{"cache": cache, "nocache": "-"} {
			logf("cold start %s %s × %d", v.Name, mode, *coldRuns)
			s, err := coldStart(coldBin, v.Path, dir, *coldRuns)
			if err != nil {
				r.Errors = append(r.Errors, err.Error())
				continue
			}
			v.Cold[mode] = s
		}
	}

	// 7: the Node host.
	if *doNode {
		if _, err := os.Stat("bindings/node/bench.mjs"); err == nil {
			r.NodeLoad = loadavg()
			// The Go benchmarks' inputs, byte for byte.
			inputs := filepath.Join(*rawDir, "inputs")
			_ = os.MkdirAll(inputs, 0o755)
			for _, n := range []int{1000, 10000} {
				_ = os.WriteFile(filepath.Join(inputs, fmt.Sprintf("history-%d.json", n)), benchdata.History(n), 0o644)
			}
			out, err := sh([]string{"CLIPFOLD_WASM=" + abs(main.Path)}, "node", "bindings/node/bench.mjs", "--json", fmt.Sprintf("--cold-runs=%d", *coldRuns), "--inputs="+abs(inputs))
			if err != nil {
				r.NodeErr = tail(err.Error(), 800)
			} else if err := json.Unmarshal(out, &r.Node); err != nil {
				r.NodeErr = "bench.mjs output: " + err.Error()
			}
			_ = os.WriteFile(filepath.Join(*rawDir, "node.json"), out, 0o644)
		} else {
			r.NodeErr = "bindings/node/bench.mjs not present"
		}
	}

	// benchstat over the standard build's raw output.
	if bs := findBenchstat(*benchstat); bs != "" {
		f := filepath.Join(*rawDir, "bench-main.txt")
		if out, err := sh(nil, bs, f); err == nil {
			r.Benchstat = string(out)
		} else {
			r.Errors = append(r.Errors, "benchstat: "+err.Error())
		}
	} else {
		r.Errors = append(r.Errors, "benchstat not found (GOBIN=/tmp/bin go install golang.org/x/perf/cmd/benchstat@latest)")
	}

	if b, err := json.MarshalIndent(r, "", "  "); err == nil {
		_ = os.WriteFile(filepath.Join(*rawDir, "report.json"), b, 0o644)
	}
	write(r, *mdPath, *svgPath)
	logf("raw outputs in %s", *rawDir)
}

func write(r *report, mdPath, svgPath string) {
	if err := os.MkdirAll(filepath.Dir(mdPath), 0o755); err != nil {
		fatal(err.Error())
	}
	must(nil, os.WriteFile(mdPath, []byte(r.markdown(svgPath, mdPath)), 0o644))
	must(nil, os.WriteFile(svgPath, []byte(r.chart()), 0o644))
	logf("wrote %s and %s", mdPath, svgPath)
}

func findBenchstat(flagPath string) string {
	if flagPath != "" {
		return flagPath
	}
	if p, err := exec.LookPath("benchstat"); err == nil {
		return p
	}
	for _, d := range []string{os.Getenv("GOBIN"), filepath.Join(os.Getenv("HOME"), "go", "bin"), "/tmp/bin"} {
		if d == "" {
			continue
		}
		p := filepath.Join(d, "benchstat")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
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

// extraFlag collects -extra NAME=PATH.
type extraFlag [][2]string

func (e *extraFlag) String() string { return fmt.Sprint(*e) }

func (e *extraFlag) Set(s string) error {
	name, path, ok := strings.Cut(s, "=")
	if !ok || name == "" || path == "" {
		return fmt.Errorf("want NAME=PATH.wasm")
	}
	*e = append(*e, [2]string{name, path})
	return nil
}
