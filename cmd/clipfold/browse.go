package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/tidwall/gjson"
)

var searchCmd = &command{
	name:    "search",
	args:    "QUERY [flags]",
	summary: "ranked search over archived summaries, compacted messages and the active history",
	help: `Searches what compaction archived — batch summaries and the original messages
it moved to recall storage — and the messages still in the active history,
tool calls and tool output included, and ranks them in one list, best first
(BM25 on SQLite, ts_rank_cd on PostgreSQL).
Ask as you would ask a person: any word of QUERY may match, common words
("what", "did", "the") are skipped, words match their inflections
("deploys" finds "deployed"), "quoted words" must appear together, and no
character is search syntax. Each hit shows its kind, id, the time it
covers and its score; a batch also shows the ids of the messages it
summarizes; a message still in the active history says "in context" (print
those with 'clipfold show'). Print any other hit in full with 'clipfold
recall ID'.

--max-tokens N prints what an agent's memory_read tool gets: the hits in
full, best first, within N tokens (at least 150; counted as the context
window is): whole hits while they fit, then the passage of the next that
holds the most words of QUERY, then the hits left out and how to read them.

With an embeddings provider (--embeddings-provider openai|ollama and
--embeddings-model, or an [embeddings] section in --config), QUERY is also
matched by meaning: the archive's embeddings (computed after each compaction,
or now for what has none) are ranked by similarity to the query's, and the two
rankings fused (reciprocal rank fusion), so a question sharing no word with its
answer still finds it. If the provider fails, search answers by words alone
and says so.

Examples:
  clipfold search "why did the checkout deploy fail?"
  clipfold search '"connection leak" INC-4471' --conversation conv-checkout-inc-4471 --limit 5
  clipfold search refund --json
  clipfold search "what did get_order 4471 return?" --max-tokens 1000
  clipfold search "when is the car repaired?" --embeddings-provider ollama --embeddings-model nomic-embed-text`,
}

var showCmd = &command{
	name:    "show",
	args:    "CONVERSATION_ID [flags]",
	summary: "print a conversation's active history (the clip-archive first)",
	help: `Prints the active history: the clip-archive message that replaced the
compacted messages, then the messages kept verbatim. Long contents are cut
unless --full. --json prints the messages as stored, one JSON array.

Examples:
  clipfold show conv-checkout-inc-4471
  clipfold show support-chat --full
  clipfold show support-chat --json > history.json`,
}

var recallCmd = &command{
	name:    "recall",
	args:    "ID [flags]",
	summary: "print a compacted message exactly as it was given, or an archived batch in full",
	help: `Compaction never destroys a message: it moves it to recall storage. recall
prints a message back as its exact original JSON. Given a batch id (the
"batch blk_…" hits of 'clipfold search'), it prints the batch's metadata —
conversation, time range, depth, method, the ids of the messages it
summarizes — and its full summary (as one JSON object with --json).

Message ids are unique within a conversation: when several conversations
number their messages alike (msg_0, msg_1, …), name the one you mean with
--conversation (recall says which conversations hold the id).

Examples:
  clipfold recall dbg-0042
  clipfold recall msg_7 --conversation support-chat
  clipfold recall blk_4f0c2a9e1b7d3c5a6e8f9012 --db archive.db
  clipfold recall support-chat-0007 --db archive.db`,
}

var versionCmd = &command{
	name:    "version",
	args:    "[flags]",
	summary: "print the clipfold and plug-in versions",
	help: `Prints the command's version and the plug-in's (its version export), and
where the plug-in was loaded from.

Examples:
  clipfold version
  clipfold version --wasm build/clipfold-tinygo.wasm --json`,
}

func init() {
	searchCmd.run = runSearch
	showCmd.run = runShow
	recallCmd.run = runRecall
	versionCmd.run = runVersion
}

func runSearch(e *env, args []string) error {
	fs := newFlags(e, searchCmd)
	var sf storeFlags
	sf.register(fs)
	var cf configFlags
	cf.registerSearch(fs)
	conv := fs.String("conversation", "", "only hits of this conversation `id`")
	limit := fs.Int("limit", 10, "at most `N` hits")
	jsonOut := fs.Bool("json", false, "print the hits as JSON, each with its full text")
	maxTokens := fs.Int("max-tokens", 0, "print the hits as memory_read answers: in full, within `N` tokens (at least 150)")
	pos, err := parse(e, searchCmd, fs, args, 1, -1)
	if err != nil {
		return err
	}
	query := strings.Join(pos, " ")
	if q, err := core.AnalyzeSearchQuery(query, ""); err != nil || q.FTS5 == "" {
		return usagef("the query %q has no word to search for", query)
	}
	if *limit < 1 || *limit > store.MaxSearchLimit {
		return usagef("--limit: must be an integer in [1, %d], got %d", store.MaxSearchLimit, *limit)
	}
	if *maxTokens != 0 && *maxTokens < core.MinMemoryReadTokens {
		return usagef("--max-tokens: must be at least %d (a hit's header, a passage and what was left out), got %d", core.MinMemoryReadTokens, *maxTokens)
	}
	warn := warner(e)
	s, err := cf.resolve(warn)
	if err != nil {
		return err
	}
	emb, err := s.emb.embedder()
	if err != nil {
		return err
	}
	mode := openExisting
	if emb != nil {
		mode = openEmbed
	}
	a, err := sf.open(e, mode)
	if err != nil {
		return err
	}
	defer a.Close()
	hits, err := a.st.Search(e.ctx, query, store.SearchOptions{ConversationID: *conv, Limit: *limit, Embedder: emb,
		Warn: func(err error) { warn(err.Error()) }})
	if err != nil {
		return fmt.Errorf("searching %s: %w", a.describe(), err)
	}
	if *maxTokens > 0 {
		r, err := core.BuildMemoryRead(query, store.ReadHits(hits), *maxTokens, &s.cfg)
		if err != nil {
			return err
		}
		if *jsonOut {
			var passage any
			if r.Passage != "" {
				passage = r.Passage
			}
			return printJSON(e.stdout, map[string]any{"query": query, "max_tokens": *maxTokens, "text": r.Text, "tokens": r.Tokens,
				"whole": nonNil(r.Whole), "passage": passage, "left_out": nonNil(r.LeftOut)})
		}
		fmt.Fprintln(e.stdout, r.Text)
		return nil
	}
	if *jsonOut {
		return printJSON(e.stdout, searchJSON(query, hits))
	}
	if len(hits) == 0 {
		where := a.describe()
		if *conv != "" {
			where += " (conversation " + *conv + ")"
		}
		fmt.Fprintf(e.stdout, "No match for %q in %s.\n", query, where)
		fmt.Fprintln(e.stdout, "Searched: summaries, the messages compaction replaced, and the active history.")
		return nil
	}
	for i, h := range hits {
		if emb != nil {
			fmt.Fprintf(e.stdout, "%d. %s %s  score %s (%s)\n", i+1, h.Kind, h.ID, scoreText(h.Score), ranks(h))
		} else {
			fmt.Fprintf(e.stdout, "%d. %s %s  score %s\n", i+1, h.Kind, h.ID, scoreText(h.Score))
		}
		fmt.Fprintf(e.stdout, "   %s", timeRange(h.Start, h.End))
		if h.Kind == store.HitBatch {
			if b := h.Batch; b != nil {
				fmt.Fprintf(e.stdout, " · depth %d · %d message(s) · %s", b.Depth, b.MessageCount, b.Method)
			}
		} else {
			fmt.Fprintf(e.stdout, " · %s", h.Role)
			if h.InContext {
				fmt.Fprint(e.stdout, " · in context")
			}
		}
		if h.ConversationID != "" {
			fmt.Fprintf(e.stdout, " · conversation %s", h.ConversationID)
		}
		fmt.Fprintln(e.stdout)
		if b := h.Batch; b != nil {
			fmt.Fprintf(e.stdout, "   sources: %s\n", idList(b.SourceMessageIDs, 12))
		}
		fmt.Fprintf(e.stdout, "   %s\n", oneLine(h.Snippet, 300))
	}
	in := ""
	if *conv != "" {
		in = " in " + *conv
	}
	recallArgs := "ID"
	if sharedIDs(hits) {
		recallArgs = "ID --conversation CONVERSATION_ID"
	}
	fmt.Fprintf(e.stdout, "\n%d hit(s)%s. Print one in full: clipfold recall %s%s\n", len(hits), in, recallArgs, prefixSpace(a.flagArg))
	if inContext(hits) {
		fmt.Fprintf(e.stdout, "Hits in context are in the active history: clipfold show CONVERSATION_ID%s\n", prefixSpace(a.flagArg))
	}
	return nil
}

// inContext says whether a hit is still in the active history.
func inContext(hits []store.Hit) bool {
	for _, h := range hits {
		if h.InContext {
			return true
		}
	}
	return false
}

// nonNil is ss, or an empty list for nil (JSON [] rather than null).
func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

// sharedIDs says whether two message hits have the same id (from two
// conversations): recall then needs the conversation.
func sharedIDs(hits []store.Hit) bool {
	seen := map[string]bool{}
	for _, h := range hits {
		if h.Kind != store.HitMessage {
			continue
		}
		if seen[h.ID] {
			return true
		}
		seen[h.ID] = true
	}
	return false
}

// ranks says where a fused hit came from: "words #1, meaning #3 (0.82)".
func ranks(h store.Hit) string {
	var parts []string
	if h.LexicalRank > 0 {
		parts = append(parts, fmt.Sprintf("words #%d", h.LexicalRank))
	}
	if h.VectorRank > 0 {
		parts = append(parts, fmt.Sprintf("meaning #%d, similarity %.2f", h.VectorRank, h.Similarity))
	}
	return strings.Join(parts, "; ")
}

// scoreText prints a hit's score to three significant digits. A score is
// comparable only within its list, and on a small archive a word most
// documents hold scores near zero under BM25: a fixed number of decimals
// printed such hits as 0.000, as if they had not matched.
func scoreText(score float64) string {
	return strconv.FormatFloat(score, 'g', 3, 64)
}

// timeRange prints a hit's time: one instant, or start → end.
func timeRange(start, end time.Time) string {
	switch {
	case start.IsZero() && end.IsZero():
		return "(no time)"
	case start.Equal(end):
		return core.FormatTime(start)
	}
	return core.FormatTime(start) + " → " + core.FormatTime(end)
}

type hitJSON struct {
	Kind           string    `json:"kind"`
	ID             string    `json:"id"`
	ConversationID string    `json:"conversation_id"`
	StartTime      string    `json:"start_time,omitempty"`
	EndTime        string    `json:"end_time,omitempty"`
	Score          float64   `json:"score"`
	LexicalRank    int       `json:"lexical_rank,omitempty"`
	VectorRank     int       `json:"vector_rank,omitempty"`
	Similarity     float64   `json:"similarity,omitempty"`
	Snippet        string    `json:"snippet"`
	Text           string    `json:"text"`
	Role           string    `json:"role,omitempty"`
	Label          string    `json:"label,omitempty"`
	CreatedAt      string    `json:"created_at,omitempty"`
	OperationID    string    `json:"operation_id,omitempty"`
	InContext      bool      `json:"in_context"`
	Batch          *batchRef `json:"batch,omitempty"`
}

type batchRef struct {
	Depth            int      `json:"depth"`
	StartTime        string   `json:"start_time"`
	EndTime          string   `json:"end_time"`
	MessageCount     int      `json:"message_count"`
	SourceMessageIDs []string `json:"source_message_ids"`
	Method           string   `json:"method"`
}

func newBatchRef(b *core.Batch) *batchRef {
	if b == nil {
		return nil
	}
	return &batchRef{Depth: b.Depth, StartTime: core.FormatTime(b.Start), EndTime: core.FormatTime(b.End),
		MessageCount: b.MessageCount, SourceMessageIDs: b.SourceMessageIDs, Method: b.Method}
}

func optTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return core.FormatTime(t)
}

func searchJSON(query string, hits []store.Hit) any {
	out := make([]hitJSON, len(hits))
	for i, h := range hits {
		out[i] = hitJSON{Kind: string(h.Kind), ID: h.ID, ConversationID: h.ConversationID, StartTime: optTime(h.Start),
			EndTime: optTime(h.End), Score: h.Score, LexicalRank: h.LexicalRank, VectorRank: h.VectorRank,
			Similarity: h.Similarity, Snippet: h.Snippet, Text: h.Text, Role: h.Role, Label: h.Label,
			CreatedAt: optTime(h.CreatedAt), OperationID: h.OperationID, InContext: h.InContext, Batch: newBatchRef(h.Batch)}
	}
	return map[string]any{"query": query, "hits": out}
}

func runShow(e *env, args []string) error {
	fs := newFlags(e, showCmd)
	var sf storeFlags
	sf.register(fs)
	full := fs.Bool("full", false, "print every content in full")
	jsonOut := fs.Bool("json", false, "print the messages as stored, as one JSON array")
	pos, err := parse(e, showCmd, fs, args, 1, 1)
	if err != nil {
		return err
	}
	conv := pos[0]
	a, err := sf.open(e, openExisting)
	if err != nil {
		return err
	}
	defer a.Close()
	msgs, err := a.st.ActiveMessages(e.ctx, conv)
	if err != nil {
		return fmt.Errorf("reading conversation %q: %w", conv, err)
	}
	if len(msgs) == 0 {
		return failf("no conversation %q in %s (compact a file first; the id is shown in its report)", conv, a.describe())
	}
	if *jsonOut {
		raws := make([]json.RawMessage, len(msgs))
		for i, m := range msgs {
			raws[i] = json.RawMessage(m.Raw)
		}
		return writeHistory(e.stdout, formatArray, raws)
	}
	var text strings.Builder
	for _, m := range msgs {
		text.WriteString(m.Content)
	}
	fmt.Fprintf(e.stdout, "%s: %d messages, ~%s tokens (%s)\n", conv, len(msgs), commas(int64(core.EstimateTokens(text.String()))), a.describe())
	for i, m := range msgs {
		raw := gjson.ParseBytes(m.Raw)
		// The role the history holds: the clip-archive of an Anthropic
		// history is a user turn there, though clipfold reads it as the
		// system message it stands for.
		role := raw.Get("role").String()
		if role == "" {
			role = m.Role
		}
		fmt.Fprintf(e.stdout, "\n#%d %s %s", i+1, role, m.ID)
		if !m.CreatedAt.IsZero() {
			fmt.Fprintf(e.stdout, "  %s", core.FormatTime(m.CreatedAt))
		}
		content := m.Content
		isArchive := m.Role == "system" && strings.HasPrefix(content, core.ClipArchivePrefix)
		if isArchive {
			fmt.Fprint(e.stdout, "  (clip-archive)")
		}
		fmt.Fprintln(e.stdout)
		if !*full && !isArchive {
			content = cut(content, 400)
		}
		if content != "" {
			fmt.Fprintln(e.stdout, indent(content, "  "))
		}
		for _, tc := range raw.Get("tool_calls").Array() {
			name := tc.Get("function.name").String()
			args := tc.Get("function.arguments").String()
			if !*full {
				args = cut(args, 200)
			}
			fmt.Fprintf(e.stdout, "  → %s(%s)\n", name, args)
		}
		if id := raw.Get("tool_call_id").String(); id != "" && m.Role == "tool" {
			fmt.Fprintf(e.stdout, "  (result of %s)\n", id)
		}
	}
	return nil
}

func runRecall(e *env, args []string) error {
	fs := newFlags(e, recallCmd)
	var sf storeFlags
	sf.register(fs)
	jsonOut := fs.Bool("json", true, "print JSON: a message's exact original JSON (always), a batch as one JSON object")
	conv := fs.String("conversation", "", "the message's conversation `id` (needed when several conversations use the message id)")
	pos, err := parse(e, recallCmd, fs, args, 1, 1)
	if err != nil {
		return err
	}
	jsonSet := false
	fs.Visit(func(f *flag.Flag) { jsonSet = jsonSet || f.Name == "json" })
	a, err := sf.open(e, openExisting)
	if err != nil {
		return err
	}
	defer a.Close()
	r, err := store.Read(e.ctx, a.st, *conv, pos[0])
	if err != nil {
		var amb *store.AmbiguousIDError
		switch {
		case errors.As(err, &amb):
			more := ""
			if amb.More {
				more = ", …"
			}
			return failf("message id %q is in recall storage for several conversations (%s%s) in %s: name one with --conversation, "+
				"e.g. 'clipfold recall %s --conversation %s%s'", pos[0], strings.Join(amb.ConversationIDs, ", "), more, a.describe(),
				shellQuote(pos[0]), shellQuote(amb.ConversationIDs[0]), prefixSpace(a.flagArg))
		case errors.Is(err, store.ErrNotFound) && *conv != "":
			return failf("%q is neither a message in the recall storage of conversation %q nor an archived batch in %s "+
				"(drop --conversation to look in every conversation)", pos[0], *conv, a.describe())
		case errors.Is(err, store.ErrNotFound):
			return failf("%q is neither a message in recall storage nor an archived batch in %s: only messages a compaction "+
				"removed are there (the active history is shown by 'clipfold show CONVERSATION_ID'); batch ids are the "+
				"\"batch blk_…\" hits of 'clipfold search'", pos[0], a.describe())
		}
		return err
	}
	if r.Kind == store.HitMessage {
		_, err = fmt.Fprintf(e.stdout, "%s\n", r.Message.Raw)
		return err
	}
	b := r.Block
	summary := b.Content
	if b.Batch != nil {
		summary = b.Batch.Content
	}
	if jsonSet && *jsonOut {
		return printJSON(e.stdout, blockJSON{Kind: string(store.HitBatch), ID: b.ID, Label: b.Label, ConversationID: b.ConversationID,
			CreatedAt: optTime(b.CreatedAt), OperationID: b.OperationID, Reason: b.Reason, Batch: newBatchRef(b.Batch), Content: summary})
	}
	fmt.Fprintf(e.stdout, "batch %s  %s\n", b.ID, b.Label)
	if bt := b.Batch; bt != nil {
		fmt.Fprintf(e.stdout, "%s · depth %d · %d message(s) · %s", timeRange(bt.Start, bt.End), bt.Depth, bt.MessageCount, bt.Method)
	} else {
		fmt.Fprintf(e.stdout, "(no batch metadata)")
	}
	if b.ConversationID != "" {
		fmt.Fprintf(e.stdout, " · conversation %s", b.ConversationID)
	}
	fmt.Fprintf(e.stdout, "\narchived %s", optTime(b.CreatedAt))
	if b.OperationID != "" {
		fmt.Fprintf(e.stdout, " by %s", b.OperationID)
	}
	fmt.Fprintln(e.stdout)
	if bt := b.Batch; bt != nil {
		fmt.Fprintf(e.stdout, "sources: %s\n", strings.Join(bt.SourceMessageIDs, ", "))
	}
	_, err = fmt.Fprintf(e.stdout, "\n%s\n", summary)
	return err
}

// blockJSON is a batch printed by recall --json.
type blockJSON struct {
	Kind           string    `json:"kind"`
	ID             string    `json:"id"`
	Label          string    `json:"label"`
	ConversationID string    `json:"conversation_id,omitempty"`
	CreatedAt      string    `json:"created_at,omitempty"`
	OperationID    string    `json:"operation_id,omitempty"`
	Reason         string    `json:"reason,omitempty"`
	Batch          *batchRef `json:"batch,omitempty"`
	Content        string    `json:"content"`
}

func runVersion(e *env, args []string) error {
	fs := newFlags(e, versionCmd)
	var pf pluginFlags
	pf.register(fs)
	jsonOut := fs.Bool("json", false, "print the versions as JSON")
	if _, err := parse(e, versionCmd, fs, args, 0, 0); err != nil {
		return err
	}
	pl, err := loadPlugin(e, &pf, nil, nil, []byte("{}"), warner(e))
	if err != nil {
		return err
	}
	defer pl.Close(context.Background())
	_, raw, err := pl.call(e.ctx, "version", []byte(`{}`))
	if err != nil {
		return err
	}
	if *jsonOut {
		return printJSON(e.stdout, map[string]any{"clipfold": cliVersion, "go": runtime.Version(),
			"plugin": json.RawMessage(raw), "plugin_source": pl.source})
	}
	v := gjson.ParseBytes(raw)
	fmt.Fprintf(e.stdout, "clipfold %s (%s, %s/%s)\n", cliVersion, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(e.stdout, "plug-in  %s, ABI %d (%s)\n", v.Get("version").String(), v.Get("abi").Int(), describeSource(pl.source))
	return nil
}

func printJSON(w io.Writer, v any) error {
	b, err := marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

func idList(ids []string, max int) string {
	if len(ids) <= max {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:max], ", ") + fmt.Sprintf(", … (%d in all)", len(ids))
}

// cut shortens s to about n characters, marking the cut.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + fmt.Sprintf(" […%d more characters]", len(r)-n)
}

func oneLine(s string, n int) string {
	return cut(strings.Join(strings.Fields(s), " "), n)
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+pre)
}
