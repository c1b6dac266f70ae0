package clipfold_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/clipfold/clipfold"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// logTurn is an agent reading logs, as OpenAI Chat dicts without ids: a
// long tool output.
func logTurn(i int) []json.RawMessage {
	var out strings.Builder
	for j := 0; j < 40; j++ {
		fmt.Fprintf(&out, "10:%02d worker-%d shard=%d retry=%d status=degraded latency_ms=%d ", j, i, j, j%5, 100+7*j)
	}
	var msgs []json.RawMessage
	for _, m := range []map[string]any{
		{"role": "user", "content": fmt.Sprintf("Turn %d: what does shard %d say?", i, i)},
		{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{"id": fmt.Sprintf("call_%d", i), "type": "function",
			"function": map[string]any{"name": "read_logs", "arguments": fmt.Sprintf(`{"shard":%d}`, i)}}}},
		{"role": "tool", "tool_call_id": fmt.Sprintf("call_%d", i), "content": out.String()},
		{"role": "assistant", "content": fmt.Sprintf("Shard %d is degraded.", i)},
	} {
		b, _ := json.Marshal(m)
		msgs = append(msgs, b)
	}
	return msgs
}

// The Go API reports what the window guarantee replaced: clearing the
// older tool results alone fits the window, so nothing is summarized and
// no LLM is called; Result counts the cleared results, the history
// returned holds the placeholders, and each original is in recall
// storage under the id its placeholder names. Store-owned and
// caller-owned alike.
func TestCompressReportsClearedToolResults(t *testing.T) {
	ctx := context.Background()
	var list []json.RawMessage
	for i := 0; i < 8; i++ {
		list = append(list, logTurn(i)...)
	}
	for _, callerOwned := range []bool{false, true} {
		t.Run(fmt.Sprintf("caller-owned %v", callerOwned), func(t *testing.T) {
			c := openBuilt(t, nil)
			due, err := c.ShouldCompact(ctx, list, nil)
			require.NoError(t, err)
			cfg := map[string]any{"clear_tool_results": 2, "model_max_tokens": due.Tokens * 10 / 8 * 6 / 10}
			res, err := c.Compress(ctx, "logs", list, &clipfold.CompressOptions{CallerOwned: callerOwned, Config: cfg})
			require.NoError(t, err)
			require.False(t, res.Failed, res.FailureMessage)
			assert.Equal(t, 6, res.ToolResultsCleared)
			assert.Zero(t, res.MessagesTruncated)
			assert.Zero(t, res.LLMCalls)
			assert.Zero(t, res.MessagesCompressed)
			assert.Nil(t, res.ClipArchive)
			assert.LessOrEqual(t, res.TokensAfter, due.Tokens*10/8*6/10*8/10)
			require.Len(t, res.History, len(list))
			cleared := 0
			for i, m := range res.History {
				if string(m) == string(list[i]) {
					continue
				}
				cleared++
				content := gjson.GetBytes(m, "content").String()
				require.True(t, strings.HasPrefix(content, "[tool result cleared: read_logs "), content)
				id := strings.TrimSuffix(strings.SplitAfter(content, `recall storage as "`)[1], `" (memory_read)]`)
				rec, err := c.Store().Recall(ctx, "logs", id)
				require.NoError(t, err, "the original of %s is in recall", id)
				assert.JSONEq(t, string(list[i]), string(rec.Raw))
				assert.Equal(t, gjson.GetBytes(list[i], "tool_call_id").String(), gjson.GetBytes(m, "tool_call_id").String(), "paired as before")
			}
			assert.Equal(t, 6, cleared)
		})
	}
}
