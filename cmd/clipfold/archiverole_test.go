package main

import "github.com/tidwall/gjson"

// archiveRole is the role the clip-archive first in a compacted history of
// plain Chat messages has (docs/spec.md#message-shapes): "system" when the
// first message after it that is not a system message is a user turn (or
// there is none), else "user", so that the history starts with one.
func archiveRole(rest []string) string {
	for _, m := range rest {
		switch gjson.Get(m, "role").String() {
		case "system", "developer":
			continue
		case "user":
			return "system"
		}
		return "user"
	}
	return "system"
}

// rawsOf is the JSON text of each message.
func rawsOf(msgs []gjson.Result) []string {
	out := make([]string, len(msgs))
	for i := range msgs {
		out[i] = msgs[i].Raw
	}
	return out
}
