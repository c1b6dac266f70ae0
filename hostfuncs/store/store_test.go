package store_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/store"
)

func TestPrepareCommitSearchText(t *testing.T) {
	p, err := store.PrepareCommit(&core.Commit{ConversationID: "c1", Insert: core.InsertMessage{ID: "ca"},
		RemoveMessageIDs: []string{"m1", "m2", "m1"},
		SearchText: []core.SearchText{{MessageID: "m1", Text: "first"}, {MessageID: "m1", Text: "second"},
			{MessageID: "gone", Text: "not removed"}, {MessageID: "m2", Text: ""}}}, time.Time{})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"m1": "first", "m2": ""}, p.SearchText,
		"the first entry of an id wins; ids the commit does not remove are ignored; \"\" is kept")
	p, err = store.PrepareCommit(&core.Commit{ConversationID: "c1", Insert: core.InsertMessage{ID: "ca"}, RemoveMessageIDs: []string{"m1"}}, time.Time{})
	require.NoError(t, err)
	assert.Empty(t, p.SearchText, "no search_text: every message is indexed by its content")
}

func TestFinishHit(t *testing.T) {
	h := store.Hit{ID: "m1", Text: "hello"}
	require.NoError(t, store.FinishHit(&h, "message", "2026-02-28T10:00:00.000Z"))
	assert.Equal(t, store.HitMessage, h.Kind)
	assert.True(t, h.Start.Equal(h.CreatedAt) && h.End.Equal(h.CreatedAt) && !h.CreatedAt.IsZero())

	start := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	content := core.FormatBatchBlock("c1", &core.Batch{Content: "the summary", Start: start, End: start.Add(time.Hour),
		MessageCount: 1, SourceMessageIDs: []string{"m1"}, Method: core.MethodLLM, Depth: 2})
	h = store.Hit{ID: "blk_1", ConversationID: "c1", Label: core.BatchLabelPrefix("c1") + "x", Text: content}
	require.NoError(t, store.FinishHit(&h, "batch", "2026-02-28T10:00:00.000Z"))
	assert.Equal(t, store.HitBatch, h.Kind)
	assert.Equal(t, "the summary", h.Text)
	assert.True(t, h.Start.Equal(start) && h.End.Equal(start.Add(time.Hour)))
	require.NotNil(t, h.Batch)
	assert.Equal(t, 2, h.Batch.Depth)

	h = store.Hit{ID: "blk_2", Text: "a plain block"}
	require.NoError(t, store.FinishHit(&h, "batch", "2026-02-28T10:00:00.000Z"))
	assert.Nil(t, h.Batch)
	assert.Equal(t, "a plain block", h.Text)
	assert.True(t, h.Start.Equal(h.CreatedAt))

	assert.Error(t, store.FinishHit(&store.Hit{ID: "x"}, "message", "yesterday"))
}

func TestClampLimit(t *testing.T) {
	assert.Equal(t, store.DefaultSearchLimit, store.ClampLimit(0))
	assert.Equal(t, store.DefaultSearchLimit, store.ClampLimit(-3))
	assert.Equal(t, 7, store.ClampLimit(7))
	assert.Equal(t, store.MaxSearchLimit, store.ClampLimit(1<<30))
}

func TestInsertAsMessage(t *testing.T) {
	at := time.Date(2026, 2, 28, 10, 0, 0, 123456789, time.FixedZone("x", 3600))
	c := &core.Commit{ConversationID: "c1", OperationID: "op", Insert: core.InsertMessage{
		ID: "ca", Role: core.RoleSystem, Content: `[Context Summary — "q" <&>]`, CreatedAt: at,
	}}
	m, err := store.InsertAsMessage(c, time.Time{})
	require.NoError(t, err)
	assert.Equal(t, `{"id":"ca","conversation_id":"c1","role":"system","content":"[Context Summary — \"q\" <&>]","created_at":"2026-02-28T09:00:00.123Z"}`, string(m.Raw))
	assert.Equal(t, "c1", m.ConversationID)

	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	m, err = store.InsertAsMessage(&core.Commit{ConversationID: "c1", Insert: core.InsertMessage{ID: "ca"}}, now)
	require.NoError(t, err)
	assert.Equal(t, "system", m.Role, "the zero role means system")
	assert.True(t, now.Equal(m.CreatedAt), "no created_at: now")

	_, err = store.InsertAsMessage(&core.Commit{ConversationID: "c1", Insert: core.InsertMessage{}}, now)
	assert.Error(t, err, "empty id")
	_, err = store.InsertAsMessage(&core.Commit{ConversationID: "c1", Insert: core.InsertMessage{ID: "x", ConversationID: "c2"}}, now)
	assert.Error(t, err, "other conversation")
}

func TestMarshalMessageOmitsZeroTime(t *testing.T) {
	raw, err := store.MarshalMessage(&store.Message{ID: "m", ConversationID: "c", Role: "user", Content: "hi"})
	require.NoError(t, err)
	assert.Equal(t, `{"id":"m","conversation_id":"c","role":"user","content":"hi"}`, string(raw))
	assert.True(t, json.Valid(raw))
}

func TestParseBatch(t *testing.T) {
	start := time.Date(2026, 2, 28, 10, 0, 0, 0, time.UTC)
	b := &core.Batch{Content: "sum", Start: start, End: start.Add(time.Hour), MessageCount: 2, SourceMessageIDs: []string{"m1", "m2"}}
	content := core.FormatBatchBlock("c1", b)
	got := store.ParseBatch("", "any label", content)
	require.NotNil(t, got, "metadata names its conversation: no block conversation needed")
	assert.Equal(t, []string{"m1", "m2"}, got.SourceMessageIDs)
	assert.Equal(t, "sum", got.Content)

	legacy := "[depth:1|start:2026-02-28T10:00:00.000Z|end:2026-02-28T11:00:00.000Z|count:3]\nold summary"
	got = store.ParseBatch("c1", core.BatchLabelPrefix("c1")+"2026-02-28T11:00:00.000Z", legacy)
	require.NotNil(t, got)
	assert.Equal(t, 1, got.Depth)
	assert.Equal(t, 3, got.MessageCount)
	assert.Nil(t, store.ParseBatch("c1", "free-form", "just text"))
	assert.Nil(t, store.ParseBatch("c1", "x", "{not json\nrest"))
}

func TestPrepareAppend(t *testing.T) {
	msgs, err := store.PrepareAppend("c1", []store.Message{{ID: "m1", Role: "tool", Content: "x", CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 999999999, time.UTC)}})
	require.NoError(t, err)
	assert.Equal(t, "c1", msgs[0].ConversationID)
	assert.Equal(t, `{"id":"m1","conversation_id":"c1","role":"tool","content":"x","created_at":"2026-01-01T00:00:00.999Z"}`, string(msgs[0].Raw))
	_, err = store.PrepareAppend("", nil)
	assert.Error(t, err)
}

func TestConflictErrorIsErrConflict(t *testing.T) {
	err := store.ConflictError("c1", "remove_message_ids", []string{"m9"})
	assert.True(t, errors.Is(err, core.ErrConflict))
	assert.Contains(t, err.Error(), "m9")
	assert.Contains(t, err.Error(), "conflict")
}
