package core

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Fakes of the ports, for the compress tests of core. The harness tests
// the same pipeline through the real plug-in and real stores.

type testClock struct{ t time.Time }

func (c *testClock) Now() time.Time        { return c.t }
func (c *testClock) Sleep(d time.Duration) { c.t = c.t.Add(d) }

// fullLLM answers every request with a summary of exactly max_tokens
// estimated tokens: the worst case the archive estimate must absorb.
type fullLLM struct {
	reqs []ModelRequest
	fail bool
}

func (l *fullLLM) Complete(req *ModelRequest) (ModelResponse, error) {
	l.reqs = append(l.reqs, *req)
	if l.fail {
		return ModelResponse{}, &LLMError{Code: LLMUnavailable, Message: "down", Retryable: false}
	}
	n := max(1, req.MaxTokens*4)
	return ModelResponse{Content: []ContentBlock{{Type: "text", Text: strings.Repeat("s", n)}}}, nil
}

// memArchive is an archival memory that applies commits.
type memArchive struct {
	blocks  []Block
	next    int
	lists   int
	commits []Commit
}

func (m *memArchive) List(_, prefix string) ([]Block, error) {
	m.lists++
	var out []Block
	for _, b := range m.blocks {
		if strings.HasPrefix(b.Label, prefix) {
			out = append(out, b)
		}
	}
	return out, nil
}

func (m *memArchive) Commit(c *Commit) error {
	m.commits = append(m.commits, *c)
	m.blocks = slices.DeleteFunc(m.blocks, func(b Block) bool { return slices.Contains(c.ArchiveDeletes, b.ID) })
	for _, w := range c.ArchiveWrites {
		m.next++
		m.blocks = append(m.blocks, Block{ID: "b" + strconv.Itoa(m.next), Label: w.Label, Content: w.Content})
	}
	return nil
}

type compressRig struct {
	llm   *fullLLM
	mem   *memArchive
	clock *testClock
}

func newRig() *compressRig {
	return &compressRig{llm: &fullLLM{}, mem: &memArchive{}, clock: &testClock{t: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}}
}

func (r *compressRig) compress(t *testing.T, conv string, hist []Message, c Config) CompressResult {
	t.Helper()
	r.clock.t = r.clock.t.Add(time.Hour)
	return Compress(&CompressInput{ConversationID: conv, History: hist, Config: c, OperationID: "op" + strconv.Itoa(len(r.mem.commits))},
		Ports{LLM: r.llm, Memory: r.mem, Committer: r.mem, Clock: r.clock, Breakers: &Breakers{}, Rewriter: textRewriter{}})
}

// apply is the history after a compaction: the clip-archive, then the kept.
func apply(hist []Message, res CompressResult) []Message {
	if res.Kept == nil {
		return hist
	}
	var out []Message
	if res.Insert != nil {
		out = append(out, Message{ID: res.Insert.ID, Role: RoleSystem, Content: res.Insert.Content, CreatedAt: res.Insert.CreatedAt, HasCreatedAt: true})
	}
	for _, k := range res.Kept {
		out = append(out, res.History[k])
	}
	return out
}

func targetConfig(target int) Config {
	c := DefaultConfig()
	c.TargetTokens = target
	return c
}

// words makes a message body of about n code points.
func words(tag string, n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(tag)
		b.WriteString(" context words ")
	}
	return b.String()[:n]
}

// plainHistory: n messages of 400 code points (100 tokens) each, one an
// hour; every fifth carries signals that raise its importance, so the
// importance order is not the time order.
func plainHistory(n int) []Message {
	var msgs []Message
	for i := 0; i < n; i++ {
		role := RoleUser
		if i%2 == 1 {
			role = RoleAssistant
		}
		c := words("m"+strconv.Itoa(i), 400)
		if i%5 == 0 {
			c = "We decided to fix the error? " + c[29:]
		}
		msgs = append(msgs, Message{ID: "m" + strconv.Itoa(i), Role: role, Content: c,
			CreatedAt: time.Date(2026, 1, 1, i, 0, 0, 0, time.UTC), HasCreatedAt: true})
	}
	return msgs
}

func keptIDs(hist []Message, res CompressResult) []string {
	var ids []string
	for _, k := range res.Kept {
		ids = append(ids, hist[k].ID)
	}
	return ids
}

// The newest messages that fit are kept, contiguous and in order; the
// older rest is compressed in the split's importance order; the result
// sits under the target even when every summary is as long as allowed.
func TestTargetKeepsNewestThatFit(t *testing.T) {
	hist := plainHistory(60) // 6,000 tokens
	for _, target := range []int{1500, 2000, 3000, 4500} {
		t.Run(strconv.Itoa(target), func(t *testing.T) {
			r := newRig()
			c := targetConfig(target)
			res := r.compress(t, "c", hist, c)
			require.False(t, res.Failed, res.FailureMessage)
			assert.LessOrEqual(t, res.TokensAfter, target)
			// Kept: a contiguous run of the newest.
			first := res.Kept[0]
			for i, k := range res.Kept {
				require.Equal(t, first+i, k, "kept messages are the newest, contiguous")
			}
			require.Equal(t, len(hist)-1, res.Kept[len(res.Kept)-1])
			require.GreaterOrEqual(t, len(res.Kept), c.KeepRecent)
			// Near the target: one more message would not have fitted
			// with the archive's worst case, so the kept run is not
			// needlessly short.
			assert.Greater(t, res.TokensAfter+2*100+ceilDiv4(archiveBatchRunes)*4, target*3/5)
			// Compressed: everything older, in importance order.
			s := Split(hist, &c)
			var want []int
			for _, i := range s.ToCompress {
				if i < first {
					want = append(want, i)
				}
			}
			commit := r.mem.commits[0]
			var removed []int
			for _, id := range commit.RemoveMessageIDs {
				i, _ := strconv.Atoi(strings.TrimPrefix(id, "m"))
				removed = append(removed, i)
			}
			var fromBatches []int
			for _, b := range res.Batches {
				for _, id := range b.SourceMessageIDs {
					i, _ := strconv.Atoi(strings.TrimPrefix(id, "m"))
					fromBatches = append(fromBatches, i)
				}
			}
			if len(res.Batches) == res.BatchesCreated { // no re-summarization
				assert.Equal(t, want, fromBatches, "chunks follow the importance order")
			}
			assert.ElementsMatch(t, want, removed)
		})
	}
}

// The summaries' max_tokens are capped so that the archive stays within
// its share of the target: with a 4,000-token limit and a 2,000 target,
// never 1,024-token summaries.
func TestTargetCapsSummaries(t *testing.T) {
	r := newRig()
	c := targetConfig(2000)
	hist := plainHistory(80)
	for round := 0; round < 6; round++ {
		res := r.compress(t, "c", hist, c)
		require.False(t, res.Failed, res.FailureMessage)
		require.LessOrEqual(t, res.TokensAfter, 2000)
		hist = apply(hist, res)
		for i := 0; i < 30; i++ { // the conversation goes on
			n := 1000 + round*100 + i
			hist = append(hist, Message{ID: "m" + strconv.Itoa(n), Role: RoleUser, Content: words("n"+strconv.Itoa(n), 400),
				CreatedAt: time.Date(2026, 2, 1, 0, n, 0, 0, time.UTC), HasCreatedAt: true})
		}
	}
	require.NotEmpty(t, r.llm.reqs)
	resum := 0
	for _, req := range r.llm.reqs {
		assert.Less(t, req.MaxTokens, 1024)
		if strings.HasPrefix(req.Messages[0].Content, SummaryBatchPrefix) {
			resum++
		}
	}
	assert.Positive(t, resum, "the batches outgrew the clip window and were re-summarized")
	cc, rc := (&run{c: &c}).summaryCaps(c.TargetTokens, 0)
	assert.LessOrEqual(t, (c.ClipFirst+c.ClipLast-1)*cc+rc, 2000*targetArchivePct/100)

	t.Run("max_summary_tokens lower than the cap wins", func(t *testing.T) {
		c := targetConfig(100000)
		c.MaxSummaryTokens = 50
		cc, rc := (&run{c: &c}).summaryCaps(c.TargetTokens, 0)
		assert.Equal(t, 50, cc)
		assert.Equal(t, 50, rc)
	})
	t.Run("a tiny target still gives a valid cap", func(t *testing.T) {
		c := targetConfig(1)
		cc, rc := (&run{c: &c}).summaryCaps(c.TargetTokens, 0)
		assert.Equal(t, 1, cc)
		assert.Equal(t, 1, rc)
	})
}

// The chunks whose batches this compaction re-summarizes right away get
// the re-summary's room (the fold chooses what stays); only the batches
// that stay shown as they are (the last clip_last by start time) keep the
// smaller cap, so the archive still fits the target.
func TestTargetFoldedChunksGetRoom(t *testing.T) {
	r := newRig()
	c := targetConfig(2000)
	c.ChunkSize = 5
	hist := plainHistory(120)
	res := r.compress(t, "c", hist, c)
	require.False(t, res.Failed, res.FailureMessage)
	require.LessOrEqual(t, res.TokensAfter, 2000)
	cc, rc := (&run{c: &c}).summaryCaps(c.TargetTokens, 0)
	require.Less(t, cc, rc)
	var chunkCaps []int
	resum := 0
	for _, req := range r.llm.reqs {
		if strings.HasPrefix(req.Messages[0].Content, SummaryBatchPrefix) {
			resum++
			assert.Equal(t, rc, req.MaxTokens)
			continue
		}
		chunkCaps = append(chunkCaps, req.MaxTokens)
	}
	require.Equal(t, 1, resum, "the new batches outgrew the clip window at once")
	require.Greater(t, len(chunkCaps), c.ClipFirst+c.ClipLast+2)
	small := 0
	for _, n := range chunkCaps {
		if n == cc {
			small++
		} else {
			assert.Equal(t, rc, n)
		}
	}
	assert.Equal(t, c.ClipLast, small, "the batches shown as they are keep the small cap")
	require.Len(t, res.Batches, 1+c.ClipLast)
	for _, b := range res.Batches[1:] {
		assert.LessOrEqual(t, EstimateTokens(b.Content), cc)
	}

	t.Run("no re-summarization: every chunk keeps the small cap", func(t *testing.T) {
		r := newRig()
		c := targetConfig(2000)
		res := r.compress(t, "c", plainHistory(30), c)
		require.False(t, res.Failed, res.FailureMessage)
		require.NotEmpty(t, r.llm.reqs)
		for _, req := range r.llm.reqs {
			assert.Equal(t, cc, req.MaxTokens)
		}
	})
}

// A tool call and its results are kept or compressed together; pinned
// messages and the last keep_recent are always kept.
func TestTargetToolUnitsPinnedKeepRecent(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var hist []Message
	add := func(m Message) {
		m.ID = "m" + strconv.Itoa(len(hist))
		m.CreatedAt, m.HasCreatedAt = base.Add(time.Duration(len(hist))*time.Minute), true
		hist = append(hist, m)
	}
	add(Message{Role: RoleSystem, Content: "You are a helpful agent."}) // pinned by pin_system
	for i := 0; i < 20; i++ {
		n := strconv.Itoa(i)
		add(Message{Role: RoleUser, Content: words("u"+n, 300)})
		add(Message{Role: RoleAssistant, HasToolCalls: true, ToolCalls: []ToolCall{{ID: "call" + n + "a", Name: "read"}, {ID: "call" + n + "b", Name: "grep"}}})
		add(Message{Role: RoleTool, ToolCallID: "call" + n + "a", Content: words("ra"+n, 500)})
		add(Message{Role: RoleTool, ToolCallID: "call" + n + "b", Content: words("rb"+n, 500)})
		if i == 3 {
			add(Message{Role: RoleUser, Content: "Remember: the budget is $4,000.", Pinned: true})
		}
	}
	before := HistoryTokens(hist, new(DefaultConfig()))
	for target := 300; target < before; target += 211 {
		for _, keepRecent := range []int{0, 1, 5, 9} {
			c := targetConfig(target)
			c.KeepRecent = keepRecent
			r := newRig()
			res := r.compress(t, "c", hist, c)
			if target < 600 && res.Failed {
				// Below what the clip-archive's own lines need beside
				// the pinned messages: the window cannot be kept.
				require.Equal(t, FailOverWindow, res.FailureCode, res.FailureMessage)
				continue
			}
			require.False(t, res.Failed, "target %d: %s", target, res.FailureMessage)
			require.LessOrEqual(t, res.TokensAfter, target, "the window is a promise")
			kept := map[int]bool{}
			for _, k := range res.Kept {
				kept[k] = true
			}
			require.True(t, kept[0], "the system prompt is pinned")
			require.True(t, kept[17], "the pinned message is kept")
			if keepRecent > 0 {
				// keep_recent is a wish: the newest unit is kept, if
				// need be cleared or truncated.
				for i := len(hist) - 3; i < len(hist); i++ {
					require.True(t, kept[i], "the newest unit is kept (target %d, keep_recent %d)", target, keepRecent)
				}
			}
			// Units whole: a call is kept iff its results are.
			for i, m := range hist {
				if m.Role == RoleTool {
					call := i - 1
					for hist[call].Role == RoleTool {
						call--
					}
					require.Equal(t, kept[call], kept[i], "target %d: %s and its call %s", target, m.ID, hist[call].ID)
				}
			}
			// Contiguous: past the pinned ones, kept messages are a suffix.
			var rest []int
			for _, k := range res.Kept {
				if k != 0 && k != 17 {
					rest = append(rest, k)
				}
			}
			for i := 1; i < len(rest); i++ {
				if rest[i] != rest[i-1]+1 {
					require.Equal(t, 17, rest[i-1]+1, "only a pinned message may interrupt the kept run: %v", rest)
				}
			}
		}
	}
}

// Room is reserved for the archive the compaction produces: large live
// batches leave less room for verbatim messages, and the estimate after
// stays under the target even when the summaries are as long as allowed.
func TestTargetReservesArchiveRoom(t *testing.T) {
	hist := plainHistory(60)
	empty := newRig().compress(t, "c", hist, targetConfig(3000))
	require.False(t, empty.Failed, empty.FailureMessage)

	r := newRig()
	for i := 0; i < 3; i++ {
		b := Batch{Content: strings.Repeat("old facts ", 100), MessageCount: 10, Method: MethodLLM,
			Start: time.Date(2025, 12, 1, i, 0, 0, 0, time.UTC), End: time.Date(2025, 12, 1, i, 30, 0, 0, time.UTC),
			SourceMessageIDs: []string{"x" + strconv.Itoa(i)}}
		r.mem.blocks = append(r.mem.blocks, Block{ID: "old" + strconv.Itoa(i), Label: BatchLabel("c", &b), Content: FormatBatchBlock("c", &b)})
	}
	res := r.compress(t, "c", hist, targetConfig(3000))
	require.False(t, res.Failed, res.FailureMessage)
	assert.LessOrEqual(t, res.TokensAfter, 3000)
	assert.Less(t, len(res.Kept), len(empty.Kept), "the live batches take room the verbatim messages had")
	assert.Equal(t, 1, r.mem.lists, "memory_list is called once")
}

// Nothing to do: under the target (or nothing compressible) calls nothing.
func TestTargetNothingToDo(t *testing.T) {
	hist := plainHistory(10)
	r := newRig()
	res := r.compress(t, "c", hist, targetConfig(HistoryTokens(hist, new(DefaultConfig()))))
	assert.False(t, res.Failed)
	assert.Nil(t, res.Insert)
	assert.Equal(t, Identity(len(hist)), res.Kept)
	assert.Zero(t, r.mem.lists+len(r.llm.reqs)+len(r.mem.commits), "no host call")

	c := targetConfig(HistoryTokens(hist, new(DefaultConfig())) + 10)
	c.KeepRecent = 10
	res = r.compress(t, "c", hist, c)
	assert.False(t, res.Failed)
	assert.Zero(t, res.MessagesCompressed)
	assert.Zero(t, r.mem.lists+len(r.llm.reqs)+len(r.mem.commits), "no host call")

	// Nothing compressible but over the target: keep_recent is a wish,
	// the window a promise. The older kept messages are summarized.
	c = targetConfig(HistoryTokens(hist, new(DefaultConfig())) / 2)
	c.KeepRecent = 10
	res = r.compress(t, "c", hist, c)
	require.False(t, res.Failed, res.FailureMessage)
	assert.Positive(t, res.MessagesCompressed)
	assert.LessOrEqual(t, res.TokensAfter, c.TargetTokens)
	assert.Contains(t, res.Kept, len(hist)-1, "the newest message is kept")
}

// summarizer "extractive": compress summarizes in the plug-in from the
// messages (dated lines), never calls llm_complete, and marks the batches.
func TestSummarizerExtractive(t *testing.T) {
	var pairs []string
	for s := 1; s <= 6; s++ {
		pairs = append(pairs, casualSession(s)...)
	}
	hist := datedMsgs(may8, 20*time.Hour, pairs...)
	c := DefaultConfig()
	c.KeepRecent = 4
	c.Summarizer = SummarizerExtractive
	r := newRig()
	res := r.compress(t, "c", hist, c)
	require.False(t, res.Failed, res.FailureMessage)
	assert.Empty(t, r.llm.reqs, "llm_complete is never called")
	assert.Zero(t, res.LLMCalls)
	require.NotEmpty(t, res.Batches)
	for _, b := range res.Batches {
		assert.Equal(t, MethodExtractive, b.Method)
		for _, l := range strings.Split(b.Content, "\n") {
			assert.True(t, isDatePrefix(l), "dated: %q", l)
		}
	}
	assert.Contains(t, res.Insert.Content, "[2023-05-")

	t.Run("fallback uses the same dated summarizer", func(t *testing.T) {
		c := DefaultConfig()
		c.KeepRecent = 4
		c.Fallback = "extractive"
		r := newRig()
		r.llm.fail = true
		res := r.compress(t, "c", hist, c)
		require.False(t, res.Failed, res.FailureMessage)
		assert.Len(t, r.llm.reqs, 1, "after the first failure the rest is extractive")
		for _, b := range res.Batches {
			assert.Equal(t, MethodExtractive, b.Method)
			assert.True(t, isDatePrefix(b.Content), b.Content)
		}
	})
	t.Run("config", func(t *testing.T) {
		c := DefaultConfig()
		assert.Equal(t, SummarizerLLM, c.Summarizer)
		require.NoError(t, c.SetString("summarizer", "extractive", ""))
		assert.Equal(t, SummarizerExtractive, c.Summarizer)
		require.NoError(t, c.Set("summarizer", Value{Kind: KindNull}, ""))
		assert.Equal(t, SummarizerExtractive, c.Summarizer, "null leaves it")
		for _, v := range []Value{{Kind: KindString, Str: "LLM"}, {Kind: KindString, Str: ""}, {Kind: KindNumber, Num: 1}, {Kind: KindBool}} {
			err := c.Set("summarizer", v, "config.summarizer")
			var ce *Error
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, CodeInvalidInput, ce.Code)
			assert.Equal(t, "config.summarizer", ce.Field)
			assert.Contains(t, ce.Msg, `must be "llm" or "extractive"`)
		}
		assert.Contains(t, Keys, "summarizer")
	})
}

// The sample conversations replayed turn by turn, compacting to half (and
// to 0.8, the command's default share) of a 4,000-token limit whenever
// shouldCompact says so: never no_gain (nor any other failure), and
// compactions land under their target — with the extractive summarizer,
// and with an "LLM" whose summaries always use their whole max_tokens.
func TestTargetReplayConversations(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "conversations", "*.json"))
	require.NoError(t, err)
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".facts.json") {
			continue
		}
		n++
		msgs := loadConversation(t, f)
		for _, run := range []struct {
			summarizer string
			share      int // percent of the limit
		}{{SummarizerExtractive, 50}, {SummarizerLLM, 50}, {SummarizerExtractive, 80}, {SummarizerLLM, 80}} {
			summarizer := run.summarizer
			t.Run(filepath.Base(f)+"/"+summarizer+"/"+strconv.Itoa(run.share), func(t *testing.T) {
				c := DefaultConfig()
				// The seeds' arithmetic: under the conservative count the
				// keep_recent floor of debugging-session (large tool
				// outputs) alone is over half of this window, which only
				// clearing tool results brings under.
				c.TokenEstimator = EstimatorChars4
				c.ModelMaxTokens = 5000
				c.Summarizer = summarizer
				_, _, limit := ShouldCompact(nil, &c, nil)
				require.Equal(t, 4000, limit)
				c.TargetTokens = limit * run.share / 100
				r := newRig()
				var hist []Message
				compactions, over := 0, 0
				for _, turn := range splitTurnsCore(msgs) {
					hist = append(hist, turn...)
					if due, _, _ := ShouldCompact(hist, &c, nil); !due {
						continue
					}
					res := r.compress(t, "conv", hist, c)
					require.False(t, res.Failed, "%s: %s", res.FailureCode, res.FailureMessage)
					if res.MessagesCompressed == 0 {
						continue
					}
					compactions++
					assert.Less(t, res.TokensAfter, res.TokensBefore)
					if res.TokensAfter > c.TargetTokens {
						// Only when the floor (keep_recent, pinned) and
						// the archive alone exceed it: nothing more kept.
						floor := Split(hist, &c).ToKeep
						assert.Len(t, res.Kept, len(floor), "over the target (%d) with more than the floor kept", res.TokensAfter)
						over++
					}
					hist = apply(hist, res)
				}
				assert.Positive(t, compactions)
				assert.LessOrEqual(t, over*3, compactions, "mostly under the target")
				t.Logf("%d compactions, %d over the target", compactions, over)
			})
		}
	}
	require.Equal(t, 3, n)
}

// splitTurnsCore cuts a conversation into turns, each starting at a user
// message (as the command's run does).
func splitTurnsCore(msgs []Message) [][]Message {
	var turns [][]Message
	start := 0
	for i := 1; i < len(msgs); i++ {
		if msgs[i].Role == RoleUser && i > start {
			turns = append(turns, msgs[start:i])
			start = i
		}
	}
	return append(turns, msgs[start:])
}

func loadConversation(t *testing.T, path string) []Message {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var raw []struct {
		ID         string `json:"id"`
		Role       string `json:"role"`
		Content    string `json:"content"`
		ToolCallID string `json:"tool_call_id"`
		CreatedAt  string `json:"created_at"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	}
	require.NoError(t, json.Unmarshal(data, &raw))
	msgs := make([]Message, len(raw))
	for i, m := range raw {
		r, ok := ParseRole(m.Role)
		require.True(t, ok)
		ts, err := ParseTime(m.CreatedAt)
		require.NoError(t, err)
		msgs[i] = Message{ID: m.ID, Role: r, Content: m.Content, ToolCallID: m.ToolCallID, CreatedAt: ts, HasCreatedAt: true}
		for _, tc := range m.ToolCalls {
			msgs[i].ToolCalls = append(msgs[i].ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		msgs[i].HasToolCalls = len(m.ToolCalls) > 0
	}
	return msgs
}
