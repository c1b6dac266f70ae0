package core

import (
	"slices"
	"strconv"
	"strings"
)

// The window guarantee (docs/spec.md#counting-tokens-and-the-window): after
// a successful compress the history counts no more than target_tokens,
// or than the trigger limit. keep_recent is a wish: when the kept
// messages do not fit beside the clip-archive, the oldest tool results
// among them are cleared, then older kept units are summarized too, and
// last the newest unit's texts are middle-truncated. The newest unit
// (the last message with its tool call and results) is never
// summarized: it is what the agent is working on.

// limit is the trigger limit, ⌊context_budget × model_max_tokens⌋.
func (u *run) limit() int { return int(u.c.ContextBudget * float64(u.c.ModelMaxTokens)) }

// window is what a compacted history must fit in: target_tokens when
// set, else the trigger limit.
func (u *run) window() int {
	if u.c.TargetTokens > 0 {
		return u.c.TargetTokens
	}
	return u.limit()
}

// percent is p% of n, without overflow where int has 32 bits.
func percent(n, p int) int { return n/100*p + n%100*p/100 }

// edits are a compaction's replacements of kept messages: hist with
// msgs[i] in place of hist[i] where edit[i] is set. The first stage's
// (clear_tool_results) are made before anything is chosen; the window's
// (settle) once the clip-archive is known. Only kept messages' edits
// are committed: a compressed message goes to recall whole and is
// summarized as it was.
type edits struct {
	u     *run
	split *SplitResult
	hist  []Message
	msgs  []Message // hist itself until the first edit
	edit  []*Edit   // nil until the first edit
	sizes []int     // size (run.size) of msgs[i]; -1 not computed; nil until needed
	// calls are the history's tool calls by id (nil until needed).
	calls map[string]*ToolCall
	// cleared caches each message's every clearable result cleared
	// (fullClear), ok false when it has none.
	cleared map[int]fullClear
	pinned  int // size of the pinned messages; -1 not computed
}

type fullClear struct {
	msg  Message
	edit *Edit
	ok   bool
}

func (u *run) newEdits(hist []Message, s *SplitResult) *edits {
	return &edits{u: u, split: s, hist: hist, msgs: hist, pinned: -1}
}

// sizeOf is msgs[i]'s size.
func (ed *edits) sizeOf(i int) int {
	if ed.sizes == nil {
		ed.sizes = make([]int, len(ed.hist))
		for k := range ed.sizes {
			ed.sizes[k] = -1
		}
	}
	if ed.sizes[i] < 0 {
		ed.sizes[i] = ed.u.size(&ed.msgs[i])
	}
	return ed.sizes[i]
}

// keptSize is the size of the messages at keep.
func (ed *edits) keptSize(keep []int) int {
	n := 0
	for _, k := range keep {
		n = AddCounts(n, ed.sizeOf(k))
	}
	return n
}

// set replaces message i by p, made by e.
func (ed *edits) set(i int, p Message, e *Edit) {
	if ed.edit == nil {
		ed.msgs = slices.Clone(ed.hist)
		ed.edit = make([]*Edit, len(ed.hist))
	}
	ed.sizeOf(i) // allocates sizes
	ed.msgs[i], ed.edit[i] = p, e
	ed.sizes[i] = ed.u.size(&ed.msgs[i])
}

func (ed *edits) editOf(i int) *Edit {
	if ed.edit == nil {
		return nil
	}
	return ed.edit[i]
}

// rewrite renders hist[i] with e (e.RecallID is set to its id).
func (ed *edits) rewrite(i int, e *Edit) (Message, bool) {
	if ed.u.p.Rewriter == nil {
		return Message{}, false
	}
	e.RecallID = ed.hist[i].ID
	return ed.u.p.Rewriter.Rewrite(ed.u.in.ConversationID, &ed.hist[i], e)
}

// replaceable reports whether message i may be replaced at all: not the
// prior clip-archive, not a clip-archive, not pinned.
func (ed *edits) replaceable(i int) bool {
	m := &ed.hist[i]
	return i != ed.split.Prior && !IsClipArchive(m) && !IsPinned(m, ed.u.c.PinSystem)
}

// call is the tool call with id, nil when the history has none.
func (ed *edits) call(id string) *ToolCall {
	if id == "" {
		return nil
	}
	if ed.calls == nil {
		ed.calls = map[string]*ToolCall{}
		for i := range ed.hist {
			m := &ed.hist[i]
			for j := range m.ToolCalls {
				if tc := &m.ToolCalls[j]; !tc.Result && tc.ID != "" {
					if _, dup := ed.calls[tc.ID]; !dup {
						ed.calls[tc.ID] = tc
					}
				}
			}
		}
	}
	return ed.calls[id]
}

// clearLines are the lines that would replace message i's tool results,
// "" for a result that is not cleared: one already cleared, one of a tool
// in clear_exclude_tools, one whose line would count no less than its
// output.
func (ed *edits) clearLines(i int) []string {
	if !ed.replaceable(i) {
		return nil
	}
	m := &ed.hist[i]
	parts := resultParts(m)
	if len(parts) == 0 {
		return nil
	}
	lines := make([]string, len(parts))
	any := false
	for r := range parts {
		out := parts[r].Arguments
		if strings.HasPrefix(out, ClearedPrefix) {
			continue
		}
		name, args := parts[r].Name, ""
		if tc := ed.call(parts[r].ID); tc != nil {
			if name == "" {
				name = tc.Name
			}
			args = tc.Arguments
		}
		if slices.Contains(ed.u.c.ClearExcludeTools, name) {
			continue
		}
		line := ClearedLine(name, args, m.ID)
		if ed.u.textSize(line) >= ed.u.textSize(out) {
			continue
		}
		lines[r], any = line, true
	}
	if !any {
		return nil
	}
	return lines
}

// clearAllBut is the first stage (clear_tool_results = n): every tool
// result but the n most recent is cleared, where it can be. It reports
// whether any was.
func (ed *edits) clearAllBut(n int) bool {
	type res struct{ msg, r int }
	var all []res
	for i := ed.split.Prior + 1; i < len(ed.hist); i++ {
		for r := range ResultOutputs(&ed.hist[i]) {
			all = append(all, res{i, r})
		}
	}
	if len(all) <= n {
		return false
	}
	old := all[:len(all)-n]
	any := false
	for j := 0; j < len(old); {
		i := old[j].msg
		var clear []string
		lines := ed.clearLines(i)
		for ; j < len(old) && old[j].msg == i; j++ {
			if lines != nil && lines[old[j].r] != "" {
				if clear == nil {
					clear = make([]string, len(lines))
				}
				clear[old[j].r] = lines[old[j].r]
			}
		}
		if clear == nil {
			continue
		}
		e := &Edit{Clear: clear}
		if p, ok := ed.rewrite(i, e); ok {
			ed.set(i, p, e)
			any = true
		}
	}
	return any
}

// fullClear is message i with every clearable result cleared (the first
// stage's clears kept); ok is false when nothing more can be cleared.
func (ed *edits) fullClear(i int) fullClear {
	if f, ok := ed.cleared[i]; ok {
		return f
	}
	if ed.cleared == nil {
		ed.cleared = map[int]fullClear{}
	}
	var f fullClear
	if lines := ed.clearLines(i); lines != nil {
		e := &Edit{Clear: lines}
		if base := ed.editOf(i); base != nil {
			for r, l := range base.Clear {
				if l != "" && r < len(lines) && lines[r] == "" {
					lines[r] = l
				}
			}
			if slices.Equal(base.Clear, lines) {
				lines = nil
			}
		}
		if lines != nil {
			if p, ok := ed.rewrite(i, e); ok {
				f = fullClear{msg: p, edit: e, ok: true}
			}
		}
	}
	ed.cleared[i] = f
	return f
}

// truncated is message i middle-truncated to cap code points a text (the
// first stage's clears kept); changed is false when no text of it is
// longer.
func (ed *edits) truncated(i, cap int) (p Message, e *Edit, changed, ok bool) {
	if runeCount(ed.hist[i].Content) <= cap {
		return ed.msgs[i], ed.editOf(i), false, true
	}
	e = &Edit{Truncate: true, Cap: cap}
	if base := ed.editOf(i); base != nil {
		e.Clear = base.Clear
	}
	p, ok = ed.rewrite(i, e)
	return p, e, ok, ok
}

// pinnedSize is the size of the pinned messages.
func (ed *edits) pinnedSize() int {
	if ed.pinned < 0 {
		ed.pinned = 0
		for i := range ed.hist {
			if i != ed.split.Prior && IsPinned(&ed.hist[i], ed.u.c.PinSystem) {
				ed.pinned = AddCounts(ed.pinned, ed.sizeOf(i))
			}
		}
	}
	return ed.pinned
}

// checkPinned fails with over_window when the pinned messages alone,
// with the overhead, do not fit in window.
func (ed *edits) checkPinned(window int) error {
	need := ed.u.toTokens(AddCounts(ed.u.overheadSize(), ed.pinnedSize()))
	if need <= window {
		return nil
	}
	var ids []string
	for i := range ed.hist {
		if i != ed.split.Prior && IsPinned(&ed.hist[i], ed.u.c.PinSystem) {
			ids = append(ids, ed.hist[i].ID)
		}
	}
	return fail(FailOverWindow, "the pinned messages "+listIDs(ids)+" alone need "+strconv.Itoa(need)+
		" estimated tokens (overhead included), over the window of "+strconv.Itoa(window)+"; nothing was changed")
}

// listIDs quotes up to ten ids.
func listIDs(ids []string) string {
	var b strings.Builder
	for i, id := range ids {
		if i == 10 {
			b.WriteString(", … (" + strconv.Itoa(len(ids)) + " in all)")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(id))
	}
	return b.String()
}

// lastUnit is the newest unit, the last message's, when it is kept whole
// and not pinned: never summarized, truncated last.
func (ed *edits) lastUnit(keep []int) []int {
	n := len(ed.hist)
	if n == 0 || n-1 == ed.split.Prior || !slices.Contains(keep, n-1) {
		return nil
	}
	units := &ed.split.units
	members := units.appendMembers(nil, units.leader(n-1))
	for _, k := range members {
		if !ed.replaceable(k) || !slices.Contains(keep, k) {
			return nil
		}
	}
	return members
}

// movable are the kept units that may be summarized to make room, oldest
// first: not pinned, not the newest.
func (ed *edits) movable(keep, last []int) [][]int {
	var out [][]int
	seen := map[int]bool{}
	units := &ed.split.units
	for _, k := range keep {
		if k == ed.split.Prior || seen[k] || slices.Contains(last, k) {
			continue
		}
		members := units.appendMembers(nil, units.leader(k))
		ok := true
		for _, m := range members {
			seen[m] = true
			if IsPinned(&ed.hist[m], ed.u.c.PinSystem) || !slices.Contains(keep, m) {
				ok = false
			}
		}
		if ok {
			out = append(out, members)
		}
	}
	return out
}

// archSize estimates the clip-archive a compaction that compresses
// compress produces, in sizes (run.size): the prior clip-archive when it
// compresses nothing; else the live batches (an upper bound until they
// are listed) and a summary of up to maxSum (resumSum re-summarized) per
// new batch.
func (u *run) archSize(s *SplitResult, compress []int, maxSum, resumSum int, ed *edits) int {
	c := u.c
	if len(compress) == 0 {
		if s.Prior >= 0 {
			return u.size(&ed.hist[s.Prior])
		}
		return 0
	}
	runes := 0
	if c.ChunkTokens() > 0 {
		for _, k := range compress {
			runes = AddCounts(runes, u.size(&ed.hist[k]))
		}
	}
	fresh := u.newBatches(len(compress), runes)
	header, batch, omitted := u.archiveSizes()
	if u.foldAll && len(u.live)+fresh > 1 {
		return AddCounts(header+batch, u.summarySize(resumSum))
	}
	if !u.listed {
		// At most clip_first + clip_last batches shown, or one re-summary
		// and clip_last.
		shown := max(c.ClipFirst, 1)
		if c.ClipLast < MaxInt-shown {
			shown += c.ClipLast
		}
		each := AddCounts(batch, u.summarySize(max(maxSum, resumSum)))
		if shown > MaxCount/max(each, 1) {
			return MaxCount
		}
		return AddCounts(header+omitted, shown*each)
	}
	live := make([]int, len(u.live))
	for i := range u.live {
		live[i] = u.textSize(u.live[i].Content)
	}
	return u.archiveRunes(live, fresh, u.summarySize(maxSum), u.summarySize(resumSum))
}

// archiveTextSize is the size of a clip-archive of this text.
func (u *run) archiveTextSize(content string) int {
	if u.c.TokenEstimator == EstimatorChars4 {
		return runeCount(content)
	}
	return AddCounts(ConservativeTokens(content), messageFramingTokens)
}

// plan chooses, before anything is summarized, what a compaction that
// must fit the window compresses: when the kept messages and the
// clip-archive it will produce (estimated) do not fit, the live batches
// are listed and the summaries capped (without target_tokens; with it
// they are already), then, while clearing every tool result the kept
// messages but the newest unit carry would not be enough, the oldest
// movable kept unit joins what is compressed. Last, when even the newest
// unit middle-truncated to nothing would not fit beside the clip-archive
// (a window not much larger than the archive's own lines: a header and a
// dated line per batch shown), every batch is re-summarized into one
// (run.foldAll) and the choice made again; when that does not fit either,
// it fails with over_window. What is cleared and truncated is chosen by
// settle, once the archive is known.
func (u *run) plan(s *SplitResult, compress, keep []int, ed *edits, maxSum, resumSum *int) ([]int, []int, error) {
	window := u.window()
	if u.res.TokensBefore <= window {
		return compress, keep, nil // it fits already, so anything that gains does
	}
	fits := func(compress []int, kept int) bool {
		arch := u.archSize(s, compress, *maxSum, *resumSum, ed)
		return u.toTokens(AddCounts(AddCounts(u.overheadSize(), kept), arch)) <= window
	}
	if fits(compress, ed.keptSize(keep)) {
		return compress, keep, nil
	}
	if err := u.ensureListed(); err != nil {
		return nil, nil, err
	}
	if fits(compress, ed.keptSize(keep)) {
		return compress, keep, nil
	}
	if u.c.TargetTokens == 0 {
		cc, rc := u.summaryCaps(window, ed.pinnedSize())
		*maxSum, *resumSum = min(*maxSum, cc), min(*resumSum, rc)
		if fits(compress, ed.keptSize(keep)) {
			return compress, keep, nil
		}
	}
	c, k, least, ok := u.choose(compress, keep, ed, fits)
	if !ok && len(c) > 0 {
		// The archive's own lines leave the kept messages no room: one
		// batch, re-summarized into the room a single batch has.
		u.foldAll = true
		*resumSum = u.foldCap(window, ed.pinnedSize())
		c, k, least, ok = u.choose(compress, keep, ed, fits)
	}
	if ok {
		return c, k, nil
	}
	need := u.toTokens(AddCounts(AddCounts(u.overheadSize(), least), u.archSize(s, c, *maxSum, *resumSum, ed)))
	ids := make([]string, len(k))
	for i, j := range k {
		ids[i] = ed.hist[j].ID
	}
	return nil, nil, fail(FailOverWindow, "what cannot be summarized — the pinned messages and the newest "+
		listIDs(ids)+" — needs "+strconv.Itoa(need)+" estimated tokens with the clip-archive, every tool result cleared and the newest cut, over the window of "+
		strconv.Itoa(window)+"; nothing was changed")
}

// choose is plan's choice: while clearing every clearable tool result of
// the kept messages but the newest unit's is not enough, the oldest
// movable kept unit joins compress; then the newest unit truncated as far
// as it goes. ok says the result fits; least is the kept messages' size
// then.
func (u *run) choose(compress, keep []int, ed *edits, fits func([]int, int) bool) (_, _ []int, least int, ok bool) {
	compress = slices.Clone(compress)
	keep = slices.Clone(keep)
	last := ed.lastUnit(keep)
	// clearedSize is the kept messages' size with every clearable result
	// but the newest unit's cleared.
	clearedSize := func() int {
		n := 0
		for _, k := range keep {
			if f := ed.fullClear(k); f.ok && !slices.Contains(last, k) {
				n = AddCounts(n, u.size(&f.msg))
			} else {
				n = AddCounts(n, ed.sizeOf(k))
			}
		}
		return n
	}
	for {
		if n := clearedSize(); fits(compress, n) {
			return compress, keep, n, true
		}
		units := ed.movable(keep, last)
		if len(units) == 0 {
			break
		}
		compress = append(compress, units[0]...)
		keep = slices.DeleteFunc(keep, func(k int) bool { return slices.Contains(units[0], k) })
	}
	// The newest unit truncated as far as it goes.
	least = clearedSize()
	for _, k := range last {
		if p, _, _, ok := ed.truncated(k, 0); ok {
			least = AddCounts(least-ed.sizeOf(k), u.size(&p))
		}
	}
	return compress, keep, least, last != nil && fits(compress, least)
}

// foldCap is the max_tokens of the one batch every batch is re-summarized
// into when the clip-archive must be as small as it can be
// (run.foldAll): the archive's room (as summaryCaps gives it) less its
// header and the batch's line.
func (u *run) foldCap(window, pinned int) int {
	header, batch, _ := u.archiveSizes()
	room := min(percent(window, targetArchivePct), window-u.overhead-u.toTokens(pinned)) - u.toTokens(header+batch)
	return max(1, min(u.c.MaxSummaryTokens, u.capFor(room)))
}

// settle gives the kept messages exactly the replacements they need to
// fit in window beside a clip-archive of size arch (0 when the history
// keeps the one it has, which keep then holds): the oldest clearable
// tool results are cleared, one message at a time, all but the newest
// unit's; then the newest unit's texts are middle-truncated to the
// longest length that fits.
func (u *run) settle(ed *edits, keep []int, arch, window int) error {
	if u.res.TokensBefore <= window {
		return nil
	}
	base := AddCounts(u.overheadSize(), arch)
	fits := func() bool { return u.toTokens(AddCounts(base, ed.keptSize(keep))) <= window }
	if fits() {
		return nil
	}
	last := ed.lastUnit(keep)
	for _, k := range keep {
		if slices.Contains(last, k) {
			continue
		}
		if f := ed.fullClear(k); f.ok {
			ed.set(k, f.msg, f.edit)
			if fits() {
				return nil
			}
		}
	}
	if len(last) > 0 {
		// The longest cap that fits: a binary search over the longest
		// text's length (a cap of 0 keeps only the markers).
		longest := 0
		for _, k := range last {
			longest = max(longest, runeCount(ed.hist[k].Content))
		}
		others := 0
		for _, k := range keep {
			if !slices.Contains(last, k) {
				others = AddCounts(others, ed.sizeOf(k))
			}
		}
		type cut struct {
			msg  Message
			edit *Edit
			chg  bool
		}
		try := func(cap int) ([]cut, bool) {
			cuts := make([]cut, len(last))
			n := others
			for j, k := range last {
				p, e, chg, ok := ed.truncated(k, cap)
				if !ok {
					return nil, false
				}
				cuts[j] = cut{p, e, chg}
				n = AddCounts(n, u.size(&p))
			}
			return cuts, u.toTokens(AddCounts(base, n)) <= window
		}
		if cuts, ok := try(0); ok {
			lo, hi := 0, longest // try(lo) fits; try(hi) does not
			for hi-lo > 1 {
				mid := lo + (hi-lo)/2
				if c2, ok := try(mid); ok {
					lo, cuts = mid, c2
				} else {
					hi = mid
				}
			}
			for j, k := range last {
				if cuts[j].chg {
					ed.set(k, cuts[j].msg, cuts[j].edit)
				}
			}
			return nil
		}
	}
	return fail(FailOverWindow, "after summarizing, the clip-archive ("+strconv.Itoa(u.toTokens(arch))+
		" estimated tokens), the pinned messages and the newest ones still need "+
		strconv.Itoa(u.toTokens(AddCounts(base, ed.keptSize(keep))))+" with every kept tool result cleared, over the window of "+
		strconv.Itoa(window)+"; nothing was changed")
}

// changed reports whether any message at keep is replaced.
func (ed *edits) changed(keep []int) bool { return len(ed.replaced(keep)) > 0 }

// replaced are the indices of keep whose message is replaced, in order.
func (ed *edits) replaced(keep []int) []int {
	if ed.edit == nil {
		return nil
	}
	var out []int
	for _, k := range keep {
		if ed.edit[k] != nil {
			out = append(out, k)
		}
	}
	return out
}

// addReplacements puts the kept messages' replacements into commit: for
// a store-owned history each one replaced in place, its original indexed
// for search; for a caller-owned one the record of them (the originals
// are among its recall writes).
func (ed *edits) addReplacements(commit *Commit, keep []int) {
	u, conv := ed.u, ed.u.in.ConversationID
	var recs []ReplacedRecord
	for _, k := range ed.replaced(keep) {
		h, m := &ed.hist[k], &ed.msgs[k]
		if commit.HistoryOwner == OwnerCaller {
			recs = append(recs, ReplacedRecord{ID: h.ID, Digest: ContentDigest(conv, h), Edit: *ed.edit[k]})
			continue
		}
		commit.ReplaceMessages = append(commit.ReplaceMessages, ReplaceMessage{ID: h.ID, NewID: m.ID, Role: m.Role,
			Content: m.Content, Raw: m.Raw})
		commit.SearchText = append(commit.SearchText, SearchText{MessageID: h.ID, Text: u.searchTextAt(ed.hist, k)})
	}
	if len(recs) > 0 {
		commit.ArchiveWrites = append(commit.ArchiveWrites, ArchiveWrite{
			Label:   ReplacedLabelPrefix(conv) + FormatTime(u.at),
			Content: FormatReplacedBlock(conv, u.in.OperationID, recs),
			Tier:    "archival", Reason: "Replaced kept messages during context compaction"})
	}
}

// report counts the replacements into the result, whose history then
// holds them.
func (ed *edits) report(keep []int) {
	for _, k := range ed.replaced(keep) {
		e := ed.edit[k]
		ed.u.res.ToolResultsCleared += e.Cleared()
		if e.Truncate {
			ed.u.res.MessagesTruncated++
		}
	}
	ed.u.res.History = ed.msgs
}
