package clipfold

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs"
	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/internal/wasmhost"
	"github.com/tidwall/gjson"
)

// DefaultTargetShare is the target of the agent loop's compactions, a
// share of the limit: a compaction keeps the newest messages that fit in
// 80% of it (the plug-in's target_tokens).
const DefaultTargetShare = 0.8

// AheadOptions are CompactAhead's optional inputs.
type AheadOptions struct {
	// CallerOwned, Shape and Config are CompressOptions'.
	CallerOwned bool
	Shape       string
	Config      map[string]any
	// Usage is the provider's count of the last model call (see Usage),
	// for the first Usage.Messages messages of what the model was sent:
	// the History CompactAhead returned, then what followed it.
	Usage *Usage
	// TargetShare is the share of the limit a compaction compacts to,
	// keeping the newest messages that fit (0: DefaultTargetShare;
	// negative: to keep_recent). An explicit target_tokens in the config
	// wins.
	TargetShare float64
	// Now is the compactions' now (default: the clock).
	Now time.Time
}

// AheadResult is what CompactAhead did before a model call.
type AheadResult struct {
	// History is what to send the model: the messages given (for a
	// caller-owned list the compacted view of it; for a store-owned one
	// the store's active history), compacted when a compaction was
	// applied.
	History []json.RawMessage
	// Tokens, Limit and PrepareLimit are shouldCompact's count of History
	// and its thresholds.
	Tokens, Limit, PrepareLimit int
	// Compaction is the compaction applied at this call, prepared in the
	// background or run now; nil when none was.
	Compaction *Result
	// Prepared says Compaction was prepared in the background.
	Prepared bool
	// Waited is how long this call waited for a compaction: for the
	// rest of one under way in the background, or for one run now, at
	// the limit.
	Waited time.Duration
	// Started says a compaction started in the background at this call.
	Started bool
	// Discarded says why a compaction prepared in the background was
	// dropped ("" when none was): the history changed under it, another
	// compaction won, or it had nothing to apply.
	Discarded string
}

// CompactAhead is the agent loop's check before each model call, with
// compaction ahead of time (docs/spec.md#compaction-ahead-of-time). It
// counts history as the model will see it; over prepare_at of the limit
// (or sooner, when the history grows fast enough to reach the limit
// before a compaction would be done) it starts a compaction of the
// history as it is, in the background (a dry run on an instance of its
// own), and returns at once. A later call
// that finds it done applies it in one commit: the messages appended
// meanwhile stay after the new clip-archive, untouched. If the history
// changed under it (a message edited or removed, another compaction
// committed first) it is dropped, and nothing is lost. The agent waits
// only when the history reaches the limit before the background work is
// done, and then only for the rest of it; with none under way, the
// compaction runs at once, as Compress with OnlyIfDue would.
//
// history is as for Compress. A caller-owned list may be the History the
// last call returned with what followed it appended, or the caller's
// whole list, resent every turn (only what follows the last call's list
// is new). Compactions compact to TargetShare of the limit; one prepared
// ahead frees as much as the compaction at the limit would (its target
// is lower by the distance between the thresholds), so an agent makes
// no more compactions, and no more summarizer calls, than without it.
//
// Calls for one conversation take turns; other conversations go on
// beside them. Close waits for compactions under way.
func (c *Compactor) CompactAhead(ctx context.Context, conversationID string, history []json.RawMessage, opts *AheadOptions) (*AheadResult, error) {
	if conversationID == "" {
		return nil, errors.New("clipfold: CompactAhead: conversationID: must be a non-empty string")
	}
	if opts == nil {
		opts = &AheadOptions{}
	}
	if opts.CallerOwned && history == nil {
		return nil, errors.New("clipfold: CompactAhead: history: a caller-owned compaction needs the caller's messages")
	}
	st := c.ahead.get(conversationID)
	select {
	case st.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-st.turn }()
	out := &AheadResult{}
	view, err := c.aheadView(ctx, st, conversationID, history, opts)
	if err != nil {
		return nil, err
	}
	usage := opts.Usage
	if view == nil { // a caller-owned list seen for the first time, or changed
		if view, err = c.aheadEstablish(ctx, st, conversationID, history, opts, out); err != nil {
			return nil, err
		}
		usage = nil
	}
	if st.job != nil && st.job.finished() {
		if c.aheadApply(ctx, st, conversationID, &view, opts, out) {
			usage = nil
		}
	}
	due, err := c.aheadCount(ctx, view, usage, opts)
	if err != nil {
		return nil, err
	}
	st.observe(due.Tokens, out)
	if due.Due {
		start := time.Now()
		if st.job != nil {
			// The limit came first: wait for the rest of the work under way.
			select {
			case <-st.job.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if c.aheadApply(ctx, st, conversationID, &view, opts, out) {
				usage = nil
				if due, err = c.aheadCount(ctx, view, nil, opts); err != nil {
					return nil, err
				}
			}
		}
		if due.Due {
			if err := c.aheadNow(ctx, st, conversationID, &view, usage, opts, due.Limit, out); err != nil {
				return nil, err
			}
			if due, err = c.aheadCount(ctx, view, nil, opts); err != nil {
				return nil, err
			}
		}
		out.Waited = time.Since(start)
	} else if due.Tokens > min(due.PrepareLimit, due.Limit-2*st.expectedGrowth()) && st.job == nil && !st.idle {
		if st.job, err = c.aheadStart(ctx, conversationID, view, opts, c.aheadTarget(opts, due, st.expectedGrowth()), st); err != nil {
			return nil, err
		}
		out.Started = true
	}
	if due.Tokens <= due.PrepareLimit {
		st.idle = false
	}
	st.lastTokens = due.Tokens
	out.History, out.Tokens, out.Limit, out.PrepareLimit = view, due.Tokens, due.Limit, due.PrepareLimit
	if opts.CallerOwned {
		st.remember(history, view)
	}
	return out, nil
}

// aheadTarget is the target_tokens of a compaction prepared ahead of time
// (0: none, compact to keep_recent): the target of the one at the limit,
// lowered by the distance between the thresholds and by what the history
// is expected to grow by before it is applied, so that it frees as much;
// never below half the target at the limit (lower, the newest messages
// and the clip-archive may not fit a small window, and the compaction
// would fail where one at the limit succeeds).
func (c *Compactor) aheadTarget(opts *AheadOptions, due Due, growth int) int {
	t := c.nowTarget(opts, due.Limit)
	if t <= 0 {
		return t
	}
	return max((t+1)/2, t-(due.Limit-due.PrepareLimit)-growth)
}

// nowTarget is the target_tokens of a compaction at the limit: the
// config's own (opts.Config's, else the Compactor's), else TargetShare ×
// limit; 0 for none.
func (c *Compactor) nowTarget(opts *AheadOptions, limit int) int {
	cfg := mergeConfig(c.config, opts.Config)
	if t, ok := cfg["target_tokens"]; ok {
		switch n := t.(type) {
		case int:
			return n
		case float64:
			return int(n)
		}
		return 0
	}
	share := opts.TargetShare
	if share == 0 {
		share = DefaultTargetShare
	}
	if share < 0 || limit <= 0 {
		return 0
	}
	return max(1, int(share*float64(limit)))
}

func withTarget(cfg map[string]any, target int) map[string]any {
	out := make(map[string]any, len(cfg)+1)
	for k, v := range cfg {
		out[k] = v
	}
	if target > 0 {
		out["target_tokens"] = target
	}
	return out
}

// aheadView is the history to count: a caller-owned list mapped onto the
// view the last call returned (nil when it cannot be: the first call, or
// a list that changed); a store-owned one synced into the store, whose
// active history it is.
func (c *Compactor) aheadView(ctx context.Context, st *aheadConv, conversationID string, history []json.RawMessage, opts *AheadOptions) ([]json.RawMessage, error) {
	if opts.CallerOwned {
		return st.viewOf(history), nil
	}
	release, err := c.conversations.lock(ctx, conversationID)
	if err != nil {
		return nil, err
	}
	defer release()
	if history != nil {
		appended, err := c.sync(ctx, conversationID, history)
		if err != nil {
			return nil, err
		}
		if err := IndexActive(ctx, c.store, conversationID, appended); err != nil {
			c.warn("search index: the messages just appended are searched by their text alone: " + err.Error())
		}
	}
	active, err := c.store.ActiveMessages(ctx, conversationID)
	if err != nil {
		return nil, err
	}
	view := make([]json.RawMessage, len(active))
	for i := range active {
		view[i] = active[i].Raw
	}
	return view, nil
}

// aheadEstablish finds the view of a caller-owned list the state knows
// nothing of: compress computes it (the current clip-archive and the
// messages no archived batch covers), compacting now if it is due.
func (c *Compactor) aheadEstablish(ctx context.Context, st *aheadConv, conversationID string, history []json.RawMessage, opts *AheadOptions, out *AheadResult) ([]json.RawMessage, error) {
	start := time.Now()
	waited := st.job != nil
	if waited {
		// Prepared on a list this one does not continue: its instance is
		// the one this call compacts on.
		<-st.job.done
		st.job, out.Discarded = nil, "the history changed under it"
	}
	limit, err := c.aheadLimit(ctx, opts)
	if err != nil {
		return nil, err
	}
	res, err := c.compressOn(ctx, c.aheadInstances(true), conversationID, history, &CompressOptions{
		CallerOwned: true, OnlyIfDue: true, Shape: opts.Shape, Now: opts.Now,
		Config: withTarget(opts.Config, c.nowTarget(opts, limit))})
	if err != nil {
		return nil, err
	}
	if res.MessagesCompressed > 0 {
		out.Compaction, waited = res, true
		st.idle = false
	}
	if waited {
		out.Waited = time.Since(start)
	}
	return res.History, nil
}

// aheadLimit is shouldCompact's limit under opts' config.
func (c *Compactor) aheadLimit(ctx context.Context, opts *AheadOptions) (int, error) {
	due, err := c.ShouldCompact(ctx, nil, &ShouldCompactOptions{Config: opts.Config})
	return due.Limit, err
}

func (c *Compactor) aheadCount(ctx context.Context, view []json.RawMessage, usage *Usage, opts *AheadOptions) (Due, error) {
	if usage != nil && usage.Messages > len(view) {
		usage = nil // counted a list this one no longer holds
	}
	return c.ShouldCompact(ctx, view, &ShouldCompactOptions{Usage: usage, Config: opts.Config})
}

// aheadNow compacts view at the limit, on the instances of the
// background work (their breakers count every compaction of this loop).
func (c *Compactor) aheadNow(ctx context.Context, st *aheadConv, conversationID string, view *[]json.RawMessage, usage *Usage, opts *AheadOptions, limit int, out *AheadResult) error {
	var history []json.RawMessage
	if opts.CallerOwned {
		history = *view
	}
	res, err := c.compressOn(ctx, c.aheadInstances(true), conversationID, history, &CompressOptions{
		CallerOwned: opts.CallerOwned, OnlyIfDue: true, Shape: opts.Shape, Usage: usage, Now: opts.Now,
		Config: withTarget(opts.Config, c.nowTarget(opts, limit))})
	if err != nil {
		return err
	}
	out.Compaction, out.Prepared = res, false
	if !res.Failed && res.MessagesCompressed > 0 {
		*view = res.History
		st.idle = false
	} else if opts.CallerOwned && len(res.History) > 0 {
		*view = res.History // a failed caller-owned compaction answers the view
	}
	return nil
}

// aheadStart starts the compaction of view in the background: a dry run
// whose commit a later call applies. Its input is made now (for a
// store-owned history, the active history as stored now), so it compacts
// the very history this call counted.
func (c *Compactor) aheadStart(ctx context.Context, conversationID string, view []json.RawMessage, opts *AheadOptions, target int, st *aheadConv) (*aheadJob, error) {
	job := &aheadJob{done: make(chan struct{}), snapshot: slices.Clone(view)}
	cfg := withTarget(opts.Config, target)
	var history []json.RawMessage
	if opts.CallerOwned {
		history = job.snapshot
		// What the archive holds now: a compaction committed before this
		// one is applied makes it stale.
		ids, err := c.archiveIDs(ctx, conversationID)
		if err != nil {
			return nil, err
		}
		job.blocks = ids
	}
	o := &CompressOptions{CallerOwned: opts.CallerOwned, Shape: opts.Shape, Config: cfg, DryRun: true, Now: opts.Now}
	release, err := c.conversations.lock(ctx, conversationID)
	if err != nil {
		return nil, err
	}
	in, warning, err := c.compressInput(ctx, conversationID, history, o)
	release()
	if err != nil {
		return nil, err
	}
	bg := c.ahead.start()
	go func() {
		defer c.ahead.jobs.Done()
		defer close(job.done)
		job.res, job.err = c.runCompress(bg, c.aheadInstances(true), conversationID, in, warning, o, func() {})
	}()
	return job, nil
}

// archiveIDs lists the ids of the conversation's archived blocks:
// batches and replacement records.
func (c *Compactor) archiveIDs(ctx context.Context, conversationID string) ([]string, error) {
	var ids []string
	for _, prefix := range []string{core.BatchLabelPrefix(conversationID), core.ReplacedLabelPrefix(conversationID)} {
		blocks, err := c.store.ListBlocks(ctx, "archival", prefix)
		if err != nil {
			return nil, err
		}
		for _, b := range blocks {
			ids = append(ids, b.ID)
		}
	}
	return ids, nil
}

// aheadApply applies the finished background compaction to view, or
// drops it; it reports whether view changed.
func (c *Compactor) aheadApply(ctx context.Context, st *aheadConv, conversationID string, view *[]json.RawMessage, opts *AheadOptions, out *AheadResult) bool {
	job := st.job
	st.job = nil
	why, ok := job.applicable(*view, opts.CallerOwned)
	if ok && opts.CallerOwned {
		ids, err := c.archiveIDs(ctx, conversationID)
		if err != nil {
			why, ok = "listing the archive: "+err.Error(), false
		} else if !slices.Equal(ids, job.blocks) {
			why, ok = "another compaction committed first", false
		}
	}
	if ok {
		why, ok = c.commitPrepared(ctx, conversationID, job.res.Commit)
	}
	if !ok {
		out.Discarded = why
		if job.err != nil || job.res.Failed || len(job.res.Commit) == 0 {
			// Nothing to apply: no new attempt before the limit.
			st.idle = true
		}
		return false
	}
	res := job.res
	if opts.CallerOwned {
		// The compacted view, then everything that came after the list it
		// was prepared on.
		res.History = append(slices.Clip(res.History), (*view)[len(job.snapshot):]...)
	} else {
		active, err := c.store.ActiveMessages(ctx, conversationID)
		if err != nil {
			out.Discarded = "committed; reading the active history back: " + err.Error()
			return false
		}
		res.History = res.History[:0:0]
		for i := range active {
			res.History = append(res.History, active[i].Raw)
		}
	}
	*view = res.History
	out.Compaction, out.Prepared = res, true
	st.idle = false
	if c.embedder != nil && res.MessagesCompressed > 0 {
		// After the commit, outside it, as Compress does.
		if _, err := store.EmbedMissing(ctx, c.store, c.embedder, conversationID); err != nil {
			w := "embeddings: the archived messages and batches are not embedded yet (search embeds them later): " + err.Error()
			res.Warnings = append(res.Warnings, w)
			c.warn(w)
		}
	}
	return true
}

// commitPrepared sends a dry run's commit to the store, as the plug-in's
// compaction_commit would have: all or nothing; a store-owned history
// that lost a message it removes or replaces answers conflict.
func (c *Compactor) commitPrepared(ctx context.Context, conversationID string, commit json.RawMessage) (string, bool) {
	release, err := c.conversations.lock(ctx, conversationID)
	if err != nil {
		return err.Error(), false
	}
	defer release()
	h := &hostfuncs.Host{Store: c.store, Context: ctx}
	out, _ := h.CallHost("compaction_commit", commit)
	if e := gjson.GetBytes(out, "error"); e.Exists() {
		if e.Get("code").String() == "conflict" {
			return "the history changed under it (" + e.Get("message").String() + ")", false
		}
		return "the commit failed: " + e.Get("message").String(), false
	}
	return "", true
}

// aheadStates is CompactAhead's state of each conversation.
type aheadStates struct {
	mu   sync.Mutex
	m    map[string]*aheadConv
	jobs sync.WaitGroup
	// ctx is the background compactions' context, cancelled by Close:
	// a dry run stopped half-way has changed nothing.
	ctx    context.Context
	cancel context.CancelFunc
}

// start counts a background compaction in and returns its context.
func (a *aheadStates) start() context.Context {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ctx == nil {
		a.ctx, a.cancel = context.WithCancel(context.Background())
	}
	a.jobs.Add(1)
	return a.ctx
}

// maxAheadStates bounds the conversations whose state is kept: past it,
// the states with no compaction under way are dropped (a dropped
// conversation's next call finds its view anew).
const maxAheadStates = 1024

func (a *aheadStates) get(id string) *aheadConv {
	a.mu.Lock()
	defer a.mu.Unlock()
	if st := a.m[id]; st != nil {
		return st
	}
	if a.m == nil {
		a.m = map[string]*aheadConv{}
	}
	if len(a.m) >= maxAheadStates {
		for k, st := range a.m {
			if st.quiet() {
				delete(a.m, k)
			}
		}
	}
	st := &aheadConv{turn: make(chan struct{}, 1)}
	a.m[id] = st
	return st
}

// stop cancels the compactions under way and waits for them.
func (a *aheadStates) stop() {
	a.mu.Lock()
	if a.cancel != nil {
		a.cancel()
	}
	a.mu.Unlock()
	a.jobs.Wait()
}

// aheadConv is one conversation's state.
type aheadConv struct {
	turn chan struct{} // full while a call runs
	job  *aheadJob     // the compaction under way or done, not applied yet
	// idle: the last compaction prepared had nothing to apply; none is
	// started again before one is applied or the history falls under
	// the soft threshold.
	idle bool
	// How fast the history grows (expectedGrowth): the last call's count,
	// the tokens it added, and those added while the last prepared
	// compaction ran.
	lastTokens, growth, jobGrowth int
	// A caller-owned list: the view the last call returned, and the list
	// it was given.
	view  []json.RawMessage
	given []json.RawMessage
}

// expectedGrowth is what the history is expected to grow by while a
// compaction runs in the background: what it grew by while the last one
// ran, else what the last call added.
func (st *aheadConv) expectedGrowth() int {
	if st.jobGrowth > 0 {
		return st.jobGrowth
	}
	return st.growth
}

// observe records the growth a call finds: tokens is its count of the
// history, a prepared compaction applied (out), before anything else.
func (st *aheadConv) observe(tokens int, out *AheadResult) {
	if out.Compaction == nil && st.lastTokens > 0 && tokens > st.lastTokens {
		st.growth = tokens - st.lastTokens
	}
	if out.Prepared && out.Compaction != nil && !out.Compaction.Failed {
		st.jobGrowth = max(0, tokens-out.Compaction.TokensAfter)
	}
}

// quiet says the state can be dropped: no call, no compaction under way.
func (st *aheadConv) quiet() bool {
	select {
	case st.turn <- struct{}{}:
		defer func() { <-st.turn }()
		return st.job == nil || st.job.finished()
	default:
		return false
	}
}

// viewOf maps a caller-owned list onto the view the last call returned:
// that view and what follows it (the caller sends what it was given), or
// that view and what follows the list the last call was given (the
// caller resends its whole list). nil when the list continues neither.
func (st *aheadConv) viewOf(history []json.RawMessage) []json.RawMessage {
	switch {
	case st.view == nil:
		return nil
	case continues(history, st.view):
		return history
	case continues(history, st.given):
		return append(slices.Clip(st.view), history[len(st.given):]...)
	}
	return nil
}

func (st *aheadConv) remember(given, view []json.RawMessage) {
	st.given, st.view = given, view
}

// continues says list starts with prefix: as long, the same first and
// last message (messages already sent are not edited in place; a list
// that replaced them starts or ends elsewhere).
func continues(list, prefix []json.RawMessage) bool {
	n := len(prefix)
	if n == 0 || len(list) < n {
		return n == 0 && prefix != nil
	}
	return bytes.Equal(list[0], prefix[0]) && bytes.Equal(list[n-1], prefix[n-1])
}

// aheadJob is a compaction prepared in the background.
type aheadJob struct {
	done     chan struct{}
	snapshot []json.RawMessage // the view it compacts
	blocks   []string          // caller-owned: the archive's block ids when it started
	res      *Result
	err      error
}

func (j *aheadJob) finished() bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

// applicable says whether the finished job has a commit for view: it
// succeeded, and (caller-owned) view still begins with the very messages
// it compacted. A store-owned history is checked by the store's commit.
func (j *aheadJob) applicable(view []json.RawMessage, callerOwned bool) (string, bool) {
	switch {
	case j.err != nil:
		return "it failed: " + j.err.Error(), false
	case j.res.Failed:
		return fmt.Sprintf("it failed (%s): %s", j.res.FailureCode, j.res.FailureMessage), false
	case len(j.res.Commit) == 0:
		return "it had nothing to compact", false
	}
	if !callerOwned {
		return "", true
	}
	if len(view) < len(j.snapshot) {
		return "the history changed under it", false
	}
	for i := range j.snapshot {
		if !bytes.Equal(view[i], j.snapshot[i]) {
			return "the history changed under it", false
		}
	}
	return "", true
}

// aheadInstances is the pool CompactAhead's compactions run on (made
// when make is set and there is none yet).
func (c *Compactor) aheadInstances(make bool) *wasmhost.Pool {
	c.ahead.mu.Lock()
	defer c.ahead.mu.Unlock()
	if c.aheadPool == nil && make {
		c.aheadPool = wasmhost.NewPool(c.rt, c.poolSize)
	}
	return c.aheadPool
}

// hasAny says whether cfg sets any of keys.
func hasAny(cfg map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := cfg[k]; ok {
			return true
		}
	}
	return false
}
