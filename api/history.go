package api

import (
	"github.com/clipfold/clipfold/core"
)

// DecodeHistory reads a JSON array of messages as compress reads its
// "history" (ids and created_at required, ids unique), for Go hosts that
// must store messages before compress moves them: they learn each
// message's id, role, text and time from the plug-in's own decoder
// instead of parsing messages a second way. Each message's Raw is its
// exact bytes. Errors name the element, as "history[3].role: …".
func DecodeHistory(history []byte) ([]core.Message, error) {
	in := make([]byte, 0, len(history)+12)
	in = append(in, `{"history":`...)
	in = append(in, history...)
	in = append(in, '}')
	root, err := parseInput(in)
	if err != nil {
		return nil, err
	}
	msgs, err := decodeMessages(root, "history", msgRules{needID: true, needTime: true})
	if err != nil {
		return nil, err
	}
	if err := uniqueIDs(msgs); err != nil {
		return nil, err
	}
	return msgs, nil
}
