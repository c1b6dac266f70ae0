package core_test

import (
	"strings"
	"testing"

	"github.com/clipfold/clipfold/core"
	"github.com/stretchr/testify/assert"
)

// TestScore checks core.Score against the formula of docs/spec.md#score
// (seed 001):
//
//	roleWeight × recency_decay^(total−1−index)
//	+ question_bonus if the content has '?'
//	+ tool_call_bonus if the message has tool calls
//	+ keyword_bonus per distinct keyword contained (case-insensitive)
//	+ min(chars/100 × content_length_weight, 3.0)
//
// with the defaults system 10, user 5 (tool as user), assistant 3, decay
// 0.95, question 2, tool call 4, keyword 1.5, length weight 1. Every want
// is worked out by hand in its comment.
func TestScore(t *testing.T) {
	a100 := strings.Repeat("a", 100)
	tests := []struct {
		name         string
		m            core.Message
		index, total int
		cfg          []kv
		want         float64
	}{
		// --- role weight (AC3.1), newest of one: multiplier 1 ---
		{name: "system, empty", m: system(""), index: 0, total: 1, want: 10},
		{name: "user, empty", m: user(""), index: 0, total: 1, want: 5},
		{name: "assistant, empty", m: asst(""), index: 0, total: 1, want: 3},
		{name: "tool scores as user", m: result("c1", ""), index: 0, total: 1, want: 5},
		{name: "tool follows role_weight_user", m: result("c1", ""), index: 0, total: 1,
			cfg: []kv{{"role_weight_user", 7.5}}, want: 7.5},
		{name: "custom role weights", m: asst(""), index: 0, total: 1,
			cfg: []kv{{"role_weight_assistant", 0.0}}, want: 0},

		// --- recency (AC3.2) ---
		{name: "newest: multiplier 1", m: user(""), index: 2, total: 3, want: 5},
		{name: "one from the end: ×0.95", m: user(""), index: 1, total: 3, want: 4.75},
		{name: "oldest of 3: ×0.95²", m: user(""), index: 0, total: 3, want: 4.5125},
		{name: "oldest of 11: ×0.95¹⁰", m: system(""), index: 0, total: 11, want: 10 * 0.5987369392383789},
		{name: "decay 1: no decay", m: user(""), index: 0, total: 50, cfg: []kv{{"recency_decay", 1.0}}, want: 5},
		{name: "decay 0: only the newest keeps its weight", m: user(""), index: 3, total: 4, cfg: []kv{{"recency_decay", 0.0}}, want: 5},
		{name: "decay 0: older ones lose it", m: user(""), index: 2, total: 4, cfg: []kv{{"recency_decay", 0.0}}, want: 0},
		{name: "decay 0.5 at distance 3", m: user(""), index: 0, total: 4, cfg: []kv{{"recency_decay", 0.5}}, want: 0.625},
		// The bonuses are added after the decay: they do not decay.
		{name: "bonuses do not decay", m: user("?"), index: 0, total: 4,
			cfg: []kv{{"recency_decay", 0.5}}, want: 0.625 + 2 + 0.01},

		// --- question bonus (AC3.3) ---
		{name: "question", m: user("?"), index: 0, total: 1, want: 5 + 2 + 0.01},
		{name: "several question marks: one bonus", m: user("why? how??"), index: 0, total: 1, want: 5 + 2 + 0.10},
		{name: "fullwidth question mark is not '?'", m: user("なぜ？"), index: 0, total: 1, want: 5 + 0.03},
		{name: "custom question bonus", m: asst("ok?"), index: 0, total: 1, cfg: []kv{{"question_bonus", 0.5}}, want: 3 + 0.5 + 0.03},

		// --- tool-call bonus ---
		{name: "tool calls", m: call("", "c1"), index: 0, total: 1, want: 3 + 4},
		{name: "tool calls without ids", m: call(""), index: 0, total: 1, want: 3 + 4},
		{name: "tool-call bonus does not decay", m: call("", "c1"), index: 0, total: 2, want: 3*0.95 + 4},
		{name: "a tool result has no tool calls", m: result("c1", ""), index: 0, total: 1, want: 5},
		{name: "custom tool-call bonus", m: call("", "c1"), index: 0, total: 1, cfg: []kv{{"tool_call_bonus", 10.0}}, want: 13},

		// --- keywords: per distinct keyword, case-insensitive ---
		{name: "one keyword", m: user("error"), index: 0, total: 1, want: 5 + 1.5 + 0.05},
		{name: "a repeated keyword counts once", m: user("error ERROR Error"), index: 0, total: 1, want: 5 + 1.5 + 0.17},
		{name: "two keywords", m: user("fix the bug"), index: 0, total: 1, want: 5 + 3 + 0.11},
		{name: "upper case", m: user("DECISION AGREED"), index: 0, total: 1, want: 5 + 3 + 0.15},
		{name: "inside a word (substring)", m: user("prefix"), index: 0, total: 1, want: 5 + 1.5 + 0.06},
		{name: "every default keyword", m: user("error fail bug fix decision agreed constraint requirement"),
			index: 0, total: 1, want: 5 + 8*1.5 + 0.57},
		// "failure" holds "fail" only; "errors" holds "error": 2 keywords.
		{name: "keyword stems inside longer words", m: user("errors and failures"), index: 0, total: 1, want: 5 + 3 + 0.19},
		{name: "no keyword", m: user("all good"), index: 0, total: 1, want: 5 + 0.08},
		{name: "custom keywords replace the defaults", m: user("ROLLBACK the deploy, error"), index: 0, total: 1,
			cfg: []kv{{"important_keywords", []string{"deploy", "Rollback"}}}, want: 5 + 3 + 0.26},
		{name: "custom keywords: duplicates differing in case count once", m: user("deploy"), index: 0, total: 1,
			cfg: []kv{{"important_keywords", []string{"Deploy", "deploy", "DEPLOY"}}}, want: 5 + 1.5 + 0.06},
		{name: "no keywords configured", m: user("error bug"), index: 0, total: 1,
			cfg: []kv{{"important_keywords", []string{}}}, want: 5 + 0.09},
		{name: "non-ASCII keyword, case-insensitive", m: user("Die GRÖSSE und die GRÖßE"), index: 0, total: 1,
			cfg: []kv{{"important_keywords", []string{"größe"}}}, want: 5 + 1.5 + 0.24},
		{name: "custom keyword bonus", m: user("bug"), index: 0, total: 1, cfg: []kv{{"keyword_bonus", 0.25}}, want: 5 + 0.25 + 0.03},

		// --- content length: min(chars/100 × weight, 3.0) ---
		{name: "100 chars: +1", m: asst(a100), index: 0, total: 1, want: 3 + 1},
		{name: "250 chars: +2.5", m: asst(strings.Repeat("a", 250)), index: 0, total: 1, want: 3 + 2.5},
		{name: "300 chars: +3", m: asst(strings.Repeat("a", 300)), index: 0, total: 1, want: 3 + 3},
		{name: "5000 chars: capped at 3", m: asst(strings.Repeat("a", 5000)), index: 0, total: 1, want: 3 + 3},
		{name: "weight 2: 100 chars → 2", m: asst(a100), index: 0, total: 1, cfg: []kv{{"content_length_weight", 2.0}}, want: 3 + 2},
		{name: "weight 2: 200 chars → capped at 3", m: asst(strings.Repeat("a", 200)), index: 0, total: 1,
			cfg: []kv{{"content_length_weight", 2.0}}, want: 3 + 3},
		{name: "weight 0.5: 600 chars → 3", m: asst(strings.Repeat("a", 600)), index: 0, total: 1,
			cfg: []kv{{"content_length_weight", 0.5}}, want: 3 + 3},
		{name: "weight 0: no length bonus", m: asst(strings.Repeat("a", 600)), index: 0, total: 1,
			cfg: []kv{{"content_length_weight", 0.0}}, want: 3},

		// --- characters are code points, not bytes (nor UTF-16 units) ---
		{name: "2-byte runes: 100 é = 100 chars", m: asst(strings.Repeat("é", 100)), index: 0, total: 1, want: 3 + 1},
		{name: "3-byte runes: 50 CJK = 50 chars", m: asst(strings.Repeat("語", 50)), index: 0, total: 1, want: 3 + 0.5},
		{name: "4-byte runes: 150 emoji = 150 chars", m: asst(strings.Repeat("🙂", 150)), index: 0, total: 1, want: 3 + 1.5},
		{name: "mixed: 'café?' is 5 chars", m: user("café?"), index: 0, total: 1, want: 5 + 2 + 0.05},

		// --- everything at once ---
		// assistant 3·0.95 = 2.85; '?' 2; tool calls 4; "fix", "error" 3;
		// 23 chars 0.23.
		{name: "all signals", m: call("Did the fix work? error", "c1"), index: 1, total: 3, want: 2.85 + 2 + 4 + 3 + 0.23},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := config(t, tc.cfg...)
			got := core.Score(&tc.m, tc.index, tc.total, &c.Scoring)
			assert.InDelta(t, tc.want, got, 1e-9)
		})
	}
}

// TestScoreOrdering states AC3.1–3.3 as comparisons, as seed 001's tests
// do: same content and position, varying one thing.
func TestScoreOrdering(t *testing.T) {
	s := core.DefaultScoring()
	score := func(m core.Message, i, n int) float64 { return core.Score(&m, i, n, &s) }
	// AC3.1: system > user > assistant.
	assert.Greater(t, score(system("hello"), 2, 5), score(user("hello"), 2, 5))
	assert.Greater(t, score(user("hello"), 2, 5), score(asst("hello"), 2, 5))
	// AC3.2: newer > older.
	for i := 1; i < 10; i++ {
		assert.Greater(t, score(user("hello"), i, 10), score(user("hello"), i-1, 10), "index %d", i)
	}
	// AC3.3: each content signal raises the score.
	base := score(asst("status update"), 0, 3)
	assert.Greater(t, score(asst("status update?"), 0, 3), base)
	assert.Greater(t, score(call("status update", "c1"), 0, 3), base)
	assert.Greater(t, score(asst("status update: bug"), 0, 3), base)
	assert.Greater(t, score(asst("status update, longer"), 0, 3), base)
}

// TestScoreAll: index and total are the position in and the length of the
// slice given.
