package core_test

import (
	"slices"
	"testing"

	"github.com/clipfold/clipfold/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSplit checks core.Split against docs/spec.md#split (seeds 001 and 004,
// AC1.6, AC3.4, AC3.6). Scores in the comments are worked out by hand with
// the formula of seed 001; "flat" turns off recency decay and the length
// bonus so that a score is the role weight plus the named bonuses.
func TestSplit(t *testing.T) {
	// Dense sequences used by several cases.
	same := func(n int) []core.Message {
		out := make([]core.Message, n)
		for i := range out {
			out[i] = user("same")
		}
		return out
	}

	tests := []struct {
		name       string
		msgs       []core.Message
		cfg        []kv
		prior      int
		toCompress []int
		toKeep     []int
	}{
		// --- sizes ---
		{name: "empty history", msgs: nil, prior: -1},
		{name: "one message, keep_recent 5: kept", msgs: []core.Message{user("hi")}, prior: -1, toKeep: []int{0}},
		{name: "one message, keep_recent 0: compressed", msgs: []core.Message{user("hi")},
			cfg: []kv{{"keep_recent", 0}}, prior: -1, toCompress: []int{0}},
		{name: "only a prior clip-archive", msgs: []core.Message{clip()}, prior: 0},

		// --- keep_recent boundary (AC1.6) ---
		{name: "10 messages, keep_recent 5 (seed 004)", msgs: same(10), cfg: flat,
			prior: -1, toCompress: []int{0, 1, 2, 3, 4}, toKeep: []int{5, 6, 7, 8, 9}},
		{name: "history as long as keep_recent: nothing to compress", msgs: same(5), prior: -1, toKeep: []int{0, 1, 2, 3, 4}},
		{name: "history shorter than keep_recent", msgs: same(3), cfg: []kv{{"keep_recent", 10}}, prior: -1, toKeep: []int{0, 1, 2}},
		{name: "keep_recent 0 compresses everything", msgs: same(4), cfg: with(flat, kv{"keep_recent", 0}),
			prior: -1, toCompress: []int{0, 1, 2, 3}},
		{name: "keep_recent 1", msgs: same(3), cfg: with(flat, kv{"keep_recent", 1}),
			prior: -1, toCompress: []int{0, 1}, toKeep: []int{2}},

		// --- prior clip-archive ---
		{name: "prior clip-archive is neither compressed nor kept",
			msgs: []core.Message{clip(), user("a"), user("b"), user("c")}, cfg: with(flat, kv{"keep_recent", 1}),
			prior: 0, toCompress: []int{1, 2}, toKeep: []int{3}},
		{name: "prior with fewer messages than keep_recent",
			msgs: []core.Message{clip(), user("a"), asst("b")}, prior: 0, toKeep: []int{1, 2}},
		{name: "prior and keep_recent 0", msgs: []core.Message{clip(), user("a"), user("b")},
			cfg: with(flat, kv{"keep_recent", 0}), prior: 0, toCompress: []int{1, 2}},
		{name: "a user message starting with [Context Summary is not a prior",
			msgs: []core.Message{user("[Context Summary — 1 messages compressed]"), user("b")}, cfg: with(flat, kv{"keep_recent", 1}),
			prior: -1, toCompress: []int{0}, toKeep: []int{1}},
		{name: "the prefix is case-sensitive: a lower-case one is a pinned system message",
			msgs: []core.Message{system("[context summary] notes"), user("b"), user("c")}, cfg: []kv{{"keep_recent", 1}},
			prior: -1, toCompress: []int{1}, toKeep: []int{0, 2}},
		{name: "a leading space is not the prefix: pinned system message",
			msgs: []core.Message{system(" [Context Summary"), user("b"), user("c")}, cfg: []kv{{"keep_recent", 1}},
			prior: -1, toCompress: []int{1}, toKeep: []int{0, 2}},
		// A clip-archive not at messages[0] is not the prior, and is not
		// pinned either (docs/spec.md#message: system messages other than a
		// clip-archive are pinned): it is compressed like any message, scored
		// as system (10) against the user message (5).
		{name: "a clip-archive after messages[0] is compressed, not pinned, not the prior",
			msgs: []core.Message{user("x"), clip(), user("y")}, cfg: with(flat, kv{"keep_recent", 1}),
			prior: -1, toCompress: []int{0, 1}, toKeep: []int{2}},

		// --- score order (AC3.4, AC3.6) ---
		// pin_system false, flat: 5, 10, 3, 5+2 → 3 < 5 < 7 < 10.
		{name: "ascending score across roles and the question bonus",
			msgs:  []core.Message{user("a"), system("b"), asst("c"), user("d?")},
			cfg:   with(flat, kv{"keep_recent", 0}, kv{"pin_system", false}),
			prior: -1, toCompress: []int{2, 0, 3, 1}},
		// decay 0.95, no length bonus: 5·0.95² = 4.5125 + 2 = 6.5125, 4.75, 5.
		{name: "recency: older scores lower unless a bonus lifts it",
			msgs:  []core.Message{user("a?"), user("b"), user("c")},
			cfg:   []kv{{"keep_recent", 0}, {"content_length_weight", 0.0}},
			prior: -1, toCompress: []int{1, 2, 0}},
		// flat: 5, 3, 5, 3, 5 → the 3s in original order, then the 5s.
		{name: "ties keep their original order (stable)",
			msgs:  []core.Message{user("x"), asst("y"), user("z"), asst("w"), user("v")},
			cfg:   with(flat, kv{"keep_recent", 0}),
			prior: -1, toCompress: []int{1, 3, 0, 2, 4}},
		{name: "all tied: original order", msgs: same(6), cfg: with(flat, kv{"keep_recent", 1}),
			prior: -1, toCompress: []int{0, 1, 2, 3, 4}, toKeep: []int{5}},
		// Recency index and total are the position in and the length of
		// the compressible slice (user 5, assistant 3, decay 0.5, no length
		// bonus).
		// question bonus 0.3: slice of 2 → "why?" = 2.5 + 0.3 = 2.8 < "sure" = 3
		// → [0, 1]. If the 2 kept messages counted (total 4): "why?" =
		// 5·0.125 + 0.3 = 0.925 > "sure" = 3·0.25 = 0.75 → [1, 0].
		{name: "kept messages do not count in the recency total",
			msgs: []core.Message{user("why?"), asst("sure"), user("next"), user("last")},
			cfg: []kv{{"keep_recent", 2}, {"recency_decay", 0.5}, {"question_bonus", 0.3},
				{"content_length_weight", 0.0}},
			prior: -1, toCompress: []int{0, 1}, toKeep: []int{2, 3}},
		// Same numbers with a prior in front: the prior is not in the slice.
		{name: "the prior does not count in the recency index",
			msgs: []core.Message{clip(), user("why?"), asst("sure"), user("next"), user("last")},
			cfg: []kv{{"keep_recent", 2}, {"recency_decay", 0.5}, {"question_bonus", 0.3},
				{"content_length_weight", 0.0}},
			prior: 0, toCompress: []int{1, 2}, toKeep: []int{3, 4}},

		// --- tool units ---
		// keep_recent 2 puts the boundary at 3, between the call's two
		// results: it moves back to the call.
		{name: "the keep boundary moves earlier so no result is kept without its call",
			msgs:  []core.Message{user("start"), call("", "c1", "c2"), result("c1", "r1"), result("c2", "r2"), user("thanks")},
			cfg:   []kv{{"keep_recent", 2}},
			prior: -1, toCompress: []int{0}, toKeep: []int{1, 2, 3, 4}},
		{name: "boundary right after the call's last result does not move",
			msgs: []core.Message{user("start"), call("", "c1"), result("c1", "r1"), user("a"), user("b")},
			cfg:  with(flat, kv{"keep_recent", 2}),
			// call 3+4 = 7, result 5, start 5 → start (0), then the unit.
			prior: -1, toCompress: []int{0, 1, 2}, toKeep: []int{3, 4}},
		{name: "a result without tool_call_id right after its call belongs to it",
			msgs:  []core.Message{user("start"), call("", "c1"), result("", "r1"), user("b")},
			cfg:   []kv{{"keep_recent", 2}},
			prior: -1, toCompress: []int{0}, toKeep: []int{1, 2, 3}},
		// The boundary at 3 (t3, answering a1) moves to 1; then t2 at 2
		// answers a0, so it moves again to 0.
		{name: "the boundary keeps moving until no unit straddles it",
			msgs:  []core.Message{call("", "c1"), call("", "c2"), result("c1", "r1"), result("c2", "r2")},
			cfg:   []kv{{"keep_recent", 1}},
			prior: -1, toKeep: []int{0, 1, 2, 3}},
		{name: "a result matched by id joins its call's unit across another message",
			msgs:  []core.Message{call("", "c1"), user("meanwhile"), result("c1", "r1"), user("end")},
			cfg:   []kv{{"keep_recent", 2}},
			prior: -1, toKeep: []int{0, 1, 2, 3}},
		// flat: call 7, "meanwhile" 5, result 5 → unit {0,2} scores 7.
		{name: "a unit joined by id sorts together, the message between goes first",
			msgs:  []core.Message{call("", "c1"), user("meanwhile"), result("c1", "r1"), user("end")},
			cfg:   with(flat, kv{"keep_recent", 1}),
			prior: -1, toCompress: []int{1, 0, 2}, toKeep: []int{3}},
		// flat: the assistant 3, "x" 5 → [1, 0]; the orphan result (no
		// call answers c9) is an ordinary kept message.
		{name: "an orphan tool result is its own unit",
			msgs:  []core.Message{user("x"), asst("plain"), result("c9", "zz")},
			cfg:   with(flat, kv{"keep_recent", 1}),
			prior: -1, toCompress: []int{1, 0}, toKeep: []int{2}},
		{name: "an orphan tool result in the compressible part sorts alone",
			msgs:  []core.Message{asst("plain"), result("c9", "zz"), user("k")},
			cfg:   with(flat, kv{"keep_recent", 1}),
			prior: -1, toCompress: []int{0, 1}, toKeep: []int{2}},
		// Default weights, total 4:
		//   0 "ok"      user 5·0.95³ = 4.286875 + 0.02          = 4.306875
		//   1 call ""   assistant 3·0.95² = 2.7075 + 4          = 6.7075
		//   2 result    user 5·0.95 = 4.75 + 2 (?) + 4·1.5 (error, bug,
		//               fix, fail) + 19/100                      = 12.94
		//   3 "what?"   5 + 2 + 0.05                             = 7.05
		// The unit {1,2} sorts by its best member, 12.94, after "what?";
		// by its call's score alone it would come before.
		{name: "a unit sorts by its best member's score",
			msgs:  []core.Message{user("ok"), call("", "c1"), result("c1", "error? bug fix fail"), user("what?"), asst("done")},
			cfg:   []kv{{"keep_recent", 1}},
			prior: -1, toCompress: []int{0, 3, 1, 2}, toKeep: []int{4}},
		// flat: call 3+4 = 7; results 5+2+1.5·3 = 11.5 (error, bug, fix)
		// and 5; "hello" 5 → "hello", then the unit in its inner order.
		{name: "a unit keeps its inner order: the call, then its results as they came",
			msgs:  []core.Message{call("", "c1", "c2"), result("c2", "error bug fix?"), result("c1", "x"), user("hello"), user("k")},
			cfg:   with(flat, kv{"keep_recent", 1}),
			prior: -1, toCompress: []int{3, 0, 1, 2}, toKeep: []int{4}},
		// A call scores 3 + 4 = 7; the second unit's result has '?' (5+2 =
		// 7): tie at 7 → original order of the units' first members.
		{name: "tied units keep their original order",
			msgs:  []core.Message{call("", "a"), result("a", "r"), call("", "b"), result("b", "r?"), user("k")},
			cfg:   with(flat, kv{"keep_recent", 1}),
			prior: -1, toCompress: []int{0, 1, 2, 3}, toKeep: []int{4}},

		// --- pinned ---
		// flat: "a" 5, "b" 3 → [2, 0]; the pinned ones stay in order,
		// ahead of the recent ones.
		{name: "pinned: true messages are kept in original order before the recent ones",
			msgs:  []core.Message{user("a"), pinned(user("remember: port 8443")), asst("b"), pinned(user("and this")), user("c"), asst("d")},
			cfg:   with(flat, kv{"keep_recent", 2}),
			prior: -1, toCompress: []int{2, 0}, toKeep: []int{1, 3, 4, 5}},
		{name: "system messages are pinned by pin_system (default true)",
			msgs:  []core.Message{system("You are a careful agent."), user("a"), user("b"), user("c")},
			cfg:   with(flat, kv{"keep_recent", 1}),
			prior: -1, toCompress: []int{1, 2}, toKeep: []int{0, 3}},
		{name: "pin_system false: system messages are compressed (weight 10)",
			msgs:  []core.Message{system("You are a careful agent."), user("a"), user("b"), user("c")},
			cfg:   with(flat, kv{"keep_recent", 1}, kv{"pin_system", false}),
			prior: -1, toCompress: []int{1, 2, 0}, toKeep: []int{3}},
		{name: "pinned: true on a system message holds with pin_system false",
			msgs:  []core.Message{pinned(system("rules")), user("a"), user("b")},
			cfg:   with(flat, kv{"keep_recent", 1}, kv{"pin_system", false}),
			prior: -1, toCompress: []int{1}, toKeep: []int{0, 2}},
		{name: "the prior clip-archive is not pinned",
			msgs: []core.Message{clip(), user("a"), user("b")}, cfg: []kv{{"keep_recent", 1}},
			prior: 0, toCompress: []int{1}, toKeep: []int{2}},
		{name: "a pinned tool result keeps its whole unit",
			msgs:  []core.Message{user("x"), call("", "c1"), pinned(result("c1", "important output")), user("y"), user("z")},
			cfg:   with(flat, kv{"keep_recent", 1}),
			prior: -1, toCompress: []int{0, 3}, toKeep: []int{1, 2, 4}},
		{name: "a pinned call keeps its results",
			msgs:  []core.Message{user("x"), pinned(call("", "c1")), result("c1", "out"), user("y"), user("z")},
			cfg:   with(flat, kv{"keep_recent", 1}),
			prior: -1, toCompress: []int{0, 3}, toKeep: []int{1, 2, 4}},
		{name: "a pinned message among the recent ones is kept once",
			msgs: []core.Message{user("x"), pinned(user("y"))}, cfg: []kv{{"keep_recent", 1}},
			prior: -1, toCompress: []int{0}, toKeep: []int{1}},
		// The slice between the prior and the keep boundary is seed 001's
		// compressSlice; pinned messages are part of it, so they count in
		// the positions (user 5, assistant 3, decay 0.5, question bonus 1,
		// no length bonus): "why?" at distance 2 = 1.25 + 1 = 2.25 < "sure"
		// = 3 → [0, 2]. Without the pinned message it would be at distance
		// 1: 2.5 + 1 = 3.5 > 3 → [2, 0].
		{name: "pinned messages keep their place in the compressible slice's positions",
			msgs: []core.Message{user("why?"), pinned(asst("rule")), asst("sure"), user("k")},
			cfg: []kv{{"keep_recent", 1}, {"recency_decay", 0.5}, {"question_bonus", 1.0},
				{"content_length_weight", 0.0}},
			prior: -1, toCompress: []int{0, 2}, toKeep: []int{1, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := config(t, tc.cfg...)
			got := core.Split(tc.msgs, &c)
			assert.Equal(t, tc.prior, got.Prior, "prior")
			assert.Equal(t, orEmpty(tc.toCompress), orEmpty(got.ToCompress), "to_compress")
			assert.Equal(t, orEmpty(tc.toKeep), orEmpty(got.ToKeep), "to_keep")
			assertPartition(t, len(tc.msgs), got)
		})
	}
}

// assertPartition: every message is in exactly one of prior, to_compress
// and to_keep (no input ever loses data), to_keep is in original order,
// and no tool result whose call is compressed is kept.
func assertPartition(t *testing.T, n int, r core.SplitResult) {
	t.Helper()
	seen := make([]int, n)
	if r.Prior >= 0 {
		seen[r.Prior]++
	}
	for _, i := range r.ToCompress {
		seen[i]++
	}
	for _, i := range r.ToKeep {
		seen[i]++
	}
	for i, k := range seen {
		assert.Equal(t, 1, k, "message %d appears %d times", i, k)
	}
	assert.True(t, slices.IsSorted(r.ToKeep), "to_keep out of original order: %v", r.ToKeep)
}

func orEmpty(s []int) []int {
	if s == nil {
		return []int{}
	}
	return s
}

// TestSplitRecencyOnlyIsChronological: with default weights, identical
// messages differ only by recency, so a longer history's to_compress is
// chronological and the last keep_recent are kept.
func TestSplitRecencyOnlyIsChronological(t *testing.T) {
	msgs := make([]core.Message, 30)
	for i := range msgs {
		msgs[i] = user("same text")
	}
	c := config(t, kv{"keep_recent", 5})
	got := core.Split(msgs, &c)
	// Identical messages: the newer, the higher (decay 0.95 < 1), so the
	// ascending order is chronological.
	want := make([]int, 25)
	for i := range want {
		want[i] = i
	}
	require.Equal(t, want, got.ToCompress)
	require.Equal(t, []int{25, 26, 27, 28, 29}, got.ToKeep)
}

// TestSplitDoesNotTouchMessages: Split returns indices; the messages
// themselves (and so the bytes a response echoes) are untouched.
func TestSplitDoesNotTouchMessages(t *testing.T) {
	msgs := []core.Message{clip(), user("a?"), call("", "c1"), result("c1", "r"), pinned(user("p")), asst("b"), user("c")}
	msgs[1].Raw = []byte(`{"role":"user","content":"a?","x_unknown":[1]}`)
	before := slices.Clone(msgs)
	c := config(t, kv{"keep_recent", 1})
	core.Split(msgs, &c)
	assert.Equal(t, before, msgs)
}
