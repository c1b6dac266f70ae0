package core

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestMessageSearchTextAt(t *testing.T) {
	hist := []Message{
		{Role: RoleSystem, Content: "You are an ops agent."},
		{Role: RoleUser, Content: "How many orders did we get in February?"},
		{Role: RoleAssistant, HasToolCalls: true, ToolCalls: []ToolCall{{ID: "c1", Name: "sql_query", Arguments: `{"query":"SELECT COUNT(*) FROM orders"}`}}},
		{Role: RoleTool, ToolCallID: "c1", Content: "| orders |\n|   1284 |"},
		{Role: RoleAssistant, Content: "February: 1,284 orders."},
		{Role: RoleSystem, Content: "[Context Summary — 3 messages compressed]"},
	}
	sep := SearchContextSep
	assert.Equal(t, "You are an ops agent.", MessageSearchTextAt(hist, 0), "system messages give and get no context")
	assert.Equal(t, "How many orders did we get in February?"+sep+`sql_query {"query":"SELECT COUNT(*) FROM orders"}`,
		MessageSearchTextAt(hist, 1), "a user message: the message after it")
	assert.Equal(t, `sql_query {"query":"SELECT COUNT(*) FROM orders"}`+sep+"How many orders did we get in February?\n» | orders | |   1284 |",
		MessageSearchTextAt(hist, 2), "the turn's request, then the next message, one line each")
	assert.Equal(t, "| orders |\n|   1284 |\n"+`sql_query {"query":"SELECT COUNT(*) FROM orders"}`+sep+"How many orders did we get in February?\n» February: 1,284 orders.",
		MessageSearchTextAt(hist, 3), "a result: its call among its own words; the request, the next message as context")
	assert.Equal(t, "February: 1,284 orders."+sep+"How many orders did we get in February?",
		MessageSearchTextAt(hist, 4), "no context from a system message after it")

	t.Run("a result's call", func(t *testing.T) {
		h := []Message{
			{Role: RoleAssistant, HasToolCalls: true, ToolCalls: []ToolCall{{ID: "a", Name: "get_order", Arguments: `{"id":4471}`}, {ID: "b", Name: "get_user", Arguments: `{"id":7}`}}},
			{Role: RoleTool, ToolCallID: "b", Content: "Ada"},
			{Role: RoleTool, ToolCallID: "a", Content: ""},
			{Role: RoleTool, ToolCallID: "zz", Content: "orphan"},
		}
		assert.Equal(t, "Ada\n"+`get_user {"id":7}`, MessageSearchTextAt(h, 1), "the call it answers, not the message's first")
		assert.Equal(t, `get_order {"id":4471}`+sep+"orphan", MessageSearchTextAt(h, 2), "an empty result is found by its call")
		assert.Equal(t, "orphan", MessageSearchTextAt(h, 3), "a result whose call is not there has none")
		long := strings.Repeat("é", searchContextRunes)
		h = []Message{
			{Role: RoleAssistant, HasToolCalls: true, ToolCalls: []ToolCall{{ID: "w", Name: "write_file", Arguments: long}}},
			{Role: RoleTool, ToolCallID: "w", Content: "ok"},
		}
		got := MessageSearchTextAt(h, 1)
		assert.Equal(t, "ok\nwrite_file "+strings.Repeat("é", searchContextRunes-len("write_file ")), got, "a long call is cut like a context line")
		assert.True(t, utf8.ValidString(got))
	})
	t.Run("an empty message is its context", func(t *testing.T) {
		h := []Message{{Role: RoleUser, Content: ""}, {Role: RoleAssistant, Content: "Hello."}}
		assert.Equal(t, sep+"Hello.", MessageSearchTextAt(h, 0))
		assert.Equal(t, "Hello.", MessageSearchTextAt(h, 1), "a user message gives no request to its own turn's opener")
	})
	t.Run("each context line is cut", func(t *testing.T) {
		long := strings.Repeat("é", searchContextRunes+50)
		h := []Message{{Role: RoleUser, Content: "q"}, {Role: RoleAssistant, Content: long}}
		got := MessageSearchTextAt(h, 0)
		assert.Equal(t, "q"+sep+strings.Repeat("é", searchContextRunes), got)
		assert.True(t, utf8.ValidString(got))
	})
	t.Run("the request is looked for a bounded way back", func(t *testing.T) {
		h := []Message{{Role: RoleUser, Content: "far away"}}
		for i := 0; i <= searchContextScan; i++ {
			h = append(h, Message{Role: RoleAssistant, Content: "step"})
		}
		assert.Equal(t, "step"+sep+"far away\n» step", MessageSearchTextAt(h, searchContextScan))
		assert.Equal(t, "step", MessageSearchTextAt(h, searchContextScan+1), "beyond the scan: no request")
	})
}
