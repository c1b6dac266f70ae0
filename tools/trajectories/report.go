package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/clipfold/clipfold/internal/benchkit"
)

// factResult is one fact probe's outcome.
type factResult struct {
	factProbe
	InContext    bool `json:"in_context"`    // in clipfold's final context
	InTruncation bool `json:"in_truncation"` // in naive truncation's
}

// callResult is one call probe's outcome.
type callResult struct {
	callProbe
	// InContext: a result asked for is still verbatim in the final context.
	InContext bool `json:"in_context"`
	// Rank is the position (1–limit) of clipfold search's first hit that
	// finds a result, 0 when none; Hit says which ("message ID", "batch ID").
	Rank     int    `json:"rank"`
	Hit      string `json:"hit,omitempty"`
	BM25Rank int    `json:"bm25_rank"`
}

// trajResult is one trajectory's measurement.
type trajResult struct {
	Name           string `json:"name"`
	Source         string `json:"source"`
	ConversationID string `json:"conversation_id"`
	Messages       int    `json:"messages"`
	ToolResults    int    `json:"tool_results"`
	Tokens         int64  `json:"tokens"` // the whole file's estimate
	Limit          int64  `json:"limit"`

	ModelCalls        int            `json:"model_calls"`
	Compactions       int            `json:"compactions"`
	CompactionsFailed int            `json:"compactions_failed"`
	FailureCodes      map[string]int `json:"failure_codes"`
	PeakInput         int64          `json:"peak_input_tokens"`
	InputsOver        int            `json:"inputs_over_limit"`
	InputsBroken      int            `json:"inputs_broken"` // model inputs with a broken pair
	BrokenPairs       int            `json:"broken_pairs"`  // over all model inputs
	TruncInputsBroken int            `json:"truncation_inputs_broken"`

	FinalMessages int   `json:"final_messages"`
	FinalTokens   int64 `json:"final_tokens"`
	FinalBroken   int   `json:"final_broken_pairs"`
	TruncMessages int   `json:"truncation_messages"`
	TruncTokens   int64 `json:"truncation_tokens"`

	InActive int      `json:"in_active"`
	InRecall int      `json:"in_recall"`
	Lost     []string `json:"lost"`
	Altered  []string `json:"altered"`

	Facts []factResult `json:"facts"`
	Calls []callResult `json:"calls"`

	// Tallies.
	FactsInContext    int `json:"facts_in_context"`
	FactsInTruncation int `json:"facts_in_truncation"`
	CallsFound        int `json:"calls_found"`
	CallsFoundBM25    int `json:"calls_found_bm25"`
	CallsOut          int `json:"calls_out_of_context"` // probes whose results all left the context
	CallsOutFound     int `json:"calls_out_found"`
	CallsOutFoundBM25 int `json:"calls_out_found_bm25"`

	ReplaySeconds float64 `json:"replay_seconds"`
	WallSeconds   float64 `json:"wall_seconds"`
	SearchSeconds float64 `json:"search_seconds"`
}

func (r *trajResult) tally() {
	for _, f := range r.Facts {
		r.FactsInContext += b2i(f.InContext)
		r.FactsInTruncation += b2i(f.InTruncation)
	}
	for _, c := range r.Calls {
		r.CallsFound += b2i(c.Rank > 0)
		r.CallsFoundBM25 += b2i(c.BM25Rank > 0)
		if !c.InContext {
			r.CallsOut++
			r.CallsOutFound += b2i(c.Rank > 0)
			r.CallsOutFoundBM25 += b2i(c.BM25Rank > 0)
		}
	}
}

func (r *trajResult) finalOver() bool { return r.FinalTokens > r.Limit }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// group sums trajectories (one source, or all).
type group struct {
	Name                                  string
	Trajectories, Messages, ToolResults   int
	ModelCalls, Compactions, Failed       int
	InputsOver, FinalOver                 int
	InputsBroken, TruncInputsBroken       int
	TrajBroken, TrajTruncBroken           int // trajectories with any broken model input
	FinalBroken                           int
	Facts, FactsInContext, FactsInTrunc   int
	Calls, CallsFound, CallsFoundBM25     int
	CallsOut, CallsOutFound, CallsOutBM25 int
	Lost, Altered                         int
}

func (g *group) add(r *trajResult) {
	g.Trajectories++
	g.Messages += r.Messages
	g.ToolResults += r.ToolResults
	g.ModelCalls += r.ModelCalls
	g.Compactions += r.Compactions
	g.Failed += r.CompactionsFailed
	g.InputsOver += r.InputsOver
	g.FinalOver += b2i(r.finalOver())
	g.InputsBroken += r.InputsBroken
	g.TruncInputsBroken += r.TruncInputsBroken
	g.TrajBroken += b2i(r.InputsBroken > 0)
	g.TrajTruncBroken += b2i(r.TruncInputsBroken > 0)
	g.FinalBroken += r.FinalBroken
	g.Facts += len(r.Facts)
	g.FactsInContext += r.FactsInContext
	g.FactsInTrunc += r.FactsInTruncation
	g.Calls += len(r.Calls)
	g.CallsFound += r.CallsFound
	g.CallsFoundBM25 += r.CallsFoundBM25
	g.CallsOut += r.CallsOut
	g.CallsOutFound += r.CallsOutFound
	g.CallsOutBM25 += r.CallsOutFoundBM25
	g.Lost += len(r.Lost)
	g.Altered += len(r.Altered)
}

// report is the whole run.
type report struct {
	Label        string        `json:"label"`
	Budget       int           `json:"budget"`
	Limit        int           `json:"limit"`
	RunFlags     string        `json:"run_flags,omitempty"`
	Command      string        `json:"command"`
	Trajectories []*trajResult `json:"trajectories"`
	Groups       []*group      `json:"groups"`
}

func (rep *report) total() {
	by := map[string]*group{}
	all := &group{Name: "all"}
	var names []string
	for _, r := range rep.Trajectories {
		g := by[r.Source]
		if g == nil {
			g = &group{Name: r.Source}
			by[r.Source] = g
			names = append(names, r.Source)
		}
		g.add(r)
		all.add(r)
	}
	sort.Strings(names)
	rep.Groups = nil
	for _, n := range names {
		rep.Groups = append(rep.Groups, by[n])
	}
	rep.Groups = append(rep.Groups, all)
}

// problems are what makes the command fail: a message lost or altered,
// a model input or final context that separates a call from its result,
// a compaction that failed otherwise than for lack of gain.
func (rep *report) problems() []string {
	var out []string
	for _, r := range rep.Trajectories {
		out = append(out, benchkit.RunProblems(r.Name, r.Lost, r.Altered, r.FailureCodes)...)
		if r.InputsBroken > 0 || r.FinalBroken > 0 {
			out = append(out, fmt.Sprintf("%s: %d model input(s) and the final context (%d) separate a call from its result", r.Name, r.InputsBroken, r.FinalBroken))
		}
	}
	return out
}

// markdown renders the report (docs/trajectories.md).
func markdown(rep *report) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("# Tool-trajectory benchmark\n\n")
	w("What clipfold does to real agent tool trajectories, replayed with a check before every model call: the trajectories of\n")
	w("[`testdata/trajectories`](../testdata/trajectories/README.md) (public benchmarks' ground-truth tool calls run through\n")
	w("their own tool implementations), measured by [`tools/trajectories`](../tools/trajectories/main.go).\n\n")
	w("Measured: **%s**. Compaction limit %s estimated tokens (`clipfold run PREFIX --model-max-tokens %d --context-budget 0.8`",
		rep.Label, benchkit.Commas(int64(rep.Budget)), int(float64(rep.Budget)/0.8+0.5))
	if rep.RunFlags != "" {
		w(" `%s`", rep.RunFlags)
	}
	w(", extractive summarizer, offline); search top %d. Command: %s.\n\n", rep.Limit, rep.Command)
	w("Regenerate: `make trajectories` (builds the command and build/clipfold.wasm, replays every trajectory, rewrites this\n")
	w("file and `build/trajectories.json`, every probe's result). `go test ./tools/trajectories` replays three trajectories\n")
	w("and fails if a message is lost or altered, a model input separates a call from its result, or the tool breaks.\n\n")

	w("## Overall\n\n")
	w("| set | trajectories | messages / tool results | model calls | compactions (failed) | model inputs over the limit | final contexts over the limit | model inputs with a broken pair: clipfold / truncation | trajectories with one: clipfold / truncation | early tool facts in the final context: clipfold | truncation | search by call, top %d: clipfold | BM25 over result+call | of results out of context: clipfold / BM25 | lost / altered |\n", rep.Limit)
	w("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, g := range rep.Groups {
		name := g.Name
		if name == "all" {
			name = "**all**"
		}
		w("| %s | %d | %s / %s | %s | %d (%d) | %s | %d/%d | %d / %d | %d / %d | %s | %s | %s | %s | %s / %s | %d / %d |\n",
			name, g.Trajectories, benchkit.Commas(int64(g.Messages)), benchkit.Commas(int64(g.ToolResults)), benchkit.Commas(int64(g.ModelCalls)),
			g.Compactions, g.Failed, benchkit.Pct(g.InputsOver, g.ModelCalls), g.FinalOver, g.Trajectories,
			g.InputsBroken, g.TruncInputsBroken, g.TrajBroken, g.TrajTruncBroken,
			benchkit.Pct(g.FactsInContext, g.Facts), benchkit.Pct(g.FactsInTrunc, g.Facts),
			benchkit.Pct(g.CallsFound, g.Calls), benchkit.Pct(g.CallsFoundBM25, g.Calls),
			benchkit.Pct(g.CallsOutFound, g.CallsOut), benchkit.Pct(g.CallsOutBM25, g.CallsOut), g.Lost, g.Altered)
	}
	w("\n")

	w("## The trajectories\n\n")
	w("| trajectory | messages / tool results | estimate of the whole file | model calls | compactions (failed: codes) | peak model input | inputs over | final context: messages, tokens | truncation: messages, tokens | broken inputs: clipfold / truncation | facts: clipfold / truncation | search by call: clipfold / BM25 | kept / in recall / lost / altered | replay |\n")
	w("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range rep.Trajectories {
		failed := fmt.Sprint(r.CompactionsFailed)
		if len(r.FailureCodes) > 0 {
			var codes []string
			for c, n := range r.FailureCodes {
				codes = append(codes, fmt.Sprintf("%s ×%d", c, n))
			}
			sort.Strings(codes)
			failed += ": " + strings.Join(codes, ", ")
		}
		w("| %s | %d / %d | %s | %d | %d (%s) | %s | %d | %d, %s | %d, %s | %d / %d | %d/%d / %d/%d | %d/%d / %d/%d | %d / %d / %d / %d | %.1f s |\n",
			r.Name, r.Messages, r.ToolResults, benchkit.Commas(r.Tokens), r.ModelCalls, r.Compactions, failed, benchkit.Commas(r.PeakInput), r.InputsOver,
			r.FinalMessages, benchkit.Commas(r.FinalTokens), r.TruncMessages, benchkit.Commas(r.TruncTokens), r.InputsBroken, r.TruncInputsBroken,
			r.FactsInContext, len(r.Facts), r.FactsInTruncation, len(r.Facts), r.CallsFound, len(r.Calls), r.CallsFoundBM25, len(r.Calls),
			r.InActive, r.InRecall, len(r.Lost), len(r.Altered), r.WallSeconds)
	}
	w("\n")
	w(rules)
	return b.String()
}

const rules = `## The rules

- **Replay, with a check before every model call.** A model call is each assistant message that does not follow another
  assistant message; its input is every message before it. Before each, the benchmark writes those messages to a file
  and runs ` + "`clipfold run FILE --model-max-tokens M --context-budget 0.8 --db DB --json`" + ` on it: the command
  appends what the database does not hold yet and compacts when the plug-in's shouldCompact says the history is over
  the limit (0.8 × M), with the command's defaults (offline: the extractive summarizer; compacting to 0.8 of the limit).
  ` + "`clipfold show CONV --json`" + ` afterwards is the model's input. After the last message the same run gives the
  final context.
- **Naive truncation** keeps the newest messages that fit the same limit (the plug-in's estimateTokens export, the count
  shouldCompact uses), nothing else: at each model call for the pair check, over the whole file for the final context.
- **Over the limit**: a model input or final context whose estimate is above the limit.
- **Broken pair**: in a model input (or the final context), a tool result whose call is not before it, or a call whose
  result is not there. A cleared or shortened result that keeps its ` + "`tool_call_id`" + ` is still a result.
  Providers refuse such requests.
- **Early tool facts**: a value that a tool call passes as an argument (a string of at least 4 characters, or a number
  with two or more digits) and that an earlier tool result in the first half of the trajectory shows, while no user
  or system message before the call says it: the agent learned it from a tool. One probe per value. It is in a context
  when any message there holds it (case-insensitive), the clip-archive included.
- **Search by call**: for every tool result whose call has argument values, the question an agent would ask about it:
  ` + "`what did <tool> <argument values> return?`" + ` (values in the call's order; calls asking the same question are one
  probe). ` + "`clipfold search QUESTION --limit 5 --json`" + ` finds it when a message hit is one of the results, or a
  batch hit summarizes one (its source_message_ids) and names the tool. The baseline is plain Okapi BM25 (k1 1.2,
  b 0.75, NLTK stop words, no stemming) over every message of the file, a tool result indexed together with its call
  (its content, the tool's name and arguments), the others with their text and calls. "Out of context": probes
  whose results are no longer verbatim in the final context.
- **Lost / altered**: every message of the file must be in the final context with its exact bytes, or in recall
  storage with its exact bytes (under its id, or another when compaction replaced it in place). A message found only
  with other bytes is altered, one found nowhere lost.
`
