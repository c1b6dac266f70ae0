package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// sh runs a command in the repository root and returns its stdout.
func sh(env []string, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	logf("$ %s %s", name, strings.Join(args, " "))
	err := cmd.Run()
	if err != nil {
		return out.Bytes(), fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, tail(errb.String()+out.String(), 2000))
	}
	return out.Bytes(), nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "benchreport: "+format+"\n", args...)
}

// loadavg is /proc/loadavg's first three fields.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// benchRun is one `go test -bench` invocation: raw output, load around it.
type benchRun struct {
	Label      string
	Raw        string
	LoadBefore string
	LoadAfter  string
	Started    time.Time
	Took       time.Duration
	results    map[string]*samples
}

// samples are the values of one benchmark across -count runs, per unit.
type samples struct {
	units map[string][]float64
}

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+(\d+)\s+(.*)$`)

func parseBench(raw string) map[string]*samples {
	res := map[string]*samples{}
	sc := bufio.NewScanner(strings.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		s := res[m[1]]
		if s == nil {
			s = &samples{units: map[string][]float64{}}
			res[m[1]] = s
		}
		f := strings.Fields(m[3])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			s.units[f[i+1]] = append(s.units[f[i+1]], v)
		}
	}
	return res
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// get returns the median of a benchmark's unit, ok=false when absent.
func (r *benchRun) get(name, unit string) (float64, bool) {
	if r == nil {
		return 0, false
	}
	s := r.results[name]
	if s == nil || len(s.units[unit]) == 0 {
		return 0, false
	}
	return median(s.units[unit]), true
}

// ms returns a benchmark's median ns/op in milliseconds.
func (r *benchRun) ms(name string) (float64, bool) {
	v, ok := r.get(name, "ns/op")
	return v / 1e6, ok
}

// add appends run's output to r (nil: a new run), keeping the load
// before the first and after the last.
func (r *benchRun) add(run *benchRun) *benchRun {
	if r == nil {
		r = &benchRun{Label: run.Label, LoadBefore: run.LoadBefore, Started: run.Started}
	}
	r.Raw += run.Raw
	r.LoadAfter = run.LoadAfter
	r.Took += run.Took
	r.results = parseBench(r.Raw)
	return r
}

// runBench runs the harness benchmarks matching pattern.
func runBench(label string, env []string, pattern string, count int, benchtime string, rawDir string) (*benchRun, error) {
	r := &benchRun{Label: label, LoadBefore: loadavg(), Started: time.Now()}
	args := []string{"test", "./harness", "-run", "^$", "-bench", pattern, "-count", strconv.Itoa(count), "-timeout", "60m"}
	if benchtime != "" {
		args = append(args, "-benchtime", benchtime)
	}
	out, err := sh(env, "go", args...)
	r.Took = time.Since(r.Started)
	r.LoadAfter = loadavg()
	r.Raw = string(out)
	if rawDir != "" {
		_ = os.WriteFile(filepath.Join(rawDir, "bench-"+slug(label)+".txt"), out, 0o644)
	}
	if err != nil {
		return r, err
	}
	r.results = parseBench(r.Raw)
	return r, nil
}

func slug(s string) string {
	return strings.Trim(regexp.MustCompile(`[^a-zA-Z0-9]+`).ReplaceAllString(s, "-"), "-")
}

// coldStat is the median of the cold-start child's fields over runs, plus
// the wall time of the whole process (exec to exit).
type coldStat struct {
	Runs                                    int
	Compile, Instantiate, FirstCall, InProc float64
	Wall                                    float64
	WallMin, WallMax                        float64
	Load                                    string // the load average after the runs
}

func coldStart(bin, wasm, cache string, runs int) (coldStat, error) {
	var comp, inst, first, inproc, wall []float64
	for i := 0; i < runs; i++ {
		t0 := time.Now()
		out, err := exec.Command(bin, "-wasm", wasm, "-cache", cache).Output()
		w := float64(time.Since(t0).Microseconds()) / 1000
		if err != nil {
			return coldStat{}, fmt.Errorf("coldstart %s: %v", wasm, err)
		}
		var m map[string]float64
		if err := json.Unmarshal(out, &m); err != nil {
			return coldStat{}, err
		}
		comp = append(comp, m["compile_ms"])
		inst = append(inst, m["instantiate_ms"])
		first = append(first, m["first_call_ms"])
		inproc = append(inproc, m["in_process_ms"])
		wall = append(wall, w)
	}
	sort.Float64s(wall)
	return coldStat{Runs: runs, Compile: median(comp), Instantiate: median(inst), FirstCall: median(first),
		InProc: median(inproc), Wall: median(wall), WallMin: wall[0], WallMax: wall[len(wall)-1]}, nil
}
