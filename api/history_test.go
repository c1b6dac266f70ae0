package api

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The decodeHistory export answers what DecodeHistory (the Go hosts'
// function) decodes: the same ids (given or derived), roles, text and
// times, and the shape compress reads; errors name the field.
func TestDecodeHistoryExport(t *testing.T) {
	history := `[{"type":"system","content":"Be brief."},
{"type":"human","content":"read a.go","id":null},
{"type":"ai","content":"","tool_calls":[{"name":"read","args":{"path":"a.go"},"id":"call_1","type":"tool_call"}]},
{"type":"tool","content":"package a","tool_call_id":"call_1","id":"t1"},
{"type":"human","content":"ok"},{"type":"human","content":"ok"}]`
	out, err := DefaultEnv().DecodeHistory([]byte(`{"conversation_id":"c1","history":` + history + `}`))
	require.NoError(t, err)
	var got struct {
		Shape    string `json:"shape"`
		Messages []struct {
			ID, Role, Content string
			CreatedAt         *string `json:"created_at"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(out, &got))
	want, _, err := DecodeHistory("c1", []byte(history))
	require.NoError(t, err)
	assert.Equal(t, "langchain", got.Shape)
	require.Len(t, got.Messages, len(want))
	for i, m := range got.Messages {
		assert.Equal(t, want[i].ID, m.ID, "messages[%d].id", i)
		assert.Equal(t, want[i].Role.String(), m.Role)
		assert.Equal(t, want[i].Content, m.Content)
		assert.Nil(t, m.CreatedAt)
	}
	assert.Equal(t, "t1", got.Messages[3].ID)
	assert.Equal(t, []string{"system", "user", "assistant", "tool", "user", "user"},
		[]string{got.Messages[0].Role, got.Messages[1].Role, got.Messages[2].Role, got.Messages[3].Role, got.Messages[4].Role, got.Messages[5].Role})
	assert.NotEqual(t, got.Messages[4].ID, got.Messages[5].ID, "identical messages get distinct ids")

	out, err = DefaultEnv().DecodeHistory([]byte(`{"conversation_id":"c1","shape":"anthropic","history":[{"role":"user","content":"hi","created_at":"2026-02-28T10:00:00Z"}]}`))
	require.NoError(t, err)
	assert.Contains(t, string(out), `"shape":"anthropic"`)
	assert.Contains(t, string(out), `"created_at":"2026-02-28T10:00:00.000Z"`)

	for in, field := range map[string]string{
		`{"history":[]}`:                                       "conversation_id",
		`{"conversation_id":"","history":[]}`:                  "conversation_id",
		`{"conversation_id":"c","history":[{"role":"robot"}]}`: "history[0].role",
		`{"conversation_id":"c","history":[{"id":"a","role":"user","content":"x"},{"id":"a","role":"user","content":"y"}]}`: "history[1].id",
		`{"conversation_id":"c","shape":"klingon","history":[]}`:                                                            "shape",
	} {
		_, err := DefaultEnv().DecodeHistory([]byte(in))
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), field+": ", in)
	}
}
