package core

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// Failure codes of a CompactionResult (docs/spec.md#compactionresult).
const (
	FailLLM         = "llm_failed"
	FailLLMTimeout  = "llm_timeout"
	FailBreakerOpen = "breaker_open"
	FailConflict    = "commit_conflict"
	FailHost        = "host_error"
	FailDeadline    = "deadline_exceeded"
	FailInvalidSumm = "invalid_summary"
	FailNoGain      = "no_gain"
	FailOverWindow  = "over_window"
)

// conflictMsg begins the failure_message of a commit_conflict: the store
// answered that what the commit removes or deletes is gone.
const conflictMsg = "another compaction of this conversation won (nothing was changed)"

// CompressInput is one compress call.
type CompressInput struct {
	ConversationID string
	// History: every message needs an ID (the api layer gives messages
	// without one their derived id, AssignIDs); one without CreatedAt is
	// dated at the compaction's now.
	History []Message
	// Shape is how the history is written, which decides how the
	// clip-archive is written (AppendClipArchive).
	Shape  HistoryShape
	Config Config
	DryRun bool
	// Now is the caller's clock reading (input "now",
	// docs/spec.md#compress-input); zero means ask the Clock port.
	Now         time.Time
	OperationID string // required; the api layer generates one when absent
	// HistoryOwner is OwnerStore ("" too) or OwnerCaller
	// (docs/spec.md#who-owns-the-history).
	HistoryOwner string
	// OnlyIfDue compacts only when the history (for a caller-owned one,
	// its compacted view) is due as ShouldCompact says; otherwise the
	// result is "nothing to compress". For hosts that call compress on
	// every turn.
	OnlyIfDue bool
	// Usage is the provider's count for the first messages of History
	// (docs/spec.md#counting-tokens-and-the-window); the api layer checks it
	// against the history.
	Usage Usage
}

// Ports are the compress pipeline's view of the world.
type Ports struct {
	LLM       LLM
	Memory    Memory
	Committer Committer
	Clock     Clock
	Breakers  *Breakers
	// Rewriter renders cleared and truncated messages in their shape;
	// without one, kept messages are never replaced (the window is then
	// kept by summarizing alone).
	Rewriter Rewriter
}

// CompressResult is the outcome of Compress. History is described, not
// rendered: Insert (when non-nil) is the new clip-archive message, first
// (InsertRaw is its JSON), followed by the messages of History at the
// indices in Kept. History is the input history, or for a caller-owned
// history its compacted view (see Compress). On failure Insert is nil and
// Kept holds every index, so the history is returned byte-for-byte.
type CompressResult struct {
	History             []Message
	Insert              *InsertMessage
	InsertRaw           []byte
	Kept                []int
	BatchesCreated      int
	MessagesCompressed  int
	TokensBefore        int
	TokensAfter         int
	Failed              bool
	FailureCode         string
	FailureMessage      string
	OperationID         string
	LLMCalls            int
	Retries             int
	LLMTime             time.Duration // time spent waiting for llm_complete
	Batches             []Batch       // written by this compaction
	Warnings            []string
	ConsecutiveFailures int
	Commit              *Commit // the commit sent, or that would be sent on a dry run
	// ToolResultsCleared and MessagesTruncated count the kept messages'
	// replacements: tool results cleared, messages middle-truncated.
	ToolResultsCleared int
	MessagesTruncated  int
}

// failure is an error that ends a compaction with a failure code.
type failure struct {
	code, msg string
}

func (f *failure) Error() string { return f.code + ": " + f.msg }

func fail(code, msg string) *failure { return &failure{code, msg} }

// Compress runs the compaction pipeline of docs/spec.md#pipeline: split →
// chunk in importance order → fold-in summarization through the LLM port →
// list archived batches → re-summarize by depth when too many → clip-archive →
// exactly one commit. The only durable effect is that commit; on any failure
// before it the result carries the input history untouched.
//
// Messages without a created_at are dated at the compaction's now (the
// input's, else the clock's): batch times and dated summary lines follow.
//
// With a caller-owned history (docs/spec.md#who-owns-the-history) the archived
// batches are listed first, and unless the history starts with a clip-archive
// (the caller replaced its list with a compacted one), messages the live
// batches already cover and clip-archives are left out: the pipeline runs on
// the compacted view, the current clip-archive (built from the live batches)
// followed by the uncovered messages, and returns it, compacted further when
// something is due; see callerView.
func Compress(in *CompressInput, p Ports) CompressResult {
	c := &in.Config
	now := in.Now
	if now.IsZero() {
		now = p.Clock.Now()
	}
	for i := range in.History {
		if m := &in.History[i]; !m.HasCreatedAt {
			m.CreatedAt = now
		}
	}
	r := CompressResult{History: in.History, OperationID: in.OperationID, TokensBefore: ContextTokens(in.History, c, &in.Usage)}
	conv := in.ConversationID
	if p.Breakers == nil {
		p.Breakers = &Breakers{}
	}
	if !p.Breakers.allow(conv, now, c) {
		r.failWith(in, fail(FailBreakerOpen, "the last "+strconv.Itoa(p.Breakers.Failures(conv))+
			" compactions of this conversation failed; retrying after a cooldown of "+
			strconv.Itoa(c.BreakerCooldownMs)+" ms"))
		r.ConsecutiveFailures = p.Breakers.Failures(conv)
		return r
	}
	// The deadline runs on the clock (the input "now" may be any instant
	// the caller chose for the breaker; elapsed time is the clock's).
	run := &run{in: in, c: c, p: p, res: &r, at: now, extractive: c.Summarizer == SummarizerExtractive, overhead: Overhead(in.History, c, &in.Usage),
		deadline: p.Clock.Now().Add(time.Duration(c.CompactionTimeoutMs) * time.Millisecond)}
	err := run.compress()
	switch {
	case err != nil:
		r.failWith(in, err)
		if countsForBreaker(r.FailureCode) {
			p.Breakers.fail(conv, now)
		}
	case r.Commit != nil:
		p.Breakers.succeed(conv)
	}
	r.ConsecutiveFailures = p.Breakers.Failures(conv)
	return r
}

// failWith turns r into a failure that returns the input untouched.
func (r *CompressResult) failWith(in *CompressInput, err error) {
	f, ok := err.(*failure)
	if !ok {
		f = fail(FailHost, err.Error())
	}
	r.Failed, r.FailureCode, r.FailureMessage = true, f.code, f.msg
	r.Insert, r.InsertRaw, r.Kept = nil, nil, Identity(len(r.History))
	r.BatchesCreated, r.MessagesCompressed, r.Batches = 0, 0, nil
	r.TokensAfter = r.TokensBefore
}

type run struct {
	in       *CompressInput
	c        *Config
	p        Ports
	res      *CompressResult
	deadline time.Time
	// live are the archived batches once listed (listed).
	live   []liveBatch
	listed bool
	// records are a caller-owned history's replacement records.
	records []ReplacedRecord
	// at is the compaction's now (the input's, else the clock's).
	at time.Time
	// foldAll: the window leaves the clip-archive room for one batch
	// only, so every live batch is re-summarized into one (plan).
	foldAll bool
	// extractive is set when summarizer is "extractive", or once the LLM
	// has failed and fallback is on: the rest of this compaction is
	// summarized extractively, inside the plug-in.
	extractive bool
	// overhead is what every count of a changed history adds to its
	// messages' estimate (Overhead): overhead_tokens, or what the
	// provider's usage says is there beside the messages.
	overhead int
}

// liveBatch is a batch with the archival block id it came from ("" for a
// batch this compaction creates).
type liveBatch struct {
	Batch
	blockID string
}

// compaction is what the steps of one compaction hand on to each other:
// the history and its split, the edits of kept messages, the window, what
// is summarized and kept with the summaries' caps, then the batches made
// (created), the batches the clip-archive shows (live) and the archive
// writes and deletes.
type compaction struct {
	hist             []Message
	split            SplitResult
	ed               *edits
	window           int
	compress, keep   []int
	maxSum, resumSum int
	created          []Batch
	live             []liveBatch
	writes           []Batch
	deletes          []string
}

// compress runs one compaction, in steps: read a caller-owned list
// (viewCallerList); stop when nothing is due; split the history and try
// tool-result clearing alone (clearOnly); choose what to summarize
// (chooseSummarized), or only edit when nothing is (editOnly); summarize
// it chunk by chunk (summarizeChunks); re-summarize the batches that
// outgrow the clip window (foldBatches); and commit the clip-archive with
// the new history (commitArchive).
func (u *run) compress() error {
	in, c := u.in, u.c
	if in.HistoryOwner == OwnerCaller {
		if err := u.viewCallerList(); err != nil {
			return err
		}
	}
	hist := u.res.History
	if in.OnlyIfDue {
		if u.res.TokensBefore <= u.limit() { // not due (ShouldCompact)
			return u.nothing(hist)
		}
	}
	window := u.window()
	if c.TargetTokens > 0 && u.res.TokensBefore <= c.TargetTokens {
		return u.nothing(hist)
	}
	job := &compaction{hist: hist, split: Split(hist, c), window: window}
	job.ed = u.newEdits(hist, &job.split)
	if u.res.TokensBefore > window {
		if err := job.ed.checkPinned(window); err != nil {
			return err
		}
	}
	if done, err := u.clearOnly(job); done {
		return err
	}
	if err := u.chooseSummarized(job); err != nil {
		return err
	}
	if len(job.compress) == 0 {
		return u.editOnly(job)
	}
	if err := u.summarizeChunks(job); err != nil {
		return err
	}
	if err := u.foldBatches(job); err != nil {
		return err
	}
	return u.commitArchive(job)
}

// viewCallerList reads what a caller-owned history already had compacted
// and replaced (the live batches and the replacement records, listed on
// every call) and makes u.res.History the view of the caller's list
// that the compaction works on. A step of its own: only a caller-owned
// history has it.
func (u *run) viewCallerList() error {
	// The live batches say what the caller's list already had
	// compacted, the replacement records what it had replaced: list
	// them first, on every call.
	if err := u.ensureListed(); err != nil {
		return err
	}
	var err error
	if u.records, err = u.listRecords(); err != nil {
		return err
	}
	view := u.callerView(u.res.History, u.live)
	if len(view) != len(u.res.History) || (len(view) > 0 && &view[0] != &u.res.History[0]) {
		// The provider's count was of the caller's list, not of this
		// view: count the view with the overhead it implies.
		u.res.TokensBefore = u.overhead + HistoryTokens(view, u.c)
	}
	u.res.History = view
	return nil
}

// nothing ends a compaction that has nothing to do: every message kept,
// no gain. Nothing to compress is not a failure, and calls nothing more.
func (u *run) nothing(hist []Message) error {
	u.res.Kept = Identity(len(hist))
	u.res.TokensAfter = u.res.TokensBefore
	return nil
}

// clearOnly is the first stage, tool-result clearing, often enough on its
// own: when clear_tool_results is set and clearing makes the whole
// history fit the window, it commits that and reports done (with the
// commit's error). A step of its own because it ends the compaction
// before anything is chosen or summarized.
func (u *run) clearOnly(job *compaction) (done bool, err error) {
	c := u.c
	if c.ClearToolResults != ClearToolResultsUnset && job.ed.clearAllBut(c.ClearToolResults) {
		all := Identity(len(job.hist))
		if u.toTokens(AddCounts(u.overheadSize(), job.ed.keptSize(all))) <= job.window {
			return true, u.commitEdits(job.ed, all)
		}
	}
	return false, nil
}

// chooseSummarized decides what is summarized (job.compress) and kept
// (job.keep), and the caps of the chunk summaries and the
// re-summarization: the split's choice, or target_tokens'
// (selectForTarget), then the window's promise (plan). A step of its
// own: everything after it follows from its choice.
func (u *run) chooseSummarized(job *compaction) error {
	c := u.c
	compress, keep := job.split.ToCompress, job.split.ToKeep
	maxSum, resumSum := c.MaxSummaryTokens, c.MaxSummaryTokens
	if c.TargetTokens > 0 {
		maxSum, resumSum = u.summaryCaps(c.TargetTokens, job.ed.pinnedSize())
	}
	if c.TargetTokens > 0 && len(compress) > 0 {
		// The archive this compaction will produce decides how much
		// fits: list the live batches first.
		if err := u.ensureListed(); err != nil {
			return err
		}
		compress, keep = u.selectForTarget(job.split, u.live, maxSum, resumSum, job.ed)
	}
	// The window is a promise: make the kept messages fit beside the
	// archive (clear, then summarize more, then truncate).
	compress, keep, err := u.plan(&job.split, compress, keep, job.ed, &maxSum, &resumSum)
	if err != nil {
		return err
	}
	job.compress, job.keep, job.maxSum, job.resumSum = compress, keep, maxSum, resumSum
	return nil
}

// editOnly ends a compaction that summarizes nothing: the kept messages
// get the replacements the window needs, committed when there are any.
func (u *run) editOnly(job *compaction) error {
	kept := Identity(len(job.hist))
	if err := u.settle(job.ed, kept, 0, job.window); err != nil {
		return err
	}
	if job.ed.changed(kept) {
		return u.commitEdits(job.ed, kept)
	}
	return u.nothing(job.hist)
}

// summarizeChunks summarizes job.compress chunk by chunk, folding each
// summary into the next, into job.created. A timeout re-chunks the
// remaining work at half the size. A step of its own: the only one that
// calls the summarizer for new messages.
func (u *run) summarizeChunks(job *compaction) error {
	in, c, hist, compress := u.in, u.c, job.hist, job.compress
	split, maxSum, resumSum := &job.split, job.maxSum, job.resumSum
	prev := ""
	if split.Prior >= 0 {
		prev = hist[split.Prior].Content
	}
	var created []Batch
	size, maxTok := c.ChunkSize, c.ChunkTokens()
	chunks := chunkUnits(hist, compress, size, maxTok, &split.units, c)
	done := 0 // messages of compress summarized so far
	// chunk_size may be anything up to MaxInt: never allocate more than
	// the messages there are.
	msgs := make([]Message, 0, min(size, len(compress)))
	folded := u.foldedChunks(hist, chunks, u.live, u.listed)
	for k := 0; k < len(chunks); {
		ch := chunks[k]
		msgs = msgs[:0]
		for _, i := range ch {
			msgs = append(msgs, hist[i])
		}
		capTok := maxSum
		if folded[k] {
			// Re-summarized in this very compaction: the fold chooses
			// what stays, so it gets the room to choose from.
			capTok = max(maxSum, resumSum)
		}
		text, method, err := u.summarizeChunk(prev, msgs, capTok, u.canShrink(size, maxTok, ch))
		if err != nil {
			if f, ok := err.(*failure); ok && f.code == FailLLMTimeout && u.canShrink(size, maxTok, ch) {
				// Timeout: re-chunk the remaining work at half the size.
				u.res.Retries++
				size, maxTok = u.shrink(size, maxTok)
				u.res.Warnings = append(u.res.Warnings, "summarization timed out; re-chunking the remaining "+
					strconv.Itoa(len(compress)-done)+" messages at half the chunk size")
				chunks, k = chunkUnits(hist, compress[done:], size, maxTok, &split.units, c), 0
				folded = u.foldedChunks(hist, chunks, append(u.live[:len(u.live):len(u.live)], batchesAsLive(created)...), u.listed)
				continue
			}
			return err
		}
		created = append(created, newBatch(text, method, msgs, in.OperationID))
		prev = text
		done += len(ch)
		k++
	}
	job.created = created
	return nil
}

// foldBatches puts the new batches among the conversation's live ones in
// time order and, when they outgrow the clip window (or the window
// leaves room for one batch only), re-summarizes the older ones into one
// (foldOld): job.live is what the clip-archive shows, job.writes and
// job.deletes the archive's changes.
func (u *run) foldBatches(job *compaction) error {
	c, created := u.c, job.created
	// Existing batches of this conversation.
	if err := u.ensureListed(); err != nil {
		return err
	}
	live := append([]liveBatch(nil), u.live...)
	for _, b := range created {
		live = append(live, liveBatch{Batch: b})
	}
	slices.SortStableFunc(live, func(a, b liveBatch) int { return a.Start.Compare(b.Start) })

	// Re-summarize when the batches outgrow the clip window.
	writes := created
	var deletes []string
	// len(live) > clip_first + clip_last + 2, without the sum (it wraps
	// around on 32-bit ints for large clip values); or every batch into
	// one when the window leaves room for no more.
	clipLast := c.ClipLast
	if u.foldAll {
		clipLast = 0
	}
	if n := len(live) - 2; (n > c.ClipFirst && n-c.ClipFirst > c.ClipLast) || (u.foldAll && len(live) > 1) {
		live, writes, deletes = u.foldOld(live, writes, clipLast, job.resumSum)
	}
	job.live, job.writes, job.deletes = live, writes, deletes
	return nil
}

// foldOld re-summarizes the live batches but the last clipLast into one
// batch: the live batches become it and those last ones, the writes it
// and those of them not yet archived, the deletes the archived batches
// it replaces. A failed re-summarization is a warning: live and writes
// are returned as they are, and the new batches are committed unfolded.
// A step of its own: the only one that calls the summarizer on batches.
func (u *run) foldOld(live []liveBatch, writes []Batch, clipLast, resumSum int) ([]liveBatch, []Batch, []string) {
	var deletes []string
	old := live[:len(live)-clipLast]
	contents := make([]string, len(old))
	for i := range old {
		contents[i] = old[i].Content
	}
	text, method, err := u.resummarize(contents, resumSum)
	if err != nil {
		u.res.Warnings = append(u.res.Warnings, "re-summarization failed, the new batches are committed as they are: "+err.Error())
		return live, writes, deletes
	}
	rb := mergeBatches(old, text, method, u.in.OperationID)
	writes = []Batch{rb}
	for _, b := range live[len(live)-clipLast:] {
		if b.blockID == "" {
			writes = append(writes, b.Batch)
		}
	}
	for _, b := range old {
		if b.blockID != "" {
			deletes = append(deletes, b.blockID)
		}
	}
	live = append([]liveBatch{{Batch: rb}}, live[len(live)-clipLast:]...)
	return live, writes, deletes
}

// commitArchive writes the clip-archive of job.live, settles the kept
// messages beside it, checks that the compacted history is smaller, and
// sends the commit (newCommit); then it fills in the result.
func (u *run) commitArchive(job *compaction) error {
	in, c, hist, ed, keep := u.in, u.c, job.hist, job.ed, job.keep
	ins, content := u.clipArchive(job.live)
	insRaw := AppendClipArchive(nil, in.Shape, ins, ArchiveAsUser(ed.msgs, keep))
	// Now that the archive is known, the kept messages get exactly the
	// replacements they need to fit beside it.
	if err := u.settle(ed, keep, u.archiveTextSize(content), job.window); err != nil {
		return err
	}
	// The gain is in the messages: the overhead is the same before and
	// after.
	msgsAfter, msgsBefore := keptTokens(ed.msgs, keep, content, c), HistoryTokens(hist, c)
	after := AddCounts(u.overhead, msgsAfter)
	if msgsAfter >= msgsBefore {
		return fail(FailNoGain, "the compacted history would be "+strconv.Itoa(msgsAfter)+
			" estimated tokens, not below the "+strconv.Itoa(msgsBefore)+" it is now")
	}
	if err := u.send(u.newCommit(job, ins, insRaw)); err != nil {
		return err
	}
	u.res.Insert, u.res.InsertRaw = ins, insRaw
	u.res.Kept = keep
	u.res.Batches = job.writes
	u.res.BatchesCreated = len(job.created)
	u.res.MessagesCompressed = len(job.compress)
	u.res.TokensAfter = after
	ed.report(keep)
	return nil
}

// clipArchive is the clip-archive message showing the batches live, and
// its content.
func (u *run) clipArchive(live []liveBatch) (*InsertMessage, string) {
	in, c := u.in, u.c
	shown := make([]Batch, len(live))
	total := 0
	for i := range live {
		shown[i] = live[i].Batch
		total += live[i].MessageCount
	}
	content := BuildClipArchive(shown, c.ClipFirst, c.ClipLast, total)
	ins := &InsertMessage{
		ConversationID: in.ConversationID,
		Role:           RoleSystem,
		Content:        content,
		CreatedAt:      shown[0].Start,
	}
	ins.ID = ClipArchiveID(in.ConversationID, ins)
	return ins, content
}

// newCommit is the compaction's commit: the archive's writes and
// deletes, the clip-archive, and what leaves the history (removed and
// indexed for a store-owned history, written to recall for a
// caller-owned one), with the kept messages' replacements.
func (u *run) newCommit(job *compaction, ins *InsertMessage, insRaw []byte) *Commit {
	in, hist, split, compress, keep, writes, ed := u.in, job.hist, &job.split, job.compress, job.keep, job.writes, job.ed
	commit := &Commit{ConversationID: in.ConversationID, OperationID: in.OperationID, ArchiveDeletes: job.deletes, Insert: *ins,
		InsertRaw: insRaw, HistoryOwner: OwnerStore}
	for i := range writes {
		reason := "Archived during context compaction"
		if writes[i].Depth > 0 {
			reason = "Re-summarized during context compaction"
		}
		commit.ArchiveWrites = append(commit.ArchiveWrites, ArchiveWrite{
			Label: BatchLabel(in.ConversationID, &writes[i]), Content: FormatBatchBlock(in.ConversationID, &writes[i]),
			Tier: "archival", Reason: reason})
	}
	if in.HistoryOwner == OwnerCaller {
		commit.HistoryOwner = OwnerCaller
		commit.RemoveMessageIDs = []string{}
		commit.RecallWrites = u.recallWrites(hist, split.Prior, compress, ed.replaced(keep))
	} else {
		commit.SearchText = make([]SearchText, 0, len(compress)+1)
		if split.Prior >= 0 && hist[split.Prior].ID != "" {
			commit.RemoveMessageIDs = append(commit.RemoveMessageIDs, hist[split.Prior].ID)
			commit.SearchText = append(commit.SearchText, SearchText{MessageID: hist[split.Prior].ID}) // superseded: not indexed
		}
		for _, k := range compress {
			commit.RemoveMessageIDs = append(commit.RemoveMessageIDs, hist[k].ID)
			commit.SearchText = append(commit.SearchText, SearchText{MessageID: hist[k].ID, Text: u.searchTextAt(hist, k)})
		}
	}
	ed.addReplacements(commit, keep)
	return commit
}

// searchTextAt is what a store indexes for hist[k] once it is in recall
// storage: MessageSearchTextAt, or nothing for a replacement, whose
// original is indexed already.
func (u *run) searchTextAt(hist []Message, k int) string {
	if IsReplacement(&hist[k]) {
		return ""
	}
	return MessageSearchTextAt(hist, k)
}

// send commits c, unless this is a dry run.
func (u *run) send(commit *Commit) error {
	u.res.Commit = commit
	if u.in.DryRun {
		return nil
	}
	if u.now().After(u.deadline) {
		return fail(FailDeadline, "compaction_timeout of "+strconv.Itoa(u.c.CompactionTimeoutMs)+" ms passed before the commit")
	}
	if err := u.p.Committer.Commit(commit); err != nil {
		if e, ok := err.(*Error); ok && e.Code == ErrConflict.Code {
			return fail(FailConflict, conflictMsg+": "+e.Msg)
		}
		return fail(FailHost, "compaction_commit: "+err.Error())
	}
	return nil
}

// commitEdits commits a compaction that summarizes nothing and only
// replaces kept messages (kept: every index of the history): no batch,
// no new clip-archive, no LLM call.
func (u *run) commitEdits(ed *edits, kept []int) error {
	in := u.in
	commit := &Commit{ConversationID: in.ConversationID, OperationID: in.OperationID, NoInsert: true, HistoryOwner: OwnerStore,
		RemoveMessageIDs: []string{}}
	if in.HistoryOwner == OwnerCaller {
		commit.HistoryOwner = OwnerCaller
		commit.RecallWrites = u.recallWrites(ed.hist, -1, nil, ed.replaced(kept))
	} else {
		commit.SearchText = []SearchText{}
	}
	ed.addReplacements(commit, kept)
	if err := u.send(commit); err != nil {
		return err
	}
	u.res.Kept = kept
	u.res.TokensAfter = AddCounts(u.overhead, HistoryTokens(ed.msgs, u.c))
	ed.report(kept)
	return nil
}

// recallWrites are the messages a caller-owned compaction removes or
// replaces, in history order: the prior clip-archive (not indexed:
// superseded), every compressed message, and the original of every
// replaced one.
func (u *run) recallWrites(hist []Message, prior int, compress, replaced []int) []RecallWrite {
	gone := make([]bool, len(hist))
	for _, k := range compress {
		gone[k] = true
	}
	for _, k := range replaced {
		gone[k] = true
	}
	if prior >= 0 {
		gone[prior] = true
	}
	out := make([]RecallWrite, 0, len(compress)+len(replaced)+1)
	for k := range hist {
		if !gone[k] {
			continue
		}
		m := &hist[k]
		w := RecallWrite{ID: m.ID, Role: m.Role, Content: m.Content, CreatedAt: m.CreatedAt, Raw: m.Raw}
		if k != prior {
			w.SearchText = u.searchTextAt(hist, k)
		}
		out = append(out, w)
	}
	return out
}

// foldedChunks reports which chunks' batches this compaction will
// re-summarize right away (when it is known: the live batches were
// listed first, as a target_tokens compaction does): every new batch
// but those among the last clip_last by start time, once the batches
// outgrow clip_first + clip_last + 2. A batch whose start ties the
// last shown one's counts as shown.
func (u *run) foldedChunks(hist []Message, chunks [][]int, live []liveBatch, listed bool) []bool {
	folded := make([]bool, len(chunks))
	c := u.c
	if !listed {
		return folded
	}
	n := len(live) + len(chunks) - 2
	if n <= c.ClipFirst || n-c.ClipFirst <= c.ClipLast {
		return folded
	}
	starts := make([]time.Time, 0, len(live)+len(chunks))
	for i := range live {
		starts = append(starts, live[i].Start)
	}
	chunkStart := make([]time.Time, len(chunks))
	for k, ch := range chunks {
		for j, i := range ch {
			if t := hist[i].CreatedAt; j == 0 || t.Before(chunkStart[k]) {
				chunkStart[k] = t
			}
		}
		starts = append(starts, chunkStart[k])
	}
	if c.ClipLast == 0 {
		return slices.Repeat([]bool{true}, len(chunks))
	}
	slices.SortFunc(starts, func(a, b time.Time) int { return b.Compare(a) }) // latest first
	shown := starts[min(c.ClipLast, len(starts))-1]
	for k := range chunks {
		folded[k] = chunkStart[k].Before(shown)
	}
	return folded
}

func batchesAsLive(bs []Batch) []liveBatch {
	out := make([]liveBatch, len(bs))
	for i := range bs {
		out[i] = liveBatch{Batch: bs[i]}
	}
	return out
}

// callerView is the history a caller-owned compaction works on. A list
// that starts with a clip-archive is already compacted (the caller
// replaced its messages with a result's history and appended new ones):
// it is used as it is. Otherwise the caller sends its whole list every
// turn, and the view is the current clip-archive, built from the live
// batches as the commit that wrote them built it, followed by the
// messages no live batch covers (by id, given or derived), clip-archives
// left out: what was compacted is never summarized twice, and the same
// list sent again gives the same view.
func (u *run) callerView(hist []Message, live []liveBatch) []Message {
	hist, orig := u.applyRecords(hist)
	if len(hist) > 0 && IsClipArchive(&hist[0]) {
		return hist
	}
	covered := map[string]bool{}
	for i := range live {
		for _, id := range live[i].SourceMessageIDs {
			covered[id] = true
		}
	}
	skip := func(i int) bool {
		m := &hist[i]
		return covered[m.ID] || (orig != nil && orig[i] != "" && covered[orig[i]]) || IsClipArchive(m) || IsArchiveTurn(m)
	}
	dropped := false
	for i := range hist {
		if skip(i) {
			dropped = true
			break
		}
	}
	if len(live) == 0 && !dropped {
		return hist
	}
	view := make([]Message, 0, len(hist)+1)
	var ins InsertMessage
	if len(live) > 0 {
		shown := make([]liveBatch, len(live))
		copy(shown, live)
		slices.SortStableFunc(shown, func(a, b liveBatch) int { return a.Start.Compare(b.Start) })
		batches := make([]Batch, len(shown))
		total := 0
		for i := range shown {
			batches[i] = shown[i].Batch
			total += shown[i].MessageCount
		}
		ins = InsertMessage{ConversationID: u.in.ConversationID, Role: RoleSystem,
			Content: BuildClipArchive(batches, u.c.ClipFirst, u.c.ClipLast, total), CreatedAt: batches[0].Start}
		ins.ID = ClipArchiveID(u.in.ConversationID, &ins)
		view = append(view, Message{ID: ins.ID, ConversationID: ins.ConversationID, Role: RoleSystem, Content: ins.Content,
			CreatedAt: ins.CreatedAt, HasCreatedAt: true})
	}
	for i := range hist {
		if !skip(i) {
			view = append(view, hist[i])
		}
	}
	if len(live) > 0 {
		// Written once what follows it is known (ArchiveAsUser).
		view[0].Raw = AppendClipArchive(nil, u.in.Shape, &ins, ArchiveAsUser(view[1:], nil))
	}
	return view
}

// applyRecords re-renders, in a caller's list, the replacements this
// conversation's records hold (see ReplacedRecord): a message whose id and
// content digest a record names gets the record's edit, again and again
// while records name what it became. orig[i] is the id message i had
// before (nil when nothing was replaced). A message the caller already
// holds replaced (it replaced its list with a result's history) has
// another digest and stays as it is.
func (u *run) applyRecords(hist []Message) (_ []Message, orig []string) {
	if len(u.records) == 0 || u.p.Rewriter == nil {
		return hist, nil
	}
	conv := u.in.ConversationID
	byID := make(map[string][]*ReplacedRecord, len(u.records))
	for i := range u.records {
		r := &u.records[i]
		byID[r.ID] = append(byID[r.ID], r)
	}
	out := hist
	for i := range hist {
		m := hist[i]
		if IsClipArchive(&m) {
			continue
		}
		first, changed := m.ID, false
		for step := 0; step <= len(u.records); step++ {
			recs := byID[m.ID]
			if len(recs) == 0 {
				break
			}
			d := ContentDigest(conv, &m)
			var e *Edit
			for _, r := range recs {
				if r.Digest == d {
					e = &r.Edit
					break
				}
			}
			if e == nil {
				break
			}
			p, ok := u.p.Rewriter.Rewrite(conv, &m, e)
			if !ok {
				break
			}
			m, changed = p, true
		}
		if !changed {
			continue
		}
		if orig == nil {
			out = slices.Clone(hist)
			orig = make([]string, len(hist))
		}
		out[i], orig[i] = m, first
	}
	return out, orig
}

// listRecords reads this conversation's replacement records
// (memory_list); blocks under the prefix that are not this
// conversation's records are left alone.
func (u *run) listRecords() ([]ReplacedRecord, error) {
	conv := u.in.ConversationID
	blocks, err := u.p.Memory.List("archival", ReplacedLabelPrefix(conv))
	if err != nil {
		return nil, fail(FailHost, "memory_list: "+err.Error())
	}
	var out []ReplacedRecord
	for _, bl := range blocks {
		if recs, ok := ParseReplacedBlock(conv, bl.Content); ok {
			out = append(out, recs...)
		}
	}
	return out, nil
}

// ensureListed lists the archived batches once.
func (u *run) ensureListed() error {
	if u.listed {
		return nil
	}
	live, err := u.listBatches()
	if err != nil {
		return err
	}
	u.live, u.listed = live, true
	return nil
}

// belongsElsewhere reports whether a label under conv's prefix belongs to
// another conversation whose id extends conv's ("c1" vs "c1-x"): its
// remainder after the prefix is not a bare timestamp.
func belongsElsewhere(conv, label string) bool {
	rest := strings.TrimPrefix(label, BatchLabelPrefix(conv))
	_, err := ParseTime(rest)
	return err != nil
}

// listBatches reads this conversation's archived batches (memory_list).
func (u *run) listBatches() ([]liveBatch, error) {
	conv := u.in.ConversationID
	blocks, err := u.p.Memory.List("archival", BatchLabelPrefix(conv))
	if err != nil {
		return nil, fail(FailHost, "memory_list: "+err.Error())
	}
	var live []liveBatch
	for _, bl := range blocks {
		b, ok := ParseBatchBlock(conv, bl.Label, bl.Content)
		if !ok {
			if strings.HasPrefix(bl.Label, BatchLabelPrefix(conv)) && !belongsElsewhere(conv, bl.Label) {
				why := ""
				if _, _, problem := ParseBlock(bl.Content); problem != "" {
					why = " (" + problem + ")"
				}
				u.res.Warnings = append(u.res.Warnings, "archival block "+bl.ID+" ("+bl.Label+") is not a readable batch"+why+"; left alone")
			}
			continue
		}
		live = append(live, liveBatch{Batch: b, blockID: bl.ID})
	}
	return live, nil
}

// Estimates of the clip-archive's structure, in code points: its header
// line, each batch's header line and blank line, and the section titles
// and omission marker when batches are omitted.
const (
	archiveHeaderRunes  = 72
	archiveBatchRunes   = 84
	archiveOmittedRunes = 128
)

// Samples of the same structure, for its conservative estimate
// (archiveSizes).
const (
	archiveHeaderSample  = "[Context Summary — 123456 messages compressed across 12 compaction cycles]\n"
	archiveBatchSample   = "[Batch 123 — depth 12, 2026-02-28T10:00:00.000Z to 2026-02-28T10:00:00.000Z]\n\n\n"
	archiveOmittedSample = "## Earliest context\n[... 1234 earlier summaries omitted, searchable via memory_read ...]\n\n## Recent context\n"
)

// A target compaction budgets in sizes: code points under chars4 (the
// seeds' arithmetic: one ceiling over the sum), tokens under the
// conservative estimator. size, textSize, summarySize, overheadSize and
// toTokens convert.
func (u *run) size(m *Message) int {
	if u.c.TokenEstimator == EstimatorChars4 {
		return MessageRunes(m)
	}
	return MessageTokens(m, u.c)
}

func (u *run) textSize(s string) int {
	if u.c.TokenEstimator == EstimatorChars4 {
		return runeCount(s)
	}
	return ConservativeTokens(s)
}

func (u *run) toTokens(size int) int {
	if u.c.TokenEstimator == EstimatorChars4 {
		return ceilDiv4(size)
	}
	return size
}

// summarySize is the size of a summary of at most tok tokens: a
// summarizer's max_tokens is a real tokenizer's count (or, extractive,
// ⌈code points / 4⌉), which the conservative estimate of the same text
// exceeds by up to a half.
func (u *run) summarySize(tok int) int {
	if u.c.TokenEstimator == EstimatorChars4 {
		return tok * 4
	}
	return tok + tok/2
}

// capFor is the max_tokens of a summary whose estimate must fit in tok
// tokens: the inverse of summarySize.
func (u *run) capFor(tok int) int {
	if u.c.TokenEstimator == EstimatorChars4 {
		return tok
	}
	return tok * 2 / 3
}

// overheadSize is the overhead as a size.
func (u *run) overheadSize() int {
	if u.c.TokenEstimator == EstimatorChars4 {
		return u.overhead * 4
	}
	return u.overhead
}

// archiveSizes are the sizes of the clip-archive's header line, of each
// batch's header line, and of the omission marker with the section
// titles; under the conservative estimator the archive message's framing
// is in the header's.
func (u *run) archiveSizes() (header, batch, omitted int) {
	if u.c.TokenEstimator == EstimatorChars4 {
		return archiveHeaderRunes, archiveBatchRunes, archiveOmittedRunes
	}
	return ConservativeTokens(archiveHeaderSample) + messageFramingTokens, ConservativeTokens(archiveBatchSample),
		ConservativeTokens(archiveOmittedSample)
}

// Shares of target_tokens in a target compaction: the clip-archive takes
// at most targetArchivePct percent of it, and of that the re-summarized
// batch (the only one that holds the oldest context) up to
// deepArchivePct percent; the other batches shown share the rest.
const (
	targetArchivePct = 60
	deepArchivePct   = 60
)

// summaryCaps are the max_tokens of each chunk summary and of a
// re-summarization in a target_tokens compaction: max_summary_tokens,
// lowered so that the clip-archive (at most clip_first + clip_last batches
// shown) stays within its share of target_tokens whatever the history.
// Without the caps a 4,000-token budget would be eaten by the archive
// alone (four 1,024-token batches) and every compaction would end in
// no_gain.
//
// window is what the history must fit in (target_tokens, or the
// trigger limit); the archive's room is also never more than what the
// overhead and the pinned messages (pinned, a size) leave of it.
func (u *run) summaryCaps(window, pinned int) (chunkCap, resumCap int) {
	c := u.c
	header, batch, omitted := u.archiveSizes()
	line := u.toTokens(batch)
	room := min(percent(window, targetArchivePct), window-u.overhead-u.toTokens(pinned)) - u.toTokens(header+omitted)
	slots := max(1, c.ClipFirst+c.ClipLast)
	deep := room / slots
	if slots > 1 {
		deep = room * deepArchivePct / 100
		chunkCap = (room-deep)/(slots-1) - line
	} else {
		chunkCap = deep - line
	}
	resumCap = deep - line
	// The room is in estimated tokens; a summary of max_tokens may be
	// estimated at up to summarySize of it.
	chunkCap, resumCap = u.capFor(chunkCap), u.capFor(resumCap)
	clamp := func(n int) int { return max(1, min(c.MaxSummaryTokens, n)) }
	return clamp(chunkCap), clamp(max(resumCap, chunkCap))
}

// selectForTarget chooses what a target_tokens compaction compresses: the
// newest compressible units that fit are kept verbatim, the older rest is
// compressed (still in the split's importance order, so chunking and
// fold-in see it as docs/spec.md#pipeline says). Kept units are contiguous:
// walking from the newest back, the first unit that does not fit ends the kept
// run. A tool call and its results are one unit; pinned messages and the last
// keep_recent (the split's to_keep) are always kept. "Fits" counts the
// clip-archive the compaction will produce: the live batches plus, per new
// batch, a summary of up to capTok tokens, re-summarized (into at most
// resumTok) as compress would when the batches outgrow the clip window. At
// least one unit is compressed, so a compaction that is due always makes
// progress.
func (u *run) selectForTarget(s SplitResult, live []liveBatch, capTok, resumTok int, ed *edits) (compress, keep []int) {
	c, hist := u.c, u.res.History
	type tunit struct{ lead, from, to, runes int } // members are s.ToCompress[from:to]
	var units []tunit
	totalRunes := 0
	for n := 0; n < len(s.ToCompress); {
		end := s.units.runEnd(s.ToCompress, n)
		r := 0
		for _, k := range s.ToCompress[n:end] {
			r = AddCounts(r, ed.sizeOf(k))
		}
		units = append(units, tunit{lead: s.ToCompress[n], from: n, to: end, runes: r})
		totalRunes = AddCounts(totalRunes, r)
		n = end
	}
	slices.SortFunc(units, func(a, b tunit) int { return b.lead - a.lead }) // newest first
	fixed := u.overheadSize()
	for _, k := range s.ToKeep {
		fixed = AddCounts(fixed, ed.sizeOf(k))
	}
	liveRunes := make([]int, len(live))
	for i := range live {
		liveRunes[i] = u.textSize(live[i].Content)
	}
	totalMsgs := len(s.ToCompress)
	keptMsgs, keptRunes, k := 0, 0, 0
	for ; k < len(units)-1; k++ {
		nm, nr := keptMsgs+units[k].to-units[k].from, AddCounts(keptRunes, units[k].runes)
		arch := u.archiveRunes(liveRunes, u.newBatches(totalMsgs-nm, totalRunes-nr), u.summarySize(capTok), u.summarySize(resumTok))
		if u.toTokens(fixed+nr+arch) > c.TargetTokens {
			break
		}
		keptMsgs, keptRunes = nm, nr
	}
	kept := make([]bool, len(hist))
	for _, t := range units[:k] {
		for _, i := range s.ToCompress[t.from:t.to] {
			kept[i] = true
		}
	}
	compress = make([]int, 0, totalMsgs-keptMsgs)
	for _, i := range s.ToCompress {
		if !kept[i] {
			compress = append(compress, i)
		}
	}
	gone := make([]bool, len(hist))
	for _, i := range compress {
		gone[i] = true
	}
	if s.Prior >= 0 {
		gone[s.Prior] = true
	}
	keep = make([]int, 0, len(hist)-len(compress))
	for i := range hist {
		if !gone[i] {
			keep = append(keep, i)
		}
	}
	return compress, keep
}

// newBatches estimates how many batches chunking msgs messages of the
// given size (run.size) makes.
func (u *run) newBatches(msgs, runes int) int {
	if msgs == 0 {
		return 0
	}
	if maxTok := u.c.ChunkTokens(); maxTok > 0 {
		return max(1, (u.toTokens(runes)+maxTok-1)/maxTok)
	}
	return (msgs + u.c.ChunkSize - 1) / max(1, u.c.ChunkSize)
}

// archiveRunes estimates the clip-archive's size (run.size) after a
// compaction that adds fresh batches of at most capRunes each to the live
// batches of the given sizes: re-summarized into one batch of at most
// resumRunes when they outgrow clip_first + clip_last + 2, then rendered
// with at most clip_first + clip_last batches shown.
func (u *run) archiveRunes(live []int, fresh, capRunes, resumRunes int) int {
	c := u.c
	archiveHeaderRunes, archiveBatchRunes, archiveOmittedRunes := u.archiveSizes()
	n := len(live) + fresh
	size := func(i int) int {
		if i < len(live) {
			return live[i]
		}
		return capRunes
	}
	total := archiveHeaderRunes
	if n > c.ClipFirst+c.ClipLast+2 {
		// Re-summarized: one batch, then the last clip_last.
		total += archiveBatchRunes + resumRunes
		for i := n - min(c.ClipLast, n); i < n; i++ {
			total += archiveBatchRunes + size(i)
		}
		return total
	}
	if n <= c.ClipFirst+c.ClipLast {
		for i := 0; i < n; i++ {
			total += archiveBatchRunes + size(i)
		}
		return total
	}
	total += archiveOmittedRunes
	for i := 0; i < c.ClipFirst; i++ {
		total += archiveBatchRunes + size(i)
	}
	for i := n - c.ClipLast; i < n; i++ {
		total += archiveBatchRunes + size(i)
	}
	return total
}

func (u *run) now() time.Time { return u.p.Clock.Now() }

// canShrink reports whether a timeout on chunk ch can be met by
// re-chunking: the size can still halve, and halving would split ch.
func (u *run) canShrink(size, maxTok int, ch []int) bool {
	if maxTok > 0 {
		return maxTok > 1000
	}
	return size > 2 && len(ch) > max(2, size/2)
}

// shrink halves the chunk size for the remaining work: never below 2
// messages / 1000 tokens, never larger than before.
func (u *run) shrink(size, maxTok int) (int, int) {
	if maxTok > 0 {
		return size, max(1000, maxTok/2)
	}
	return max(2, size/2), maxTok
}

// summarizeChunk summarizes one chunk, folding in prev: extractively
// inside the plug-in (summarizer "extractive", or after the LLM failed
// with fallback "extractive"), else through llm_complete.
func (u *run) summarizeChunk(prev string, msgs []Message, maxTok int, shrinkable bool) (string, string, error) {
	c := u.c
	ex := func() string { return ExtractiveSummarizeMessages(prev, msgs, maxTok, c.MaxMessageChars) }
	if u.extractive {
		return u.extractiveText(ex)
	}
	req := BuildSummarizationRequest(c.Prompt, prev, msgs, c.Model, maxTok, c.MaxMessageChars)
	return u.complete(&req, shrinkable, ex)
}

// resummarize folds the contents of old batches into one.
func (u *run) resummarize(contents []string, maxTok int) (string, string, error) {
	c := u.c
	ex := func() string { return ExtractiveResummarize(contents, maxTok) }
	if u.extractive {
		return u.extractiveText(ex)
	}
	req := BuildResummarizationRequest(c.Prompt, contents, c.Model, maxTok)
	return u.complete(&req, false, ex)
}

// complete calls the LLM with the retry policy of
// docs/spec.md#retries-and-the-deadline and returns the
// summary text and how it was made; ex is the extractive summary of the
// same input, for fallback "extractive".
// When shrinkable, a timeout is returned at once so the caller can
// re-chunk instead of retrying the same too-large request.
func (u *run) complete(req *ModelRequest, shrinkable bool, ex func() string) (string, string, error) {
	text, err := u.completeLLM(req, shrinkable)
	if err == nil {
		return text, MethodLLM, nil
	}
	f, _ := err.(*failure)
	if shrinkable && f != nil && f.code == FailLLMTimeout {
		return "", "", err
	}
	if u.c.Fallback == "extractive" && f != nil && f.code != FailHost {
		u.extractive = true
		u.res.Warnings = append(u.res.Warnings, "LLM failed ("+f.Error()+"); summarized extractively instead")
		return u.extractiveText(ex)
	}
	return "", "", err
}

func (u *run) extractiveText(ex func() string) (string, string, error) {
	t := strings.TrimSpace(ex())
	if t == "" {
		return "", "", fail(FailInvalidSumm, "the extractive summary is empty")
	}
	return t, MethodExtractive, nil
}

func (u *run) completeLLM(req *ModelRequest, shrinkable bool) (string, error) {
	c := u.c
	var last *failure
	for attempt := 0; attempt <= c.CompactionMaxRetries; attempt++ {
		if attempt > 0 {
			u.res.Retries++
			left := u.deadline.Sub(u.now())
			wait := backoff(c.BackoffBaseMs, attempt, left)
			if wait >= left {
				if left > 0 {
					u.p.Clock.Sleep(left)
				}
				return "", fail(FailDeadline, "compaction_timeout of "+strconv.Itoa(c.CompactionTimeoutMs)+
					" ms reached while waiting to retry after: "+last.msg)
			}
			u.p.Clock.Sleep(wait)
		}
		left := u.deadline.Sub(u.now())
		if left <= 0 {
			msg := "compaction_timeout of " + strconv.Itoa(c.CompactionTimeoutMs) + " ms reached"
			if last != nil {
				msg += " after: " + last.msg
			}
			return "", fail(FailDeadline, msg)
		}
		req.TimeoutMs = int((left + time.Millisecond - 1) / time.Millisecond)
		u.res.LLMCalls++
		t0 := u.p.Clock.Now()
		resp, err := u.p.LLM.Complete(req)
		u.res.LLMTime += u.p.Clock.Now().Sub(t0)
		if err != nil {
			le, ok := err.(*LLMError)
			if !ok {
				return "", fail(FailHost, "llm_complete: "+err.Error())
			}
			code := FailLLM
			if le.Code == LLMTimeout {
				code = FailLLMTimeout
			}
			last = fail(code, "llm_complete: "+le.Code+": "+le.Message)
			if le.Code == LLMTimeout && shrinkable {
				return "", last // the caller re-chunks at half the size
			}
			if !le.Retryable {
				return "", last
			}
			continue
		}
		text := strings.TrimSpace(resp.Text())
		if text == "" {
			last = fail(FailInvalidSumm, "llm_complete returned an empty summary")
			continue
		}
		return text, nil
	}
	return "", last
}

func newBatch(text, method string, msgs []Message, op string) Batch {
	b := Batch{Content: text, MessageCount: len(msgs), OperationID: op, Method: method,
		SourceMessageIDs: make([]string, len(msgs))}
	for i := range msgs {
		b.SourceMessageIDs[i] = msgs[i].ID
		t := msgs[i].CreatedAt
		if i == 0 || t.Before(b.Start) {
			b.Start = t
		}
		if i == 0 || t.After(b.End) {
			b.End = t
		}
	}
	return b
}

// mergeBatches is the re-summary of old: depth max+1, the union of their
// time ranges, counts and sources.
func mergeBatches(old []liveBatch, text, method, op string) Batch {
	b := Batch{Content: text, OperationID: op, Method: method}
	for i := range old {
		o := &old[i]
		if o.Depth+1 > b.Depth {
			b.Depth = o.Depth + 1
		}
		if i == 0 || o.Start.Before(b.Start) {
			b.Start = o.Start
		}
		if i == 0 || o.End.After(b.End) {
			b.End = o.End
		}
		b.MessageCount += o.MessageCount
		b.SourceMessageIDs = append(b.SourceMessageIDs, o.SourceMessageIDs...)
	}
	return b
}

// backoff is retry n's wait, base·2ⁿ⁻¹ milliseconds, computed without
// overflow: anything longer than limit is limit.
func backoff(baseMs, n int, limit time.Duration) time.Duration {
	w := time.Duration(baseMs) * time.Millisecond
	for i := 1; i < n && w < limit; i++ {
		w *= 2
	}
	if w > limit || w < 0 {
		return limit
	}
	return w
}
