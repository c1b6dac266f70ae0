// Command window measures clipfold's conservative token estimate against
// real tokenizers on the corpus of testdata/tokens
// (docs/spec.md#counting-tokens-and-the-window) and writes docs/window.md
// (make window). The real counts come from js-tiktoken (count.mjs, o200k_base
// and cl100k_base); the estimates from the plug-in itself ($CLIPFOLD_WASM,
// else the embedded build; make window runs build/clipfold.wasm), checked
// equal to core's. The test in this package holds
// every kind to the same bounds, so a regression fails make test.
//
//	go run ./tools/window [-out docs/window.md] [-features FILE]
//
// -features writes each message's event counts (core.ConservativeEvents)
// for fit.py, which fits the estimator's costs.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/internal/wasmhost"
)

// Bounds of docs/spec.md#counting-tokens-and-the-window.
const (
	minShare    = 0.95 // of a kind's messages estimated at least the larger real count
	proseLimit  = 1.35 // English prose: estimate ÷ o200k_base in total, at most
	proseKind   = "english-prose"
	minKinds    = 10
	corpusDir   = "testdata/tokens"
	countScript = "tools/window/count.mjs"
)

// kind is one kind of text of the corpus with, per message, its real
// counts and the plug-in's estimate.
type kind struct {
	Name   string
	Texts  []string
	O200k  []int
	CL100k []int
	Est    []int
}

// root is the repository root: the nearest parent holding go.mod.
func root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// loadCorpus reads testdata/tokens/<kind>/messages.jsonl, kinds by name.
func loadCorpus(repo string) ([]*kind, error) {
	files, err := filepath.Glob(filepath.Join(repo, corpusDir, "*", "messages.jsonl"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var kinds []*kind
	for _, f := range files {
		k := &kind{Name: filepath.Base(filepath.Dir(f))}
		fh, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var m struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				fh.Close()
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			k.Texts = append(k.Texts, m.Text)
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
		kinds = append(kinds, k)
	}
	return kinds, nil
}

// realCounts fills each kind's o200k_base and cl100k_base counts from
// count.mjs, installing its npm dependencies first when they are missing.
func realCounts(repo string, kinds []*kind) error {
	dir := filepath.Join(repo, "tools", "window")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "js-tiktoken")); err != nil {
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir, cmd.Stderr = dir, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("npm ci in tools/window: %w", err)
		}
	}
	cmd := exec.Command("node", filepath.Join(repo, countScript), filepath.Join(repo, corpusDir))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("node %s: %w", countScript, err)
	}
	var counts map[string][][2]int
	if err := json.Unmarshal(out, &counts); err != nil {
		return err
	}
	for _, k := range kinds {
		c := counts[k.Name]
		if len(c) != len(k.Texts) {
			return fmt.Errorf("%s: %d counts for %d messages", k.Name, len(c), len(k.Texts))
		}
		k.O200k, k.CL100k = make([]int, len(c)), make([]int, len(c))
		for i, p := range c {
			k.O200k[i], k.CL100k[i] = p[0], p[1]
		}
	}
	return nil
}

// plugin loads $CLIPFOLD_WASM, else the embedded build; done releases it.
func plugin() (inst *wasmhost.Instance, done func(), err error) {
	ctx := context.Background()
	rt, err := wasmhost.NewRuntime(ctx, wasmhost.Options{})
	if err != nil {
		return nil, nil, err
	}
	if inst, err = rt.NewInstance(ctx); err != nil {
		rt.Close(ctx)
		return nil, nil, err
	}
	return inst, func() { rt.Close(ctx) }, nil
}

// estimate fills each kind's estimates through the plug-in's
// estimateTokens export ({"text": …}), and checks each against core's.
func estimate(kinds []*kind) error {
	ctx := context.Background()
	inst, done, err := plugin()
	if err != nil {
		return err
	}
	defer done()
	for _, k := range kinds {
		k.Est = make([]int, len(k.Texts))
		for i, t := range k.Texts {
			in, _ := json.Marshal(map[string]string{"text": t})
			out, err := inst.Call(ctx, "estimateTokens", in)
			if err != nil {
				return err
			}
			var r struct {
				Tokens int `json:"tokens"`
			}
			if err := json.Unmarshal(out, &r); err != nil {
				return err
			}
			if native := core.ConservativeTokens(t); native != r.Tokens {
				return fmt.Errorf("%s message %d: the plug-in estimates %d tokens, core %d", k.Name, i, r.Tokens, native)
			}
			k.Est[i] = r.Tokens
		}
	}
	return nil
}

// ratios are one kind's estimate ÷ real count statistics for one tokenizer.
type ratios struct {
	Mean, P5, Min, Total float64
}

func ratiosOf(est, real []int) ratios {
	rs := make([]float64, len(est))
	se, sr := 0, 0
	for i := range est {
		rs[i] = float64(est[i]) / float64(max(real[i], 1))
		se += est[i]
		sr += real[i]
	}
	slices.Sort(rs)
	mean := 0.0
	for _, r := range rs {
		mean += r
	}
	return ratios{Mean: mean / float64(len(rs)), P5: rs[int(math.Floor(0.05*float64(len(rs)-1)))], Min: rs[0],
		Total: float64(se) / float64(max(sr, 1))}
}

// row is one kind's line of the report.
type row struct {
	Kind           string
	Messages       int
	Chars          int
	O200k, CL100k  ratios
	Covered        float64 // share of messages estimated ≥ max(o200k, cl100k)
	TotalOverMax   float64 // Σ estimate ÷ Σ max(o200k, cl100k)
	ProseLimitMet  bool    // English prose only: Σ estimate ≤ 1.35 × Σ o200k
	IsEnglishProse bool
}

func rowOf(k *kind) row {
	r := row{Kind: k.Name, Messages: len(k.Texts), O200k: ratiosOf(k.Est, k.O200k), CL100k: ratiosOf(k.Est, k.CL100k),
		IsEnglishProse: k.Name == proseKind}
	covered, se, sm := 0, 0, 0
	for i, t := range k.Texts {
		r.Chars += len([]rune(t))
		m := max(k.O200k[i], k.CL100k[i])
		if k.Est[i] >= m {
			covered++
		}
		se += k.Est[i]
		sm += m
	}
	r.Covered = float64(covered) / float64(max(len(k.Texts), 1))
	r.TotalOverMax = float64(se) / float64(max(sm, 1))
	r.ProseLimitMet = !r.IsEnglishProse || r.O200k.Total <= proseLimit
	return r
}

// violations lists every bound a row breaks.
func (r row) violations() []string {
	var v []string
	if r.Covered < minShare {
		v = append(v, fmt.Sprintf("%s: %.1f%% of messages estimated at least max(o200k, cl100k), want ≥ %.0f%%", r.Kind, 100*r.Covered, 100*minShare))
	}
	if r.TotalOverMax < 1 {
		v = append(v, fmt.Sprintf("%s: in total the estimate is %.3f× max(o200k, cl100k), want ≥ 1", r.Kind, r.TotalOverMax))
	}
	if !r.ProseLimitMet {
		v = append(v, fmt.Sprintf("%s: in total the estimate is %.3f× o200k, want ≤ %.2f", r.Kind, r.O200k.Total, proseLimit))
	}
	return v
}

// measure loads the corpus and returns its rows.
func measure() ([]row, []*kind, error) {
	repo, err := root()
	if err != nil {
		return nil, nil, err
	}
	kinds, err := loadCorpus(repo)
	if err != nil {
		return nil, nil, err
	}
	if err := realCounts(repo, kinds); err != nil {
		return nil, nil, err
	}
	if err := estimate(kinds); err != nil {
		return nil, nil, err
	}
	rows := make([]row, len(kinds))
	for i, k := range kinds {
		rows[i] = rowOf(k)
	}
	return rows, kinds, nil
}

// markdown is docs/window.md.
func markdown(rows []row) string {
	var b strings.Builder
	b.WriteString(`# The window: clipfold's token estimate against real tokenizers

Written by ` + "`make window`" + ` (tools/window): every message of the corpus in
` + "`testdata/tokens`" + ` (real, licensed text of each kind; sources in its README)
estimated by the plug-in (` + "`estimateTokens`" + ` of ` + "`{\"text\": …}`" + `, the conservative
estimator: no per-message framing) and counted by js-tiktoken with
` + "`o200k_base`" + ` and ` + "`cl100k_base`" + `. Ratios are estimate ÷ real count: mean and 5th
percentile over the kind's messages, the lowest message, and the kind's
totals. [Counting tokens and the window](spec.md#counting-tokens-and-the-window) asks, per kind, that at
least 95% of messages are estimated at or above the larger of the two
counts and that the total is (column "≥ max"), and that English prose is
at most 1.35× ` + "`o200k_base`" + ` in total.

| kind | messages | characters | o200k mean | o200k p5 | o200k min | o200k total | cl100k mean | cl100k p5 | cl100k min | cl100k total | ≥ max (messages) | ≥ max (total) | bounds |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |
`)
	for _, r := range rows {
		status := "met"
		if len(r.violations()) > 0 {
			status = "**not met**"
		}
		if r.IsEnglishProse {
			status += fmt.Sprintf(" (o200k total %.2f ≤ %.2f)", r.O200k.Total, proseLimit)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.0f%% | %.2f | %s |\n",
			r.Kind, r.Messages, r.Chars, r.O200k.Mean, r.O200k.P5, r.O200k.Min, r.O200k.Total,
			r.CL100k.Mean, r.CL100k.P5, r.CL100k.Min, r.CL100k.Total, 100*r.Covered, r.TotalOverMax, status)
	}
	b.WriteString(`
For comparison, the seeds' ⌈code points / 4⌉ (` + "`token_estimator: \"chars4\"`" + `) on the
same corpus, in total, as estimate ÷ max(o200k, cl100k):

| kind | chars4 total |
| --- | ---: |
`)
	return b.String()
}

// chars4Rows appends the chars4 comparison.
func chars4Table(kinds []*kind) string {
	var b strings.Builder
	for _, k := range kinds {
		se, sm := 0, 0
		for i, t := range k.Texts {
			se += core.EstimateTokens(t)
			sm += max(k.O200k[i], k.CL100k[i])
		}
		fmt.Fprintf(&b, "| %s | %.2f |\n", k.Name, float64(se)/float64(max(sm, 1)))
	}
	return b.String()
}

func main() {
	out := flag.String("out", "docs/window.md", "the report to write")
	features := flag.String("features", "", "write each message's event counts here (for fit.py) and stop")
	flag.Parse()
	if *features != "" {
		if err := writeFeatures(*features); err != nil {
			fmt.Fprintln(os.Stderr, "window:", err)
			os.Exit(1)
		}
		return
	}
	rows, kinds, err := measure()
	if err != nil {
		fmt.Fprintln(os.Stderr, "window:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, []byte(markdown(rows)+chars4Table(kinds)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "window:", err)
		os.Exit(1)
	}
	bad := 0
	for _, r := range rows {
		for _, v := range r.violations() {
			fmt.Fprintln(os.Stderr, "window: bound not met:", v)
			bad++
		}
	}
	fmt.Printf("window: %d kinds, %d bounds not met; wrote %s\n", len(rows), bad, *out)
	if bad > 0 {
		os.Exit(1)
	}
}

// writeFeatures writes {"names": […], "kinds": {kind: [[count, …], …]}}.
func writeFeatures(path string) error {
	repo, err := root()
	if err != nil {
		return err
	}
	kinds, err := loadCorpus(repo)
	if err != nil {
		return err
	}
	out := map[string][][]int64{}
	for _, k := range kinds {
		for _, t := range k.Texts {
			out[k.Name] = append(out[k.Name], core.ConservativeEvents(t))
		}
	}
	b, err := json.Marshal(map[string]any{"names": core.ConservativeEventNames, "kinds": out})
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
