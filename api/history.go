package api

import (
	"github.com/clipfold/clipfold/core"
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
