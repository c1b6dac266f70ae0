package api

import (
	"strings"
	"testing"

	"github.com/clipfold/clipfold/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// A tool result cleared in each message shape: the output becomes the
// line, in the shape's own member, every other member stays, the call id
// and role stay, and the message reads back as the same result.
func TestRewriteClearsInEveryShape(t *testing.T) {
	line := core.ClearedLine("lookup", `{"id":7}`, "m9")
	cases := []struct {
		name, msgs, want string
	}{
		{"chat", `[{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"lookup","arguments":"{\"id\":7}"}}]},
			{"role":"tool","tool_call_id":"c1","content":"a very long output that is worth clearing because it is long"}]`,
			`{"role":"tool","tool_call_id":"c1","content":` + q(line) + `}`},
		{"chat parts", `[{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"lookup","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"a very long output that is worth clearing because it is long"}]}]`,
			`{"role":"tool","tool_call_id":"c1","content":` + q(line) + `}`},
		{"native", `[{"id":"m8","role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"lookup","arguments":"{}"}}],"created_at":"2026-01-01T00:00:00Z"},
			{"id":"m9","role":"tool","tool_call_id":"c1","content":"a very long output that is worth clearing because it is long","created_at":"2026-01-01T00:00:01Z"}]`,
			`{"id":"m9","role":"tool","tool_call_id":"c1","content":` + q(line) + `,"created_at":"2026-01-01T00:00:01Z"}`},
		{"anthropic", `[{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"lookup","input":{"id":7}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":[{"type":"text","text":"a very long output that is worth clearing because it is long"}],"is_error":false}]}]`,
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":` + q(line) + `,"is_error":false}]}`},
		{"responses", `[{"type":"function_call","call_id":"c1","name":"lookup","arguments":"{\"id\":7}"},
			{"type":"function_call_output","call_id":"c1","output":"a very long output that is worth clearing because it is long"}]`,
			`{"type":"function_call_output","call_id":"c1","output":` + q(line) + `}`},
		{"ai sdk", `[{"role":"assistant","content":[{"type":"tool-call","toolCallId":"c1","toolName":"lookup","input":{"id":7}}]},
			{"role":"tool","content":[{"type":"tool-result","toolCallId":"c1","toolName":"lookup","output":{"type":"json","value":{"text":"a very long output that is worth clearing because it is long"}}}]}]`,
			`{"role":"tool","content":[{"type":"tool-result","toolCallId":"c1","toolName":"lookup","output":{"type":"text","value":` + q(line) + `}}]}`},
		{"ai sdk v4", `[{"role":"assistant","content":[{"type":"tool-call","toolCallId":"c1","toolName":"lookup","args":{"id":7}}]},
			{"role":"tool","content":[{"type":"tool-result","toolCallId":"c1","toolName":"lookup","result":"a very long output that is worth clearing because it is long"}]}]`,
			`{"role":"tool","content":[{"type":"tool-result","toolCallId":"c1","toolName":"lookup","result":` + q(line) + `}]}`},
		{"langchain", `[{"type":"ai","content":"","tool_calls":[{"name":"lookup","args":{"id":7},"id":"c1"}]},
			{"type":"tool","content":"a very long output that is worth clearing because it is long","tool_call_id":"c1","name":"lookup","id":"t1"}]`,
			`{"type":"tool","content":` + q(line) + `,"tool_call_id":"c1","name":"lookup","id":"t1"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msgs, _ := mustDecode(t, tc.msgs)
			core.AssignIDs("c", msgs)
			m := &msgs[1]
			p, ok := rewriter{}.Rewrite("c", m, &core.Edit{Clear: []string{line}, RecallID: m.ID})
			require.True(t, ok)
			assert.JSONEq(t, tc.want, string(p.Raw))
			assert.Equal(t, m.Role, p.Role)
			assert.Equal(t, []string{line}, core.ResultOutputs(&p))
			if gjson.GetBytes(m.Raw, "id").Exists() {
				assert.Equal(t, m.ID, p.ID, "an own id is kept")
			} else {
				assert.Equal(t, core.DerivedID("c", &p), p.ID, "no own id: the replacement's derived id")
				assert.NotEqual(t, m.ID, p.ID)
			}
		})
	}
}

// Truncation cuts every text and output longer than the cap and keeps
// what is not text (tool calls, other blocks) as it was.
func TestRewriteTruncates(t *testing.T) {
	long := strings.Repeat("abcdefghij", 100)
	msgs, _ := mustDecode(t, `[{"role":"user","content":[{"type":"text","text":"`+long+`"},{"type":"image","source":{"type":"base64","data":"xx"}},"short"]},
		{"role":"assistant","content":[{"type":"text","text":"`+long+`"},{"type":"tool_use","id":"c1","name":"run","input":{"x":"`+long+`"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"`+long+`"},{"type":"text","text":"and?"}]}]`)
	core.AssignIDs("c", msgs)
	for i := range msgs {
		m := &msgs[i]
		p, ok := rewriter{}.Rewrite("c", m, &core.Edit{Truncate: true, Cap: 100, RecallID: m.ID})
		require.True(t, ok, "message %d", i)
		assert.Contains(t, string(p.Raw), `900 characters omitted; the full text is in recall storage as \"`+m.ID+`\"`)
		assert.Less(t, core.MessageRunes(&p), core.MessageRunes(m))
		assert.Equal(t, m.Media, p.Media, "an image stays")
	}
	p, _ := rewriter{}.Rewrite("c", &msgs[1], &core.Edit{Truncate: true, Cap: 100, RecallID: "x"})
	assert.Equal(t, msgs[1].ToolCalls, p.ToolCalls, "a call's input is never cut")
	p, _ = rewriter{}.Rewrite("c", &msgs[0], &core.Edit{Truncate: true, Cap: 100, RecallID: "x"})
	assert.True(t, strings.HasSuffix(p.Content, "\nshort"), "a short text stays whole")
}

// What cannot be rewritten is refused: an output item that is not text.
func TestRewriteRefuses(t *testing.T) {
	msgs, _ := mustDecode(t, `[{"type":"computer_call","call_id":"c1","action":{"type":"screenshot"}},
		{"type":"computer_call_output","call_id":"c1","output":{"type":"computer_screenshot","image_url":"data:…"}}]`)
	_, ok := rewriter{}.Rewrite("c", &msgs[1], &core.Edit{Clear: []string{"x"}, RecallID: "m"})
	assert.False(t, ok)
}

func q(s string) string { return string(core.AppendJSONString(nil, s)) }
