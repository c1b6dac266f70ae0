package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clipfold/clipfold"
	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/internal/redact"
	"github.com/clipfold/clipfold/internal/waitstats"
	"github.com/tidwall/gjson"
)

var runCmd = &command{
	name:    "run",
	args:    "FILE [--turns N] [flags]",
	summary: "replay a conversation model call by model call, compacting whenever it is due (the agent loop)",
	help: `Replays FILE as an agent would live it: before each model call (each assistant
message: the model is called with everything before it, tool loops included;
and once after the last message, for the call that would come next), the
messages so far are appended to the archive and the plug-in's shouldCompact
says whether the history is over context_budget × model_max_tokens; when it
is, the history is compacted before the call. --turns N replays the first N
turns (a turn is a user message and everything up to the next one).

What the model is sent beside the messages counts too: a request body
{"system", "messages", "tools"} has its system prompt as the first message and
its tool schemas counted as overhead_tokens (unless the config sets it). An
assistant message that carries the provider's usage (LangChain's
usage_metadata.input_tokens, Anthropic's usage.input_tokens with its cache
tokens, OpenAI's usage.prompt_tokens) is the provider's count of the messages
before it: it replaces their estimate until the first compaction (after it,
the replayed context is no longer the one the provider counted).

Each compaction compacts to a target, as an agent loop should: the history
ends near --target-share of the limit (default 0.8), with as many of the newest
messages as fit kept verbatim and only the older rest summarized (the plug-in's
target_tokens; keep_recent is the floor). --target-share 0 compacts to
keep_recent instead; an explicit --target-tokens (or target_tokens in the
config file) wins over the share.

--ahead compacts ahead of time, as an agent that never waits for compaction
does: over --prepare-at of the limit (the config's prepare_at, default 0.7) a
compaction of the history as it is starts in the background and the replay
goes on; the first model call that finds it done applies it in one commit (the
messages stored meanwhile stay after the clip-archive). A model call waits only
when the history reaches the limit before the background work is done, and then
for the rest of it. --turn-interval D makes each turn start D after the one
before (the time an agent spends in its model calls and tools), so that the
background work has that time; the report gives each model call's wait.

--model-max-tokens makes a modest conversation trigger compactions, for a demo.
Every compact flag (--provider, --config, --chunk-size, …) applies, and FILE is
read as compact reads it (any message shape).

Exit status: 0 when the replay finished (a compaction that could not shrink the
history, no_gain, leaves it valid and is only reported), 1 when a compaction
failed otherwise (LLM, store), 2 usage or configuration error.

Examples:
  clipfold run testdata/conversations/debugging-session.json --model-max-tokens 20000
  clipfold run chat.json --turns 50 --context-budget 0.5 --db demo.db --json
  clipfold run chat.json --model-max-tokens 5000 --target-share 0.6
  clipfold run chat.json --model-max-tokens 20000 --ahead --turn-interval 2s --provider openai-compat`,
}

func init() { runCmd.run = runRun }

// runReport is what run reports. PeakTokens is the largest history at a
// model call before it was compacted; MaxContextTokens the largest a model
// call was sent (after compacting), and CallsOverLimit counts the model
// calls sent more than the limit (a compaction that failed).
type runReport struct {
	ConversationID     string         `json:"conversation_id"`
	Provider           string         `json:"provider"`
	Turns              int            `json:"turns"`
	TurnsInFile        int            `json:"turns_in_file"`
	MessagesAppended   int            `json:"messages_appended"`
	ModelCalls         int            `json:"model_calls"`
	Compactions        int            `json:"compactions"`
	CompactionsFailed  int            `json:"compactions_failed"`
	FailureCodes       map[string]int `json:"failure_codes"`
	Limit              int64          `json:"limit"`
	TargetTokens       int64          `json:"target_tokens"`
	OverheadTokens     int64          `json:"overhead_tokens"`
	PeakTokens         int64          `json:"peak_tokens"`
	MaxContextTokens   int64          `json:"max_context_tokens"`
	CallsOverLimit     int            `json:"calls_over_limit"`
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
	// Ahead is what --ahead did.
	Ahead *aheadReport `json:"ahead,omitempty"`
}

// aheadReport is what compaction ahead of time did: compactions started
// in the background, applied (prepared in the background) or run at the
// limit (none was under way), prepared ones dropped (the history changed
// under them, or nothing to apply), and how long model calls waited for
// compaction, in milliseconds: every model call's, and those at which a
// compaction was applied or run.
type aheadReport struct {
	Started          int            `json:"started"`
	Applied          int            `json:"applied"`
	AtLimit          int            `json:"at_limit"`
	Discarded        map[string]int `json:"discarded"`
	WaitMs           waitStats      `json:"wait_ms"`
	CompactionWaitMs waitStats      `json:"compaction_wait_ms"`
	waits, compWaits []time.Duration
}

// waitStats summarizes waits in milliseconds (internal/waitstats).
type waitStats = waitstats.Stats

func summarizeWaits(ws []time.Duration) waitStats { return waitstats.OfDurations(ws) }

// runFlags are run's own flags.
type runFlags struct {
	conv     *string
	turns    *int
	share    *float64
	ahead    *bool
	interval *time.Duration
	quiet    *bool
	json     *bool
}

// register adds run's own flags to fs.
func (f *runFlags) register(fs *flag.FlagSet) {
	f.conv = fs.String("conversation", "", "store under this conversation `id` (default: the messages' conversation_id, else the file name)")
	f.turns = fs.Int("turns", 0, "replay at most `N` turns (default: all)")
	f.share = fs.Float64("target-share", 0.8, "compact to this `fraction` of the limit, keeping the newest messages that fit (0: to keep_recent)")
	f.ahead = fs.Bool("ahead", false, "compact ahead of time: start compactions in the background over prepare_at of the limit, apply them when done")
	f.interval = fs.Duration("turn-interval", 0, "start each turn this `duration` after the one before (the agent's own time; with --ahead, the background work's)")
	f.quiet = fs.Bool("quiet", false, "no progress output")
	f.json = fs.Bool("json", false, "print the report as JSON on stdout")
}

// check is the usage error of a flag out of its range, if any.
func (f *runFlags) check() error {
	if *f.turns < 0 {
		return usagef("--turns: must be an integer ≥ 0, got %d", *f.turns)
	}
	if !(*f.share >= 0 && *f.share <= 1) {
		return usagef("--target-share: must be a number in [0, 1], got %v", *f.share)
	}
	if *f.interval < 0 {
		return usagef("--turn-interval: must be a duration ≥ 0, got %v", *f.interval)
	}
	return nil
}

// runRun replays a conversation file turn by turn, in steps: the flags,
// the store and the plug-in (prepare, loadPlugin); the replay set up
// (newReplayer); every turn's model call (replayTurns); then the report
// (finish, printRunReport) and the exit status (runStatus).
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
	var rf runFlags
	rf.register(fs)
	pos, err := parse(e, runCmd, fs, args, 1, 1)
	if err != nil {
		return err
	}
	if err := rf.check(); err != nil {
		return err
	}
	now, err := compactionNow(e) // a usage error, before any file is touched
	if err != nil {
		return err
	}
	warn := warner(e)
	s, client, conv, a, err := prepare(e, &cf, &sf, pos[0], *rf.conv, openCreate, warn)
	if err != nil {
		return err
	}
	defer a.Close()

	pl, err := loadPlugin(e, &pf, client, a.st, s.configJSON(), warn)
	if err != nil {
		return err
	}
	defer pl.Close(context.Background())

	r, err := newReplayer(e, &rf, s, conv, a, pl, now)
	if err != nil {
		return err
	}
	if err := r.start(); err != nil {
		return err
	}
	if err := r.replayTurns(); err != nil {
		r.prog.end()
		return err
	}
	total := r.finish()
	rep := r.rep
	if *rf.json {
		if err := printJSON(e.stdout, rep); err != nil {
			return err
		}
	} else {
		printRunReport(e.stdout, rep, total, r.llmTime)
	}
	return runStatus(rep)
}

// replayer is one replay of a conversation: the messages replayed and
// the turn of each, the history as the store holds it, the usage the
// next model call carries, and the report as it grows. Its methods are
// the steps of the replay, each once the same closure of runRun.
type replayer struct {
	e    *env
	ctx  context.Context
	rf   *runFlags
	s    *settings
	conv *conversation
	a    *archive
	pl   *plugin
	now  string
	rep  *runReport
	// replay holds the messages of the turns replayed (turns of them),
	// turnOf the turn (from 1) of each.
	replay []convMessage
	turnOf []int
	turns  int
	// usages are the provider's usage the file's messages carry, by id.
	usages map[string]int
	// callConfig is the configuration every call is sent.
	callConfig []byte
	// history and ids are the active history as the store holds it.
	history [][]byte
	ids     []string
	// asSent: the history is the file's messages as they were sent
	// (nothing compacted, nothing stored before), so the provider's usage
	// a message carries applies to it; usage is that usage.
	asSent bool
	usage  *clipfold.Usage
	prog   *progress
	// begun is when the replay began; llmTime and hostTime the time
	// spent in the LLM and in host functions.
	begun             time.Time
	llmTime, hostTime time.Duration
	aheadOpts         *clipfold.AheadOptions
	// pending is how many messages of replay are stored; turnStart and
	// curTurn when the current turn started, and which it is.
	pending   int
	turnStart time.Time
	curTurn   int
}

// newReplayer reads what the replay needs before any model call: the
// turns to replay, the usage the file's messages carry, the overhead of
// the file's tools, and the active history the store holds.
func newReplayer(e *env, rf *runFlags, s *settings, conv *conversation, a *archive, pl *plugin, now string) (*replayer, error) {
	ctx := e.ctx
	all := splitTurns(conv.msgs)
	n := len(all)
	if *rf.turns > 0 && *rf.turns < n {
		n = *rf.turns
	}
	rep := &runReport{ConversationID: conv.conversationID, Provider: s.provider, TurnsInFile: len(all),
		Archive: archiveReport{Backend: a.kind, Location: a.where}, FailureCodes: map[string]int{}}
	rep.SearchHint = "clipfold search QUERY --conversation " + shellQuote(conv.conversationID) + prefixSpace(a.flagArg)
	if s.embedder != nil {
		rep.Embeddings = &embeddingsReport{Provider: s.emb.provider, Model: s.emb.model}
	}
	r := &replayer{e: e, ctx: ctx, rf: rf, s: s, conv: conv, a: a, pl: pl, now: now, rep: rep, turns: n}
	for t := 0; t < n; t++ {
		r.replay = append(r.replay, all[t]...)
		for range all[t] {
			r.turnOf = append(r.turnOf, t+1)
		}
	}
	var err error
	if r.usages, err = fileUsages(conv.path, r.replay); err != nil {
		return nil, err
	}
	// What the model is sent beside the messages: the file's tool schemas
	// (its system prompt is its first message), unless the config sets
	// overhead_tokens.
	r.callConfig = s.configJSON()
	if _, set := s.set["overhead_tokens"]; !set && conv.tools != nil {
		overhead, err := pl.c.OverheadTokens(ctx, "", conv.tools)
		if err != nil {
			return nil, failf("counting the file's tools: %v", err)
		}
		rep.OverheadTokens = int64(overhead)
		r.callConfig = withKey(r.callConfig, "overhead_tokens", strconv.AppendInt(nil, int64(overhead), 10))
	}
	pl.config = r.callConfig

	if r.history, r.ids, err = activeRaw(ctx, a, conv.conversationID); err != nil {
		return nil, err
	}
	// The provider's usage a message carries is applied while the history
	// is the file's messages as they were sent (nothing compacted, nothing
	// stored before): after a compaction it counted a context the replay
	// no longer holds.
	r.asSent = len(r.history) == 0
	return r, nil
}

// start begins the replay: the progress bar over the model calls the
// replay makes, the clock, and with --ahead the options of every
// CompactAhead call.
func (r *replayer) start() error {
	calls := 0 // the model calls the replay makes: before each assistant message, and after the last message
	for i := range r.replay {
		if r.replay[i].Role == "assistant" && i > 0 {
			calls++
		}
	}
	calls++
	r.prog = newProgress(r.e, *r.rf.quiet)
	r.pl.stats.onLLM = func(time.Duration, bool) {}
	r.begun = time.Now()
	r.prog.begin("replaying "+r.conv.conversationID, 0)
	if r.prog.bar != nil {
		r.prog.bar.ChangeMax(calls)
	}
	if *r.rf.ahead {
		r.rep.Ahead = &aheadReport{Discarded: map[string]int{}}
		var cfg map[string]any
		if err := json.Unmarshal(r.callConfig, &cfg); err != nil {
			return failf("the configuration: %v", err)
		}
		r.aheadOpts = &clipfold.AheadOptions{Config: cfg, TargetShare: *r.rf.share}
		if *r.rf.share == 0 {
			r.aheadOpts.TargetShare = -1 // to keep_recent
		}
		if r.now != "" {
			t, _ := core.ParseTime(r.now) // checked by compactionNow
			r.aheadOpts.Now = t
		}
	}
	r.turnStart = time.Now()
	return nil
}

// replayTurns makes every model call of the replay: before each
// assistant message, with everything before it stored, and once more
// after the last message.
func (r *replayer) replayTurns() error {
	for i := range r.replay {
		if r.replay[i].Role != "assistant" || i == 0 {
			continue
		}
		if err := r.pace(r.turnOf[i]); err != nil {
			return err
		}
		// The model is called with everything before this answer.
		if err := r.appendPending(i); err != nil {
			return err
		}
		if err := r.modelCall(r.turnOf[i]); err != nil {
			return err
		}
	}
	// The history the next model call would be sent.
	if err := r.appendPending(len(r.replay)); err != nil {
		return err
	}
	return r.modelCall(r.turns)
}

// compacted takes in a compaction that changed the history: the
// report, and the history as the store now holds it.
func (r *replayer) compacted(turn int, res *clipfold.Result, llmCalls int) error {
	rep := r.rep
	rep.Compactions++
	rep.MessagesCompressed += int64(res.MessagesCompressed)
	rep.BatchesCreated += int64(res.BatchesCreated)
	for _, b := range res.Batches {
		rep.DepthReached = max(rep.DepthReached, int64(b.Depth))
	}
	var err error
	if r.history, r.ids, err = activeRaw(r.ctx, r.a, r.conv.conversationID); err != nil {
		return err
	}
	r.asSent, r.usage = false, nil
	rep.FinalTokens = int64(res.TokensAfter)
	if rep.Embeddings != nil {
		n, err := embedArchived(r.ctx, r.a.st, r.s.embedder, r.conv.conversationID)
		rep.Embeddings.Embedded += n
		if err != nil && rep.Embeddings.Error == "" {
			rep.Embeddings.Error = redact.Text(err.Error())
			r.prog.log("turn %d: embeddings failed (search embeds what is missing later): %v", turn, err)
		}
	}
	if llmCalls >= 0 {
		r.prog.log("turn %d: compacted ~%s → ~%s tokens (%d LLM call(s))", turn,
			commas(int64(res.TokensBefore)), commas(rep.FinalTokens), llmCalls)
	} else {
		r.prog.log("turn %d: compacted ~%s → ~%s tokens", turn, commas(int64(res.TokensBefore)), commas(rep.FinalTokens))
	}
	return nil
}

// failed counts a failed compaction, said once per failure code.
func (r *replayer) failed(turn int, code, msg string) {
	r.rep.CompactionsFailed++
	r.rep.FailureCodes[code]++
	if r.rep.FailureCodes[code] == 1 {
		r.prog.log("turn %d: compaction failed (%s): %s", turn, code, msg)
	}
}

// aheadCall is the check before a model call with --ahead.
func (r *replayer) aheadCall(turn int) error {
	rep := r.rep
	r.aheadOpts.Usage = r.usage
	start := time.Now()
	ah, err := r.pl.c.CompactAhead(r.ctx, r.conv.conversationID, nil, r.aheadOpts)
	took := time.Since(start)
	if err != nil {
		return failf("compacting ahead: %v", err)
	}
	ar := rep.Ahead
	ar.waits = append(ar.waits, took)
	if ah.Started {
		ar.Started++
	}
	if ah.Discarded != "" {
		why := ah.Discarded
		if i := strings.IndexAny(why, "(:"); i > 0 {
			why = strings.TrimSpace(why[:i])
		}
		ar.Discarded[why]++
	}
	rep.Limit = int64(ah.Limit)
	rep.PeakTokens = max(rep.PeakTokens, int64(ah.Tokens))
	rep.FinalTokens = int64(ah.Tokens)
	if res := ah.Compaction; res != nil {
		ar.compWaits = append(ar.compWaits, took)
		rep.TargetTokens, _ = targetTokens(r.s, *r.rf.share, rep.Limit)
		rep.Retries += int64(res.Retries)
		switch {
		case res.Failed:
			r.failed(turn, res.FailureCode, res.FailureMessage)
		case res.MessagesCompressed > 0:
			if ah.Prepared {
				ar.Applied++
			} else {
				ar.AtLimit++
			}
			if err := r.compacted(turn, res, -1); err != nil {
				return err
			}
			rep.FinalTokens = int64(ah.Tokens)
		}
	}
	if len(r.history) != len(ah.History) {
		if r.history, r.ids, err = activeRaw(r.ctx, r.a, r.conv.conversationID); err != nil {
			return err
		}
	}
	return nil
}

// modelCall is the check before a model call: the history as it
// would be sent, compacted first when it is due.
func (r *replayer) modelCall(turn int) error {
	rep := r.rep
	rep.ModelCalls++
	if r.aheadOpts != nil {
		if err := r.aheadCall(turn); err != nil {
			return err
		}
		r.sent()
		return nil
	}
	in := r.pl.messagesInput(r.history)
	if r.usage != nil {
		in = withKey(in, "usage", mustMarshal(r.usage))
	}
	sc, _, err := r.pl.call(r.ctx, "shouldCompact", in)
	if err != nil {
		return err
	}
	tokens := sc.Get("tokens").Int()
	rep.Limit = sc.Get("limit").Int()
	if tokens > rep.PeakTokens {
		rep.PeakTokens = tokens
	}
	rep.FinalTokens = tokens
	if sc.Get("due").Bool() {
		if err := r.compress(turn); err != nil {
			return err
		}
	}
	r.sent()
	return nil
}

// compress runs the compaction a model call found due.
func (r *replayer) compress(turn int) error {
	rep, pl := r.rep, r.pl
	pl.stats.reset()
	cfg := r.callConfig
	target, add := targetTokens(r.s, *r.rf.share, rep.Limit)
	rep.TargetTokens = target
	if add {
		cfg = withKey(cfg, "target_tokens", strconv.AppendInt(nil, target, 10))
	}
	in := compressInput(r.conv.conversationID, r.history, r.ids, cfg, false, r.now)
	if r.usage != nil {
		in = withKey(in, "usage", mustMarshal(r.usage))
	}
	res, raw, err := pl.call(r.ctx, "compress", in)
	if err != nil {
		return err
	}
	st := pl.stats.snapshot()
	rep.LLMCalls += st.llmCalls
	r.llmTime += st.llmTime
	r.hostTime += st.hostTime
	rep.Retries += res.Get("retries").Int()
	if res.Get("failed").Bool() {
		r.failed(turn, res.Get("failure_code").String(), res.Get("failure_message").String())
	} else if res.Get("messages_compressed").Int() > 0 {
		var cr clipfold.Result
		if err := json.Unmarshal(raw, &cr); err != nil {
			return failf("reading the compaction's result: %v", err)
		}
		// What the store now holds, with the ids it holds it under.
		if err := r.compacted(turn, &cr, st.llmCalls); err != nil {
			return err
		}
	}
	return nil
}

// sent counts what a model call is sent: the history as it now stands.
func (r *replayer) sent() {
	rep := r.rep
	if rep.FinalTokens > rep.MaxContextTokens {
		rep.MaxContextTokens = rep.FinalTokens
	}
	if rep.FinalTokens > rep.Limit {
		rep.CallsOverLimit++
	}
	if r.prog.bar != nil {
		_ = r.prog.bar.Add(1)
	}
}

// appendPending stores the messages of the replay not stored yet.
func (r *replayer) appendPending(upTo int) error {
	fresh, err := appendFresh(r.ctx, r.a.st, r.conv.conversationID, r.replay[r.pending:upTo])
	if err != nil {
		return err
	}
	if len(fresh) < upTo-r.pending {
		r.asSent, r.usage = false, nil // some were stored before: not the list the provider counted
	}
	for _, m := range fresh {
		if u, ok := r.usages[m.ID]; ok && r.asSent {
			r.usage = &clipfold.Usage{InputTokens: u, Messages: len(r.history)}
		}
		r.history = append(r.history, m.Raw)
		r.ids = append(r.ids, m.ID)
	}
	r.rep.MessagesAppended += len(fresh)
	r.pending = upTo
	return nil
}

// pace starts each turn --turn-interval after the one before.
func (r *replayer) pace(turn int) error {
	interval := *r.rf.interval
	if interval <= 0 || turn == r.curTurn {
		return nil
	}
	if r.curTurn != 0 {
		select {
		case <-time.After(time.Until(r.turnStart.Add(interval))):
		case <-r.ctx.Done():
			return failf("interrupted")
		}
	}
	r.turnStart, r.curTurn = time.Now(), turn
	return nil
}

// finish ends the replay and completes the report: turns, timings, the
// final history; it returns the replay's whole time.
func (r *replayer) finish() time.Duration {
	rep := r.rep
	rep.Turns = r.turns
	r.prog.end()
	total := time.Since(r.begun)
	if ar := rep.Ahead; ar != nil {
		// Every compaction's calls, those of one still under way included.
		st := r.pl.stats.snapshot()
		rep.LLMCalls, r.llmTime, r.hostTime = st.llmCalls, st.llmTime, st.hostTime
		ar.WaitMs, ar.CompactionWaitMs = summarizeWaits(ar.waits), summarizeWaits(ar.compWaits)
	}
	rep.FinalMessages = len(r.history)
	rep.TotalMs, rep.LLMMs = total.Milliseconds(), r.llmTime.Milliseconds()
	plugin := total - r.hostTime
	rep.PluginMs = plugin.Milliseconds()
	return total
}

// printRunReport writes run's report as text.
func printRunReport(w io.Writer, rep *runReport, total, llmTime time.Duration) {
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
	fmt.Fprintf(w, "  model calls  %d, the largest sent ~%s tokens", rep.ModelCalls, commas(rep.MaxContextTokens))
	if rep.CallsOverLimit > 0 {
		fmt.Fprintf(w, " (%d over the limit)", rep.CallsOverLimit)
	}
	if rep.OverheadTokens > 0 {
		fmt.Fprintf(w, ", ~%s of tools each", commas(rep.OverheadTokens))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  context      peak ~%s tokens, final ~%s tokens in %d messages\n", commas(rep.PeakTokens), commas(rep.FinalTokens), rep.FinalMessages)
	fmt.Fprintf(w, "  archived     %s message(s) in %d batch(es), depth reached %d\n", commas(rep.MessagesCompressed), rep.BatchesCreated, rep.DepthReached)
	fmt.Fprintf(w, "  LLM calls    %d, %d retries, %s in the LLM, %s in the plug-in and store\n", rep.LLMCalls, rep.Retries, roundDur(llmTime), roundDur(total-llmTime))
	if ar := rep.Ahead; ar != nil {
		fmt.Fprintf(w, "  ahead        %d started, %d applied, %d at the limit", ar.Started, ar.Applied, ar.AtLimit)
		if len(ar.Discarded) > 0 {
			fmt.Fprintf(w, ", dropped: %s", countList(ar.Discarded))
		}
		fmt.Fprintf(w, "; waits at compactions p50 %.1f ms, p95 %.1f ms, max %.1f ms\n", ar.CompactionWaitMs.P50, ar.CompactionWaitMs.P95, ar.CompactionWaitMs.Max)
	}
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

// runStatus is run's exit: a compaction that could not shrink the
// history (no_gain), and the breaker that opens after it, leave a valid
// history, so the loop went on; anything else (the LLM, the store) is a
// failure.
func runStatus(rep *runReport) error {
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

// fileUsages reads the provider's usage the assistant messages carry,
// by message id: the input tokens of the request that produced the
// message (LangChain's usage_metadata.input_tokens; an Anthropic
// message's usage.input_tokens plus its cache_creation_input_tokens and
// cache_read_input_tokens; OpenAI's usage.prompt_tokens). A count that
// is not an integer ≥ 0 is an error naming the message and the field.
func fileUsages(path string, msgs []convMessage) (map[string]int, error) {
	out := map[string]int{}
	for i := range msgs {
		m := &msgs[i]
		if m.Role != "assistant" {
			continue
		}
		r := gjson.ParseBytes(m.Raw)
		var fields []string
		switch {
		case r.Get("usage_metadata.input_tokens").Exists():
			fields = []string{"usage_metadata.input_tokens"}
		case r.Get("usage.input_tokens").Exists():
			fields = []string{"usage.input_tokens", "usage.cache_creation_input_tokens", "usage.cache_read_input_tokens"}
		case r.Get("usage.prompt_tokens").Exists():
			fields = []string{"usage.prompt_tokens"}
		default:
			continue
		}
		total, counted := 0, false
		for _, f := range fields {
			v := r.Get(f)
			if !v.Exists() || v.Type == gjson.Null {
				continue
			}
			n, err := strconv.Atoi(v.Raw)
			if v.Type != gjson.Number || err != nil || n < 0 || n > math.MaxInt32 {
				return nil, &inputError{path: path, msg: fmt.Sprintf("message %d: %s: must be an integer ≥ 0, got %s", i+1, f, v.Raw)}
			}
			total += n
			counted = true
		}
		if counted {
			out[m.ID] = min(total, math.MaxInt32)
		}
	}
	return out, nil
}
