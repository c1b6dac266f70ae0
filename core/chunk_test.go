package core_test

import (
	"strings"
	"testing"

	"github.com/clipfold/clipfold/core"
	"github.com/stretchr/testify/assert"
)

// TestChunk checks core.Chunk against docs/spec.md#chunk (seed 004 AC1.2):
// consecutive groups of chunk_size messages in the order given (the
// last may be smaller), or, when max_chunk_tokens is set, groups of at
// most that many estimated tokens (⌈code points / 4⌉ a message) instead;
// and "a tool call and its results are never separated (… chunking)": a
// call with the results that follow it goes whole into one chunk, alone
// when it is larger than a chunk.
func TestChunk(t *testing.T) {
	ten := make([]core.Message, 10)
	for i := range ten {
		ten[i] = user("m")
	}
	// contents of 8, 4, 12, 1 and 5 code points: 2, 1, 3, 1 and 2 tokens.
	sized := []core.Message{user("12345678"), user("1234"), user("123456789012"), user("1"), user("12345")}
	unit := []core.Message{user("u0"), call("", "c1", "c2"), result("c1", "r1"), result("c2", "r2"), user("u4")}

	tests := []struct {
		name      string
		msgs      []core.Message
		order     []int // nil: identity
		size      int
		maxTokens int
		want      [][]int
	}{
		{name: "empty", msgs: nil, size: 20, want: nil},
		{name: "10 messages by 3: 3,3,3,1 (seed 004)", msgs: ten, size: 3,
			want: [][]int{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9}}},
		{name: "exact multiple", msgs: ten[:6], size: 3, want: [][]int{{0, 1, 2}, {3, 4, 5}}},
		{name: "chunk_size larger than the input: one chunk", msgs: ten[:4], size: 20, want: [][]int{{0, 1, 2, 3}}},
		{name: "chunk_size equal to the input: one chunk", msgs: ten[:4], size: 4, want: [][]int{{0, 1, 2, 3}}},
		{name: "chunk_size 1: one message a chunk", msgs: ten[:3], size: 1, want: [][]int{{0}, {1}, {2}}},
		{name: "one message", msgs: ten[:1], size: 20, want: [][]int{{0}}},
		{name: "the given order is kept (importance order)", msgs: ten[:5], order: []int{4, 2, 0, 1, 3}, size: 2,
			want: [][]int{{4, 2}, {0, 1}, {3}}},

		// --- tool units ---
		// [u0] then the unit of 3 does not fit in 2: the chunk closes; the
		// unit goes alone (larger than a chunk); u4 does not fit after it.
		{name: "a unit larger than chunk_size goes whole, alone", msgs: unit, size: 2,
			want: [][]int{{0}, {1, 2, 3}, {4}}},
		{name: "a unit that fits the chunk's room stays in it", msgs: unit, size: 4,
			want: [][]int{{0, 1, 2, 3}, {4}}},
		{name: "a unit that does not fit moves whole to the next chunk", msgs: unit, size: 3,
			want: [][]int{{0}, {1, 2, 3}, {4}}},
		{name: "chunk_size 1 keeps a unit whole", msgs: unit, size: 1,
			want: [][]int{{0}, {1, 2, 3}, {4}}},
		{name: "results without tool_call_id directly after the call are in its unit",
			msgs: []core.Message{call("", "c1"), result("", "a"), result("", "b"), user("x")}, size: 2,
			want: [][]int{{0, 1, 2}, {3}}},
		{name: "a result of another call ends the unit",
			msgs: []core.Message{call("", "c1"), result("c1", "a"), result("c9", "b"), user("x")}, size: 2,
			want: [][]int{{0, 1}, {2, 3}}},
		{name: "a call with no results is a unit of one",
			msgs: []core.Message{user("a"), call("", "c1"), user("b")}, size: 2,
			want: [][]int{{0, 1}, {2}}},
		{name: "units in importance order (as split emits them)",
			msgs: unit, order: []int{4, 1, 2, 3, 0}, size: 2,
			want: [][]int{{4}, {1, 2, 3}, {0}}},

		// --- max_chunk_tokens ---
		// 2+1 = 3 ≤ 3; +3 > 3 → close; 3 alone (+1 > 3); 1+2 = 3.
		{name: "by max_chunk_tokens", msgs: sized, size: 20, maxTokens: 3,
			want: [][]int{{0, 1}, {2}, {3, 4}}},
		{name: "max_chunk_tokens replaces chunk_size", msgs: sized, size: 1, maxTokens: 100,
			want: [][]int{{0, 1, 2, 3, 4}}},
		{name: "a message over max_chunk_tokens goes alone",
			msgs: []core.Message{user("a"), user(strings.Repeat("x", 40)), user("b")}, size: 20, maxTokens: 3,
			want: [][]int{{0}, {1}, {2}}},
		// "éééé" is 4 code points (8 bytes): 1 token; with "ab" (1) the
		// chunk holds 2 ≤ 2. Counting bytes would give 2 + 1 > 2.
		{name: "tokens count code points, not bytes",
			msgs: []core.Message{user("éééé"), user("ab")}, size: 20, maxTokens: 2,
			want: [][]int{{0, 1}}},
		// u0 2 tokens; the unit 0 + 2 = 2 tokens: 4 > 3 → the unit starts
		// a new chunk, whole.
		{name: "max_chunk_tokens keeps a unit whole",
			msgs: []core.Message{user("1234567"), call("", "c1"), result("c1", "12345678")}, size: 20, maxTokens: 3,
			want: [][]int{{0}, {1, 2}}},
		{name: "a unit over max_chunk_tokens goes whole, alone",
			msgs: []core.Message{user("a"), call("", "c1"), result("c1", strings.Repeat("x", 40)), user("b")}, size: 20, maxTokens: 3,
			want: [][]int{{0}, {1, 2}, {3}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			order := tc.order
			if order == nil {
				order = core.Identity(len(tc.msgs))
			}
			got := core.Chunk(tc.msgs, order, tc.size, tc.maxTokens, &chars4Config)
			assert.Equal(t, tc.want, got)
			// Every index of order appears exactly once, in order.
			var flat []int
			for _, c := range got {
				assert.NotEmpty(t, c, "empty chunk")
				flat = append(flat, c...)
			}
			if len(order) == 0 {
				assert.Empty(t, flat)
			} else {
				assert.Equal(t, order, flat)
			}
		})
	}
}

// TestChunkNeverSplitsAUnit: over chunk sizes 1–8 and token limits 1–12,
// no chunk ends between a call and a result that answers it.
func TestChunkNeverSplitsAUnit(t *testing.T) {
	msgs := []core.Message{
		user("hello there"), call("", "a", "b"), result("a", "first result text"), result("b", "second"),
		asst("ok"), call("", "c"), result("c", "third result"), user("thanks"), call(""), result("", "anon"),
		result("", "anon 2"), user("bye"),
	}
	order := core.Identity(len(msgs))
	check := func(chunks [][]int) {
		t.Helper()
		for k := 0; k+1 < len(chunks); k++ {
			next := msgs[chunks[k+1][0]]
			assert.NotEqual(t, core.RoleTool, next.Role, "chunk %d starts with a tool result cut from its call: %v", k+1, chunks)
		}
	}
	for size := 1; size <= 8; size++ {
		check(core.Chunk(msgs, order, size, 0, &chars4Config))
	}
	for tok := 1; tok <= 12; tok++ {
		check(core.Chunk(msgs, order, 20, tok, &chars4Config))
	}
}

// TestChunkSizeBelowOne: chunk_size < 1 cannot come through the config
// (it is an invalid_input error) but Chunk must not loop or panic on it.
func TestChunkSizeBelowOne(t *testing.T) {
	msgs := []core.Message{user("a"), user("b")}
	assert.Equal(t, [][]int{{0}, {1}}, core.Chunk(msgs, core.Identity(2), 0, 0, &chars4Config))
	assert.Equal(t, [][]int{{0}, {1}}, core.Chunk(msgs, core.Identity(2), -3, 0, &chars4Config))
}

// chars4Config counts tokens as the seeds do (token_estimator chars4),
// the arithmetic the max_chunk_tokens cases above are written in.
var chars4Config = func() core.Config {
	c := core.DefaultConfig()
	c.TokenEstimator = core.EstimatorChars4
	return c
}()

// TestChunkConservativeTokens: under the default estimator a chunk is cut
// by each message's conservative count, framing included: two Chinese
// messages of 40 characters each are far over 2×(40/4) tokens.
func TestChunkConservativeTokens(t *testing.T) {
	cfg := core.DefaultConfig()
	zh := strings.Repeat("我们明天在会议室讨论项目的预算问题。", 2)
	msgs := []core.Message{user(zh), user(zh)}
	one := core.MessageTokens(&msgs[0], &cfg)
	assert.Greater(t, one, 2*core.EstimateTokens(zh), "CJK costs more than a token per 4 characters")
	assert.Equal(t, [][]int{{0}, {1}}, core.Chunk(msgs, core.Identity(2), 20, 2*one-1, &cfg))
	assert.Equal(t, [][]int{{0, 1}}, core.Chunk(msgs, core.Identity(2), 20, 2*one, &cfg))
}
