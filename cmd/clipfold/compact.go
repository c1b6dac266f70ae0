package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/llm"
	"github.com/clipfold/clipfold/internal/redact"
	"github.com/tidwall/gjson"
)

var compactCmd = &command{
	name:    "compact",
	args:    "FILE [flags]",
	summary: "compact a conversation file and archive what was summarized",
	help: `FILE is a conversation: a JSON array or JSON Lines ('-' reads stdin) of
messages in any shape the plug-in reads (one shape per file): OpenAI Chat
(clipfold's own {id, conversation_id, role, content, tool_calls, tool_call_id,
created_at} is one), Anthropic Messages, OpenAI Responses input items, Vercel
AI SDK messages, LangChain message dicts; or one request body {"system",
"messages"}. Messages are stored and passed as they are: one without an id is
stored under an id derived from its content, one without created_at is dated
when it is compacted ($CLIPFOLD_NOW, an RFC 3339 time, fixes that instant).

The messages are stored in the archive (SQLite ./clipfold.db by default) under
the conversation id, then the plug-in's compress runs: old messages are
summarized by importance, the summaries archived, and replaced by one
clip-archive message. Running compact again on the same conversation continues
from the stored history, adding only the file's messages not stored yet.

Without flags it runs offline with the extractive summarizer. With a real LLM:
--provider anthropic|openai|openai-compat|ollama, --model, --base-url, and the
key in ANTHROPIC_API_KEY / OPENAI_API_KEY (or --api-key-env).

With --embeddings-provider openai|ollama and --embeddings-model (or an
[embeddings] section in --config), what the compaction archived is embedded
once it is stored, for 'clipfold search' by meaning; a failure there is a
warning (search embeds what is missing later), never a failed compaction.

Examples:
  clipfold compact testdata/conversations/debugging-session.json
  clipfold compact chat.jsonl -o compacted.jsonl --keep-recent 10
  clipfold compact chat.json --provider anthropic --model claude-3-5-haiku-latest
  clipfold compact chat.json --provider ollama --model llama3.2 --base-url http://localhost:11434
  clipfold compact chat.json --config config.toml --dry-run --json

Exit status: 0 success (also when there was nothing to compact), 1 failure
(the stored history is then untouched), 2 usage or configuration error.

Environment: CLIPFOLD_DB, CLIPFOLD_POSTGRES (archive), CLIPFOLD_WASM (plug-in),
CLIPFOLD_CACHE_DIR (compiled plug-in cache), CLIPFOLD_LOCK_TIMEOUT (how long to
wait for a locked database, default 5s), CLIPFOLD_NOW (the instant compactions
date messages without created_at at; default: now).`,
}

func init() { compactCmd.run = runCompact }

func runCompact(e *env, args []string) error {
	fs := newFlags(e, compactCmd)
	var cf configFlags
	cf.register(fs, true)
	var sf storeFlags
	sf.register(fs)
	var pf pluginFlags
	pf.register(fs)
	convFlag := fs.String("conversation", "", "store under this conversation `id` (default: the messages' conversation_id, else the file name)")
	outPath := fs.String("o", "", "write the compacted history to `FILE` in the input's format and message shape ('-': stdout, and the report goes to stderr)")
	dry := fs.Bool("dry-run", false, "compute everything, store nothing (the report shows what would happen)")
	quiet := fs.Bool("quiet", false, "no progress output")
	jsonOut := fs.Bool("json", false, "print the CompactionResult with a \"report\" object as JSON on stdout")
	pos, err := parse(e, compactCmd, fs, args, 1, 1)
	if err != nil {
		return err
	}
	if *jsonOut && *outPath == "-" {
		return usagef("--json and -o - both write to stdout: give -o a file name")
	}
	now, err := compactionNow(e) // a usage error, before any file is touched
	if err != nil {
		return err
	}
	mode := openCreate
	if *dry {
		mode = openDry
	}
	warn := warner(e)
	s, client, conv, a, err := prepare(e, &cf, &sf, pos[0], *convFlag, mode, warn)
	if err != nil {
		return err
	}
	defer a.Close()

	ctx := e.ctx
	fresh, err := appendNew(ctx, a.st, conv, *dry)
	if err != nil {
		return err
	}
	history, ids, err := activeRaw(ctx, a, conv.conversationID)
	if err != nil {
		return err
	}
	if *dry {
		for _, m := range fresh {
			history = append(history, m.Raw)
			ids = append(ids, m.ID)
		}
	}

	pl, err := loadPlugin(e, &pf, client, a.st, s.configJSON(), warn)
	if err != nil {
		return err
	}
	defer pl.Close(context.Background())

	prog := newProgress(e, *quiet)
	expected := 0
	if s.cfg.Summarizer != core.SummarizerExtractive {
		_, expected = pl.expectedCalls(ctx, history)
	}
	pl.stats.onLLM = prog.step
	pl.stats.reset()
	prog.begin("compacting "+conv.conversationID, expected)
	start := time.Now()
	res, raw, err := pl.call(ctx, "compress", compressInput(conv.conversationID, history, ids, s.configJSON(), *dry, now))
	took := time.Since(start)
	prog.end()
	if err != nil {
		return err
	}
	st := pl.stats.snapshot()

	rep := newReport(conv.conversationID, s, a, *dry)
	rep.MessagesRead = len(conv.msgs)
	rep.MessagesAppended = len(fresh)
	rep.MessagesBefore = len(history)
	rep.ExpectedLLMCalls = expected
	rep.fill(&res, st, took)
	if !res.Get("failed").Bool() && res.Get("messages_compressed").Int() > 0 {
		rep.ArchiveBatches, rep.ArchiveDepth = archiveBatches(ctx, a, conv.conversationID)
		if s.embedder != nil && !*dry {
			rep.Embeddings = &embeddingsReport{Provider: s.emb.provider, Model: s.emb.model}
			n, err := embedArchived(ctx, a.st, s.embedder, conv.conversationID)
			rep.Embeddings.Embedded = n
			if err != nil {
				rep.Embeddings.Error = redact.Text(err.Error())
				warn("embeddings: the archived messages and batches are not all embedded yet (search embeds them later): " + rep.Embeddings.Error)
			}
		}
	}

	failed := res.Get("failed").Bool()
	if !failed && *outPath != "" {
		if err := writeOutput(e, *outPath, conv.format, res.Get("history")); err != nil {
			return err
		}
		if *outPath != "-" {
			rep.Output = *outPath
		}
	}
	if *jsonOut {
		if err := writeJSONResult(e.stdout, raw, rep); err != nil {
			return err
		}
	} else {
		w := e.stdout
		if *outPath == "-" {
			w = e.stderr
		}
		if failed {
			w = e.stderr
		}
		rep.print(w, &res)
	}
	if failed {
		return errSilent
	}
	return nil
}

// openMode says whether a command may create the database.
type openMode int

const (
	openExisting openMode = iota // search, show, recall: the archive must exist; SQLite read-only
	openCreate                   // compact, run
	openDry                      // --dry-run: never write; an in-memory database if there is none
	// openEmbed: search with embeddings, which stores the vectors it
	// computes when it can: the archive must exist; written when the
	// user can, else read-only.
	openEmbed
)

// activeRaw is the conversation's active history as stored: each
// message's exact JSON, and the id it is stored under.
func activeRaw(ctx context.Context, a *archive, conv string) ([][]byte, []string, error) {
	msgs, err := a.st.ActiveMessages(ctx, conv)
	if err != nil {
		return nil, nil, fmt.Errorf("reading conversation %q: %w", conv, err)
	}
	out := make([][]byte, len(msgs))
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		out[i], ids[i] = m.Raw, m.ID
	}
	return out, ids, nil
}

// compactionNow is $CLIPFOLD_NOW, the instant compactions date messages
// without created_at at, or "" for now.
func compactionNow(e *env) (string, error) {
	s := e.getenv("CLIPFOLD_NOW")
	if s == "" {
		return "", nil
	}
	if _, err := core.ParseTime(s); err != nil {
		return "", usagef("CLIPFOLD_NOW: must be an RFC 3339 time like 2026-02-28T10:00:00Z, got %q", s)
	}
	return s, nil
}

// compressInput is compress's input for the stored history: its messages,
// and the ids the store keeps them under (history_ids: a message without
// an id of its own is stored under the id derived for it when it was
// read, which is the one compress must remove).
func compressInput(conv string, history [][]byte, ids []string, config []byte, dry bool, now string) []byte {
	n := 64 + len(config)
	for i, m := range history {
		n += len(m) + len(ids[i]) + 4
	}
	b := make([]byte, 0, n)
	b = append(b, `{"conversation_id":`...)
	b = strconv.AppendQuote(b, conv)
	b = append(b, `,"history":`...)
	b = appendArray(b, history)
	b = append(b, `,"history_ids":[`...)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, id)
	}
	b = append(b, `],"config":`...)
	b = append(b, config...)
	if dry {
		b = append(b, `,"dry_run":true`...)
	}
	if now != "" {
		b = append(b, `,"now":`...)
		b = strconv.AppendQuote(b, now)
	}
	return append(b, '}')
}

// archiveBatches counts the conversation's live batches and their maximum
// depth.
func archiveBatches(ctx context.Context, a *archive, conv string) (n, depth int) {
	blocks, err := a.st.ListBlocks(ctx, "archival", core.BatchLabelPrefix(conv))
	if err != nil {
		return 0, 0
	}
	for _, bl := range blocks {
		if b, ok := core.ParseBatchBlock(conv, bl.Label, bl.Content); ok {
			n++
			if b.Depth > depth {
				depth = b.Depth
			}
		}
	}
	return n, depth
}

func writeOutput(e *env, path, format string, history gjson.Result) error {
	var msgs []json.RawMessage
	for _, m := range history.Array() {
		msgs = append(msgs, json.RawMessage(m.Raw))
	}
	if path == "-" {
		return writeHistory(e.stdout, format, msgs)
	}
	if strings.HasSuffix(path, ".jsonl") || strings.HasSuffix(path, ".ndjson") {
		format = formatJSONL
	} else if strings.HasSuffix(path, ".json") {
		format = formatArray
	}
	f, err := os.Create(path)
	if err != nil {
		return failf("-o: %v", err)
	}
	if err := writeHistory(f, format, msgs); err != nil {
		f.Close()
		return failf("-o: writing %s: %v", path, err)
	}
	if err := f.Close(); err != nil {
		return failf("-o: writing %s: %v", path, err)
	}
	return nil
}

// writeJSONResult writes the CompactionResult with "report" added.
func writeJSONResult(w io.Writer, result []byte, rep any) error {
	r, err := marshal(rep)
	if err != nil {
		return err
	}
	res := strings.TrimRight(string(result), " \n")
	res = strings.TrimSuffix(res, "}")
	_, err = fmt.Fprintf(w, "%s,\"report\":%s}\n", res, r)
	return err
}

// prepare does what compact and run both start with: resolve the
// configuration, make the LLM client, read the conversation file and open
// the archive, in that order (so a usage or config error is reported
// before any file or database is touched).
func prepare(e *env, cf *configFlags, sf *storeFlags, path, convID string, mode openMode, warn func(string)) (*settings, llm.Client, *conversation, *archive, error) {
	s, err := cf.resolve(warn)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	client, err := s.client()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if s.embedder, err = s.emb.embedder(); err != nil {
		return nil, nil, nil, nil, err
	}
	conv, err := readConversation(path, e.stdin, convID)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	a, err := sf.open(e, mode)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return s, client, conv, a, nil
}
