package core

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestActiveIndexRange: the search texts a host computes over the
// window ActiveIndexRange gives equal those over the whole history, for
// the messages it re-indexes, whatever the history's tool calls and
// results (a result's call and a turn's request far back included).
func TestActiveIndexRange(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for it := 0; it < 200; it++ {
		var hist []Message
		open := []string{}
		for i := rng.Intn(300) + 1; i > 0; i-- {
			m := Message{ID: fmt.Sprint(len(hist)), Content: fmt.Sprintf("text %d", len(hist))}
			switch rng.Intn(5) {
			case 0:
				m.Role = RoleUser
			case 1:
				m.Role = RoleAssistant
				id := fmt.Sprintf("call%d", len(hist))
				m.ToolCalls = []ToolCall{{ID: id, Name: "tool", Arguments: `{"n":1}`}}
				m.HasToolCalls = true
				open = append(open, id)
			case 2:
				if len(open) > 0 {
					m.Role, m.ToolCallID = RoleTool, open[rng.Intn(len(open))]
				} else {
					m.Role = RoleAssistant
				}
			case 3:
				m.Role = RoleSystem
			default:
				m.Role = RoleAssistant
			}
			hist = append(hist, m)
		}
		n := len(hist)
		appended := rng.Intn(n) + 1
		from, index := ActiveIndexRange(n, appended)
		window := hist[from:]
		for k := index; k < n; k++ {
			require.Equal(t, MessageSearchTextAt(hist, k), MessageSearchTextAt(window, k-from), "message %d of %d, %d appended", k, n, appended)
		}
	}
	from, index := ActiveIndexRange(3, 5)
	require.Equal(t, [2]int{0, 0}, [2]int{from, index})
}
