package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/clipfold/clipfold/internal/benchkit"
)

// questionResult is one question's outcome.
type questionResult struct {
	ID       string `json:"id"`
	Question string `json:"question"`
	Category string `json:"category"`
	Position string `json:"position"`
	Session  int    `json:"session"`
	// (a) the final context and the truncation baseline.
	InContext    bool   `json:"in_context"`
	ContextUnit  string `json:"context_unit,omitempty"` // "archive" or the kept message's id
	InTruncation bool   `json:"in_truncation"`
	// EvidenceKept: an evidence message is still in the active history
	// verbatim (clipfold search does not search it; the context has it).
	EvidenceKept bool `json:"evidence_kept"`
	// (b) clipfold search and the BM25 baseline: the 1-based rank of the
	// first hit that finds the evidence within the top N, 0 when none.
	SearchRank  int    `json:"search_rank"`
	SearchHit   string `json:"search_hit,omitempty"`
	SearchHits  int    `json:"search_hits"`
	BM25Rank    int    `json:"bm25_rank"`
	BM25Matched int    `json:"bm25_matched"`
}

// tally counts a group of questions.
type tally struct {
	Questions     int `json:"questions"`
	InContext     int `json:"in_context"`
	InTruncation  int `json:"in_truncation"`
	SearchTop     int `json:"search_top"`
	BM25Top       int `json:"bm25_top"`
	SearchNoMatch int `json:"search_no_match"`
	BM25NoMatch   int `json:"bm25_no_match"`
	EvidenceKept  int `json:"evidence_kept"`
}

func (t *tally) add(q *questionResult) {
	t.Questions++
	t.InContext += b2i(q.InContext)
	t.InTruncation += b2i(q.InTruncation)
	t.SearchTop += b2i(q.SearchRank > 0)
	t.BM25Top += b2i(q.BM25Rank > 0)
	t.SearchNoMatch += b2i(q.SearchHits == 0)
	t.BM25NoMatch += b2i(q.BM25Matched == 0)
	t.EvidenceKept += b2i(q.EvidenceKept)
}

func (t *tally) merge(o tally) {
	t.Questions += o.Questions
	t.InContext += o.InContext
	t.InTruncation += o.InTruncation
	t.SearchTop += o.SearchTop
	t.BM25Top += o.BM25Top
	t.SearchNoMatch += o.SearchNoMatch
	t.BM25NoMatch += o.BM25NoMatch
	t.EvidenceKept += o.EvidenceKept
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// convResult is one conversation's outcome.
type convResult struct {
	Name           string              `json:"name"`
	Style          string              `json:"style"`
	ConversationID string              `json:"conversation_id"`
	Messages       int                 `json:"messages"`
	Sessions       int                 `json:"sessions"`
	Questions      int                 `json:"questions"`
	Run            *benchkit.RunReport `json:"run"`
	RunSeconds     float64             `json:"run_seconds"`
	SearchSeconds  float64             `json:"search_seconds"`
	FinalMessages  int                 `json:"final_messages"`
	FinalTokens    int64               `json:"final_tokens"`
	ArchiveTokens  int64               `json:"archive_tokens"`
	TruncMessages  int                 `json:"truncation_messages"`
	TruncTokens    int64               `json:"truncation_tokens"`
	// (c) every message of the file: in the active history, in recall
	// storage, lost (neither), altered (found with other bytes).
	InActive int      `json:"in_active"`
	InRecall int      `json:"in_recall"`
	Lost     []string `json:"lost"`
	Altered  []string `json:"altered"`

	Tally      tally            `json:"tally"`
	ByCategory map[string]tally `json:"by_category"`
	ByPosition map[string]tally `json:"by_position"`
	Results    []questionResult `json:"results"`
}

func (r *convResult) tally() {
	r.ByCategory, r.ByPosition = map[string]tally{}, map[string]tally{}
	for i := range r.Results {
		q := &r.Results[i]
		r.Tally.add(q)
		c := r.ByCategory[q.Category]
		c.add(q)
		r.ByCategory[q.Category] = c
		p := r.ByPosition[q.Position]
		p.add(q)
		r.ByPosition[q.Position] = p
	}
}

// report is the whole run.
type report struct {
	Label         string           `json:"label"`
	Command       string           `json:"command"`
	Budget        int              `json:"budget_tokens"`
	Limit         int              `json:"search_top_n"`
	RunFlags      string           `json:"run_flags,omitempty"`
	Conversations []*convResult    `json:"conversations"`
	Total         tally            `json:"total"`
	ByCategory    map[string]tally `json:"by_category"`
	ByPosition    map[string]tally `json:"by_position"`
	Lost          int              `json:"lost"`
	Altered       int              `json:"altered"`
	// Baseline is an earlier run to compare with (-baseline).
	Baseline *report `json:"-"`
}

// loadBaseline reads an earlier -json report; a missing file is no
// baseline.
func loadBaseline(path string) (*report, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("baseline %s: %w", path, err)
	}
	return &r, nil
}

func (r *report) total() {
	r.ByCategory, r.ByPosition = map[string]tally{}, map[string]tally{}
	for _, c := range r.Conversations {
		r.Total.merge(c.Tally)
		for k, v := range c.ByCategory {
			t := r.ByCategory[k]
			t.merge(v)
			r.ByCategory[k] = t
		}
		for k, v := range c.ByPosition {
			t := r.ByPosition[k]
			t.merge(v)
			r.ByPosition[k] = t
		}
		r.Lost += len(c.Lost)
		r.Altered += len(c.Altered)
	}
}

// problems are what makes the run fail: lost or altered messages, failed
// compactions. The shares are not problems: they are what is measured.
func (r *report) problems() []string {
	var out []string
	for _, c := range r.Conversations {
		out = append(out, benchkit.RunProblems(c.Name, c.Lost, c.Altered, c.Run.FailureCodes)...)
	}
	return out
}

func write(o *options, r *report) error {
	if err := benchkit.WriteOutputs(o.JSON, r, o.Out, markdown(r)); err != nil {
		return err
	}
	if o.Out != "" && !o.Quiet {
		fmt.Fprintf(os.Stderr, "fidelity: wrote %s\n", o.Out)
	}
	return nil
}

var categoryOrder = []string{"when", "who", "what", "where", "how-many"}
var positionOrder = []string{"early", "middle", "late"}

// markdown renders the report.
func markdown(r *report) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Fidelity benchmark\n\n")
	w("What clipfold still knows after it compacted a long conversation, measured on the conversations of\n")
	w("[`testdata/fidelity`](../testdata/fidelity/README.md) by [`tools/fidelity`](../tools/fidelity/main.go).\n\n")
	w("Measured: **%s**. Compaction limit %s estimated tokens", r.Label, benchkit.Commas(int64(r.Budget)))
	w(" (`clipfold run FILE --model-max-tokens %d --context-budget 0.8", int(float64(r.Budget)/0.8+0.5))
	if r.RunFlags != "" {
		w(" %s", r.RunFlags)
	}
	w("`, extractive summarizer, offline); search top %d.", r.Limit)
	if r.Command != "" {
		w(" Command: %s.", r.Command)
	}
	w("\n\n")
	w("Regenerate: `make fidelity` (builds the command, runs every conversation, rewrites this file and\n")
	w("`build/fidelity.json`, every question's result). It compares with the baseline run saved in `docs/fidelity-baseline.json`")
	if r.Baseline != nil {
		w(" — %s", r.Baseline.Label)
	}
	w(";\nsave a new baseline with `go run ./tools/fidelity -out '' -json docs/fidelity-baseline.json -label '…'`.\n")
	w("One run takes about 15 s; `go test ./tools/fidelity` runs three questions of each conversation and fails only\n")
	w("if a message is lost or altered or the tool breaks: the shares are targets, not tests.\n\n")

	w("## Overall\n\n")
	w("| conversation | messages / sessions | questions | (a) answer in final context: clipfold | (a) naive truncation | (b) evidence in search top %d: clipfold | (b) BM25 | no match: clipfold / BM25 | (c) lost |\n", r.Limit)
	w("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, c := range r.Conversations {
		t := c.Tally
		w("| %s | %d / %d | %d | %s | %s | %s | %s | %d / %d | %d |\n", c.Name, c.Messages, c.Sessions, t.Questions,
			benchkit.Pct(t.InContext, t.Questions), benchkit.Pct(t.InTruncation, t.Questions), benchkit.Pct(t.SearchTop, t.Questions), benchkit.Pct(t.BM25Top, t.Questions),
			t.SearchNoMatch, t.BM25NoMatch, len(c.Lost))
	}
	t := r.Total
	w("| **all** | | **%d** | **%s** | **%s** | **%s** | **%s** | **%d / %d** | **%d** |\n\n", t.Questions,
		benchkit.Pct(t.InContext, t.Questions), benchkit.Pct(t.InTruncation, t.Questions), benchkit.Pct(t.SearchTop, t.Questions), benchkit.Pct(t.BM25Top, t.Questions),
		t.SearchNoMatch, t.BM25NoMatch, r.Lost)

	if r.Baseline != nil && r.Baseline.Label != r.Label {
		comparison(&b, r)
	}
	w("### By where the evidence is\n\n")
	w("Early: in the first 35%% of the messages, middle: 35–70%%, late: the last 30%%.\n\n")
	breakdown(&b, r.ByPosition, positionOrder, r.Limit)
	w("### By question type\n\n")
	breakdown(&b, r.ByCategory, categoryOrder, r.Limit)

	w("## The runs\n\n")
	w("| conversation | compactions (failed) | batches, depth | final context: messages, tokens (archive) | truncation: messages, tokens | kept / in recall / lost / altered | evidence kept verbatim | replay | searches |\n")
	w("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, c := range r.Conversations {
		w("| %s | %d (%d) | %d, %d | %d, %s (%s) | %d, %s | %d / %d / %d / %d | %d | %.1f s | %.1f s |\n", c.Name,
			c.Run.Compactions, c.Run.CompactionsFailed, c.Run.BatchesCreated, c.Run.DepthReached,
			c.FinalMessages, benchkit.Commas(c.FinalTokens), benchkit.Commas(c.ArchiveTokens), c.TruncMessages, benchkit.Commas(c.TruncTokens),
			c.InActive, c.InRecall, len(c.Lost), len(c.Altered), c.Tally.EvidenceKept, c.RunSeconds, c.SearchSeconds)
	}
	w("\n")

	w("## The rules\n\n")
	w(rulesText)
	w("\n## Every question\n\n")
	w("✓ = answered / found; a search rank is the position (1–%d) of the first hit that finds the evidence.\n\n", r.Limit)
	for _, c := range r.Conversations {
		w("<details><summary>%s — %s</summary>\n\n", c.Name, c.Style)
		w("| id | type | where | question | context | truncation | search | BM25 |\n")
		w("| --- | --- | --- | --- | --- | --- | --- | --- |\n")
		for _, q := range c.Results {
			w("| %s | %s | %s (s%d) | %s | %s | %s | %s | %s |\n", q.ID, q.Category, q.Position, q.Session,
				strings.ReplaceAll(q.Question, "|", "\\|"), mark(q.InContext, q.ContextUnit), mark(q.InTruncation, ""),
				rank(q.SearchRank, q.SearchHits), rank(q.BM25Rank, q.BM25Matched))
		}
		w("\n</details>\n\n")
	}
	return b.String()
}

func breakdown(b *strings.Builder, m map[string]tally, order []string, limit int) {
	fmt.Fprintf(b, "| | questions | (a) clipfold context | (a) truncation | (b) clipfold search top %d | (b) BM25 top %d |\n", limit, limit)
	b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	for _, k := range order {
		t, ok := m[k]
		if !ok {
			continue
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s |\n", k, t.Questions, benchkit.Pct(t.InContext, t.Questions), benchkit.Pct(t.InTruncation, t.Questions),
			benchkit.Pct(t.SearchTop, t.Questions), benchkit.Pct(t.BM25Top, t.Questions))
	}
	b.WriteString("\n")
}

func mark(ok bool, unit string) string {
	switch {
	case !ok:
		return "✗"
	case unit == "archive":
		return "✓ archive"
	case unit != "":
		return "✓ kept"
	}
	return "✓"
}

func rank(r, n int) string {
	switch {
	case r > 0:
		return fmt.Sprintf("✓ %d", r)
	case n == 0:
		return "no match"
	}
	return "✗"
}

const rulesText = `- **Replay.** ` + "`clipfold run`" + ` appends the file turn by turn (a user message and what follows it) and asks the plug-in's
  shouldCompact after each turn; when the estimate passes the limit it compacts, with the command's default settings
  (offline: the extractive summarizer) plus any -run-flags shown above. The final context is what ` + "`clipfold show CONV --json`" + `
  returns afterwards: the clip-archive message and the messages kept verbatim.
- **Naive truncation** keeps the newest messages of the file whose estimate (the plug-in's estimateTokens export,
  ⌈characters/4⌉ over all contents and tool inputs, the same count as shouldCompact) fits the same limit the replay
  compacts at, nothing else (no system message, no summary).
- **(a) Answered in a context.** A message kept verbatim answers when it is one of the question's evidence messages,
  or when its text holds one of the answer strings. The clip-archive is read line by line: a line answers when it holds
  an answer string. Case-insensitive substring match. "When" questions are answered by the date of the evidence
  message (accepted spellings: ` + "`2023-03-04`, `March 4, 2023`, `4 March 2023`, `March 4 2023`, `Mar 4, 2023`, `4 Mar 2023`, `2023/03/04`" + `); a summary line answers only when the date
  and one of the question's anchors (a word naming the event, e.g. "craft fair") stand on the same line, so a
  batch header's bare date range does not count.
- **(b) Found by search.** The question is searched exactly as worded: ` + "`clipfold search \"QUESTION\" --db DB --limit 5 --json`" + `.
  A hit finds the evidence when it is a message hit whose id is an evidence id, or a batch hit whose
  source_message_ids include an evidence id and whose text (the summary, read in full) answers as in (a), line by
  line. ` + "`clipfold search`" + ` searches only compacted content (archived summaries and messages in recall storage): evidence
  still kept verbatim cannot be found by it, but is in the context ("evidence kept verbatim" in the runs table).
  **BM25 baseline:** Okapi BM25 (k1 1.2, b 0.75, idf ln(1 + (N − n + 0.5)/(n + 0.5))) over every message of the
  file (content plus tool call names and arguments), tokens = lower-cased runs of Unicode letters and digits minus
  NLTK's classic 179-word English stop word list, no stemming; ranked by score, ties to the later message; a message
  matching no query term is not a hit. **No match** counts questions for which the search returned nothing at all.
- **(c) Lost.** Every message id of the file must be in the final active history or in recall storage (read with the
  store API, ` + "`hostfuncs/store`" + `), with the bytes of the file ("altered" otherwise). Lost or altered messages,
  or a failed compaction other than no_gain (and the breaker_open that follows it), make the benchmark exit non-zero;
  the shares never do.
`

// comparison prints the shares of the baseline run next to this run's.
func comparison(b *strings.Builder, r *report) {
	base := map[string]*convResult{}
	for _, c := range r.Baseline.Conversations {
		base[c.Name] = c
	}
	fmt.Fprintf(b, "### Compared with the baseline\n\nBaseline: **%s** (`docs/fidelity-baseline.json`). Each cell: baseline → this run.\n\n", r.Baseline.Label)
	b.WriteString("| conversation | (a) clipfold context | (a) truncation | (b) clipfold search | (b) BM25 | no match: clipfold | lost |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- |\n")
	arrow := func(before, now, q0, q1 int) string {
		if q0 != q1 {
			return fmt.Sprintf("%d/%d → %d/%d", before, q0, now, q1)
		}
		return fmt.Sprintf("%d → %d of %d", before, now, q1)
	}
	var t0, u0 tally // over the conversations in both runs
	lost0, lost1 := 0, 0
	for _, c := range r.Conversations {
		o, ok := base[c.Name]
		if !ok {
			fmt.Fprintf(b, "| %s | (not in the baseline) | | | | | |\n", c.Name)
			continue
		}
		t, u := o.Tally, c.Tally
		t0.merge(t)
		u0.merge(u)
		lost0 += len(o.Lost)
		lost1 += len(c.Lost)
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %d → %d |\n", c.Name, arrow(t.InContext, u.InContext, t.Questions, u.Questions),
			arrow(t.InTruncation, u.InTruncation, t.Questions, u.Questions), arrow(t.SearchTop, u.SearchTop, t.Questions, u.Questions),
			arrow(t.BM25Top, u.BM25Top, t.Questions, u.Questions), arrow(t.SearchNoMatch, u.SearchNoMatch, t.Questions, u.Questions), len(o.Lost), len(c.Lost))
	}
	t, u := t0, u0
	fmt.Fprintf(b, "| **all** | %s | %s | %s | %s | %s | %d → %d |\n\n", arrow(t.InContext, u.InContext, t.Questions, u.Questions),
		arrow(t.InTruncation, u.InTruncation, t.Questions, u.Questions), arrow(t.SearchTop, u.SearchTop, t.Questions, u.Questions),
		arrow(t.BM25Top, u.BM25Top, t.Questions, u.Questions), arrow(t.SearchNoMatch, u.SearchNoMatch, t.Questions, u.Questions), lost0, lost1)
}
