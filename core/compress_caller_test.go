package core

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// callerHistory is n plain messages without ids or times, as frameworks
// keep them; ids derived as the api layer derives them.
func callerHistory(conv string, n int) []Message {
	msgs := make([]Message, n)
	for i := range msgs {
		role := RoleUser
		if i%2 == 1 {
			role = RoleAssistant
		}
		msgs[i] = Message{Role: role, Content: words("m"+string(rune('a'+i%26)), 300), Raw: []byte(`{"n":` + string(rune('0'+i%10)) + `}`)}
	}
	AssignIDs(conv, msgs)
	return msgs
}

func (r *compressRig) compressCaller(t *testing.T, conv string, hist []Message, c Config, onlyIfDue bool) CompressResult {
	t.Helper()
	return Compress(&CompressInput{ConversationID: conv, History: hist, Config: c, OperationID: "op", HistoryOwner: OwnerCaller,
		OnlyIfDue: onlyIfDue, Shape: HistoryShape{Shape: ShapeChat}},
		Ports{LLM: r.llm, Memory: r.mem, Committer: r.mem, Clock: r.clock, Breakers: &Breakers{}, Rewriter: textRewriter{}})
}

// The whole list resent: the second call sees only what the first left
// uncovered, behind the current clip-archive, and a failure returns that
// view (nothing is lost: the rest is archived).
func TestCompressCallerResend(t *testing.T) {
	r := newRig()
	c := DefaultConfig()
	c.KeepRecent, c.MaxSummaryTokens = 4, 20
	list := callerHistory("c1", 12)
	res := r.compressCaller(t, "c1", append([]Message(nil), list...), c, false)
	require.False(t, res.Failed, res.FailureMessage)
	require.Len(t, r.mem.commits, 1)
	cm := r.mem.commits[0]
	assert.Equal(t, OwnerCaller, cm.HistoryOwner)
	assert.Empty(t, cm.RemoveMessageIDs)
	require.Len(t, cm.RecallWrites, 8)
	assert.Equal(t, list[0].ID, cm.RecallWrites[0].ID, "recall writes come in history order")
	archive := res.Insert.Content

	// The same list and two more messages: the covered eight are left out.
	more := callerHistory("c1", 14)
	r.llm.fail = true
	res = r.compressCaller(t, "c1", more, c, false)
	require.True(t, res.Failed)
	require.Len(t, res.History, 1+6, "the view: the current clip-archive and the six uncovered messages")
	assert.Equal(t, archive, res.History[0].Content, "the clip-archive rebuilt from the live batches is the one the commit wrote")
	assert.Nil(t, res.Insert)
	assert.Equal(t, Identity(7), res.Kept, "a failure returns the view")

	// Not due: nothing compressed, only memory_list called, the view back.
	r.llm.fail = false
	lists := r.mem.lists
	res = r.compressCaller(t, "c1", callerHistory("c1", 14), c, true)
	require.False(t, res.Failed)
	assert.Equal(t, 0, res.MessagesCompressed)
	assert.Len(t, r.mem.commits, 1)
	assert.Equal(t, lists+2, r.mem.lists, "the batches and the replacement records")
	assert.Len(t, res.Kept, 7)
	assert.True(t, strings.HasPrefix(res.History[0].Content, ClipArchivePrefix))
}

// A list that starts with a clip-archive is already compacted: it is used
// as it is, and the old clip-archive goes to recall (not indexed).
func TestCompressCallerReplace(t *testing.T) {
	r := newRig()
	c := DefaultConfig()
	c.KeepRecent, c.MaxSummaryTokens = 4, 20
	res := r.compressCaller(t, "c1", callerHistory("c1", 12), c, false)
	require.False(t, res.Failed)
	view := []Message{{Role: RoleSystem, Content: res.Insert.Content}}
	for _, k := range res.Kept {
		view = append(view, res.History[k])
	}
	for i := range view[1:] {
		view[1+i].ID = "" // as sent back: no ids
	}
	view = append(view, callerHistory("c1", 20)[12:]...)
	for i := range view {
		view[i].ID = ""
	}
	AssignIDs("c1", view)
	assert.Equal(t, res.Insert.ID, view[0].ID, "the clip-archive sent back without an id is the same message")
	res = r.compressCaller(t, "c1", view, c, false)
	require.False(t, res.Failed, res.FailureMessage)
	cm := r.mem.commits[1]
	assert.Equal(t, view[0].ID, cm.RecallWrites[0].ID)
	assert.Equal(t, "", cm.RecallWrites[0].SearchText, "a superseded clip-archive is not indexed")
}
