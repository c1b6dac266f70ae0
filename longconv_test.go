package clipfold_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/stretchr/testify/require"
)

// The bundled debugging session three times over, renumbered (2,652
// messages), compacts offline through the plug-in under test: its 24
// thumbs-up replies end up in one chunk, whose extractive summary must
// not be empty — summarized in the plug-in, or by the extractive LLM.
func TestCompressLongConversationOffline(t *testing.T) {
	ctx := context.Background()
	data, err := os.ReadFile(filepath.Join("testdata", "conversations", "debugging-session.json"))
	require.NoError(t, err)
	var once []map[string]any
	require.NoError(t, json.Unmarshal(data, &once))
	var history []json.RawMessage
	for range 3 {
		for _, m := range once {
			m["id"] = fmt.Sprintf("dbg-%04d", len(history)+1)
			b, err := json.Marshal(m)
			require.NoError(t, err)
			history = append(history, b)
		}
	}
	require.Len(t, history, 2652)
	for _, summarizer := range []string{"extractive", "llm"} {
		t.Run(summarizer, func(t *testing.T) {
			c := openBuilt(t, map[string]any{"summarizer": summarizer})
			res, err := c.Compress(ctx, "conv-checkout-inc-4471", history, nil)
			require.NoError(t, err)
			require.False(t, res.Failed, "%s: %s", res.FailureCode, res.FailureMessage)
			require.Greater(t, res.MessagesCompressed, 2600)
			require.Less(t, res.TokensAfter, res.TokensBefore/10)
			hits, err := c.Search(ctx, "connection leak", store.SearchOptions{ConversationID: "conv-checkout-inc-4471"})
			require.NoError(t, err)
			require.NotEmpty(t, hits)
		})
	}
}
