package clipfold_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clipfold/clipfold"
	"github.com/clipfold/clipfold/hostfuncs/llm"
	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/hostfuncs/store/sqlite"
	"github.com/clipfold/clipfold/internal/fakellm"
	"github.com/stretchr/testify/require"
)

// aheadConfig makes a compaction due after a few frameworkTurns: the limit
// is 2,400 tokens, the soft threshold 1,680.
var aheadConfig = map[string]any{"keep_recent": 4, "max_summary_tokens": 120, "model_max_tokens": 3000}

// openAhead opens a Compactor on the plug-in under test with an
// OpenAI-compatible summarizer (fakellm) over real HTTP, on st (nil: a
// SQLite file of its own).
func openAhead(t *testing.T, srv *fakellm.Server, st store.Store, cfg map[string]any) *clipfold.Compactor {
	t.Helper()
	h := httptest.NewServer(srv)
	t.Cleanup(h.Close)
	client, err := llm.NewOpenAICompat(llm.Config{BaseURL: h.URL, APIKey: "k", Model: "m"})
	require.NoError(t, err)
	wasm := pluginUnderTest(t)
	if st == nil {
		s, err := sqlite.Open(filepath.Join(t.TempDir(), "ahead.db"))
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		st = s
	}
	c, err := clipfold.Open(context.Background(), clipfold.Options{Wasm: wasm, LLM: client, Store: st, Config: cfg})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// until calls CompactAhead with the same list until a prepared compaction
// is applied (the background work finishes shortly after the summarizer
// answers).
func until(t *testing.T, c *clipfold.Compactor, conv string, list []json.RawMessage, opts *clipfold.AheadOptions) *clipfold.AheadResult {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r, err := c.CompactAhead(context.Background(), conv, list, opts)
		require.NoError(t, err)
		if r.Compaction != nil || r.Discarded != "" || time.Now().After(deadline) {
			return r
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func isClipArchive(m json.RawMessage) bool {
	return strings.Contains(string(m), "[Context Summary")
}

// The agent never waits: over the soft threshold a compaction starts in
// the background and the call returns at once; turns go on while the
// summarizer works; the next call that finds it done applies it, with the
// messages appended meanwhile after the clip-archive, byte for byte. For a
// caller-owned list sent back as returned, and for one resent whole.
func TestCompactAheadAppliesInTheBackground(t *testing.T) {
	for _, resend := range []bool{false, true} {
		t.Run(map[bool]string{false: "list replaced", true: "whole list resent"}[resend], func(t *testing.T) {
			srv := &fakellm.Server{Gate: make(chan struct{})}
			c := openAhead(t, srv, nil, aheadConfig)
			ctx := context.Background()
			opts := &clipfold.AheadOptions{CallerOwned: true}
			var list, everything []json.RawMessage
			var started *clipfold.AheadResult
			turn := 0
			for ; started == nil; turn++ {
				require.Less(t, turn, 40, "never over the soft threshold")
				list = append(list, frameworkTurn(turn)...)
				everything = append(everything, frameworkTurn(turn)...)
				sent := list
				if resend {
					sent = everything
				}
				r, err := c.CompactAhead(ctx, "bg", sent, opts)
				require.NoError(t, err)
				require.Nil(t, r.Compaction, "turn %d: nothing is compacted before the soft threshold", turn)
				require.Equal(t, time.Duration(0), r.Waited)
				list = r.History
				if r.Started {
					require.Greater(t, r.Tokens, r.PrepareLimit)
					require.LessOrEqual(t, r.Tokens, r.Limit)
					started = r
				}
			}
			snapshot := len(list)
			// The summarizer is held: turns go on, nobody waits.
			for i := 0; i < 2; i++ {
				list = append(list, frameworkTurn(turn)...)
				everything = append(everything, frameworkTurn(turn)...)
				turn++
				sent := list
				if resend {
					sent = everything
				}
				start := time.Now()
				r, err := c.CompactAhead(ctx, "bg", sent, opts)
				require.NoError(t, err)
				require.Less(t, time.Since(start), time.Second)
				require.Nil(t, r.Compaction)
				require.False(t, r.Started, "one compaction at a time")
				require.LessOrEqual(t, r.Tokens, r.Limit, "the test must stay under the limit")
				list = r.History
			}
			require.Equal(t, 0, srv.Answered())
			close(srv.Gate)
			sent := list
			if resend {
				sent = everything
			}
			r := until(t, c, "bg", sent, opts)
			require.Empty(t, r.Discarded)
			require.NotNil(t, r.Compaction)
			require.True(t, r.Prepared)
			require.Equal(t, time.Duration(0), r.Waited)
			require.False(t, r.Compaction.Failed, r.Compaction.FailureMessage)
			require.Greater(t, r.Compaction.MessagesCompressed, 0)
			require.True(t, isClipArchive(r.History[0]))
			// The messages appended after the snapshot follow, untouched.
			tail := list[snapshot:]
			require.Equal(t, tail, r.History[len(r.History)-len(tail):])
			require.Less(t, r.Tokens, started.Tokens)
			// Every removed message is in recall storage.
			for _, m := range list[:snapshot] {
				if isClipArchive(m) || containsRaw(r.History, m) {
					continue
				}
				id := decodedID(t, "bg", list, m)
				_, err := c.Store().Recall(ctx, "bg", id)
				require.NoError(t, err, "removed message %s is in recall", id)
			}
			// The next turn continues from the compacted view.
			list = append(r.History, frameworkTurn(turn)...)
			everything = append(everything, frameworkTurn(turn)...)
			sent = list
			if resend {
				sent = everything
			}
			next, err := c.CompactAhead(ctx, "bg", sent, opts)
			require.NoError(t, err)
			require.Equal(t, list, next.History)
		})
	}
}

func containsRaw(list []json.RawMessage, m json.RawMessage) bool {
	for _, x := range list {
		if string(x) == string(m) {
			return true
		}
	}
	return false
}

// decodedID is m's id in list as compress derives it.
func decodedID(t *testing.T, conv string, list []json.RawMessage, m json.RawMessage) string {
	t.Helper()
	msgs, err := clipfold.DecodeHistory(conv, list)
	require.NoError(t, err)
	for i := range list {
		if string(list[i]) == string(m) {
			return msgs[i].ID
		}
	}
	t.Fatalf("message not in the list: %s", m)
	return ""
}

// Reaching the limit before the background work is done, the agent waits
// for the rest of it (not for a compaction of its own), which is then
// applied: one compaction, its summarizer calls made once.
func TestCompactAheadWaitsOnlyAtTheLimit(t *testing.T) {
	srv := &fakellm.Server{Gate: make(chan struct{})}
	c := openAhead(t, srv, nil, aheadConfig)
	ctx := context.Background()
	opts := &clipfold.AheadOptions{CallerOwned: true}
	var list []json.RawMessage
	started := false
	var r *clipfold.AheadResult
	for turn := 0; ; turn++ {
		require.Less(t, turn, 60)
		list = append(list, frameworkTurn(turn)...)
		if started {
			// Is this turn over the limit? Then the call below waits:
			// let the summarizer answer a little later.
			due, err := c.ShouldCompact(ctx, list, nil)
			require.NoError(t, err)
			if due.Due {
				go func() { time.Sleep(300 * time.Millisecond); close(srv.Gate) }()
			}
		}
		var err error
		r, err = c.CompactAhead(ctx, "limit", list, opts)
		require.NoError(t, err)
		started = started || r.Started
		if r.Compaction != nil {
			break
		}
		list = r.History
	}
	require.True(t, started)
	require.True(t, r.Prepared, "the compaction under way is the one applied")
	require.GreaterOrEqual(t, r.Waited, 250*time.Millisecond)
	require.Less(t, r.Waited, 10*time.Second)
	require.LessOrEqual(t, r.Tokens, r.Limit)
	require.Equal(t, srv.Calls(), r.Compaction.LLMCalls, "no other compaction called the summarizer")
}

// A history changed under a prepared compaction (a message it summarized
// edited, another compaction committed first) drops it: nothing is
// committed from it, nothing is lost, and the next turn starts anew.
func TestCompactAheadDiscardsAStaleCompaction(t *testing.T) {
	ctx := context.Background()
	prepare := func(t *testing.T, c *clipfold.Compactor, srv *fakellm.Server, conv string, opts *clipfold.AheadOptions) []json.RawMessage {
		var list []json.RawMessage
		for turn := 0; turn < 40; turn++ {
			list = append(list, frameworkTurn(turn)...)
			var history []json.RawMessage
			if opts.CallerOwned {
				history = list
			} else {
				history = frameworkTurn(turn)
			}
			r, err := c.CompactAhead(ctx, conv, history, opts)
			require.NoError(t, err)
			if opts.CallerOwned {
				list = r.History
			}
			if r.Started {
				close(srv.Gate)
				for srv.Answered() == 0 {
					time.Sleep(5 * time.Millisecond)
				}
				time.Sleep(100 * time.Millisecond) // the dry run ends after the answer
				return list
			}
		}
		t.Fatal("never over the soft threshold")
		return nil
	}
	t.Run("caller-owned: a list that does not continue, the work under way still held", func(t *testing.T) {
		srv := &fakellm.Server{Gate: make(chan struct{})}
		c := openAhead(t, srv, nil, aheadConfig)
		opts := &clipfold.AheadOptions{CallerOwned: true}
		var list []json.RawMessage
		for turn := 0; ; turn++ {
			require.Less(t, turn, 40)
			list = append(list, frameworkTurn(turn)...)
			r, err := c.CompactAhead(ctx, "held", list, opts)
			require.NoError(t, err)
			list = r.History
			if r.Started {
				break
			}
		}
		other := append([]json.RawMessage{json.RawMessage(`{"role":"user","content":"a list of another agent"}`)}, list[1:]...)
		go func() { time.Sleep(300 * time.Millisecond); close(srv.Gate) }()
		r, err := c.CompactAhead(ctx, "held", other, opts)
		require.NoError(t, err)
		require.Equal(t, "the history changed under it", r.Discarded)
		require.GreaterOrEqual(t, r.Waited, 250*time.Millisecond, "the wait for the work it dropped is reported")
	})
	t.Run("caller-owned: a summarized message edited", func(t *testing.T) {
		srv := &fakellm.Server{Gate: make(chan struct{})}
		c := openAhead(t, srv, nil, aheadConfig)
		opts := &clipfold.AheadOptions{CallerOwned: true}
		list := prepare(t, c, srv, "edit", opts)
		edited := append([]json.RawMessage(nil), list...)
		edited[2] = json.RawMessage(`{"role":"tool","tool_call_id":"call_0","content":"notes: module 0 was dropped"}`)
		r, err := c.CompactAhead(ctx, "edit", edited, opts)
		require.NoError(t, err)
		require.Equal(t, "the history changed under it", r.Discarded)
		require.Nil(t, r.Compaction)
		require.Equal(t, edited, r.History)
		blocks, err := c.Store().ListBlocks(ctx, "archival", "compaction-batch-edit-")
		require.NoError(t, err)
		require.Empty(t, blocks, "nothing of it was committed")
		// Still over the soft threshold: it prepares again, on the history
		// as it now is.
		require.True(t, r.Started)
	})
	t.Run("caller-owned: another compaction committed first", func(t *testing.T) {
		srv := &fakellm.Server{Gate: make(chan struct{})}
		st, err := sqlite.Open(filepath.Join(t.TempDir(), "won.db"))
		require.NoError(t, err)
		defer st.Close()
		c := openAhead(t, srv, st, aheadConfig)
		opts := &clipfold.AheadOptions{CallerOwned: true}
		list := prepare(t, c, srv, "won", opts)
		other := openAhead(t, &fakellm.Server{}, st, aheadConfig)
		res, err := other.Compress(ctx, "won", list, &clipfold.CompressOptions{CallerOwned: true})
		require.NoError(t, err)
		require.False(t, res.Failed, res.FailureMessage)
		r, err := c.CompactAhead(ctx, "won", list, opts)
		require.NoError(t, err)
		require.Equal(t, "another compaction committed first", r.Discarded)
		blocks, err := st.ListBlocks(ctx, "archival", "compaction-batch-won-")
		require.NoError(t, err)
		require.Len(t, blocks, res.BatchesCreated, "only the other compaction's batches")
	})
	t.Run("store-owned: another compaction committed first", func(t *testing.T) {
		srv := &fakellm.Server{Gate: make(chan struct{})}
		st, err := sqlite.Open(filepath.Join(t.TempDir(), "store.db"))
		require.NoError(t, err)
		defer st.Close()
		c := openAhead(t, srv, st, aheadConfig)
		opts := &clipfold.AheadOptions{}
		prepare(t, c, srv, "so", opts)
		before, err := st.ActiveMessages(ctx, "so")
		require.NoError(t, err)
		other := openAhead(t, &fakellm.Server{}, st, aheadConfig)
		res, err := other.Compress(ctx, "so", nil, nil)
		require.NoError(t, err)
		require.False(t, res.Failed, res.FailureMessage)
		r, err := c.CompactAhead(ctx, "so", nil, opts)
		require.NoError(t, err)
		require.Contains(t, r.Discarded, "the history changed under it")
		require.Nil(t, r.Compaction)
		after, err := st.ActiveMessages(ctx, "so")
		require.NoError(t, err)
		require.Equal(t, len(res.History), len(after), "the store holds the other compaction's history")
		for _, m := range before {
			if _, err := st.Recall(ctx, "so", m.ID); err != nil {
				require.True(t, activeHas(after, m.ID), "message %s neither active nor recalled", m.ID)
			}
		}
	})
}

func activeHas(active []store.Message, id string) bool {
	for _, m := range active {
		if m.ID == id {
			return true
		}
	}
	return false
}

// bigTurn is a frameworkTurn whose tool result is a long log (about 870
// tokens): kept whole, it would not fit a compaction's target.
func bigTurn(i int) []json.RawMessage {
	out := frameworkTurn(i)
	out[2] = mustJSON(map[string]any{"role": "tool", "tool_call_id": fmt.Sprintf("call_%d", i),
		"content": strings.Repeat(fmt.Sprintf("log line %d: retry budget exhausted for module %d after 3 attempts\n", i, i), 40)})
	return out
}

// Store-owned: the messages stored while the compaction was prepared stay
// in the active history after the clip-archive; kept messages the commit
// replaces (a tool result cleared to fit the target) are replaced in
// place. Caller-owned the same, the replacement recorded in the archive.
func TestCompactAheadKeepsWhatWasAppended(t *testing.T) {
	cfg := map[string]any{"keep_recent": 6, "max_summary_tokens": 120, "model_max_tokens": 3000}
	for _, callerOwned := range []bool{false, true} {
		t.Run(map[bool]string{false: "store-owned", true: "caller-owned"}[callerOwned], func(t *testing.T) {
			srv := &fakellm.Server{Gate: make(chan struct{})}
			st, err := sqlite.Open(filepath.Join(t.TempDir(), "kept.db"))
			require.NoError(t, err)
			defer st.Close()
			c := openAhead(t, srv, st, cfg)
			ctx := context.Background()
			opts := &clipfold.AheadOptions{CallerOwned: callerOwned}
			var list, appended []json.RawMessage
			started := false
			for turn := 0; turn < 40; turn++ {
				next := bigTurn(turn)
				if started {
					next = frameworkTurn(turn)
					appended = append(appended, next...)
				}
				list = append(list, next...)
				history := next
				if callerOwned {
					history = list
				}
				r, err := c.CompactAhead(ctx, "kept", history, opts)
				require.NoError(t, err)
				list = r.History
				if started {
					break
				}
				started = r.Started
			}
			require.True(t, started)
			close(srv.Gate)
			history := []json.RawMessage(nil)
			if callerOwned {
				history = list
			}
			r := until(t, c, "kept", history, opts)
			require.Empty(t, r.Discarded)
			require.True(t, r.Prepared)
			require.Greater(t, r.Compaction.ToolResultsCleared, 0, "the commit replaced kept messages")
			if callerOwned {
				records, err := st.ListBlocks(ctx, "archival", "compaction-replaced-kept-")
				require.NoError(t, err)
				require.Len(t, records, 1)
			} else {
				require.Contains(t, string(r.Compaction.Commit), `"replace_messages"`)
			}
			require.True(t, isClipArchive(r.History[0]))
			require.Equal(t, appended, r.History[len(r.History)-len(appended):], "appended meanwhile, after the clip-archive, untouched")
			if !callerOwned {
				active, err := st.ActiveMessages(ctx, "kept")
				require.NoError(t, err)
				require.Len(t, active, len(r.History))
				for i := range active {
					require.JSONEq(t, string(r.History[i]), string(active[i].Raw))
				}
			}
			// The cleared result's full output is in recall storage.
			for _, m := range list {
				if strings.Contains(string(m), "log line 1:") && !containsRaw(r.History, m) {
					_, err := st.Recall(ctx, "kept", decodedID(t, "kept", list, m))
					require.NoError(t, err)
				}
			}
		})
	}
}

// With a summarizer, Open sizes chunks to what one request holds
// (max_chunk_tokens "auto"): the bundled 884-message session is one
// summarization call, not 44 of 20 messages, each folding in the last.
func TestOpenChunksToTheSummarizersInput(t *testing.T) {
	raw, err := os.ReadFile("testdata/conversations/debugging-session.json")
	require.NoError(t, err)
	var history []json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &history))
	ctx := context.Background()
	srv := &fakellm.Server{}
	res, err := openAhead(t, srv, nil, nil).Compress(ctx, "conv-checkout-inc-4471", history, nil)
	require.NoError(t, err)
	require.False(t, res.Failed, res.FailureMessage)
	require.Equal(t, len(history)-6, res.MessagesCompressed) // all but the system prompt (pinned) and keep_recent
	require.Equal(t, 1, res.LLMCalls)
	require.Equal(t, 1, srv.Calls())

	byCount := &fakellm.Server{}
	res, err = openAhead(t, byCount, nil, map[string]any{"chunk_size": 20}).Compress(ctx, "conv-checkout-inc-4471", history, nil)
	require.NoError(t, err)
	require.False(t, res.Failed, res.FailureMessage)
	require.Greater(t, res.LLMCalls, 40, "chunk_size set: chunks of 20 messages")
}

// A history that grows fast starts its compaction before the soft
// threshold: over the limit minus twice the growth last seen, so that it
// is done before the limit. The same count reached in small steps starts
// none.
func TestCompactAheadStartsEarlierWhenTheHistoryGrowsFast(t *testing.T) {
	cfg := map[string]any{"keep_recent": 2, "max_summary_tokens": 120, "model_max_tokens": 10000}
	c := openAhead(t, &fakellm.Server{}, nil, cfg)
	ctx := context.Background()
	due, err := c.ShouldCompact(ctx, nil, nil)
	require.NoError(t, err)
	limit, prepare := due.Limit, due.PrepareLimit
	count := func(list []json.RawMessage) int {
		d, err := c.ShouldCompact(ctx, list, nil)
		require.NoError(t, err)
		return d.Tokens
	}
	// note is a user message of about n tokens.
	note := func(i, n int) json.RawMessage {
		var b strings.Builder
		for k := 0; b.Len() < 4*n; k++ {
			fmt.Fprintf(&b, "note %d line %d: the retry budget of module %d stays at %d. ", i, k, k%7, 10+k%5)
		}
		return mustJSON(map[string]any{"role": "user", "content": b.String()})
	}
	// grow appends notes of step tokens until the count passes to.
	grow := func(list []json.RawMessage, step, to int) []json.RawMessage {
		for count(list) < to {
			list = append(list, note(len(list), step))
		}
		return list
	}
	opts := &clipfold.AheadOptions{CallerOwned: true}
	goal := prepare - limit/20 // under the soft threshold

	// Fast: one call at about 35% of the limit, the next at goal.
	fast := grow(nil, limit/10, limit*35/100)
	r, err := c.CompactAhead(ctx, "fast", fast, opts)
	require.NoError(t, err)
	require.False(t, r.Started)
	before := r.Tokens
	fast = grow(r.History, limit/50, goal)
	r, err = c.CompactAhead(ctx, "fast", fast, opts)
	require.NoError(t, err)
	require.Less(t, r.Tokens, prepare, "under the soft threshold")
	require.Greater(t, r.Tokens, limit-2*(r.Tokens-before), "within twice the growth of the limit")
	require.True(t, r.Started, "a compaction starts before the soft threshold")

	// Slow: the same count in steps of 2% of the limit.
	slow := []json.RawMessage{}
	for {
		next := grow(slow, limit/50, count(slow)+limit/50)
		if count(next) >= r.Tokens {
			break
		}
		slow = next
		s, err := c.CompactAhead(ctx, "slow", slow, opts)
		require.NoError(t, err)
		require.False(t, s.Started, "at %d of %d tokens, growing by 2%%", s.Tokens, limit)
		slow = s.History
	}
}

// In a small window the compaction prepared ahead still succeeds: its
// target is never below half the target at the limit, where the newest
// messages and the clip-archive fit. Lower, every dry run failed
// over_window, three such failures opened the breaker, and each
// compaction ran at the limit, with the agent waiting.
func TestCompactAheadInASmallWindow(t *testing.T) {
	srv := &fakellm.Server{}
	c := openAhead(t, srv, nil, map[string]any{"keep_recent": 4, "max_summary_tokens": 120, "model_max_tokens": 2000})
	opts := &clipfold.AheadOptions{CallerOwned: true}
	// A system prompt of about 300 tokens, kept by every compaction.
	list := []json.RawMessage{mustJSON(map[string]any{"role": "system", "content": strings.Repeat("You are the release assistant: answer from the notes, cite the module, keep budgets exact. ", 14)})}
	applied, atLimit := 0, 0
	for turn := 0; turn < 120; turn += 4 { // four tool calls a model call: a fast-growing history
		for k := turn; k < turn+4; k++ {
			list = append(list, frameworkTurn(k)...)
		}
		r, err := c.CompactAhead(context.Background(), "small", list, opts)
		require.NoError(t, err)
		if r.Started {
			// The next model call comes once the work is done.
			r = until(t, c, "small", r.History, opts)
		}
		require.NotContains(t, r.Discarded, "failed", "turn %d", turn)
		require.LessOrEqual(t, r.Tokens, r.Limit)
		if r.Compaction != nil {
			require.False(t, r.Compaction.Failed, "turn %d: %s", turn, r.Compaction.FailureMessage)
			if r.Prepared {
				applied++
			} else {
				atLimit++
			}
		}
		list = r.History
	}
	require.GreaterOrEqual(t, applied, 3, "compactions prepared ahead and applied")
	require.Zero(t, atLimit, "compactions run at the limit")
}
