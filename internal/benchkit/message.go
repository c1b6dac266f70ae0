package benchkit

import (
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"
)

// Message is one message of a conversation file: its exact bytes and
// what the benchmarks need from them.
type Message struct {
	ID   string
	Role string
	Date string // created_at's YYYY-MM-DD, "" when absent
	Text string // content (text parts joined) plus tool call names and arguments
	// Content is the content alone (text parts joined).
	Content string
	// ToolCalls are the OpenAI-style calls the message makes.
	ToolCalls []ToolCall
	// ToolCallID is the call a tool message answers.
	ToolCallID string
	Raw        json.RawMessage
}

// ToolCall is one OpenAI-style function call of a message.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// ParseMessage reads a native (docs/spec.md#message) message. content may be a
// string or an array of parts whose text parts are joined with "\n".
func ParseMessage(raw json.RawMessage) Message {
	r := gjson.ParseBytes(raw)
	m := Message{ID: r.Get("id").String(), Role: r.Get("role").String(), ToolCallID: r.Get("tool_call_id").String(), Raw: raw}
	if t := r.Get("created_at").String(); len(t) >= 10 {
		m.Date = t[:10]
	}
	var b strings.Builder
	content := r.Get("content")
	if content.IsArray() {
		first := true
		for _, p := range content.Array() {
			if p.Get("type").String() == "text" {
				if !first {
					b.WriteByte('\n')
				}
				b.WriteString(p.Get("text").String())
				first = false
			}
		}
	} else {
		b.WriteString(content.String())
	}
	m.Content = b.String()
	for _, tc := range r.Get("tool_calls").Array() {
		call := ToolCall{ID: tc.Get("id").String(), Name: tc.Get("function.name").String(), Arguments: tc.Get("function.arguments").String()}
		m.ToolCalls = append(m.ToolCalls, call)
		b.WriteByte('\n')
		b.WriteString(call.Name)
		b.WriteByte(' ')
		b.WriteString(call.Arguments)
	}
	m.Text = b.String()
	return m
}

// Raws returns the messages' exact bytes.
func Raws(msgs []Message) []json.RawMessage {
	raws := make([]json.RawMessage, len(msgs))
	for i := range msgs {
		raws[i] = msgs[i].Raw
	}
	return raws
}

// SameJSON compares two messages' bytes, ignoring insignificant white
// space around them (a file has one message per line).
func SameJSON(a, b []byte) bool {
	return strings.TrimSpace(string(a)) == strings.TrimSpace(string(b))
}
