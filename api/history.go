package api

import (
	"github.com/clipfold/clipfold/core"
	"github.com/tidwall/gjson"
)

// DecodeHistory reads a JSON array of messages as compress reads its
// "history" — in any message shape of docs/spec.md#message-shapes, messages
// without an id given their derived id in conversationID (core.AssignIDs), ids
// unique — for Go hosts that must store messages before compress moves them:
// they learn each message's id, role, text and time from the plug-in's own
// decoder instead of parsing messages a second way. Each message's Raw is its
// exact bytes; a message without created_at has HasCreatedAt false. Errors
// name the element, as "history[3].role: …".
func DecodeHistory(conversationID string, history []byte) ([]core.Message, core.HistoryShape, error) {
	in := make([]byte, 0, len(history)+12)
	in = append(in, `{"history":`...)
	in = append(in, history...)
	in = append(in, '}')
	root, err := parseInput(in)
	if err != nil {
		return nil, core.HistoryShape{}, err
	}
	msgs, shape, err := decodeMessages(root, "history", msgRules{})
	if err != nil {
		return nil, shape, err
	}
	core.AssignIDs(conversationID, msgs)
	if err := uniqueIDs(msgs); err != nil {
		return nil, shape, err
	}
	return msgs, shape, nil
}

// DecodeHistory is the decodeHistory export: {conversation_id, history,
// shape?, search_text?} → {"shape":"…","messages":[{"id","role","content","created_at"}]},
// one entry per history message, in order — DecodeHistory (the package
// function) for hosts in other languages, which must store messages under
// the ids compress derives and must not derive them a second way. "id" is
// the message's own id or its derived id in conversation_id; "role" is
// clipfold's reading of it (user, assistant, system, tool); "content" the
// text a store keeps (text parts, tool outputs); "created_at" the
// message's time in clipfold's format (docs/spec.md#conventions), or null when
// it has none. "shape" is the shape compress reads the messages as (chat,
// anthropic, responses, ai_sdk, langchain). With "search_text": true each
// message also has "search_text": what a store's search index holds for it in
// this list (core.MessageSearchTextAt: its text, tool names, inputs and
// outputs, then the context lines of its exchange), so that hosts index active
// and in-context messages as recall indexes removed ones without rendering
// them themselves.
func (e *Env) DecodeHistory(in []byte) ([]byte, error) {
	root, err := parseInput(in)
	if err != nil {
		return nil, err
	}
	conv := root.Get("conversation_id")
	if !conv.Exists() {
		return nil, required("conversation_id")
	}
	if conv.Type != gjson.String || conv.Str == "" {
		return nil, core.Invalid("conversation_id", "must be a non-empty string")
	}
	withText := false
	if st := root.Get("search_text"); st.Exists() && st.Type != gjson.Null {
		if st.Type != gjson.True && st.Type != gjson.False {
			return nil, wrongType("search_text", "true or false", st)
		}
		withText = st.Type == gjson.True
	}
	msgs, shape, err := e.messages(root, "history", msgRules{})
	if err != nil {
		return nil, err
	}
	core.AssignIDs(conv.Str, msgs)
	if err := uniqueIDs(msgs); err != nil {
		return nil, err
	}
	// Sized so that it never grows: under TinyGo each growth of a large
	// buffer can cost a collection over every message and id.
	size := 64 + len(in) + 96*len(msgs)
	if withText {
		size += 2*len(in) + 32*len(msgs)
	}
	b := e.outBuffer(size)
	b = append(b, `{"shape":`...)
	b = core.AppendJSONString(b, shape.Shape.String())
	b = append(b, `,"messages":[`...)
	for i := range msgs {
		m := &msgs[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = appendMessageRow(b, m, "null")
		if withText {
			b = append(b, `,"search_text":`...)
			b = core.AppendJSONString(b, core.MessageSearchTextAt(msgs, i))
		}
		b = append(b, '}')
	}
	return append(b, "]}"...), nil
}
