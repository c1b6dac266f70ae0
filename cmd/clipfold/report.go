package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/internal/redact"
	"github.com/tidwall/gjson"
)

// report is what compact prints at the end, and the "report" object of
// its --json output.
type report struct {
	ConversationID   string        `json:"conversation_id"`
	Provider         string        `json:"provider"`
	Model            string        `json:"model,omitempty"`
	DryRun           bool          `json:"dry_run"`
	MessagesRead     int           `json:"messages_read"`
	MessagesAppended int           `json:"messages_appended"`
	MessagesBefore   int           `json:"messages_before"`
	MessagesAfter    int           `json:"messages_after"`
	TokensBefore     int64         `json:"tokens_before"`
	TokensAfter      int64         `json:"tokens_after"`
	MessagesCompr    int64         `json:"messages_compressed"`
	BatchesCreated   int64         `json:"batches_created"`
	DepthReached     int64         `json:"depth_reached"`
	ArchiveBatches   int           `json:"archive_batches"`
	ArchiveDepth     int           `json:"archive_depth"`
	ExpectedLLMCalls int           `json:"expected_llm_calls"`
	LLMCalls         int           `json:"llm_calls"`
	LLMCallsFailed   int           `json:"llm_calls_failed"`
	Retries          int64         `json:"retries"`
	TotalMs          int64         `json:"total_ms"`
	LLMMs            int64         `json:"llm_ms"`
	StoreMs          int64         `json:"store_ms"`
	PluginMs         int64         `json:"plugin_ms"`
	Archive          archiveReport `json:"archive"`
	Output           string        `json:"output,omitempty"`
	SearchHint       string        `json:"search_hint"`
	// Embeddings says what was embedded after the commit, when an
	// embeddings provider is configured.
	Embeddings *embeddingsReport `json:"embeddings,omitempty"`

	total, llmTime, storeTime, pluginTime time.Duration
	llmError                              string // hostStats.llmError
}

type embeddingsReport struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Embedded int    `json:"embedded"`
	Error    string `json:"error,omitempty"`
}

type archiveReport struct {
	Backend  string `json:"backend"`
	Location string `json:"location"`
}

func newReport(conv string, s *settings, a *archive, dry bool) *report {
	r := &report{ConversationID: conv, Provider: s.provider, Model: s.model, DryRun: dry,
		Archive: archiveReport{Backend: a.kind, Location: a.where}}
	r.SearchHint = "clipfold search QUERY --conversation " + shellQuote(conv) + prefixSpace(a.flagArg)
	return r
}

// fill takes the numbers of one compress call.
func (r *report) fill(res *gjson.Result, st hostStats, took time.Duration) {
	r.MessagesAfter = len(res.Get("history").Array())
	r.TokensBefore = res.Get("tokens_estimate_before").Int()
	r.TokensAfter = res.Get("tokens_estimate_after").Int()
	r.MessagesCompr = res.Get("messages_compressed").Int()
	r.BatchesCreated = res.Get("batches_created").Int()
	for _, b := range res.Get("batches").Array() {
		if d := b.Get("depth").Int(); d > r.DepthReached {
			r.DepthReached = d
		}
	}
	r.LLMCalls = st.llmCalls
	r.llmError = st.llmError
	r.LLMCallsFailed = st.llmFailed
	r.Retries = res.Get("retries").Int()
	r.total, r.llmTime, r.storeTime = took, st.llmTime, st.storeTime
	r.pluginTime = took - st.hostTime
	if r.pluginTime < 0 {
		r.pluginTime = 0
	}
	r.TotalMs, r.LLMMs, r.StoreMs, r.PluginMs = took.Milliseconds(), st.llmTime.Milliseconds(),
		st.storeTime.Milliseconds(), r.pluginTime.Milliseconds()
}

func (r *report) print(w io.Writer, res *gjson.Result) {
	if res.Get("failed").Bool() {
		code := res.Get("failure_code").String()
		msg := redact.Text(res.Get("failure_message").String())
		fmt.Fprintf(w, "clipfold compact: compaction failed (%s): %s\n", code, msg)
		if hint := failureHint(code, r.llmError); hint != "" {
			fmt.Fprintf(w, "  %s\n", hint)
		}
		what := "stored history is"
		if r.DryRun {
			what = "archive is"
		}
		fmt.Fprintf(w, "  Nothing was changed: the %s untouched (%d messages, ~%s tokens; %d LLM call(s), %d retries).\n",
			what, r.MessagesBefore, commas(r.TokensBefore), r.LLMCalls, r.Retries)
		return
	}
	verb := "Compacted"
	if r.DryRun {
		verb = "Dry run (nothing stored):"
	}
	who := r.Provider
	if r.Model != "" && r.Provider != "extractive" {
		who += " " + r.Model
	}
	if r.MessagesCompr == 0 {
		fmt.Fprintf(w, "Nothing to compact in %s: %d messages, ~%s tokens, all recent (keep_recent) or pinned.\n",
			r.ConversationID, r.MessagesBefore, commas(r.TokensBefore))
		switch {
		case r.MessagesAppended > 0 && r.DryRun:
			fmt.Fprintf(w, "  Dry run: the %d new message(s) from the file were not stored; without --dry-run they would be stored in %s.\n",
				r.MessagesAppended, r.Archive.Location)
		case r.MessagesAppended > 0:
			fmt.Fprintf(w, "  %d new message(s) from the file were stored in %s.\n", r.MessagesAppended, r.Archive.Location)
		}
		return
	}
	fmt.Fprintf(w, "%s %s with %s in %s\n", verb, r.ConversationID, who, roundDur(r.total))
	fmt.Fprintf(w, "  messages   %s → %s  (%s compressed; %d new from the file)\n",
		commas(int64(r.MessagesBefore)), commas(int64(r.MessagesAfter)), commas(r.MessagesCompr), r.MessagesAppended)
	fmt.Fprintf(w, "  tokens     ~%s → ~%s  (%s)\n", commas(r.TokensBefore), commas(r.TokensAfter), percent(r.TokensBefore, r.TokensAfter))
	fmt.Fprintf(w, "  batches    %d created, depth reached %d", r.BatchesCreated, r.DepthReached)
	if r.ArchiveBatches > 0 {
		fmt.Fprintf(w, "  (archive now holds %d batch(es), max depth %d)", r.ArchiveBatches, r.ArchiveDepth)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  LLM calls  %d (expected ~%d), %d retries", r.LLMCalls, r.ExpectedLLMCalls, r.Retries)
	if r.LLMCallsFailed > 0 {
		fmt.Fprintf(w, ", %d failed", r.LLMCallsFailed)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  time       %s in the LLM, %s in the plug-in, %s in the store\n",
		roundDur(r.llmTime), roundDur(r.pluginTime), roundDur(r.storeTime))
	if r.DryRun {
		fmt.Fprintf(w, "  archive    %s (unchanged)\n", describeArchive(r.Archive))
	} else {
		fmt.Fprintf(w, "  archive    %s\n", describeArchive(r.Archive))
	}
	if e := r.Embeddings; e != nil {
		if e.Error != "" {
			fmt.Fprintf(w, "  embeddings %d embedded with %s %s, the rest failed (search embeds it later)\n", e.Embedded, e.Provider, e.Model)
		} else {
			fmt.Fprintf(w, "  embeddings %d embedded with %s %s\n", e.Embedded, e.Provider, e.Model)
		}
	}
	if r.Output != "" {
		fmt.Fprintf(w, "  output     %s\n", r.Output)
	}
	if !r.DryRun {
		fmt.Fprintf(w, "Search what was compacted:  %s\n", r.SearchHint)
		fmt.Fprintf(w, "Show the compacted history: clipfold show %s%s\n", shellQuote(r.ConversationID), prefixSpace(afterConv(r.SearchHint)))
	}
}

// afterConv returns the archive flags of a hint.
func afterConv(hint string) string {
	if i := strings.Index(hint, " --db "); i >= 0 {
		return hint[i+1:]
	}
	if i := strings.Index(hint, " --postgres "); i >= 0 {
		return hint[i+1:]
	}
	return ""
}

func describeArchive(a archiveReport) string {
	if a.Backend == "postgres" {
		return "PostgreSQL " + a.Location
	}
	return "SQLite " + a.Location
}

// failureHint says what to do about a failed compaction: code is its
// failure_code, llmError the code of the last model call that failed
// (hostStats.llmError).
func failureHint(code, llmError string) string {
	switch {
	case code == "llm_failed" && llmError == core.LLMUnavailable:
		return "Is the LLM server running, and is --base-url (base_url) right?"
	case code == "llm_failed" && llmError == core.LLMAuth:
		return "Check the API key (ANTHROPIC_API_KEY / OPENAI_API_KEY, or --api-key-env)."
	case code == "llm_timeout" || code == "deadline_exceeded":
		return "The LLM was too slow: raise compaction_timeout, or lower --chunk-size."
	case code == "commit_conflict":
		return "Another clipfold compacted this conversation at the same time; run the command again."
	case code == "no_gain":
		return "The summaries would not make the history smaller: lower --max-summary-tokens or raise --chunk-size."
	case code == "breaker_open":
		return "Too many compactions failed in a row; the circuit breaker lets one through after breaker_cooldown_ms."
	case code == "llm_failed":
		return "Use --fallback extractive to summarize offline when the LLM fails."
	}
	return ""
}

func percent(before, after int64) string {
	if before <= 0 {
		return "n/a"
	}
	p := float64(after-before) / float64(before) * 100
	return strconv.FormatFloat(p, 'f', 1, 64) + "%"
}

// commas writes n with thousands separators.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// explain turns a plain error into a sentence with advice where clipfold
// knows the cause.
func explain(err error) string {
	msg := err.Error()
	var ie *inputError
	switch {
	case errors.As(err, &ie):
		return msg
	case isBusy(err):
		return "the database is locked: another clipfold (or another program) may be running on it; wait for it to finish, or use another --db (" + msg + ")"
	}
	return msg
}
