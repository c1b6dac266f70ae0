package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clipfold/clipfold/internal/redact"
)

var runCmd = &command{
	name:    "run",
	args:    "FILE [--turns N] [flags]",
	summary: "replay a conversation turn by turn, compacting whenever it is due (the agent loop)",
	help: `Replays FILE as an agent would live it: one turn at a time (a user message and
everything up to the next user message), appending each turn to the archive,
then asking the plug-in's shouldCompact whether the history is over
context_budget × model_max_tokens, and compacting when it says so.

Each compaction compacts to a target, as an agent loop should: the history
ends near --target-share of the limit (default 0.8), with as many of the newest
messages as fit kept verbatim and only the older rest summarized (the plug-in's
target_tokens; keep_recent is the floor). --target-share 0 compacts to
keep_recent instead; an explicit --target-tokens (or target_tokens in the
config file) wins over the share.

--model-max-tokens makes a modest conversation trigger compactions, for a demo.
Every compact flag (--provider, --config, --chunk-size, …) applies, and FILE is
read as compact reads it (any message shape).

Exit status: 0 when the replay finished (a compaction that could not shrink the
history, no_gain, leaves it valid and is only reported), 1 when a compaction
failed otherwise (LLM, store), 2 usage or configuration error.

Examples:
  clipfold run testdata/conversations/debugging-session.json --model-max-tokens 20000
  clipfold run chat.json --turns 50 --context-budget 0.5 --db demo.db --json
  clipfold run chat.json --model-max-tokens 5000 --target-share 0.6`,
}

func init() { runCmd.run = runRun }

type runReport struct {
	ConversationID     string         `json:"conversation_id"`
	Provider           string         `json:"provider"`
	Turns              int            `json:"turns"`
	TurnsInFile        int            `json:"turns_in_file"`
	MessagesAppended   int            `json:"messages_appended"`
	Compactions        int            `json:"compactions"`
	CompactionsFailed  int            `json:"compactions_failed"`
	FailureCodes       map[string]int `json:"failure_codes"`
	Limit              int64          `json:"limit"`
	TargetTokens       int64          `json:"target_tokens"`
	PeakTokens         int64          `json:"peak_tokens"`
	FinalTokens        int64          `json:"final_tokens"`
	FinalMessages      int            `json:"final_messages"`
	MessagesCompressed int64          `json:"messages_compressed"`
	BatchesCreated     int64          `json:"batches_created"`
	DepthReached       int64          `json:"depth_reached"`
	LLMCalls           int            `json:"llm_calls"`
	Retries            int64          `json:"retries"`
	TotalMs            int64          `json:"total_ms"`
	LLMMs              int64          `json:"llm_ms"`
	PluginMs           int64          `json:"plugin_ms"`
	Archive            archiveReport  `json:"archive"`
	SearchHint         string         `json:"search_hint"`
	// Embeddings counts what was embedded after each compaction, when an
	// embeddings provider is configured; Error is the first failure.
	Embeddings *embeddingsReport `json:"embeddings,omitempty"`
}

func runRun(e *env, args []string) error {
	fs := newFlags(e, runCmd)
	var cf configFlags
	cf.register(fs, true)
	cf.keyFlag(fs, "model-max-tokens", "model_max_tokens", "the model's context window in tokens (model_max_tokens, default 200000)")
	cf.keyFlag(fs, "context-budget", "context_budget", "compact when the history exceeds this fraction of the window (context_budget, default 0.8)")
	var sf storeFlags
	sf.register(fs)
	var pf pluginFlags
	pf.register(fs)
	convFlag := fs.String("conversation", "", "store under this conversation `id` (default: the messages' conversation_id, else the file name)")
	turns := fs.Int("turns", 0, "replay at most `N` turns (default: all)")
	share := fs.Float64("target-share", 0.8, "compact to this `fraction` of the limit, keeping the newest messages that fit (0: to keep_recent)")
	quiet := fs.Bool("quiet", false, "no progress output")
	jsonOut := fs.Bool("json", false, "print the report as JSON on stdout")
	pos, err := parse(e, runCmd, fs, args, 1, 1)
	if err != nil {
		return err
	}
	if *turns < 0 {
		return usagef("--turns: must be an integer ≥ 0, got %d", *turns)
	}
	if !(*share >= 0 && *share <= 1) {
		return usagef("--target-share: must be a number in [0, 1], got %v", *share)
	}
	now, err := compactionNow(e) // a usage error, before any file is touched
	if err != nil {
		return err
	}
	warn := warner(e)
	s, client, conv, a, err := prepare(e, &cf, &sf, pos[0], *convFlag, openCreate, warn)
	if err != nil {
		return err
	}
	defer a.Close()
	ctx := e.ctx

	pl, err := loadPlugin(e, &pf, client, a.st, s.configJSON(), warn)
	if err != nil {
		return err
	}
	defer pl.Close(context.Background())

	all := splitTurns(conv.msgs)
	n := len(all)
	if *turns > 0 && *turns < n {
		n = *turns
	}
	rep := &runReport{ConversationID: conv.conversationID, Provider: s.provider, TurnsInFile: len(all),
		Archive: archiveReport{Backend: a.kind, Location: a.where}, FailureCodes: map[string]int{}}
	rep.SearchHint = "clipfold search QUERY --conversation " + shellQuote(conv.conversationID) + prefixSpace(a.flagArg)
	if s.embedder != nil {
		rep.Embeddings = &embeddingsReport{Provider: s.emb.provider, Model: s.emb.model}
	}

	history, ids, err := activeRaw(ctx, a, conv.conversationID)
	if err != nil {
		return err
	}
	prog := newProgress(e, *quiet)
	pl.stats.onLLM = func(time.Duration, bool) {}
	start := time.Now()
	var llmTime, hostTime time.Duration
	prog.begin("replaying "+conv.conversationID, 0)
	if prog.bar != nil {
		prog.bar.ChangeMax(n)
	}
	for t := 0; t < n; t++ {
		fresh, err := appendFresh(ctx, a.st, conv.conversationID, all[t])
		if err != nil {
			prog.end()
			return err
		}
		for _, m := range fresh {
			history = append(history, m.Raw)
			ids = append(ids, m.ID)
		}
		rep.MessagesAppended += len(fresh)
		rep.Turns++
		sc, _, err := pl.call(ctx, "shouldCompact", pl.messagesInput(history))
		if err != nil {
			prog.end()
			return err
		}
		tokens := sc.Get("tokens").Int()
		rep.Limit = sc.Get("limit").Int()
		if tokens > rep.PeakTokens {
			rep.PeakTokens = tokens
		}
		rep.FinalTokens = tokens
		if sc.Get("due").Bool() {
			pl.stats.reset()
			cfg := s.configJSON()
			target, add := targetTokens(s, *share, rep.Limit)
			rep.TargetTokens = target
			if add {
				cfg = withKey(cfg, "target_tokens", strconv.AppendInt(nil, target, 10))
			}
			res, _, err := pl.call(ctx, "compress", compressInput(conv.conversationID, history, ids, cfg, false, now))
			if err != nil {
				prog.end()
				return err
			}
			st := pl.stats.snapshot()
			rep.LLMCalls += st.llmCalls
			llmTime += st.llmTime
			hostTime += st.hostTime
			rep.Retries += res.Get("retries").Int()
			if res.Get("failed").Bool() {
				rep.CompactionsFailed++
				code := res.Get("failure_code").String()
				rep.FailureCodes[code]++
				if rep.FailureCodes[code] == 1 {
					prog.log("turn %d: compaction failed (%s): %s", t+1, code, res.Get("failure_message").String())
				}
			} else if res.Get("messages_compressed").Int() > 0 {
				rep.Compactions++
				rep.MessagesCompressed += res.Get("messages_compressed").Int()
				rep.BatchesCreated += res.Get("batches_created").Int()
				for _, b := range res.Get("batches").Array() {
					if d := b.Get("depth").Int(); d > rep.DepthReached {
						rep.DepthReached = d
					}
				}
				// What the store now holds, with the ids it holds it under.
				if history, ids, err = activeRaw(ctx, a, conv.conversationID); err != nil {
					prog.end()
					return err
				}
				rep.FinalTokens = res.Get("tokens_estimate_after").Int()
				if rep.Embeddings != nil {
					n, err := embedArchived(ctx, a.st, s.embedder, conv.conversationID)
					rep.Embeddings.Embedded += n
					if err != nil && rep.Embeddings.Error == "" {
						rep.Embeddings.Error = redact.Text(err.Error())
						prog.log("turn %d: embeddings failed (search embeds what is missing later): %v", t+1, err)
					}
				}
				prog.log("turn %d: compacted ~%s → ~%s tokens (%d LLM call(s))", t+1,
					commas(res.Get("tokens_estimate_before").Int()), commas(rep.FinalTokens), st.llmCalls)
			}
		}
		if prog.bar != nil {
			_ = prog.bar.Add(1)
		}
	}
	prog.end()
	total := time.Since(start)
	rep.FinalMessages = len(history)
	rep.TotalMs, rep.LLMMs = total.Milliseconds(), llmTime.Milliseconds()
	plugin := total - hostTime
	rep.PluginMs = plugin.Milliseconds()

	if *jsonOut {
		if err := printJSON(e.stdout, rep); err != nil {
			return err
		}
	} else {
		w := e.stdout
		fmt.Fprintf(w, "Replayed %d of %d turn(s) of %s with %s in %s\n", rep.Turns, rep.TurnsInFile, rep.ConversationID, rep.Provider, roundDur(total))
		fmt.Fprintf(w, "  compactions  %d", rep.Compactions)
		if rep.CompactionsFailed > 0 {
			fmt.Fprintf(w, " (+%d failed: %s)", rep.CompactionsFailed, countList(rep.FailureCodes))
		}
		fmt.Fprintf(w, ", due above ~%s tokens", commas(rep.Limit))
		if rep.TargetTokens > 0 {
			fmt.Fprintf(w, ", compacted to ~%s", commas(rep.TargetTokens))
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "  context      peak ~%s tokens, final ~%s tokens in %d messages\n", commas(rep.PeakTokens), commas(rep.FinalTokens), rep.FinalMessages)
		fmt.Fprintf(w, "  archived     %s message(s) in %d batch(es), depth reached %d\n", commas(rep.MessagesCompressed), rep.BatchesCreated, rep.DepthReached)
		fmt.Fprintf(w, "  LLM calls    %d, %d retries, %s in the LLM, %s in the plug-in and store\n", rep.LLMCalls, rep.Retries, roundDur(llmTime), roundDur(total-llmTime))
		fmt.Fprintf(w, "  archive      %s\n", describeArchive(rep.Archive))
		if em := rep.Embeddings; em != nil {
			fmt.Fprintf(w, "  embeddings   %d embedded with %s %s", em.Embedded, em.Provider, em.Model)
			if em.Error != "" {
				fmt.Fprintf(w, " (some failed; search embeds them later)")
			}
			fmt.Fprintln(w)
		}
		if rep.FailureCodes["no_gain"] > 0 {
			fmt.Fprintln(w, "  no_gain: the archive alone nearly fills the budget; raise --model-max-tokens or lower --max-summary-tokens.")
		}
		fmt.Fprintf(w, "Search what was compacted: %s\n", rep.SearchHint)
	}
	// A compaction that could not shrink the history (no_gain), and the
	// breaker that opens after it, leave a valid history: the loop goes
	// on. Anything else (the LLM, the store) is a failure.
	for code := range rep.FailureCodes {
		if code != "no_gain" && code != "breaker_open" {
			return errSilent
		}
	}
	return nil
}

// targetTokens is the target_tokens of the run's compactions: the
// configuration's own when it sets one, else share × limit, to be added
// to the config (add); 0 when the share is 0: compact to keep_recent.
func targetTokens(s *settings, share float64, limit int64) (target int64, add bool) {
	if _, set := s.set["target_tokens"]; set {
		return int64(s.cfg.TargetTokens), false
	}
	if share <= 0 || limit <= 0 {
		return 0, false
	}
	return max(1, int64(share*float64(limit))), true
}

// withKey adds "key":value to a JSON object.
func withKey(obj []byte, key string, value []byte) []byte {
	out := make([]byte, 0, len(obj)+len(key)+len(value)+4)
	out = append(out, obj[:len(obj)-1]...)
	if len(obj) > 2 {
		out = append(out, ',')
	}
	out = strconv.AppendQuote(out, key)
	out = append(out, ':')
	out = append(out, value...)
	return append(out, '}')
}

// countList prints {"a":2,"b":1} as "a ×2, b ×1", in a stable order.
func countList(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s ×%d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// splitTurns cuts messages into turns: each starts at a user message and
// runs up to the next one. Messages before the first user message (the
// system prompt) belong to the first turn.
func splitTurns(msgs []convMessage) [][]convMessage {
	var turns [][]convMessage
	var cur []convMessage
	seenUser := false
	for _, m := range msgs {
		if m.Role == "user" && seenUser && len(cur) > 0 {
			turns = append(turns, cur)
			cur = nil
		}
		if m.Role == "user" {
			seenUser = true
		}
		cur = append(cur, m)
	}
	if len(cur) > 0 {
		turns = append(turns, cur)
	}
	return turns
}
