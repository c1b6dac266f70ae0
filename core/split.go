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

	units unitIndex // the tool units of the history, from Prior+1 on
}

// Split divides a history for compaction (seeds 001 and 004,
// docs/spec.md#split):
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
	res.units = units
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

// unitIndex records which tool unit each message belongs to. A unit is
// a tool call and everything answering it, in every shape: the message
// making the calls (an assistant message with tool_calls or call parts, a
// Responses function_call) and every message carrying a result of one of
// its calls (matched by call id: tool_call_id, tool_result's tool_use_id,
// a tool-result's toolCallId, a function_call_output's call_id; a tool
// message without an id answers the call it directly follows, or follows
// with other results of). A message with JoinNext (a Responses reasoning
// item) takes the next message into its unit. A message answering calls
// of two units joins them into one. Every other message is a unit of
// one. lead and next are nil when the history has nothing that links
// messages, the common case, which then costs nothing.
type unitIndex struct {
	start int
	lead  []int32 // lead[i-start]: index of i's unit leader (its first member)
	next  []int32 // next member of the same unit, -1 at the end
	tail  []int32 // tail[l-start]: the last member of the unit led by l
}

// links reports whether m can link to another message.
func links(m *Message) bool {
	return m.Role == RoleTool || m.HasResults || m.JoinNext
}

func toolUnits(msgs []Message, start int) unitIndex {
	u := unitIndex{start: start}
	need := false
	for i := start; i < len(msgs); i++ {
		if links(&msgs[i]) {
			need = true
			break
		}
	}
	if !need {
		return u
	}
	n := len(msgs) - start
	u.lead = make([]int32, n)
	u.next = make([]int32, n)
	u.tail = make([]int32, n)
	calls := map[string]int32{} // call id → the message making the call
	for i := start; i < len(msgs); i++ {
		k := i - start
		u.lead[k], u.next[k], u.tail[k] = int32(i), -1, int32(i)
		m := &msgs[i]
		if i > start && msgs[i-1].JoinNext {
			u.join(i-1, i)
		}
		if m.Role == RoleTool && !m.HasResults {
			if m.ToolCallID != "" {
				if c, ok := calls[m.ToolCallID]; ok {
					u.join(int(c), i)
				}
			} else if i > start {
				p := u.lead[k-1]
				if pm := &msgs[p]; pm.HasToolCalls && (msgs[i-1].Role == RoleTool || int(p) == i-1) {
					u.join(int(p), i)
				}
			}
		}
		for j := range m.ToolCalls {
			if tc := &m.ToolCalls[j]; tc.Result && tc.ID != "" {
				if c, ok := calls[tc.ID]; ok {
					u.join(int(c), i)
				}
			}
		}
		if m.HasToolCalls {
			for j := range m.ToolCalls {
				if tc := &m.ToolCalls[j]; !tc.Result && tc.ID != "" {
					calls[tc.ID] = int32(i)
				}
			}
		}
	}
	return u
}

// join puts the units of a and b (a < b) together: the earlier leader
// leads, members stay in index order. Usually b is a message just read,
// alone in its unit, and is appended; otherwise the two member lists are
// merged.
func (u *unitIndex) join(a, b int) {
	la, lb := u.lead[a-u.start], u.lead[b-u.start]
	if la == lb {
		return
	}
	if lb < la {
		la, lb = lb, la
	}
	s := int32(u.start)
	ta := u.tail[la-s]
	if u.next[lb-s] == -1 && lb > ta { // lb alone, after every member of la's unit
		u.next[ta-s] = lb
		u.tail[la-s] = lb
		u.lead[lb-s] = la
		return
	}
	// Merge two ascending lists.
	var members []int32
	x, y := la, lb
	for x >= 0 || y >= 0 {
		if y < 0 || (x >= 0 && x < y) {
			members = append(members, x)
			x = u.next[x-s]
		} else {
			members = append(members, y)
			y = u.next[y-s]
		}
	}
	for j, i := range members {
		u.lead[i-s] = la
		if j+1 < len(members) {
			u.next[i-s] = members[j+1]
		} else {
			u.next[i-s] = -1
		}
	}
	u.tail[la-s] = members[len(members)-1]
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
