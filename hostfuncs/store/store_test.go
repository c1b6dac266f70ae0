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

func TestMarshalMessageOmitsZeroTime(t *testing.T) {
	raw := store.MarshalMessage(&store.Message{ID: "m", ConversationID: "c", Role: "user", Content: "hi <b>"})
	assert.Equal(t, `{"id":"m","conversation_id":"c","role":"user","content":"hi <b>"}`, string(raw))
	assert.True(t, json.Valid(raw))
}

func TestParseBatch(t *testing.T) {
	start := time.Date(2026, 2, 28, 10, 0, 0, 0, time.UTC)
	b := &core.Batch{Content: "sum", Start: start, End: start.Add(time.Hour), MessageCount: 2, SourceMessageIDs: []string{"m1", "m2"}}
	got, problem := store.ParseBatch(core.FormatBatchBlock("c1", b))
	require.NotNil(t, got, problem)
	assert.Equal(t, []string{"m1", "m2"}, got.SourceMessageIDs)
	assert.Equal(t, "sum", got.Content)

	got, _ = store.ParseBatch("[depth:1|start:2026-02-28T10:00:00.000Z|end:2026-02-28T11:00:00.000Z|count:3]\nold summary")
	require.NotNil(t, got)
	assert.Equal(t, 1, got.Depth)
	assert.Equal(t, 3, got.MessageCount)
	got, problem = store.ParseBatch("just text")
	assert.Nil(t, got)
	assert.Empty(t, problem)
	got, problem = store.ParseBatch("{not json\nrest")
	assert.Nil(t, got)
	assert.Equal(t, "metadata line: not valid JSON", problem)
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
