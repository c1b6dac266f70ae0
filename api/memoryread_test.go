package api

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/core"
)

// TestDecodeHistorySearchText: with "search_text": true each message
// carries what recall would index for it in this list — its tool call as
// words, a result with its call as context — as core.MessageSearchTextAt
// renders it; without it, none.
func TestDecodeHistorySearchText(t *testing.T) {
	history := `[{"role":"user","content":"where is order 4471?"},
{"role":"assistant","content":"","tool_calls":[{"id":"t1","type":"function","function":{"name":"get_order","arguments":"{\"order\":4471}"}}]},
{"role":"tool","tool_call_id":"t1","content":"{\"status\":\"lost\"}"},
{"role":"system","content":"[Context Summary — 3 messages compressed]"}]`
	out, err := DefaultEnv().DecodeHistory([]byte(`{"conversation_id":"c1","search_text":true,"history":` + history + `}`))
	require.NoError(t, err)
	var got struct {
		Messages []struct {
			ID         string  `json:"id"`
			SearchText *string `json:"search_text"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(out, &got))
	msgs, _, err := DecodeHistory("c1", []byte(history))
	require.NoError(t, err)
	require.Len(t, got.Messages, 4)
	for i, m := range got.Messages {
		require.NotNil(t, m.SearchText, "messages[%d]", i)
		assert.Equal(t, core.MessageSearchTextAt(msgs, i), *m.SearchText, "messages[%d]", i)
	}
	assert.Contains(t, *got.Messages[1].SearchText, `get_order {"order":4471}`)
	assert.Contains(t, *got.Messages[2].SearchText, core.SearchContextSep, "a result has its exchange as context")
	assert.Contains(t, *got.Messages[2].SearchText, "get_order")

	out, err = DefaultEnv().DecodeHistory([]byte(`{"conversation_id":"c1","search_text":false,"history":` + history + `}`))
	require.NoError(t, err)
	assert.NotContains(t, string(out), "search_text")
	_, err = DefaultEnv().DecodeHistory([]byte(`{"conversation_id":"c1","search_text":"yes","history":[]}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "search_text: ")
}

// TestBuildMemoryReadExport: the stores' hits as they are (Python and
// Node hit dicts, the command's JSON), answered within max_tokens
// (default 1,000); bad input names the field.
func TestBuildMemoryReadExport(t *testing.T) {
	long := strings.Repeat(`{"sku":"SKU-1","qty":1,"note":"nothing here"},`, 300) + `{"order":4471,"carrier":"Pelican Post"}`
	in, err := json.Marshal(map[string]any{"query": "pelican 4471", "hits": []map[string]any{
		{"kind": "message", "id": "m1", "conversation_id": "c1", "role": "tool", "start_time": "2026-02-28T10:00:00.000Z",
			"end_time": "2026-02-28T10:00:00.000Z", "score": 2.5, "snippet": "…", "text": `{"order":4471}` + core.SearchContextSep + "get_order 4471",
			"in_context": true, "depth": nil, "source_message_ids": nil},
		{"kind": "batch", "id": "blk_1", "created_at": "2026-02-28T11:00:00.000Z", "score": 1.5, "text": "Order 4471 was lost.",
			"source_message_ids": []string{"m0", "m1"}},
		{"kind": "message", "id": "m9", "text": long, "score": 1},
	}})
	require.NoError(t, err)
	out, err := DefaultEnv().BuildMemoryRead(in)
	require.NoError(t, err)
	var got struct {
		Text    string   `json:"text"`
		Tokens  int      `json:"tokens"`
		Whole   []string `json:"whole"`
		Passage *string  `json:"passage"`
		LeftOut []string `json:"left_out"`
	}
	require.NoError(t, json.Unmarshal(out, &got))
	c := core.DefaultConfig()
	assert.LessOrEqual(t, core.TextTokens(got.Text, &c), core.DefaultMemoryReadTokens)
	assert.Equal(t, core.TextTokens(got.Text, &c), got.Tokens)
	assert.Equal(t, []string{"m1", "blk_1"}, got.Whole)
	require.NotNil(t, got.Passage)
	assert.Equal(t, "m9", *got.Passage)
	assert.Equal(t, []string{}, got.LeftOut)
	assert.Contains(t, got.Text, "in your context")
	assert.Contains(t, got.Text, "summarizes m0, m1")
	assert.Contains(t, got.Text, "Pelican Post")

	out, err = DefaultEnv().BuildMemoryRead([]byte(`{"query":"x","hits":[],"max_tokens":200,"config":{"token_estimator":"chars4"}}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"text":"Nothing matches \"x\".","tokens":5,"whole":[],"passage":null,"left_out":[]}`, string(out))

	// A record read by id, over the budget: its passage, and how to see another part.
	in, err = json.Marshal(map[string]any{"query": "", "by_id": true, "max_tokens": 200,
		"hits": []map[string]any{{"kind": "message", "id": "m9", "text": long}}})
	require.NoError(t, err)
	out, err = DefaultEnv().BuildMemoryRead(in)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(out, &got))
	assert.LessOrEqual(t, core.TextTokens(got.Text, &c), 200)
	assert.True(t, strings.HasPrefix(got.Text, "[1] message m9 · score 0 · a passage\n{\"sku\""), got.Text)
	assert.Contains(t, got.Text, "ask again with this id and a query")
	assert.NotContains(t, got.Text, `memory_read id="…"`)

	for in, field := range map[string]string{
		`{"hits":[]}`:                                                                         "query",
		`{"query":"x"}`:                                                                       "hits",
		`{"query":"x","hits":[],"by_id":"yes"}`:                                               "by_id",
		`{"query":"x","hits":{}}`:                                                             "hits",
		`{"query":"x","hits":[],"max_tokens":50}`:                                             "max_tokens",
		`{"query":"x","hits":[],"max_tokens":1.5}`:                                            "max_tokens",
		`{"query":"x","hits":[3]}`:                                                            "hits[0]",
		`{"query":"x","hits":[{"id":"a","text":""}]}`:                                         "hits[0].kind",
		`{"query":"x","hits":[{"kind":"doc","id":"a","text":""}]}`:                            "hits[0].kind",
		`{"query":"x","hits":[{"kind":"batch","text":""}]}`:                                   "hits[0].id",
		`{"query":"x","hits":[{"kind":"batch","id":"a"}]}`:                                    "hits[0].text",
		`{"query":"x","hits":[{"kind":"batch","id":"a","text":"","score":"high"}]}`:           "hits[0].score",
		`{"query":"x","hits":[{"kind":"batch","id":"a","text":"","in_context":1}]}`:           "hits[0].in_context",
		`{"query":"x","hits":[{"kind":"batch","id":"a","text":"","source_message_ids":[1]}]}`: "hits[0].source_message_ids[0]",
	} {
		_, err := DefaultEnv().BuildMemoryRead([]byte(in))
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), field+": ", in)
	}
}
