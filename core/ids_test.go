package core

import (
	"hash/fnv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFNV128 holds the inline FNV-1a 128 to hash/fnv's.
func TestFNV128(t *testing.T) {
	for _, s := range []string{"", "a", "hello world", strings.Repeat("\xff\x00é", 100)} {
		ref := fnv.New128a()
		ref.Write([]byte(s))
		h := newFNV128()
		h.write(s)
		got := h.sum()
		require.Equal(t, ref.Sum(nil), got[:], "%q", s)
	}
}

func TestAssignIDs(t *testing.T) {
	msgs := []Message{
		{Role: RoleUser, Content: "ok"},
		{Role: RoleAssistant, Content: "sure"},
		{Role: RoleUser, Content: "ok"},
		{ID: "given", Role: RoleUser, Content: "ok"},
		{Role: RoleSystem, Content: ClipArchivePrefix + " — 2 messages compressed]"},
	}
	AssignIDs("c1", msgs)
	require.Equal(t, "given", msgs[3].ID)
	require.NotEqual(t, msgs[0].ID, msgs[2].ID, "identical messages are told apart by occurrence")
	require.Regexp(t, `^d_[0-9a-f]{24}$`, msgs[0].ID)
	require.Regexp(t, `^clip_[0-9a-f]{24}$`, msgs[4].ID)
	require.Equal(t, ClipArchiveID("c1", &InsertMessage{Content: msgs[4].Content}), msgs[4].ID)

	// Position does not matter, content and occurrence do; so does the
	// conversation.
	again := []Message{{Role: RoleAssistant, Content: "sure"}, {Role: RoleUser, Content: "ok"}}
	AssignIDs("c1", again)
	require.Equal(t, msgs[1].ID, again[0].ID)
	require.Equal(t, msgs[0].ID, again[1].ID)
	other := []Message{{Role: RoleUser, Content: "ok"}}
	AssignIDs("c2", other)
	require.NotEqual(t, msgs[0].ID, other[0].ID)
	// Tool calls and results are content.
	a := []Message{{Role: RoleAssistant, HasToolCalls: true, ToolCalls: []ToolCall{{ID: "t1", Name: "f", Arguments: "{}"}}}}
	b := []Message{{Role: RoleAssistant, HasToolCalls: true, ToolCalls: []ToolCall{{ID: "t2", Name: "f", Arguments: "{}"}}}}
	AssignIDs("c1", a)
	AssignIDs("c1", b)
	require.NotEqual(t, a[0].ID, b[0].ID)
}
