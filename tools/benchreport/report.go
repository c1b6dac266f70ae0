package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/clipfold/clipfold/internal/benchdata/compare"
)

// The performance targets, for the TinyGo build.
const (
	targetPerTurnShouldCompact = 0.3  // ms, 100 messages, Go host
	targetPerTurnSplit         = 0.4  // ms, 100 messages, Go host
	targetSplit10kGo           = 20.0 // ms, Go host
	targetSplit10kNode         = 40.0 // ms, Node host
	targetSplit10kPlain        = 80.0 // ms, a plain Extism SDK
	targetLargeMs              = 5000.0
	targetColdGo               = 20.0 // ms, Go host, compilation cache
	tsRefMs                    = 80.0 // the TypeScript original's 10k split, JSON included
)

var exports = []string{"shouldCompact", "split", "score"}

// plainSDKs are the plain Extism SDKs benchreport runs besides Go and
// Python (build.SDKs keys), in the order reported.
var plainSDKs = []struct{ key, name, short string }{
	{"js", "the plain Extism JavaScript SDK on Node", "Extism JavaScript SDK, Node main thread"},
	{"chicory-aot", "the plain Extism Java SDK (Chicory), compiled at load (`withAoT`)", "Extism Java SDK (Chicory), `withAoT`"},
	{"chicory", "the plain Extism Java SDK (Chicory), interpreted (its default)", "Extism Java SDK (Chicory), interpreted"},
}

func f(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v < 1:
		return fmt.Sprintf("%.3f", v)
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func opt(v float64, ok bool) string {
	if !ok {
		return "–"
	}
	return f(v)
}

func verdict(ok bool) string {
	if ok {
		return "**met**"
	}
	return "**not met**"
}

func num(v any) float64 {
	x, _ := v.(float64)
	return x
}

func benchName(export string) string { return "Benchmark" + strings.ToUpper(export[:1]) + export[1:] }

// goMs is the median of a Go benchmark of export at n messages; kind is
// native, wasm (the clipfold Go host, staged) or wasm-extism (a plain
// Extism Go SDK's path).
func (b *build) goMs(export, kind string, n int) (float64, bool) {
	return b.Go.ms(fmt.Sprintf("%s/%s/n=%d", benchName(export), kind, n))
}

// hostMs is a Node or Python measurement of export at n messages (key
// raw_ms or median_ms).
func (h *hostRun) ms(export string, n int, key string) (float64, bool) {
	if h == nil || h.Out == nil {
		return 0, false
	}
	calls, _ := h.Out["calls"].([]any)
	for _, c := range calls {
		m, _ := c.(map[string]any)
		if m["export"] == export && int(num(m["messages"])) == n {
			v, ok := m[key].(float64)
			return v, ok
		}
	}
	return 0, false
}

func (h *hostRun) load() string {
	if h == nil {
		return "?"
	}
	return h.LoadBefore + " → " + h.LoadAfter
}

func (r *report) build(name string) *build {
	for _, b := range r.Builds {
		if b.Name == name {
			return b
		}
	}
	return &build{Name: name}
}

// native is a native Go benchmark's median, from any build's runs.
func (r *report) native(export string, n int) (float64, bool) {
	var xs []float64
	for _, b := range r.Builds {
		if b.Go == nil {
			continue
		}
		if s := b.Go.results[fmt.Sprintf("%s/native/n=%d", benchName(export), n)]; s != nil {
			xs = append(xs, s.units["ns/op"]...)
		}
	}
	if len(xs) == 0 {
		return 0, false
	}
	return median(xs) / 1e6, true
}

// largeRows are BenchmarkLargeInputs' results: case, size, path → ms.
type largeRow struct {
	name, size string
	staged     float64
	plain      float64
}

func (b *build) largeRows() []largeRow {
	if b.Large == nil {
		return nil
	}
	rows := map[string]*largeRow{}
	var order []string
	var names []string
	for k := range b.Large.results {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		parts := strings.Split(strings.TrimPrefix(k, "BenchmarkLargeInputs/"), "/")
		if len(parts) != 3 {
			continue
		}
		key := parts[0] + "/" + parts[1]
		row := rows[key]
		if row == nil {
			row = &largeRow{name: strings.ReplaceAll(parts[0], "_", " "), size: parts[1]}
			rows[key] = row
			order = append(order, key)
		}
		v, _ := b.Large.ms(k)
		if parts[2] == "staged" {
			row.staged = v
		} else {
			row.plain = v
		}
	}
	// Case by case: 200k, then 64 MiB, then over the element limit.
	rank := map[string]int{"n=200000": 0, "64MiB": 1, "over": 2}
	sort.SliceStable(order, func(i, j int) bool {
		ci, si, _ := strings.Cut(order[i], "/")
		cj, sj, _ := strings.Cut(order[j], "/")
		if ci != cj {
			return ci < cj
		}
		return rank[si] < rank[sj]
	})
	out := make([]largeRow, 0, len(order))
	for _, k := range order {
		out = append(out, *rows[k])
	}
	return out
}

func (b *build) largeMax() (float64, string, bool) {
	var worst float64
	var which string
	rows := b.largeRows()
	for _, r := range rows {
		for _, v := range []struct {
			ms   float64
			path string
		}{{r.staged, "staged"}, {r.plain, "plain"}} {
			if v.ms > worst {
				worst, which = v.ms, r.name+" at "+r.size+", "+v.path
			}
		}
	}
	return worst, which, len(rows) > 0
}

func (r *report) markdown(svgPath, mdPath string) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	tiny, std := r.build("TinyGo"), r.build("Go")
	w("# clipfold performance\n\n")
	w("Generated by `make bench` (`go run ./tools/benchreport`) on %s. Every number is a **median**: of `-count %d` interleaved rounds of `go test -bench` (both builds in each round, so that a change of load hits both alike), of several calls for Node and Python, of fresh processes for cold starts. ", r.Date.Format("2006-01-02 15:04 UTC"), r.Count)
	w("The machine (%d cores) was shared with other engineers' builds and tests while measuring, so the load average (1, 5, 15 min, before → after) is printed with each table: absolute numbers are pessimistic, and rows measured in the same table are the meaningful comparison.\n\n", r.NProc)
	w("| machine | |\n| --- | --- |\n| CPU | %s |\n| cores (`nproc`) | %d |\n| Go | %s |\n| TinyGo | %s |\n| Extism Go SDK / wazero | %s / %s |\n", r.CPU, r.NProc, r.GoVersion, r.TinyGoVersion, r.SDKVersion, r.WazeroVersion)
	if tiny.Node != nil && tiny.Node.Out != nil {
		w("| Node | %v, @extism/extism %v |\n", tiny.Node.Out["node"], tiny.Node.Out["extism"])
	}
	if tiny.Py != nil && tiny.Py.Out != nil {
		w("| Python | %v, extism (libextism, Wasmtime) %v |\n", tiny.Py.Out["python"], tiny.Py.Out["extism"])
	}
	for _, bd := range r.Builds {
		w("| %s build | `%s`, %s bytes |\n", bd.Name, bd.Path, commas(bd.Bytes))
	}
	w("\n![split: time per call vs history size](%s)\n\n", rel(svgPath, mdPath))

	// Targets.
	w("## Performance targets (the TinyGo build, which is the shipped one)\n\n")
	w("| target | measured | |\n| --- | --- | --- |\n")
	target := func(what string, v float64, ok bool, limit float64, detail string) {
		if !ok {
			w("| %s | not measured | – |\n", what)
			return
		}
		w("| %s | %s ms%s | %s |\n", what, f(v), detail, verdict(v <= limit))
	}
	v, ok := tiny.goMs("shouldCompact", "wasm", 100)
	target(fmt.Sprintf("shouldCompact, 100 messages, Go host ≤ %g ms", targetPerTurnShouldCompact), v, ok, targetPerTurnShouldCompact, "")
	v, ok = tiny.goMs("split", "wasm", 100)
	target(fmt.Sprintf("split, 100 messages, Go host ≤ %g ms", targetPerTurnSplit), v, ok, targetPerTurnSplit, "")
	v, ok = tiny.goMs("split", "wasm", 10_000)
	target(fmt.Sprintf("split, 10k messages, Go host ≤ %g ms", targetSplit10kGo), v, ok, targetSplit10kGo, "")
	v, ok = tiny.Node.ms("split", 10_000, "raw_ms")
	detail := ""
	if j, ok := tiny.Node.ms("split", 10_000, "median_ms"); ok {
		detail = fmt.Sprintf(" (%s ms with JSON.stringify of the input and JSON.parse of the output)", f(j))
	}
	target(fmt.Sprintf("split, 10k messages, Node host ≤ %g ms", targetSplit10kNode), v, ok, targetSplit10kNode, detail)
	v, ok = tiny.Py.ms("split", 10_000, "median_ms")
	target(fmt.Sprintf("split, 10k messages, a plain Extism SDK ≤ %g ms: Python SDK (Wasmtime)", targetSplit10kPlain), v, ok, targetSplit10kPlain, "")
	v, ok = tiny.goMs("split", "wasm-extism", 10_000)
	target(fmt.Sprintf("the same through the plain Extism Go SDK (wazero) ≤ %g ms", targetSplit10kPlain), v, ok, targetSplit10kPlain, "")
	for _, sdk := range plainSDKs {
		if h := tiny.SDKs[sdk.key]; h != nil {
			v, ok = h.ms("split", 10_000, "median_ms")
			target(fmt.Sprintf("the same through %s ≤ %g ms", sdk.name, targetSplit10kPlain), v, ok, targetSplit10kPlain, "")
		}
	}
	if worst, which, ok := tiny.largeMax(); ok {
		w("| every export answers any input up to 64 MiB within 5 s (BenchmarkLargeInputs, staged and plain) | slowest: %s ms (%s) | %s |\n", f(worst), which, verdict(worst <= targetLargeMs))
	} else {
		w("| every export answers any input up to 64 MiB within 5 s | not measured | – |\n")
	}
	if g, ok := tiny.Mem.get("BenchmarkPerfMemory", "growth-MiB"); ok {
		warm, _ := tiny.Mem.get("BenchmarkPerfMemory", "warm-MiB")
		w("| linear memory flat over 1,000 10k-message splits on one instance, never replaced | %s MiB after 20 calls, +%s MiB after 1,000 | %s |\n", f(warm), f(g), verdict(g == 0))
	}
	if c, ok := tiny.Cold["cache"]; ok {
		w("| cold start with the compilation cache, Go host ≤ %g ms | %s ms in-process (compile %s + instantiate %s + first call %s); %s ms for the whole process | %s |\n",
			targetColdGo, f(c.InProc), f(c.Compile), f(c.Instantiate), f(c.FirstCall), f(c.Wall), verdict(c.InProc <= targetColdGo))
	}
	if tiny.Node != nil && tiny.Node.Out != nil {
		cs, _ := tiny.Node.Out["cold_start"].(map[string]any)
		m, _ := cs["main"].(map[string]any)
		w("| cold start, Node host (measured) | %s ms (import of the package %s + compile %s + instantiate %s + first call %s), fresh process, main thread | – |\n",
			f(num(m["total_ms"])), f(num(m["import_ms"])), f(num(m["compile_ms"])), f(num(m["instantiate_ms"])), f(num(m["first_call_ms"])))
	}
	if tiny.Py != nil && tiny.Py.Out != nil {
		cs, _ := tiny.Py.Out["cold_start"].(map[string]any)
		w("| cold start, Python host (measured) | %s ms with Wasmtime's code cache, %s ms without (import clipfold + compile + instantiate + first call) | – |\n",
			f(num(cs["cache_ms"])), f(num(cs["nocache_ms"])))
	}
	w("\n")

	// Time per call.
	w("## 1. Time per call, every host\n\n")
	w("Milliseconds per call on `internal/benchdata` histories (messages of about 406 bytes of JSON, `keep_recent` 20), the same bytes in every host. ")
	w("**Go host**: the clipfold Go host (`package clipfold`, `internal/wasmhost`), which stages every input in the plug-in's memory and calls the export directly (no Extism kernel per call). ")
	w("**Go SDK**: the same runtime with staging off (`NoStaging`): input and output cross the Extism kernel 8 bytes per call, as in any plain Extism SDK (the Extism Go SDK's kernel calls are Go functions on wazero, its slowest). ")
	w("**Node**: `bindings/node` (staged), the call on the input's JSON text. ")
	w("**Python**: `bindings/python`, the plain Extism Python SDK on Wasmtime (no staging). ")
	w("**native**: the same `api` function compiled natively, for reference.\n\n")
	w("Load: Go benchmarks %s (TinyGo) and %s (Go); Node %s / %s; Python %s / %s.\n\n",
		tiny.Go.load(), std.Go.load(), tiny.Node.load(), std.Node.load(), tiny.Py.load(), std.Py.load())
	w("| export | messages | input MB | native | TinyGo: Go host | Go SDK | Node | Python | Go build: Go host | Go SDK | Node | Python |\n")
	w("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, exp := range exports {
		for _, n := range compare.Sizes {
			nat, natOK := r.native(exp, n)
			mb := float64(n) * 406.3 / 1e6
			w("| %s | %s | %.2f | %s |", exp, commas(int64(n)), mb, opt(nat, natOK))
			for _, bd := range []*build{tiny, std} {
				g, gok := bd.goMs(exp, "wasm", n)
				p, pok := bd.goMs(exp, "wasm-extism", n)
				nd, nok := bd.Node.ms(exp, n, "raw_ms")
				py, yok := bd.Py.ms(exp, n, "median_ms")
				w(" %s | %s | %s | %s |", opt(g, gok), opt(p, pok), opt(nd, nok), opt(py, yok))
			}
			w("\n")
		}
	}
	w("\n")

	// Large inputs.
	w("## 2. The largest inputs (BenchmarkLargeInputs)\n\n")
	w("The bad-input cases: **n=200000** is 200,000 tiny elements (messages of `{\"role\":\"user\",\"content\":\"hi\"}`, batches, batch contents), valid or with the last one bad; **64MiB** the largest input accepted: 250,000 elements (`api.MaxElements`, the most an array may have) padded to fill the 64 MiB limit; **over** 250,001 tiny elements, refused with `too_large` naming the array before anything is decoded (see RATIONALE.md, \"At most 250,000 elements per array\"). Each call on a fresh instance (it pays for growing the plug-in's heap); **staged** as the clipfold hosts call, **plain** through Extism memory as the Extism Go SDK does. Milliseconds.\n\n")
	for _, bd := range r.Builds {
		rows := bd.largeRows()
		if len(rows) == 0 {
			continue
		}
		w("%s build (load %s):\n\n| case | size | staged | plain |\n| --- | --- | ---: | ---: |\n", bd.Name, bd.Large.load())
		for _, row := range rows {
			w("| %s | %s | %s | %s |\n", row.name, row.size, f(row.staged), f(row.plain))
		}
		w("\n")
	}

	// Memory.
	w("## 3. Memory over 1,000 calls (BenchmarkPerfMemory)\n\n")
	w("1,000 splits of 10,000 messages (4.06 MB) on one instance that is never replaced (`MaxMemory: -1`); the plug-in's linear memory after the 20th call and after the last.\n\n")
	w("| build | after 20 calls MiB | after 1,000 MiB | growth MiB | ms per call | load |\n| --- | ---: | ---: | ---: | ---: | --- |\n")
	for _, bd := range r.Builds {
		warm, ok := bd.Mem.get("BenchmarkPerfMemory", "warm-MiB")
		if !ok {
			continue
		}
		final, _ := bd.Mem.get("BenchmarkPerfMemory", "final-MiB")
		g, _ := bd.Mem.get("BenchmarkPerfMemory", "growth-MiB")
		ns, _ := bd.Mem.get("BenchmarkPerfMemory", "ns/op")
		w("| %s | %s | %s | %s | %s | %s |\n", bd.Name, f(warm), f(final), f(g), f(ns/1e6), bd.Mem.load())
	}
	w("\n")

	// Cold starts.
	w("## 4. Cold start\n\n")
	w("A fresh process: read the module, compile it (or load the compiled code from the cache), instantiate it, call `version`. Go host: `tools/benchreport/coldstart`, in-process time and the whole process's wall time; Node: `bench.mjs`'s child (main thread), from importing the package (whose SQLite store compiles SQLite's Wasm build on import) to the first call's answer; Python: `import clipfold`, `Compactor(…)`, `version()`.\n\n")
	w("| build | Go host, cache: in-process | whole process | Go host, no cache: in-process | Node | Python, cache | Python, no cache |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, bd := range r.Builds {
		c, nc := bd.Cold["cache"], bd.Cold["nocache"]
		node, py, pyNo := "–", "–", "–"
		if bd.Node != nil && bd.Node.Out != nil {
			cs, _ := bd.Node.Out["cold_start"].(map[string]any)
			m, _ := cs["main"].(map[string]any)
			node = f(num(m["total_ms"]))
		}
		if bd.Py != nil && bd.Py.Out != nil {
			cs, _ := bd.Py.Out["cold_start"].(map[string]any)
			py, pyNo = f(num(cs["cache_ms"])), f(num(cs["nocache_ms"]))
		}
		w("| %s | %s | %s | %s | %s | %s | %s |\n", bd.Name, f(c.InProc), f(c.Wall), f(nc.InProc), node, py, pyNo)
	}
	if c, ok := tiny.Cold["cache"]; ok {
		w("\nLoad after the Go host's runs: %s.\n", c.Load)
	}
	w("\n")

	// Plain SDKs.
	if len(tiny.SDKs) > 0 {
		w("## 5. split through a plain Extism SDK\n\n")
		w("The TinyGo build loaded by nothing but an Extism SDK, as a user of a language without a clipfold host would: input and output cross the SDK's kernel 8 bytes per call (`input_load_u64`, `store_u64`), so the SDK's cost per kernel call decides (about 1M calls for a 10k split, whose input and output are 4 MB each). Median milliseconds per call after untimed warm-up calls (the JVM and V8 compile hot code as they run): `harness/sdks/js/bench.mjs` (21 runs), `harness/sdks/java` `Bench` (11 runs compiled, 3 interpreted). The Go SDK and Python rows are section 1's. Load before → after each.\n\n")
		w("| SDK | 100 | 1,000 | 10,000 | load |\n| --- | ---: | ---: | ---: | --- |\n")
		row := func(name string, ms func(n int) (float64, bool), load string) {
			w("| %s |", name)
			for _, n := range []int{100, 1000, 10_000} {
				v, ok := ms(n)
				w(" %s |", opt(v, ok))
			}
			w(" %s |\n", load)
		}
		row("Extism Go SDK (wazero)", func(n int) (float64, bool) { return tiny.goMs("split", "wasm-extism", n) }, tiny.Go.load())
		row("Extism Python SDK (Wasmtime)", func(n int) (float64, bool) { return tiny.Py.ms("split", n, "median_ms") }, tiny.Py.load())
		for _, sdk := range plainSDKs {
			h := tiny.SDKs[sdk.key]
			if h == nil {
				continue
			}
			name := sdk.short
			if h.Out != nil {
				name = fmt.Sprintf("%s (%v %v)", sdk.short, h.Out["sdk"], h.Out["version"])
			}
			row(name, func(n int) (float64, bool) { return h.ms("split", n, "median_ms") }, h.load())
		}
		w("\n")
	}

	// Errors and raw data.
	errs := append([]string(nil), r.Errors...)
	for _, bd := range r.Builds {
		for _, h := range []struct {
			name string
			run  *hostRun
		}{{"Node", bd.Node}, {"Python", bd.Py}} {
			if h.run != nil && h.run.Err != "" {
				errs = append(errs, fmt.Sprintf("%s host, %s build: %s", h.name, bd.Name, h.run.Err))
			}
		}
		for _, sdk := range plainSDKs {
			if h := bd.SDKs[sdk.key]; h != nil && h.Err != "" {
				errs = append(errs, fmt.Sprintf("%s, %s build: %s", sdk.name, bd.Name, h.Err))
			}
		}
	}
	if len(errs) > 0 {
		w("## Problems during this run\n\n")
		for _, e := range errs {
			w("- %s\n", strings.ReplaceAll(e, "\n", " "))
		}
		w("\n")
	}
	w("## benchstat\n\n")
	for _, bd := range r.Builds {
		if s := r.Benchstat[bd.Name]; s != "" {
			w("%s build (CLIPFOLD_WASM=%s):\n\n```\n%s```\n\n", bd.Name, bd.Path, s)
		}
	}
	return b.String()
}

func (r *benchRun) load() string {
	if r == nil {
		return "?"
	}
	return r.LoadBefore + " → " + r.LoadAfter
}

func commas(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func rel(target, from string) string {
	r, err := filepath.Rel(filepath.Dir(from), target)
	if err != nil {
		return target
	}
	return r
}
