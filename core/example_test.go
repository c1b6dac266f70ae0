package core_test

import (
	"fmt"

	"github.com/clipfold/clipfold/core"
)

// Split a history for compaction: the system message is pinned, the last
// keep_recent messages are kept, and the rest goes to the summarizer,
// least important first (indices into the history, so a caller can echo
// each message's own bytes).
func ExampleSplit() {
	texts := []string{
		"You are a travel planner.",
		"We booked the cabin for June 12 to June 19.",
		"Noted.",
		"Maya is allergic to peanuts: no trail mix with nuts.",
		"Understood, I will plan snacks without nuts.",
		"What about the rental car?",
		"The car is picked up at Reno airport.",
	}
	roles := []core.Role{core.RoleSystem, core.RoleUser, core.RoleAssistant, core.RoleUser, core.RoleAssistant, core.RoleUser, core.RoleAssistant}
	msgs := make([]core.Message, len(texts))
	for i, text := range texts {
		msgs[i] = core.Message{ID: fmt.Sprintf("m%d", i), Role: roles[i], Content: text}
	}
	cfg := core.DefaultConfig()
	cfg.KeepRecent = 2

	s := core.Split(msgs, &cfg)
	fmt.Println("compress, least important first:", ids(msgs, s.ToCompress))
	fmt.Println("keep:", ids(msgs, s.ToKeep))
	// Output:
	// compress, least important first: [m2 m4 m1 m3]
	// keep: [m0 m5 m6]
}

func ids(msgs []core.Message, idx []int) []string {
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = msgs[j].ID
	}
	return out
}
