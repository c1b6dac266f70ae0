package core_test

import (
	"testing"
	"time"

	"github.com/clipfold/clipfold/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlanCommitSearchText(t *testing.T) {
	p, err := core.PlanCommit(&core.Commit{ConversationID: "c1", Insert: core.InsertMessage{ID: "ca"},
		RemoveMessageIDs: []string{"m2", "m1", "m2"},
		SearchText: []core.SearchText{{MessageID: "m1", Text: "first"}, {MessageID: "m1", Text: "second"},
			{MessageID: "gone", Text: "not removed"}, {MessageID: "m2", Text: ""}}}, time.Time{})
	require.NoError(t, err)
	assert.Equal(t, []core.SearchText{{MessageID: "m2", Text: ""}, {MessageID: "m1", Text: "first"}}, p.SearchText,
		"in move order; the first entry of an id wins; ids the commit does not remove are ignored; \"\" is kept")
	assert.Equal(t, []string{"m2", "m1"}, p.RemoveIDs)
	p, err = core.PlanCommit(&core.Commit{ConversationID: "c1", Insert: core.InsertMessage{ID: "ca"}, RemoveMessageIDs: []string{"m1"}}, time.Time{})
	require.NoError(t, err)
	assert.Empty(t, p.SearchText, "no search_text: every message is indexed by its content")
}

// The clip-archive's row: its time (or now), system unless set, and its
// JSON made in clipfold's encoding when the commit has no insert_raw.
func TestPlanCommitInsert(t *testing.T) {
	at := time.Date(2026, 2, 28, 10, 0, 0, 123456789, time.FixedZone("x", 3600))
	p, err := core.PlanCommit(&core.Commit{ConversationID: "c1", OperationID: "op", Insert: core.InsertMessage{
		ID: "ca", Role: core.RoleSystem, Content: "[Context Summary — \"q\" <&>\u2028]", CreatedAt: at,
	}}, time.Time{})
	require.NoError(t, err)
	require.NotNil(t, p.Insert)
	assert.Equal(t, `{"id":"ca","conversation_id":"c1","role":"system","content":"[Context Summary — \"q\" <&>\u2028]","created_at":"2026-02-28T09:00:00.123Z"}`,
		string(p.Insert.Raw))
	assert.Equal(t, []core.CommitCheck{{Field: "insert_message", Must: core.CheckNew, IDs: []string{"ca"}}}, p.Checks)

	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	p, err = core.PlanCommit(&core.Commit{ConversationID: "c1", Insert: core.InsertMessage{ID: "ca"}}, now)
	require.NoError(t, err)
	assert.Equal(t, "system", p.Insert.Role, "the zero role means system")
	assert.Equal(t, "2026-03-01T00:00:00.000Z", p.Insert.CreatedAt, "no created_at: now")
	assert.Equal(t, "2026-03-01T00:00:00.000Z", p.Now)

	p, err = core.PlanCommit(&core.Commit{ConversationID: "c1", NoInsert: true}, now)
	require.NoError(t, err)
	assert.Nil(t, p.Insert)
	assert.Empty(t, p.Checks)

	for want, c := range map[string]*core.Commit{
		"invalid_input: no commit":                     nil,
		"invalid_input: conversation_id: is empty":     {Insert: core.InsertMessage{ID: "x"}},
		"invalid_input: insert_message.id: is empty":   {ConversationID: "c1"},
		"invalid_input: insert_raw: is not valid JSON": {ConversationID: "c1", Insert: core.InsertMessage{ID: "x"}, InsertRaw: []byte(`{"role":`)},
		`invalid_input: insert_message.conversation_id: "c2" differs from conversation_id "c1"`: {ConversationID: "c1",
			Insert: core.InsertMessage{ID: "x", ConversationID: "c2"}},
		"invalid_input: recall_writes[0].message: is not valid JSON": {ConversationID: "c1", HistoryOwner: core.OwnerCaller,
			RecallWrites: []core.RecallWrite{{ID: "a", Role: core.RoleUser, Raw: []byte("{")}}},
		"invalid_input: replace_messages[0].role: must be user, assistant, system or tool": {ConversationID: "c1", NoInsert: true,
			ReplaceMessages: []core.ReplaceMessage{{ID: "a", NewID: "a", Raw: []byte("{}")}}},
	} {
		_, err := core.PlanCommit(c, now)
		assert.EqualError(t, err, want)
	}
}
