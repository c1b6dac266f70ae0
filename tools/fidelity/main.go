// Command fidelity measures what clipfold remembers. For each conversation
// of testdata/fidelity it replays the file through the real command
// (`clipfold run FILE --model-max-tokens M --db TMP.db --json`, compacting
// whenever the history passes a ~4,000-token limit), then:
//
//	(a) checks whether the final context (`clipfold show CONV --json`: the
//	    clip-archive plus the messages kept verbatim) still answers each
//	    question, against naive truncation to the same token limit (the
//	    newest messages of the file that fit, counted by the plug-in's own
//	    estimateTokens export);
//	(b) asks each question as worded (`clipfold search QUESTION --limit 5
//	    --json`) and checks whether the evidence is in the top 5, against
//	    plain Okapi BM25 over the raw messages;
//	(c) checks that no message was lost: every message of the file is in
//	    the final active history or in recall storage, byte for byte.
//
// It writes a Markdown report (docs/fidelity.md) and, with -json, the
// per-question results. Usage (from the repository root, after make cli):
//
//	go run ./tools/fidelity                          # all conversations → docs/fidelity.md
//	go run ./tools/fidelity -conversations friends-chat -questions 5 -out ''
//	go run ./tools/fidelity -json build/fidelity.json
//
// The shares are measurements, not pass/fail: the command exits non-zero
// only when something breaks (a command fails, a message is lost).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/clipfold/clipfold/internal/benchkit"
)

type options struct {
	benchkit.Options
	questions int
	baseline  string
}

func main() {
	var o options
	parsed := o.Register(flag.CommandLine, benchkit.Defaults{Data: "testdata/fidelity", DataHelp: "the conversations and their .questions.json",
		NamesFlag: "conversations", Budget: 4000, Out: "docs/fidelity.md",
		WasmHelp: "plug-in `file` for estimateTokens and, via $CLIPFOLD_WASM, for the command (default: $CLIPFOLD_WASM, else the embedded build for estimateTokens and the command's own)"})
	flag.IntVar(&o.questions, "questions", 0, "ask only `N` questions per conversation, spread evenly (default: all)")
	flag.StringVar(&o.baseline, "baseline", "docs/fidelity-baseline.json", "compare with this earlier -json `file` in the report ('' for none; ignored when missing)")
	flag.Parse()
	parsed()
	rep, err := run(context.Background(), &o)
	if err == nil {
		err = write(&o, rep)
	}
	var problems []string
	if err == nil {
		problems = rep.problems()
	}
	benchkit.Finish("fidelity", err, problems)
}

// run measures every conversation.
func run(ctx context.Context, o *options) (*report, error) {
	convs, err := loadConversations(o.Data, o.Names)
	if err != nil {
		return nil, err
	}
	b, err := o.Setup(ctx, false)
	if err != nil {
		return nil, err
	}
	defer b.Close(ctx)
	rep := &report{Label: b.Label, Budget: o.Budget, Limit: o.Limit, RunFlags: strings.Join(o.Extra, " "), Command: b.CLI.Version(ctx)}
	if o.baseline != "" {
		if rep.Baseline, err = loadBaseline(o.baseline); err != nil {
			return nil, err
		}
	}
	for _, cv := range convs {
		cv.Questions = subset(cv.Questions, o.questions)
		if !o.Quiet {
			fmt.Fprintf(os.Stderr, "fidelity: %s (%d messages, %d questions)…\n", cv.Name, len(cv.Messages), len(cv.Questions))
		}
		db, err := b.FreshDB(cv.Name)
		if err != nil {
			return nil, err
		}
		cr, err := measure(ctx, o, b.CLI, b.Est, cv, db)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cv.Name, err)
		}
		rep.Conversations = append(rep.Conversations, cr)
	}
	rep.total()
	return rep, nil
}

// measure replays one conversation and asks its questions.
func measure(ctx context.Context, o *options, c *benchkit.CLI, est *benchkit.Estimator, cv *conversation, db string) (*convResult, error) {
	r := &convResult{Name: cv.Name, Style: cv.Q.Style, ConversationID: cv.Q.ConversationID, Messages: len(cv.Messages),
		Sessions: len(cv.Q.Sessions), Questions: len(cv.Questions)}
	start := time.Now()
	replay, err := c.Replay(ctx, cv.Path, db, o.Budget, o.Extra)
	r.RunSeconds = time.Since(start).Seconds()
	if err != nil {
		return nil, err
	}
	r.Run = replay
	final, err := c.Show(ctx, cv.Q.ConversationID, db)
	if err != nil {
		return nil, err
	}
	r.FinalMessages = len(final)
	if r.FinalTokens, err = est.Tokens(ctx, final); err != nil {
		return nil, err
	}
	for i := range final {
		if isArchive(&final[i]) {
			r.ArchiveTokens, err = est.Tokens(ctx, final[i:i+1])
			if err != nil {
				return nil, err
			}
		}
	}
	trunc, truncTokens, err := est.Truncate(ctx, cv.Messages, replay.Limit)
	if err != nil {
		return nil, err
	}
	r.TruncMessages, r.TruncTokens = len(trunc), truncTokens

	arch, err := benchkit.OpenArchive(db, cv.Q.ConversationID)
	if err != nil {
		return nil, err
	}
	defer arch.Close()
	if err := lostCheck(ctx, r, cv, final, arch); err != nil {
		return nil, err
	}

	ix := benchkit.NewBM25(docs(cv.Messages))
	kept := map[string]bool{}
	for _, m := range final {
		kept[m.ID] = true
	}
	searchStart := time.Now()
	for k := range cv.Questions {
		q := &cv.Questions[k]
		qr := questionResult{ID: q.ID, Question: q.Question, Category: q.Category, Position: q.Position, Session: q.Session}
		qr.InContext, qr.ContextUnit = contextAnswers(q, final)
		qr.InTruncation, _ = contextAnswers(q, trunc)
		for _, id := range q.Evidence {
			if kept[id] {
				qr.EvidenceKept = true
			}
		}
		hits, _, err := c.Search(ctx, q.Question, db, o.Limit, func(id string) (string, error) { return arch.BlockText(ctx, id) })
		if err != nil {
			return nil, fmt.Errorf("question %s: %w", q.ID, err)
		}
		qr.SearchHits = len(hits)
		for i := range hits {
			if hitFinds(q, &hits[i]) {
				qr.SearchRank = i + 1
				qr.SearchHit = hits[i].Kind + " " + hits[i].ID
				break
			}
		}
		ids, matched := ix.Search(q.Question, o.Limit)
		qr.BM25Matched = matched
		ev := evidenceSet(q)
		for i, id := range ids {
			if ev[id] {
				qr.BM25Rank = i + 1
				break
			}
		}
		r.Results = append(r.Results, qr)
	}
	r.SearchSeconds = time.Since(searchStart).Seconds()
	r.tally()
	return r, nil
}

// lostCheck: every message of the file is in the final active history or
// in recall storage (read through the store API), with its bytes intact.
func lostCheck(ctx context.Context, r *convResult, cv *conversation, final []message, arch *benchkit.Archive) error {
	active := map[string][]byte{}
	for _, m := range final {
		active[m.ID] = m.Raw
	}
	for _, m := range cv.Messages {
		if raw, ok := active[m.ID]; ok {
			r.InActive++
			if !benchkit.SameJSON(raw, m.Raw) {
				r.Altered = append(r.Altered, m.ID)
			}
			continue
		}
		raw, conv, ok, err := arch.Recall(ctx, m.ID)
		if err != nil {
			return err
		}
		if !ok || conv != cv.Q.ConversationID {
			r.Lost = append(r.Lost, m.ID)
			continue
		}
		r.InRecall++
		if !benchkit.SameJSON(raw, m.Raw) {
			r.Altered = append(r.Altered, m.ID)
		}
	}
	return nil
}

// docs are the BM25 baseline's documents: every message of the file, its
// content plus tool call names and arguments (message.Text).
func docs(msgs []message) []benchkit.Doc {
	out := make([]benchkit.Doc, len(msgs))
	for i := range msgs {
		out[i] = benchkit.Doc{ID: msgs[i].ID, Text: msgs[i].Text}
	}
	return out
}
