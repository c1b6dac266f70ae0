package core

// SplitResult says where each message of a split goes, as indices into the
// input: Prior is the previous clip-archive (-1 when there is none),
// ToCompress the compressible messages in importance order (lowest first),
// ToKeep the pinned older messages in original order followed by the
// last keep_recent messages in order. Indices let callers echo the input
// bytes of each message untouched.
type SplitResult struct {
	Prior      int
	ToCompress []int
	ToKeep     []int
}

// Split divides a history for compaction (seeds 001 and 004, SPEC §3):
//
//   - msgs[0] is the prior summary when it is a clip-archive;
//   - the last KeepRecent messages are kept, the boundary moved earlier
//     so that no tool result is kept while its call is compressed;
//   - the rest is scored by position in that compressible slice and
//     sorted ascending, stably; a tool call and its results move as one
//     unit scored by its best member, keeping their inner order;
//   - pinned messages (IsPinned) in the compressible slice are kept, in
//     order, and take their whole tool unit with them.
func Split(msgs []Message, c *Config) SplitResult {
	res := SplitResult{Prior: -1}
	n := len(msgs)
	start := 0
	if n > 0 && IsClipArchive(&msgs[0]) {
		res.Prior = 0
		start = 1
	}
	cut := n - c.KeepRecent
	if cut < start {
		cut = start
	}
	units := toolUnits(msgs, start)
	cut = units.settleBoundary(cut, n)

	// Pinned units stay.
	pinned := make([]bool, cut-start)
	anyPinned := false
	for i := start; i < cut; i++ {
		if IsPinned(&msgs[i], c.PinSystem) {
			pinned[units.leader(i)-start] = true
			anyPinned = true
		}
	}
	isPinned := func(i int) bool { return anyPinned && pinned[units.leader(i)-start] }

	total := cut - start
	var order []unit
	var best []float64 // best score per leader, indexed by leader-start
	if total > 0 {
		best = make([]float64, total)
		order = make([]unit, 0, total)
	}
	for i := start; i < cut; i++ {
		if isPinned(i) {
			continue
		}
		s := Score(&msgs[i], i-start, total, &c.Scoring)
		l := units.leader(i)
		if l == i {
			best[i-start] = s
			order = append(order, unit{first: i})
		} else if s > best[l-start] {
			best[l-start] = s
		}
	}
	for k := range order {
		order[k].score = best[order[k].first-start]
	}
	// Ascending score, ties in original order (order is in ascending
	// first).
	sortUnits(order)

	res.ToCompress = make([]int, 0, total)
	for _, u := range order {
		res.ToCompress = units.appendMembers(res.ToCompress, u.first)
	}
	res.ToKeep = make([]int, 0, n-cut+(total-len(res.ToCompress)))
	if anyPinned {
		for i := start; i < cut; i++ {
			if isPinned(i) {
				res.ToKeep = append(res.ToKeep, i)
			}
		}
	}
	for i := cut; i < n; i++ {
		res.ToKeep = append(res.ToKeep, i)
	}
	return res
}

// unitIndex records which tool unit each message belongs to. A unit is an
// assistant message with tool calls and the tool messages answering it
// (matched by tool_call_id, or, lacking one, by directly following the
// call or another of its results); every other message is a unit of one.
// lead and next are nil when the history has no tool messages at all, the
// common case, which then costs nothing.
type unitIndex struct {
	start int
	lead  []int32 // lead[i-start]: index of i's unit leader
	next  []int32 // next member of the same unit, -1 at the end
}

func toolUnits(msgs []Message, start int) unitIndex {
	u := unitIndex{start: start}
	hasTool := false
	for i := start; i < len(msgs); i++ {
		if msgs[i].Role == RoleTool {
			hasTool = true
			break
		}
	}
	if !hasTool {
		return u
	}
	n := len(msgs) - start
	u.lead = make([]int32, n)
	u.next = make([]int32, n)
	tail := make([]int32, n)
	calls := map[string]int32{}
	for i := start; i < len(msgs); i++ {
		k := i - start
		u.lead[k], u.next[k], tail[k] = int32(i), -1, int32(i)
		m := &msgs[i]
		switch {
		case m.Role == RoleAssistant && m.HasToolCalls:
			for _, tc := range m.ToolCalls {
				if tc.ID != "" {
					calls[tc.ID] = int32(i)
				}
			}
		case m.Role == RoleTool:
			l := int32(-1)
			if m.ToolCallID != "" {
				if c, ok := calls[m.ToolCallID]; ok {
					l = c
				}
			} else if i > start {
				p := u.lead[k-1]
				if pm := &msgs[p]; pm.Role == RoleAssistant && pm.HasToolCalls &&
					(msgs[i-1].Role == RoleTool || int(p) == i-1) {
					l = p
				}
			}
			if l >= 0 {
				lk := int(l) - start
				u.lead[k] = l
				u.next[tail[lk]-int32(start)] = int32(i)
				tail[lk] = int32(i)
			}
		}
	}
	return u
}

func (u *unitIndex) leader(i int) int {
	if u.lead == nil {
		return i
	}
	return int(u.lead[i-u.start])
}

// settleBoundary moves cut earlier until no message at or after it belongs
// to a unit whose leader is before it.
func (u *unitIndex) settleBoundary(cut, n int) int {
	if u.lead == nil {
		return cut
	}
	for {
		min := cut
		for i := cut; i < n; i++ {
			if l := u.leader(i); l < min {
				min = l
			}
		}
		if min == cut {
			return cut
		}
		cut = min
	}
}

// appendMembers appends the unit led by first, in original order.
func (u *unitIndex) appendMembers(dst []int, first int) []int {
	if u.next == nil {
		return append(dst, first)
	}
	for i := int32(first); i >= 0; i = u.next[int(i)-u.start] {
		dst = append(dst, int(i))
	}
	return dst
}
