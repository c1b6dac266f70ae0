package clipfold_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold"
	"github.com/clipfold/clipfold/hostfuncs/store"
)

// numberedConversation is a conversation whose caller numbers its
// messages msg_0, msg_1, …, as every conversation of that caller does.
func numberedConversation(conv, topic string, n int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		b, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("msg_%d", i), "role": role,
			"content": fmt.Sprintf("Turn %d of %s: the %s plan step %d needs a budget of %d and a review by the team.", i, conv, topic, i, 100+i)})
		out[i] = b
	}
	return out
}

// Two conversations numbering their messages alike (store-owned, the
// default): compacting the second stores and compacts its own messages.
// Its ids were taken for the first's (in recall, or still active there),
// so its messages were skipped or refused: an empty history came back,
// and a caller replacing its list with it lost them.
func TestCompressTwoConversationsSameIDs(t *testing.T) {
	ctx := context.Background()
	c := openBuilt(t, frameworkConfig)
	// beta is as long as what alpha's compaction moves to recall: every
	// id beta sends is one alpha's recall holds.
	n := 30
	for _, conv := range []string{"alpha", "beta"} {
		history := numberedConversation(conv, map[string]string{"alpha": "harbour", "beta": "orchard"}[conv], n)
		res, err := c.Compress(ctx, conv, history, nil)
		require.NoError(t, err, conv)
		require.False(t, res.Failed, "%s: %s %s", conv, res.FailureCode, res.FailureMessage)
		require.Positive(t, res.MessagesCompressed, "%s is compacted", conv)
		require.NotEmpty(t, res.History, "%s: the compacted history", conv)
		require.Less(t, len(res.History), len(history))

		// Nothing lost: each of its messages is in the history sent back
		// (active in the store) or in its own recall storage, exact.
		active, err := c.Store().ActiveMessages(ctx, conv)
		require.NoError(t, err)
		require.Len(t, res.History, len(active))
		live := map[string]string{}
		for _, m := range active {
			live[m.ID] = string(m.Raw)
		}
		recalled := 0
		for _, raw := range history {
			var m struct{ ID string }
			require.NoError(t, json.Unmarshal(raw, &m))
			if got, ok := live[m.ID]; ok {
				require.JSONEq(t, string(raw), got, "%s %s", conv, m.ID)
				continue
			}
			r, err := c.Store().Recall(ctx, conv, m.ID)
			require.NoError(t, err, "%s: message %s is neither active nor in recall", conv, m.ID)
			require.JSONEq(t, string(raw), string(r.Raw), "%s's own %s", conv, m.ID)
			recalled++
		}
		require.Equal(t, res.MessagesCompressed, recalled)
		n = res.MessagesCompressed
	}
	// The first conversation's active history is its own still.
	active, err := c.Store().ActiveMessages(ctx, "alpha")
	require.NoError(t, err)
	for _, m := range active {
		require.NotContains(t, string(m.Raw), "beta", "alpha's history holds none of beta's messages")
	}
	hits, err := c.Search(ctx, "orchard budget", store.SearchOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	for _, h := range hits {
		require.Equal(t, "beta", h.ConversationID, "beta's words find beta's archive")
	}

	// Again with the second conversation's messages still active (the
	// first not compacted yet): both store their messages.
	c2 := openBuilt(t, frameworkConfig)
	for _, conv := range []string{"gamma", "delta"} {
		res, err := c2.Compress(ctx, conv, numberedConversation(conv, "lighthouse", 30), &clipfold.CompressOptions{DryRun: conv == "gamma"})
		require.NoError(t, err, conv)
		require.False(t, res.Failed, "%s: %s %s", conv, res.FailureCode, res.FailureMessage)
	}
	for _, conv := range []string{"gamma", "delta"} {
		stored, err := c2.Store().ActiveMessages(ctx, conv)
		require.NoError(t, err)
		require.NotEmpty(t, stored, "%s's messages are stored", conv)
	}
}
