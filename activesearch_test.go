package clipfold_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/clipfold/clipfold"
	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ordersOutput is a long tool output, 2n delivered orders around one fact.
func ordersOutput(n int, fact string) string {
	row := `{"order":1000,"status":"delivered","note":"nothing unusual"},`
	return "[" + strings.Repeat(row, n/2) + fact + "," + strings.TrimSuffix(strings.Repeat(row, n/2), ",") + "]"
}

// TestSearchFindsWhatIsInContext: through the built plug-in, a
// store-owned conversation's messages are found while still active, in
// context — a tool call by its name and arguments, a result by its call
// (the plug-in's search text, set after each sync over the stored
// history) — and a caller-owned one's through ContextMessages; a message
// compaction then moves to recall is one hit. Without the re-index after
// the sync, the call (no text of its own) is not found.
func TestSearchFindsWhatIsInContext(t *testing.T) {
	ctx := context.Background()
	c := openBuilt(t, map[string]any{"keep_recent": 2, "chunk_size": 4, "model_max_tokens": 100000})
	turn := func(i int) []json.RawMessage { return frameworkTurn(i) }
	history := append(turn(1), turn(2)...)
	r, err := c.Compress(ctx, "conv", history, &clipfold.CompressOptions{OnlyIfDue: true})
	require.NoError(t, err)
	require.Equal(t, 0, r.MessagesCompressed, "not due: only synced")

	hits, err := c.Search(ctx, `search_notes {"module":2}`, store.SearchOptions{ConversationID: "conv", Limit: 5})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.True(t, hits[0].InContext)
	assert.Contains(t, hits[0].Text, `search_notes {"module":2}`, "the call is found by its name and arguments: %v", hits[0])
	hits, err = c.Search(ctx, "retry budget of 12", store.SearchOptions{ConversationID: "conv"})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	for _, h := range hits {
		assert.True(t, h.InContext, h.ID)
	}

	// The last message's context names the message after it once that is
	// appended: the turn's closing answer, found by the next question's words.
	_, err = c.Compress(ctx, "conv", append(history, turn(3)...), &clipfold.CompressOptions{OnlyIfDue: true})
	require.NoError(t, err)
	hits, err = c.Search(ctx, "Question 3 module 3", store.SearchOptions{ConversationID: "conv", Limit: 20})
	require.NoError(t, err)
	var prev *store.Hit
	for i := range hits {
		if strings.Contains(hits[i].OwnText(), "module 2 keeps a retry budget of 12; the decision") {
			prev = &hits[i]
		}
	}
	require.NotNil(t, prev, "turn 2's answer is indexed with turn 3's question as context: %v", hits)

	// Compacted: what moved to recall is one hit each, no longer in context.
	r, err = c.Compress(ctx, "conv", nil, &clipfold.CompressOptions{Config: map[string]any{"target_tokens": 250}})
	require.NoError(t, err)
	require.False(t, r.Failed, r.FailureMessage)
	require.Positive(t, r.MessagesCompressed)
	hits, err = c.Search(ctx, "retry budget", store.SearchOptions{ConversationID: "conv", Limit: 50})
	require.NoError(t, err)
	seen := map[string]int{}
	inContext, recalled := 0, 0
	for _, h := range hits {
		seen[h.ID]++
		if h.Kind != store.HitMessage {
			continue
		}
		if h.InContext {
			inContext++
		} else {
			recalled++
		}
	}
	for id, n := range seen {
		assert.Equal(t, 1, n, "%s is one hit", id)
	}
	assert.Positive(t, recalled)
	assert.Positive(t, inContext)

	// Caller-owned: the store holds none of it; ContextMessages passes it.
	mine, err := clipfold.ContextMessages("conv2", turn(7))
	require.NoError(t, err)
	require.Len(t, mine, 4)
	assert.Contains(t, mine[2].SearchText, `search_notes {"module":7}`, "a result is indexed with its call")
	hits, err = c.Search(ctx, `search_notes {"module":7}`, store.SearchOptions{ConversationID: "conv2", InContext: mine})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.ID)
		assert.True(t, h.InContext, h.ID)
	}
	assert.Contains(t, ids, mine[1].ID, "the call is found by its name and arguments")
	hits, err = c.Search(ctx, "module 7", store.SearchOptions{ConversationID: "conv2"})
	require.NoError(t, err)
	assert.Empty(t, hits, "nothing of it was stored")
}

// TestMemoryReadFitsItsBudget: a search whose best hit is a tool output
// of several thousand tokens answers within the budget, counted by the
// plug-in's estimateTokens: whole hits, then the passage of the long
// output holding the asked-for order, then what was left out.
func TestMemoryReadFitsItsBudget(t *testing.T) {
	ctx := context.Background()
	c := openBuilt(t, map[string]any{"keep_recent": 2, "chunk_size": 4, "model_max_tokens": 100000})
	fact := `{"order":4471,"status":"lost in transit","carrier":"Pelican Post"}`
	msgs := []map[string]any{
		{"role": "user", "content": "list my orders please"},
		{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{"id": "c1", "type": "function",
			"function": map[string]any{"name": "list_orders", "arguments": `{"customer":77}`}}}},
		{"role": "tool", "tool_call_id": "c1", "content": ordersOutput(400, fact)},
		{"role": "assistant", "content": "You have 400 orders; order 4471 was lost in transit with Pelican Post."},
		{"role": "user", "content": "Open a claim for order 4471."},
		{"role": "assistant", "content": "Claim opened for order 4471 with Pelican Post."},
	}
	var history []json.RawMessage
	for _, m := range msgs {
		b, _ := json.Marshal(m)
		history = append(history, b)
	}
	_, err := c.Compress(ctx, "orders", history, &clipfold.CompressOptions{OnlyIfDue: true})
	require.NoError(t, err)
	hits, err := c.Search(ctx, "what happened to order 4471 with Pelican Post?", store.SearchOptions{ConversationID: "orders"})
	require.NoError(t, err)
	total := 0
	for _, h := range hits {
		total += len(h.Text)
	}
	require.Greater(t, total, 16000, "the hits are long")

	for _, budget := range []int{0, 300, 1000} {
		r, err := c.MemoryRead(ctx, "what happened to order 4471 with Pelican Post?", store.SearchOptions{ConversationID: "orders"}, budget)
		require.NoError(t, err)
		var est struct {
			Tokens int `json:"tokens"`
		}
		in, _ := json.Marshal(map[string]any{"text": r.Text})
		out, err := c.Call(ctx, "estimateTokens", in)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(out, &est))
		want := budget
		if want == 0 {
			want = 1000
		}
		assert.LessOrEqual(t, est.Tokens, want, "budget %d:\n%s", budget, r.Text)
		assert.Equal(t, est.Tokens, r.Tokens)
		assert.Contains(t, r.Text, "4471")
		assert.Equal(t, len(hits), len(r.Whole)+len(r.LeftOut)+map[bool]int{true: 1}[r.Passage != nil], "every hit accounted for")
	}
	// The long output is still in the context: an excerpt about the
	// question, not the whole of it.
	r, err := c.MemoryRead(ctx, "Pelican Post lost in transit", store.SearchOptions{ConversationID: "orders"}, 300)
	require.NoError(t, err)
	assert.Contains(t, r.Text, "in your context")
	assert.Contains(t, r.Text, "an excerpt")
	assert.Contains(t, r.Text, `"order":4471,"status":"lost in transit","carrier":"Pelican Post"`)
	_, err = c.MemoryRead(ctx, "order", store.SearchOptions{ConversationID: "orders"}, 50)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "max_tokens")
}
