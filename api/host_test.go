package api

import (
	"testing"

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
