package api

import (
	"strings"

	"github.com/clipfold/clipfold/core"
	"github.com/tidwall/gjson"
)

// rewriter renders replaced messages (core.Rewriter) in their own shape:
// the message's JSON with the outputs of its cleared tool results, or
// its truncated texts, written in place, and every other member as it
// was. Per shape, a tool output is
//
//	OpenAI Chat, LangChain, native   a tool message's "content" (a string after)
//	Anthropic                        a tool_result block's "content" (a string after)
//	AI SDK                           a tool-result part's "output" ({"type":"text","value":…} after),
//	                                 or its older "result" (a string after)
//	OpenAI Responses                 a function_call_output's or custom_tool_call_output's "output"
//	                                 (a string after; other *_output items are not rewritten)
//
// and a text is a string "content", a string part, or a text part's
// "text" (text, input_text, output_text). The result is decoded again by
// the message decoder, and refused unless it keeps the role, the tool
// calls and the results (ids, in order) the message had: a replacement
// never unpairs a call from its result.
type rewriter struct{}

func (rewriter) Rewrite(conv string, m *core.Message, e *core.Edit) (core.Message, bool) {
	raw, ok := rewriteMessage(bytesToString(m.Raw), m, e)
	if !ok {
		return core.Message{}, false
	}
	var p core.Message
	d := msgDecoder{field: "history"}
	d.startArray()
	if end, err := d.decodeAt(raw, 0, false, &p); err != nil || end != len(raw) {
		return core.Message{}, false
	}
	if !samePairing(m, &p) {
		return core.Message{}, false
	}
	if p.ConversationID == "" {
		p.ConversationID = m.ConversationID
	}
	if !p.HasCreatedAt {
		p.CreatedAt = m.CreatedAt
	}
	if p.ID == "" {
		p.ID = core.DerivedID(conv, &p)
	}
	return p, true
}

// samePairing reports whether p answers and makes the same tool calls
// as m, in the same role.
func samePairing(m, p *core.Message) bool {
	if m.Role != p.Role || m.ToolCallID != p.ToolCallID || m.HasToolCalls != p.HasToolCalls ||
		m.HasResults != p.HasResults || len(m.ToolCalls) != len(p.ToolCalls) {
		return false
	}
	for i := range m.ToolCalls {
		a, b := &m.ToolCalls[i], &p.ToolCalls[i]
		if a.ID != b.ID || a.Result != b.Result || (!a.Result && (a.Name != b.Name || a.Arguments != b.Arguments)) {
			return false
		}
	}
	return true
}

// slotWriter makes the new texts of one message.
type slotWriter struct {
	m *core.Message
	e *core.Edit
	// outs are the decoder's texts of the message's results
	// (core.ResultOutputs), by index.
	outs []string
}

// output is result r's new output, as a JSON string; keep is false when
// it stays as it was.
func (w *slotWriter) output(r int, b []byte) ([]byte, bool) {
	if r < len(w.e.Clear) && w.e.Clear[r] != "" {
		return core.AppendJSONString(b, w.e.Clear[r]), true
	}
	if w.e.Truncate && r < len(w.outs) {
		if t := core.TruncateText(w.outs[r], w.e.Cap, w.e.RecallID); len(t) != len(w.outs[r]) {
			return core.AppendJSONString(b, t), true
		}
	}
	return b, false
}

// text is a text's new JSON string; keep is false when it stays.
func (w *slotWriter) text(s string, b []byte) ([]byte, bool) {
	if !w.e.Truncate {
		return b, false
	}
	t := core.TruncateText(s, w.e.Cap, w.e.RecallID)
	if len(t) == len(s) {
		return b, false
	}
	return core.AppendJSONString(b, t), true
}

// rewriteMessage is raw, the message m's JSON, with e applied (see
// rewriter); ok is false when nothing of it can be rewritten so.
func rewriteMessage(raw string, m *core.Message, e *core.Edit) (string, bool) {
	root := gjson.Parse(raw)
	if !root.IsObject() {
		return "", false
	}
	w := &slotWriter{m: m, e: e, outs: core.ResultOutputs(m)}
	typ := root.Get("type")
	single := m.Role == core.RoleTool && !m.HasResults // the whole content (or output) is one result's output
	ok := true
	b, changed := rewriteObject(root, make([]byte, 0, len(raw)), func(k string, v gjson.Result, b []byte) ([]byte, bool) {
		switch {
		case k == "content" && single && (!typ.Exists() || typ.Str == "tool"):
			return w.output(0, b)
		case k == "output" && single && typ.Type == gjson.String && strings.HasSuffix(typ.Str, "_output"):
			if typ.Str != "function_call_output" && typ.Str != "custom_tool_call_output" {
				ok = false
				return b, false
			}
			return w.output(0, b)
		case k == "content" && v.Type == gjson.String && !single:
			return w.text(v.Str, b)
		case k == "content" && v.IsArray() && !single:
			return w.parts(v, b)
		}
		return b, false
	})
	if !ok || !changed {
		return "", false
	}
	return string(b), true
}

// rewriteObject writes the object o to b member by member, each value as val
// makes it (changed false: as it was); it writes nothing and reports
// false when no value changed.
func rewriteObject(o gjson.Result, b []byte, val func(key string, v gjson.Result, b []byte) ([]byte, bool)) ([]byte, bool) {
	start := len(b)
	b = append(b, '{')
	changed, n := false, 0
	o.ForEach(func(k, v gjson.Result) bool {
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, k.Raw...)
		b = append(b, ':')
		var ch bool
		if b, ch = val(k.Str, v, b); ch {
			changed = true
		} else {
			b = append(b, v.Raw...)
		}
		return true
	})
	if !changed {
		return b[:start], false
	}
	return append(b, '}'), true
}

// parts rewrites a content-part array: text parts, tool_result blocks
// and tool-result parts (results indexed as the decoder adds them: once
// per call id).
func (w *slotWriter) parts(v gjson.Result, b []byte) ([]byte, bool) {
	start := len(b)
	b = append(b, '[')
	changed := false
	next := 0
	seen := map[string]int{}
	i := 0
	v.ForEach(func(_, p gjson.Result) bool {
		if i > 0 {
			b = append(b, ',')
		}
		i++
		if p.Type == gjson.String {
			var ch bool
			if b, ch = w.text(p.Str, b); ch {
				changed = true
				return true
			}
			b = append(b, p.Raw...)
			return true
		}
		if !p.IsObject() {
			b = append(b, p.Raw...)
			return true
		}
		var f partFields
		f.read(&p)
		result := func(id string) int {
			if id != "" {
				if r, ok := seen[id]; ok {
					return r
				}
				seen[id] = next
			}
			next++
			return next - 1
		}
		var ch bool
		switch t := f.typ.String(); {
		case t == "tool_result":
			r := result(f.toolUseID.String())
			b, ch = w.member(p, "content", b, func(b []byte) ([]byte, bool) { return w.output(r, b) })
		case t == "tool-result":
			r := result(f.toolCallID.String())
			if f.output.Exists() {
				b, ch = w.member(p, "output", b, func(b []byte) ([]byte, bool) {
					mark := len(b)
					b = append(b, `{"type":"text","value":`...)
					b2, ok := w.output(r, b)
					if !ok {
						return b[:mark], false
					}
					return append(b2, '}'), true
				})
			} else {
				b, ch = w.member(p, "result", b, func(b []byte) ([]byte, bool) { return w.output(r, b) })
			}
		case t == "text" || t == "input_text" || t == "output_text" || (!f.typ.Exists() && f.text.Type == gjson.String):
			if f.text.Type == gjson.String {
				s := f.text.Str
				b, ch = w.member(p, "text", b, func(b []byte) ([]byte, bool) { return w.text(s, b) })
			}
		}
		if ch {
			changed = true
		} else {
			b = append(b, p.Raw...)
		}
		return true
	})
	if !changed {
		return b[:start], false
	}
	return append(b, ']'), true
}

// member writes the object o with member key's value made by val (the
// others as they were); changed is false (and nothing written) when val
// keeps it.
func (w *slotWriter) member(o gjson.Result, key string, b []byte, val func([]byte) ([]byte, bool)) ([]byte, bool) {
	done := false
	return rewriteObject(o, b, func(k string, _ gjson.Result, b []byte) ([]byte, bool) {
		if k != key || done {
			return b, false
		}
		done = true
		return val(b)
	})
}

var _ core.Rewriter = rewriter{}
