package api

import (
	"github.com/clipfold/clipfold/core"
	"github.com/tidwall/gjson"
)

// DecodeHistory reads a JSON array of messages as compress reads its
// "history" — in any message shape of SPEC §2, messages without an id
// given their derived id in conversationID (core.AssignIDs), ids unique —
// for Go hosts that must store messages before compress moves them: they
// learn each message's id, role, text and time from the plug-in's own
// decoder instead of parsing messages a second way. Each message's Raw is
// its exact bytes; a message without created_at has HasCreatedAt false.
// Errors name the element, as "history[3].role: …".
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
// shape?} → {"shape":"…","messages":[{"id","role","content","created_at"}]},
// one entry per history message, in order — DecodeHistory (the package
// function) for hosts in other languages, which must store messages under
// the ids compress derives and must not derive them a second way. "id" is
// the message's own id or its derived id in conversation_id; "role" is
// clipfold's reading of it (user, assistant, system, tool); "content" the
// text a store keeps (text parts, tool outputs); "created_at" the
// message's time in SPEC's format, or null when it has none. "shape" is
// the shape compress reads the messages as (chat, anthropic, responses,
// ai_sdk, langchain).
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
	b := e.outBuffer(64 + len(in) + 96*len(msgs))
	b = append(b, `{"shape":`...)
	b = core.AppendJSONString(b, shape.Shape.String())
	b = append(b, `,"messages":[`...)
	for i := range msgs {
		m := &msgs[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = core.AppendJSONString(b, m.ID)
		b = append(b, `,"role":`...)
		b = core.AppendJSONString(b, m.Role.String())
		b = append(b, `,"content":`...)
		b = core.AppendJSONString(b, m.Content)
		b = append(b, `,"created_at":`...)
		if m.HasCreatedAt {
			b = core.AppendJSONString(b, core.FormatTime(m.CreatedAt))
		} else {
			b = append(b, "null"...)
		}
		b = append(b, '}')
	}
	return append(b, "]}"...), nil
}
