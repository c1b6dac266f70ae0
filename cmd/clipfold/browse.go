package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"unicode/utf8"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/tidwall/gjson"
)

var searchCmd = &command{
	name:    "search",
	args:    "QUERY [flags]",
	summary: "ranked full-text search over archived summaries and compacted messages",
	help: `Searches the summaries compaction archived (each hit shows its batch label,
the time range it covers and the ids of the messages it summarizes) and the
original messages compaction moved to recall storage (shown with their id and
role). The words of QUERY must all match; search syntax characters are plain
text. Messages still in the active history are not searched: see 'clipfold show'.

Examples:
  clipfold search "connection leak"
  clipfold search "INC-4471 rollback" --conversation conv-checkout-inc-4471 --limit 5
  clipfold search refund --json`,
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
	args:    "MESSAGE_ID [flags]",
	summary: "print an original message that compaction removed, exactly as it was given",
	help: `Compaction never destroys a message: it moves it to recall storage. recall
prints it back as its exact original JSON. Find ids in the source_message_ids
that 'clipfold search' shows for each batch.

Examples:
  clipfold recall dbg-0042
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
	conv := fs.String("conversation", "", "only hits of this conversation `id`")
	limit := fs.Int("limit", 10, "at most `N` hits")
	jsonOut := fs.Bool("json", false, "print the hits as JSON")
	pos, err := parse(e, searchCmd, fs, args, 1, -1)
	if err != nil {
		return err
	}
	query := strings.Join(pos, " ")
	if len(store.QueryWords(query)) == 0 {
		return usagef("the query %q has no word to search for", query)
	}
	if *limit < 1 || *limit > store.MaxSearchLimit {
		return usagef("--limit: must be an integer in [1, %d], got %d", store.MaxSearchLimit, *limit)
	}
	a, err := sf.open(e, openExisting)
	if err != nil {
		return err
	}
	defer a.Close()
	hits, err := a.st.Search(e.ctx, query, store.SearchOptions{ConversationID: *conv, Limit: *limit})
	if err != nil {
		return fmt.Errorf("searching %s: %w", a.describe(), err)
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
		fmt.Fprintln(e.stdout, "Only compacted content is searched: summaries and the messages they replaced.")
		return nil
	}
	for i, h := range hits {
		fmt.Fprintf(e.stdout, "%d. ", i+1)
		if h.Kind == store.HitBatch {
			fmt.Fprintf(e.stdout, "batch %s\n", h.Label)
			if b := h.Batch; b != nil {
				fmt.Fprintf(e.stdout, "   %s → %s, depth %d, %d message(s), %s\n", core.FormatTime(b.Start), core.FormatTime(b.End),
					b.Depth, b.MessageCount, b.Method)
				fmt.Fprintf(e.stdout, "   sources: %s\n", idList(b.SourceMessageIDs, 12))
			}
		} else {
			fmt.Fprintf(e.stdout, "message %s (%s", h.ID, h.Role)
			if !h.CreatedAt.IsZero() {
				fmt.Fprintf(e.stdout, ", %s", core.FormatTime(h.CreatedAt))
			}
			fmt.Fprintf(e.stdout, ", conversation %s)\n", h.ConversationID)
		}
		fmt.Fprintf(e.stdout, "   %s\n", oneLine(h.Snippet, 300))
	}
	if *conv == "" {
		fmt.Fprintf(e.stdout, "\n%d hit(s). Print an original message with: clipfold recall MESSAGE_ID%s\n", len(hits), prefixSpace(a.flagArg))
	} else {
		fmt.Fprintf(e.stdout, "\n%d hit(s) in %s. Print an original message with: clipfold recall MESSAGE_ID%s\n", len(hits), *conv, prefixSpace(a.flagArg))
	}
	return nil
}

type hitJSON struct {
	Kind           string    `json:"kind"`
	ID             string    `json:"id"`
	Label          string    `json:"label,omitempty"`
	ConversationID string    `json:"conversation_id"`
	Role           string    `json:"role,omitempty"`
	Snippet        string    `json:"snippet"`
	Rank           float64   `json:"rank"`
	CreatedAt      string    `json:"created_at,omitempty"`
	OperationID    string    `json:"operation_id,omitempty"`
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

func searchJSON(query string, hits []store.Hit) any {
	out := make([]hitJSON, len(hits))
	for i, h := range hits {
		j := hitJSON{Kind: string(h.Kind), ID: h.ID, Label: h.Label, ConversationID: h.ConversationID, Role: h.Role,
			Snippet: h.Snippet, Rank: h.Rank, OperationID: h.OperationID}
		if !h.CreatedAt.IsZero() {
			j.CreatedAt = core.FormatTime(h.CreatedAt)
		}
		if b := h.Batch; b != nil {
			j.Batch = &batchRef{Depth: b.Depth, StartTime: core.FormatTime(b.Start), EndTime: core.FormatTime(b.End),
				MessageCount: b.MessageCount, SourceMessageIDs: b.SourceMessageIDs, Method: b.Method}
		}
		out[i] = j
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
		fmt.Fprintf(e.stdout, "\n#%d %s %s", i+1, m.Role, m.ID)
		if !m.CreatedAt.IsZero() {
			fmt.Fprintf(e.stdout, "  %s", core.FormatTime(m.CreatedAt))
		}
		fmt.Fprintln(e.stdout)
		content := m.Content
		isArchive := m.Role == "system" && strings.HasPrefix(content, core.ClipArchivePrefix)
		if !*full && !isArchive {
			content = cut(content, 400)
		}
		if content != "" {
			fmt.Fprintln(e.stdout, indent(content, "  "))
		}
		raw := gjson.ParseBytes(m.Raw)
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
	fs.Bool("json", true, "print the message's JSON (the default: recall always prints the exact original JSON)")
	pos, err := parse(e, recallCmd, fs, args, 1, 1)
	if err != nil {
		return err
	}
	a, err := sf.open(e, openExisting)
	if err != nil {
		return err
	}
	defer a.Close()
	m, err := a.st.Recall(e.ctx, pos[0])
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return failf("message %q is not in recall storage of %s: only messages a compaction removed are there "+
				"(the active history is shown by 'clipfold show CONVERSATION_ID')", pos[0], a.describe())
		}
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "%s\n", m.Raw)
	return err
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
