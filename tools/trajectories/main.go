// Command trajectories measures clipfold on real agent tool trajectories
// (testdata/trajectories: public benchmarks' ground-truth tool calls run
// through their own tool implementations). For each trajectory it
// replays the file through the real command with a check before every
// model call: for each assistant turn, `clipfold run PREFIX
// --model-max-tokens M --db TMP.db --json` on the messages before it
// (the command appends what is new and compacts when the history is over
// the limit), then `clipfold show CONV --json` is the model's input.
// Then it measures, against naive truncation (the newest messages that
// fit the same limit, counted by the plug-in's estimateTokens):
//
//   - tool-pair integrity: model inputs holding a tool result without its
//     call, or a call without its result;
//   - model inputs and final contexts over the limit;
//   - facts from early tool outputs (values that later calls repeat)
//     still in the final context;
//   - search by the call ("what did get_order 4471 return?", `clipfold
//     search --limit 5 --json`) against a plain BM25 that indexes each
//     tool result with its call;
//   - lost or altered messages (each is in the final context or in
//     recall storage, byte for byte).
//
// It writes a Markdown report (docs/trajectories.md) and, with -json,
// every probe's result. Usage (from the repository root):
//
//	make trajectories                            # builds the command and plug-in, writes docs/trajectories.md
//	go run ./tools/trajectories -trajectories bfcl-lc-000 -out ''
//
// The shares are measurements; the command exits non-zero only when
// something breaks (a command fails, a message is lost or altered, a
// model input separates a call from its result).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clipfold/clipfold/internal/benchkit"
)

type options struct {
	benchkit.Options
}

func main() {
	var o options
	parsed := o.Register(flag.CommandLine, benchkit.Defaults{Data: "testdata/trajectories", DataHelp: "the trajectories",
		NamesFlag: "trajectories", Budget: 3200, Out: "docs/trajectories.md",
		WasmHelp: "plug-in `file` for the command (via $CLIPFOLD_WASM) and estimateTokens (default: $CLIPFOLD_WASM, else the embedded build)"})
	flag.Parse()
	parsed()
	rep, err := run(context.Background(), &o)
	if err == nil {
		err = benchkit.WriteOutputs(o.JSON, rep, o.Out, markdown(rep))
	}
	var problems []string
	if err == nil {
		if o.Out != "" && !o.Quiet {
			fmt.Fprintf(os.Stderr, "trajectories: wrote %s\n", o.Out)
		}
		problems = rep.problems()
	}
	benchkit.Finish("trajectories", err, problems)
}

// run measures every trajectory.
func run(ctx context.Context, o *options) (*report, error) {
	trajs, err := loadTrajectories(o.Data, o.Names)
	if err != nil {
		return nil, err
	}
	// The command and the estimate run the same plug-in, so that the
	// limit the command compacts at is the one the checks count with.
	b, err := o.Setup(ctx, true)
	if err != nil {
		return nil, err
	}
	defer b.Close(ctx)
	rep := &report{Label: b.Label, Budget: o.Budget, Limit: o.Limit, RunFlags: strings.Join(o.Extra, " "), Command: b.CLI.Version(ctx)}
	for _, t := range trajs {
		if !o.Quiet {
			fmt.Fprintf(os.Stderr, "trajectories: %s (%d messages)…\n", t.Name, len(t.Messages))
		}
		tr, err := measure(ctx, o, b, t)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		rep.Trajectories = append(rep.Trajectories, tr)
	}
	rep.total()
	return rep, nil
}

// measure replays one trajectory with a check before every model call,
// then probes the final context and the search.
func measure(ctx context.Context, o *options, b *benchkit.Bench, t *trajectory) (*trajResult, error) {
	c, est := b.CLI, b.Est
	db, err := b.FreshDB(t.Name)
	if err != nil {
		return nil, err
	}
	prefix := filepath.Join(b.Dir, t.Name+".prefix.json")
	r := &trajResult{Name: t.Name, Source: t.Source, ConversationID: t.ConversationID, Messages: len(t.Messages),
		FailureCodes: map[string]int{}}
	for i := range t.Messages {
		if t.Messages[i].Role == "tool" {
			r.ToolResults++
		}
	}
	if r.Tokens, err = est.Tokens(ctx, t.Messages); err != nil {
		return nil, err
	}

	start := time.Now()
	var replayed time.Duration
	for _, k := range append(t.modelCalls(), len(t.Messages)) {
		if err := t.writePrefix(prefix, k); err != nil {
			return nil, err
		}
		runStart := time.Now()
		rr, err := c.Replay(ctx, prefix, db, o.Budget, o.Extra)
		replayed += time.Since(runStart)
		if err != nil {
			return nil, fmt.Errorf("before message %d: %w", k, err)
		}
		r.Limit = rr.Limit
		r.Compactions += int(rr.Compactions)
		r.CompactionsFailed += int(rr.CompactionsFailed)
		for code, n := range rr.FailureCodes {
			r.FailureCodes[code] += n
		}
		if k == len(t.Messages) {
			break // after the last message: the final context, below
		}
		input, err := c.Show(ctx, t.ConversationID, db)
		if err != nil {
			return nil, err
		}
		tokens, err := est.Tokens(ctx, input)
		if err != nil {
			return nil, err
		}
		r.ModelCalls++
		r.PeakInput = max(r.PeakInput, tokens)
		if tokens > r.Limit {
			r.InputsOver++
		}
		if n := brokenPairs(input); n > 0 {
			r.InputsBroken++
			r.BrokenPairs += n
		}
		trunc, _, err := est.Truncate(ctx, t.Messages[:k], r.Limit)
		if err != nil {
			return nil, err
		}
		if brokenPairs(trunc) > 0 {
			r.TruncInputsBroken++
		}
	}
	r.ReplaySeconds = replayed.Seconds()
	r.WallSeconds = time.Since(start).Seconds()

	final, err := c.Show(ctx, t.ConversationID, db)
	if err != nil {
		return nil, err
	}
	r.FinalMessages = len(final)
	if r.FinalTokens, err = est.Tokens(ctx, final); err != nil {
		return nil, err
	}
	r.FinalBroken = brokenPairs(final)
	trunc, truncTokens, err := est.Truncate(ctx, t.Messages, r.Limit)
	if err != nil {
		return nil, err
	}
	r.TruncMessages, r.TruncTokens = len(trunc), truncTokens

	arch, err := benchkit.OpenArchive(db, t.ConversationID)
	if err != nil {
		return nil, err
	}
	defer arch.Close()
	if err := lostCheck(ctx, r, t, final, arch); err != nil {
		return nil, err
	}

	for _, p := range factProbes(t) {
		r.Facts = append(r.Facts, factResult{factProbe: p, InContext: hasFact(final, &p), InTruncation: hasFact(trunc, &p)})
	}

	inFinal := map[string]bool{}
	for _, m := range final {
		inFinal[m.ID] = true
	}
	ix := benchkit.NewBM25(bm25Docs(t))
	searchStart := time.Now()
	for _, p := range callProbes(t) {
		cr := callResult{callProbe: p}
		want := map[string]bool{}
		for _, id := range p.Results {
			want[id] = true
			cr.InContext = cr.InContext || inFinal[id]
		}
		hits, _, err := c.Search(ctx, p.Query, db, o.Limit, func(id string) (string, error) { return arch.BlockText(ctx, id) })
		if err != nil {
			return nil, fmt.Errorf("search %q: %w", p.Query, err)
		}
		tool := callName(t, p.Results[0])
		for i := range hits {
			if hitFinds(&hits[i], want, tool) {
				cr.Rank, cr.Hit = i+1, hits[i].Kind+" "+hits[i].ID
				break
			}
		}
		ids, _ := ix.Search(p.Query, o.Limit)
		for i, id := range ids {
			if want[id] {
				cr.BM25Rank = i + 1
				break
			}
		}
		r.Calls = append(r.Calls, cr)
	}
	r.SearchSeconds = time.Since(searchStart).Seconds()
	r.tally()
	return r, nil
}

// callName is the name of the tool whose result id is.
func callName(t *trajectory, id string) string {
	for i := range t.Messages {
		if t.Messages[i].ID == id {
			tc, _ := t.call(&t.Messages[i])
			return tc.Name
		}
	}
	return ""
}

// hitFinds: a message hit is one of the results asked for; a batch hit
// summarizes one of them (source_message_ids) and names the tool.
func hitFinds(h *benchkit.Hit, want map[string]bool, tool string) bool {
	if h.Kind == "message" {
		return want[h.ID]
	}
	if tool == "" || !strings.Contains(h.Text, tool) {
		return false
	}
	for _, id := range h.SourceIDs {
		if want[id] {
			return true
		}
	}
	return false
}

// bm25Docs are the baseline's documents: every message of the
// trajectory, a tool result indexed with its call (content, then the
// tool's name and arguments), every other message with its text
// (content plus the calls it makes).
func bm25Docs(t *trajectory) []benchkit.Doc {
	docs := make([]benchkit.Doc, len(t.Messages))
	for i := range t.Messages {
		m := &t.Messages[i]
		text := m.Text
		if tc, ok := t.call(m); ok {
			text = m.Content + "\n" + tc.Name + " " + tc.Arguments
		}
		docs[i] = benchkit.Doc{ID: m.ID, Text: text}
	}
	return docs
}
