package benchkit

// Everything that runs the clipfold command and reads its output lives
// in this file, so that when the command's output changes only this file
// needs to follow.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/hostfuncs/store/sqlite"
	"github.com/tidwall/gjson"
)

// CLI runs one clipfold binary.
type CLI struct {
	Bin string
	// Env is added to the command's environment (CLIPFOLD_WASM when the
	// plug-in is chosen explicitly).
	Env []string
}

// Exec runs the command with args and returns its stdout; a non-zero
// exit is an error carrying stderr.
func (c *CLI) Exec(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, c.Bin, args...)
	cmd.Env = append(os.Environ(), c.Env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return stdout.Bytes(), fmt.Errorf("clipfold %s: exit %d: %s", args[0], ee.ExitCode(), strings.TrimSpace(stderr.String()))
		}
		return nil, fmt.Errorf("clipfold %s: %w", args[0], err)
	}
	return stdout.Bytes(), nil
}

// RunReport is what the benchmarks read of `clipfold run --json`.
type RunReport struct {
	Limit              int64          `json:"limit"`
	PeakTokens         int64          `json:"peak_tokens"`
	FinalTokens        int64          `json:"final_tokens"`
	FinalMessages      int64          `json:"final_messages"`
	Compactions        int64          `json:"compactions"`
	CompactionsFailed  int64          `json:"compactions_failed"`
	FailureCodes       map[string]int `json:"failure_codes"`
	MessagesCompressed int64          `json:"messages_compressed"`
	BatchesCreated     int64          `json:"batches_created"`
	DepthReached       int64          `json:"depth_reached"`
	Raw                string         `json:"-"`
}

// Replay runs `clipfold run FILE --model-max-tokens M --context-budget B
// --db DB --json --quiet` plus extra flags. A run whose compactions
// failed (exit status 1 with its report) is not an error: the report
// counts the failures.
func (c *CLI) Replay(ctx context.Context, file, db string, budget int, extra []string) (*RunReport, error) {
	// limit = context_budget × model_max_tokens; with budget 0.8 the
	// window is budget/0.8 (4,000 → 5,000).
	window := int(float64(budget)/0.8 + 0.5)
	args := append([]string{"run", file, "--model-max-tokens", strconv.Itoa(window), "--context-budget", "0.8",
		"--db", db, "--json", "--quiet"}, extra...)
	out, err := c.Exec(ctx, args...)
	r := gjson.ParseBytes(out)
	// Exit status 1 is a compaction that failed; the report says which
	// (failure_codes), and the history stays valid: the benchmarks count
	// it and go on.
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1 && r.IsObject() && r.Get("compactions_failed").Int() > 0) {
		return nil, err
	}
	if !r.IsObject() {
		return nil, fmt.Errorf("clipfold run --json: not a JSON object: %.200s", out)
	}
	rep := &RunReport{Limit: r.Get("limit").Int(), PeakTokens: r.Get("peak_tokens").Int(), FinalTokens: r.Get("final_tokens").Int(),
		FinalMessages: r.Get("final_messages").Int(), Compactions: r.Get("compactions").Int(),
		CompactionsFailed: r.Get("compactions_failed").Int(), MessagesCompressed: r.Get("messages_compressed").Int(),
		BatchesCreated: r.Get("batches_created").Int(), DepthReached: r.Get("depth_reached").Int(),
		FailureCodes: map[string]int{}, Raw: string(out)}
	r.Get("failure_codes").ForEach(func(k, v gjson.Result) bool {
		rep.FailureCodes[k.String()] = int(v.Int())
		return true
	})
	return rep, nil
}

// Show returns the active history, `clipfold show CONV --db DB --json`.
func (c *CLI) Show(ctx context.Context, conv, db string) ([]Message, error) {
	out, err := c.Exec(ctx, "show", conv, "--db", db, "--json")
	if err != nil {
		return nil, err
	}
	r := gjson.ParseBytes(out)
	if !r.IsArray() {
		return nil, fmt.Errorf("clipfold show --json: not a JSON array: %.200s", out)
	}
	var msgs []Message
	for _, m := range r.Array() {
		msgs = append(msgs, ParseMessage([]byte(m.Raw)))
	}
	return msgs, nil
}

// Version returns what `clipfold version --json` says of the command and
// its plug-in, for the report ("" when the command cannot say).
func (c *CLI) Version(ctx context.Context) string {
	out, err := c.Exec(ctx, "version", "--json")
	if err != nil {
		return ""
	}
	r := gjson.ParseBytes(out)
	return fmt.Sprintf("clipfold %s, plug-in %s (%s)", r.Get("clipfold").String(), r.Get("plugin.version").String(), r.Get("plugin_source").String())
}

// Hit is one search result as the benchmarks need it.
type Hit struct {
	Kind      string   `json:"kind"` // "message" or "batch"
	ID        string   `json:"id"`
	SourceIDs []string `json:"source_message_ids,omitempty"`
	// Text is the hit's full text: a batch's summary (for the answer
	// check). Messages are judged by id alone.
	Text string `json:"-"`
	// InContext: the hit is a message still in the active history (the
	// command says so with in_context).
	InContext bool `json:"in_context,omitempty"`
}

// Search runs `clipfold search QUESTION --db DB --limit N --json`.
//
// It reads each hit's kind, id, source message ids (batch.source_message_ids
// today, source_message_ids at top level accepted too) and full text
// (text, content or full_text when the command prints it; today it prints
// only a snippet, so a batch's text is read from the store by the hit's
// block id: blocks(id)).
func (c *CLI) Search(ctx context.Context, query, db string, limit int, blocks func(id string) (string, error)) ([]Hit, time.Duration, error) {
	start := time.Now()
	out, err := c.Exec(ctx, "search", query, "--db", db, "--limit", strconv.Itoa(limit), "--json")
	took := time.Since(start)
	if err != nil {
		return nil, took, err
	}
	r := gjson.ParseBytes(out)
	hitsJSON := r.Get("hits")
	if !hitsJSON.Exists() {
		hitsJSON = r.Get("results")
	}
	if !hitsJSON.Exists() && r.IsArray() {
		hitsJSON = r
	}
	if !hitsJSON.IsArray() {
		return nil, took, fmt.Errorf("clipfold search --json: no hits array: %.200s", out)
	}
	var hits []Hit
	for _, hj := range hitsJSON.Array() {
		h := Hit{Kind: hj.Get("kind").String(), ID: hj.Get("id").String(), InContext: hj.Get("in_context").Bool()}
		src := hj.Get("source_message_ids")
		if !src.Exists() {
			src = hj.Get("batch.source_message_ids")
		}
		for _, id := range src.Array() {
			h.SourceIDs = append(h.SourceIDs, id.String())
		}
		for _, f := range []string{"text", "content", "full_text"} {
			if t := hj.Get(f); t.Exists() && t.Type == gjson.String {
				h.Text = t.String()
				break
			}
		}
		if h.Kind != "message" && h.Text == "" {
			if h.Text, err = blocks(h.ID); err != nil {
				return nil, took, err
			}
		}
		hits = append(hits, h)
	}
	return hits, took, nil
}

// Archive reads a benchmark's database through the store API
// (hostfuncs/store): recall storage for the lost-message check, and the
// archived batches' text for search hits that do not carry it.
type Archive struct {
	st     *sqlite.Store
	conv   string
	blocks map[string]string // block id → summary text, loaded on first use
}

// OpenArchive opens the SQLite database db for conversation conv.
func OpenArchive(db, conv string) (*Archive, error) {
	st, err := sqlite.Open(db)
	if err != nil {
		return nil, err
	}
	return &Archive{st: st, conv: conv}, nil
}

// Close closes the database.
func (a *Archive) Close() error { return a.st.Close() }

// Store is the database's store.
func (a *Archive) Store() *sqlite.Store { return a.st }

// Recall returns a message compaction moved to recall storage, as stored
// (its raw JSON), or ok = false when recall storage does not have it.
func (a *Archive) Recall(ctx context.Context, id string) (raw []byte, conv string, ok bool, err error) {
	m, err := a.st.Recall(ctx, a.conv, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, "", false, nil
	}
	if err != nil {
		return nil, "", false, err
	}
	return m.Raw, m.ConversationID, true, nil
}

// BlockText returns the summary text of an archived block by id (the
// metadata line stripped).
func (a *Archive) BlockText(ctx context.Context, id string) (string, error) {
	if a.blocks == nil {
		a.blocks = map[string]string{}
		bs, err := a.st.ListBlocks(ctx, "archival", core.BatchLabelPrefix(a.conv))
		if err != nil {
			return "", err
		}
		for _, b := range bs {
			text := b.Content
			if parsed, ok := core.ParseBatchBlock(a.conv, b.Label, b.Content); ok {
				text = parsed.Content
			}
			a.blocks[b.ID] = text
		}
	}
	t, ok := a.blocks[id]
	if !ok {
		return "", fmt.Errorf("search hit %s: no archived block with that id", id)
	}
	return t, nil
}
