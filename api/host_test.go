package api

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/core"
)

// search_text survives AppendCommit → DecodeCommit in order; hosts that
// receive none see none; a malformed one is refused naming the field.
func TestCommitSearchTextRoundTrip(t *testing.T) {
	c := &core.Commit{ConversationID: "c1", OperationID: "op", RemoveMessageIDs: []string{"b", "a\"x"},
		Insert:     core.InsertMessage{ID: "clip", ConversationID: "c1", Role: core.RoleSystem, Content: "[Context Summary]"},
		SearchText: []core.SearchText{{MessageID: "b", Text: "run_tests {\"pkg\":\"./x\"}\nsecond line"}, {MessageID: "a\"x", Text: ""}}}
	b := AppendCommit(nil, c)
	assert.Contains(t, string(b), `,"search_text":{"b":"run_tests {\"pkg\":\"./x\"}\nsecond line","a\"x":""}}`)
	got, err := DecodeCommit(b)
	require.NoError(t, err)
	assert.Equal(t, c.SearchText, got.SearchText)

	c.SearchText = nil
	b = AppendCommit(nil, c)
	assert.NotContains(t, string(b), "search_text")
	got, err = DecodeCommit(b)
	require.NoError(t, err)
	assert.Nil(t, got.SearchText)

	base := `{"conversation_id":"c1","operation_id":"op","insert_message":{"id":"clip","content":"x"},"search_text":`
	for in, field := range map[string]string{`[]}`: "search_text", `{"m1":7}}`: "search_text.m1", `"x"}`: "search_text"} {
		_, err := DecodeCommit([]byte(base + in))
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), "invalid_input: "+field+": ", in)
	}
	got, err = DecodeCommit([]byte(base + `null}`))
	require.NoError(t, err)
	assert.Nil(t, got.SearchText)
}

func TestMessageSearchText(t *testing.T) {
	assert.Equal(t, "plain", core.MessageSearchText(&core.Message{Content: "plain"}))
	assert.Equal(t, "f {\"a\":1}", core.MessageSearchText(&core.Message{ToolCalls: []core.ToolCall{{Name: "f", Arguments: `{"a":1}`}}}))
	assert.Equal(t, "text\nf\n{}", core.MessageSearchText(&core.Message{Content: "text",
		ToolCalls: []core.ToolCall{{Name: "f"}, {Arguments: "{}"}, {}}}), "missing names or arguments leave no stray space; an empty call adds nothing")
}

// A caller-owned commit's recall_writes, history_owner and insert_raw
// survive AppendCommit → DecodeCommit; malformed ones are refused naming
// the field.
func TestCommitCallerOwnedRoundTrip(t *testing.T) {
	when := time.Date(2026, 2, 28, 10, 0, 0, 0, time.UTC)
	c := &core.Commit{ConversationID: "c1", OperationID: "op", RemoveMessageIDs: []string{}, HistoryOwner: core.OwnerCaller,
		Insert:    core.InsertMessage{ID: "clip_1", ConversationID: "c1", Role: core.RoleSystem, Content: "[Context Summary]", CreatedAt: when},
		InsertRaw: []byte(`{"role":"user","content":"[Context Summary]"}`),
		RecallWrites: []core.RecallWrite{
			{ID: "clip_0", Role: core.RoleSystem, Content: "[Context Summary] old", CreatedAt: when, Raw: []byte(`{"type":"system","content":"[Context Summary] old"}`)},
			{ID: "d_1", Role: core.RoleTool, Content: "out", CreatedAt: when, SearchText: "out", Raw: []byte(`{ "role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"out"}] }`)},
		}}
	b := AppendCommit(nil, c)
	assert.Contains(t, string(b), `"history_owner":"caller","recall_writes":[{"id":"clip_0","role":"system"`)
	assert.Contains(t, string(b), `"message":{ "role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"out"}] }}`, "the exact JSON")
	got, err := DecodeCommit(b)
	require.NoError(t, err)
	assert.Equal(t, c.RecallWrites, got.RecallWrites)
	assert.Equal(t, core.OwnerCaller, got.HistoryOwner)
	assert.Equal(t, string(c.InsertRaw), string(got.InsertRaw))

	// Without history_owner a commit is the store's.
	got, err = DecodeCommit([]byte(`{"conversation_id":"c1","insert_message":{"id":"x","content":"y"}}`))
	require.NoError(t, err)
	assert.Equal(t, core.OwnerStore, got.HistoryOwner)

	base := `{"conversation_id":"c1","insert_message":{"id":"clip","content":"x"},`
	for in, field := range map[string]string{
		`"history_owner":"me"}`: "history_owner", `"recall_writes":{}}`: "recall_writes",
		`"recall_writes":[{"role":"user","message":{}}]}`:                      "recall_writes[0].id",
		`"recall_writes":[{"id":"a","role":"robot","message":{}}]}`:            "recall_writes[0].role",
		`"recall_writes":[{"id":"a","role":"user","message":"{}"}]}`:           "recall_writes[0].message",
		`"recall_writes":[{"id":"a","role":"user","content":1,"message":{}}]}`: "recall_writes[0].content",
		`"insert_raw":"x"}`: "insert_raw",
	} {
		_, err := DecodeCommit([]byte(base + in))
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), "invalid_input: "+field+": ", in)
	}
}
