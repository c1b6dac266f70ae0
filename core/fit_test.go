package core

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// textRewriter is the Rewriter for core's tests, whose messages have no
// JSON: a tool message's content is its one output, any other message's
// content its one text. The plug-in's api layer renders every shape; the
// harness tests that one through the real plug-in.
type textRewriter struct{}

func (textRewriter) Rewrite(_ string, m *Message, e *Edit) (Message, bool) {
	if m.HasResults {
		return Message{}, false
	}
	p := *m
	switch {
	case m.Role == RoleTool && len(e.Clear) > 0 && e.Clear[0] != "":
		p.Content = e.Clear[0]
	case e.Truncate:
		p.Content = TruncateText(m.Content, e.Cap, e.RecallID)
	}
	return p, true
}

// agentHistory is an agent's tool loop: a pinned system prompt, then per
// step a user turn every fourth step, an assistant call and its result
// of out code points (tool "read_file" on even steps, "grep" on odd).
func agentHistory(steps, out int) []Message {
	base := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	var hist []Message
	add := func(m Message) {
		m.ID = "m" + strconv.Itoa(len(hist))
		m.CreatedAt, m.HasCreatedAt = base.Add(time.Duration(len(hist))*time.Minute), true
		hist = append(hist, m)
	}
	add(Message{Role: RoleSystem, Content: "You are a coding agent."})
	for s := 0; s < steps; s++ {
		n := strconv.Itoa(s)
		if s%4 == 0 {
			add(Message{Role: RoleUser, Content: "Step " + n + ": look at the next file and tell me what breaks."})
		}
		name := "read_file"
		if s%2 == 1 {
			name = "grep"
		}
		add(Message{Role: RoleAssistant, Content: "Checking " + n + ".", HasToolCalls: true,
			ToolCalls: []ToolCall{{ID: "call" + n, Name: name, Arguments: `{"path":"src/file` + n + `.go"}`}}})
		add(Message{Role: RoleTool, ToolCallID: "call" + n, Content: words("out"+n, out)})
	}
	return hist
}

// checkCompaction holds what every successful compaction promises: the
// count after is what the history it returns counts, and within the
// window; every tool result comes after its call; every message that
// left the history is in a batch, and every one replaced names its
// original's id.
func checkCompaction(t *testing.T, hist []Message, res CompressResult, c *Config, window int, commits []Commit) {
	t.Helper()
	require.False(t, res.Failed, res.FailureMessage)
	after := apply(hist, res)
	assert.Equal(t, AddCounts(c.OverheadTokens, HistoryTokens(after, c)), res.TokensAfter, "the count after is the returned history's")
	assert.LessOrEqual(t, res.TokensAfter, window, "the window is a promise")
	seen := map[string]bool{}
	for _, m := range after {
		for _, tc := range m.ToolCalls {
			if !tc.Result {
				seen[tc.ID] = true
			}
		}
		if m.Role == RoleTool {
			assert.True(t, seen[m.ToolCallID], "result %s comes after its call %s", m.ID, m.ToolCallID)
		}
	}
	kept := map[string]bool{}
	cleared, truncated := 0, 0
	for _, k := range res.Kept {
		m := &res.History[k]
		if m.Content == hist[k].Content {
			kept[hist[k].ID] = true
			continue
		}
		assert.Contains(t, m.Content, RecallMarker+strconv.Quote(hist[k].ID), "a replacement names its original")
		if strings.HasPrefix(m.Content, ClearedPrefix) {
			cleared++
		} else {
			truncated++
		}
	}
	assert.Equal(t, res.ToolResultsCleared, cleared)
	assert.Equal(t, res.MessagesTruncated, truncated)
	gone := map[string]bool{}
	for _, cm := range commits {
		for _, w := range cm.ArchiveWrites {
			if b, ok := ParseBatchBlock("c", w.Label, w.Content); ok {
				for _, id := range b.SourceMessageIDs {
					gone[id] = true
				}
			}
		}
		for _, r := range cm.ReplaceMessages {
			gone[r.ID] = true
		}
		for _, id := range cm.RemoveMessageIDs {
			assert.True(t, gone[id] || IsClipArchive(&hist[0]) && id == hist[0].ID, "removed %s is in a batch", id)
		}
	}
	for _, m := range hist {
		assert.True(t, kept[m.ID] || gone[m.ID], "message %s is kept, in a batch or replaced", m.ID)
	}
}

// A tool loop whose recent tail alone is three times the target compacts
// under it: the oldest kept tool results are cleared, nothing is lost,
// every result stays after its call.
func TestWindowRecentTailThreeTimesTarget(t *testing.T) {
	hist := agentHistory(30, 3000)
	c := DefaultConfig()
	c.KeepRecent = 12
	tail := HistoryTokens(hist[len(hist)-12:], &c)
	c.TargetTokens = tail / 3
	r := newRig()
	res := r.compress(t, "c", hist, c)
	checkCompaction(t, hist, res, &c, c.TargetTokens, r.mem.commits)
	assert.Positive(t, res.ToolResultsCleared)
	assert.Positive(t, res.MessagesCompressed)
	// The newest result, the one the agent is reading, is kept whole.
	last := res.History[res.Kept[len(res.Kept)-1]]
	assert.Equal(t, hist[len(hist)-1].Content, last.Content)
	require.Len(t, r.mem.commits, 1)
	cm := r.mem.commits[0]
	for _, rm := range cm.ReplaceMessages {
		assert.Equal(t, rm.ID, rm.NewID, "a message with an id keeps it")
		found := false
		for _, st := range cm.SearchText {
			found = found || st.MessageID == rm.ID && strings.Contains(st.Text, "out")
		}
		assert.True(t, found, "the original of %s is indexed", rm.ID)
	}

	t.Run("without target_tokens the trigger limit is the window", func(t *testing.T) {
		c := DefaultConfig()
		c.KeepRecent = 12
		c.ModelMaxTokens = tail * 5 / 12 // limit: a third of the tail
		r := newRig()
		res := r.compress(t, "c", hist, c)
		checkCompaction(t, hist, res, &c, int(c.ContextBudget*float64(c.ModelMaxTokens)), r.mem.commits)
		assert.Positive(t, res.ToolResultsCleared)
	})
}

// clear_tool_results: clearing the older tool results alone brings the
// history under the limit, so nothing is summarized and no LLM is called.
func TestClearToolResultsAlone(t *testing.T) {
	hist := agentHistory(12, 2000)
	c := DefaultConfig()
	c.ClearToolResults = 2
	before := HistoryTokens(hist, &c)
	c.ModelMaxTokens = before * 10 / 8 * 6 / 10 // limit 60% of the history
	r := newRig()
	res := r.compress(t, "c", hist, c)
	checkCompaction(t, hist, res, &c, int(c.ContextBudget*float64(c.ModelMaxTokens)), r.mem.commits)
	assert.Zero(t, res.LLMCalls)
	assert.Empty(t, r.llm.reqs)
	assert.Zero(t, res.MessagesCompressed)
	assert.Nil(t, res.Insert)
	assert.Equal(t, 10, res.ToolResultsCleared, "all but the 2 most recent of 12")
	require.Len(t, r.mem.commits, 1)
	cm := r.mem.commits[0]
	assert.True(t, cm.NoInsert)
	assert.Empty(t, cm.ArchiveWrites)
	assert.Len(t, cm.ReplaceMessages, 10)
	assert.Len(t, cm.SearchText, 10)
	assert.Equal(t, Identity(len(hist)), res.Kept)
	assert.Zero(t, res.ConsecutiveFailures)
	line := res.History[3].Content
	assert.Equal(t, `[tool result cleared: read_file {"path":"src/file0.go"}; full output in recall storage as "m3" (memory_read)]`, line)

	t.Run("clear_exclude_tools are never cleared", func(t *testing.T) {
		c := c
		c.ClearExcludeTools = []string{"read_file"}
		r := newRig()
		res := r.compress(t, "c", hist, c)
		require.False(t, res.Failed, res.FailureMessage)
		for _, k := range res.Kept {
			m := &res.History[k]
			if m.Role == RoleTool && strings.Contains(hist[k-1].ToolCalls[0].Name, "read_file") {
				assert.Equal(t, hist[k].Content, m.Content, "read_file's result %s is whole", m.ID)
			}
		}
		assert.Positive(t, res.ToolResultsCleared)
	})

	t.Run("under the limit with nothing to clear, the seeds' compaction runs", func(t *testing.T) {
		c := DefaultConfig()
		c.ClearToolResults = 100
		r := newRig()
		res := r.compress(t, "c", hist, c)
		require.False(t, res.Failed, res.FailureMessage)
		assert.Positive(t, res.MessagesCompressed)
		assert.Zero(t, res.ToolResultsCleared)
	})
}

// A single message larger than the window is middle-truncated; its
// original is in the commit's search text and named by the marker.
func TestWindowTruncatesHugeNewestMessage(t *testing.T) {
	hist := agentHistory(4, 500)
	hist = append(hist, Message{ID: "huge", Role: RoleUser, Content: words("paste", 60000),
		CreatedAt: time.Date(2026, 2, 2, 0, 0, 0, 0, time.UTC), HasCreatedAt: true})
	c := DefaultConfig()
	c.TargetTokens = 4000
	r := newRig()
	res := r.compress(t, "c", hist, c)
	checkCompaction(t, hist, res, &c, 4000, r.mem.commits)
	assert.Equal(t, 1, res.MessagesTruncated)
	last := res.History[len(hist)-1]
	assert.Contains(t, last.Content, `characters omitted; the full text is in recall storage as "huge"`)
	assert.True(t, strings.HasPrefix(last.Content, "paste"), "the head is kept")
	assert.Greater(t, HistoryTokens([]Message{last}, &c), 1000, "the cut keeps what fits, not nothing")
}

// Pinned messages alone over the window: over_window naming them, no
// host call, nothing changed; it counts for the circuit breaker.
func TestOverWindowPinned(t *testing.T) {
	hist := agentHistory(6, 500)
	hist[0].Content = words("rules", 20000)
	hist[2].Pinned = true
	c := DefaultConfig()
	c.TargetTokens = 1000
	r := newRig()
	b := &Breakers{}
	res := Compress(&CompressInput{ConversationID: "c", History: hist, Config: c, OperationID: "op"},
		Ports{LLM: r.llm, Memory: r.mem, Committer: r.mem, Clock: r.clock, Breakers: b, Rewriter: textRewriter{}})
	require.True(t, res.Failed)
	assert.Equal(t, FailOverWindow, res.FailureCode)
	assert.Contains(t, res.FailureMessage, `"m0", "m2"`)
	assert.Zero(t, r.mem.lists+len(r.llm.reqs)+len(r.mem.commits), "no host call")
	assert.Equal(t, Identity(len(hist)), res.Kept)
	assert.Equal(t, 1, res.ConsecutiveFailures, "over_window counts for the breaker")
}

// A caller-owned history: the originals go to recall storage, the
// replacements are recorded, and the same list sent again gives the view
// with the replacements, no new recall write and no no_gain.
func TestCallerOwnedReplacementsReRendered(t *testing.T) {
	hist := agentHistory(12, 2000)
	c := DefaultConfig()
	c.ClearToolResults = 2
	c.ModelMaxTokens = HistoryTokens(hist, &c) * 10 / 8 * 6 / 10
	r := newRig()
	res := r.compressCaller(t, "c", slices.Clone(hist), c, true)
	require.False(t, res.Failed, res.FailureMessage)
	require.Equal(t, 10, res.ToolResultsCleared)
	require.Len(t, r.mem.commits, 1)
	cm := r.mem.commits[0]
	assert.Equal(t, OwnerCaller, cm.HistoryOwner)
	assert.Empty(t, cm.ReplaceMessages)
	require.Len(t, cm.RecallWrites, 10, "the originals")
	assert.Equal(t, hist[3].Content, cm.RecallWrites[0].Content)
	require.Len(t, cm.ArchiveWrites, 1)
	assert.True(t, strings.HasPrefix(cm.ArchiveWrites[0].Label, ReplacedLabelPrefix("c")))
	want := make([]string, len(res.Kept))
	for i, k := range res.Kept {
		want[i] = res.History[k].Content
	}

	// The originals sent again: the view has the replacements, not due.
	again := r.compressCaller(t, "c", slices.Clone(hist), c, true)
	require.False(t, again.Failed, again.FailureMessage)
	got := make([]string, len(again.Kept))
	for i, k := range again.Kept {
		got[i] = again.History[k].Content
	}
	assert.Equal(t, want, got, "the view re-renders the replacements")
	assert.Len(t, r.mem.commits, 1, "nothing more to do")
	assert.Equal(t, res.TokensAfter, again.TokensBefore)

	// The replaced list sent back (the caller took the result's history)
	// with more turns: used as it is, the replacements not replaced again.
	more := agentHistory(16, 2000)
	list := append(slices.Clone(res.History), more[len(hist):]...)
	third := r.compressCaller(t, "c", list, c, false)
	require.False(t, third.Failed, third.FailureMessage)
	for _, w := range r.mem.commits[len(r.mem.commits)-1].RecallWrites {
		if IsReplacement(&Message{Content: w.Content}) {
			assert.Empty(t, w.SearchText, "a replacement in recall is not indexed again: its original is")
		}
	}
}

// The window guarantee as a property: random tool loops, targets and
// settings; a success fits the window and loses nothing; the only
// failure is over_window.
func FuzzWindowGuarantee(f *testing.F) {
	for _, s := range []uint64{1, 2, 3, 42, 1000} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		hist := agentHistory(2+rng.IntN(30), 50+rng.IntN(4000))
		for i := range hist {
			if rng.IntN(25) == 0 && hist[i].Role != RoleTool {
				hist[i].Pinned = true
			}
		}
		if rng.IntN(3) == 0 {
			hist = append(hist, Message{ID: "big", Role: RoleUser, Content: words("big", 1000+rng.IntN(40000)),
				CreatedAt: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), HasCreatedAt: true})
		}
		c := DefaultConfig()
		c.KeepRecent = rng.IntN(12)
		c.ChunkSize = 2 + rng.IntN(10)
		if rng.IntN(2) == 0 {
			c.ClearToolResults = rng.IntN(6)
		}
		if rng.IntN(3) == 0 {
			c.ClearExcludeTools = []string{"grep"}
		}
		before := HistoryTokens(hist, &c)
		window := 300 + rng.IntN(before)
		if rng.IntN(2) == 0 {
			c.TargetTokens = window
		} else {
			c.ModelMaxTokens = window * 10 / 8
			window = int(c.ContextBudget * float64(c.ModelMaxTokens))
		}
		r := newRig()
		res := r.compress(t, "c", hist, c)
		if res.Failed {
			require.Contains(t, []string{FailOverWindow, FailNoGain}, res.FailureCode, res.FailureMessage)
			require.Empty(t, r.mem.commits)
			return
		}
		checkCompaction(t, hist, res, &c, max(window, min(before, window)), r.mem.commits)
	})
}

// A window not much larger than the clip-archive's own lines (a header
// and a dated line per batch shown): every batch is re-summarized into
// one, so the newest messages still fit beside it.
func TestWindowFoldsTheArchiveForASmallWindow(t *testing.T) {
	r := newRig()
	for i := 0; i < 3; i++ {
		b := Batch{Content: "older facts " + strconv.Itoa(i), MessageCount: 4, Method: MethodLLM,
			Start: time.Date(2026, 1, 1, i, 0, 0, 0, time.UTC), End: time.Date(2026, 1, 1, i, 30, 0, 0, time.UTC),
			SourceMessageIDs: []string{"x" + strconv.Itoa(i)}}
		r.mem.blocks = append(r.mem.blocks, Block{ID: "old" + strconv.Itoa(i), Label: BatchLabel("c", &b), Content: FormatBatchBlock("c", &b)})
	}
	hist := agentHistory(8, 600)
	c := DefaultConfig()
	c.TargetTokens = 300
	res := r.compress(t, "c", hist, c)
	checkCompaction(t, hist, res, &c, 300, r.mem.commits)
	require.Len(t, r.mem.commits, 1)
	cm := r.mem.commits[0]
	assert.ElementsMatch(t, []string{"old0", "old1", "old2"}, cm.ArchiveDeletes, "every live batch folded")
	require.Len(t, res.Batches, 1)
	assert.Equal(t, 1, res.Batches[0].Depth)
	assert.Equal(t, 12+res.MessagesCompressed, res.Batches[0].MessageCount)
	assert.Contains(t, res.Insert.Content, "[Batch 1 — depth 1,")
	assert.NotContains(t, res.Insert.Content, "[Batch 2")
}
