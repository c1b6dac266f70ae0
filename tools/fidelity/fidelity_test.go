package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/internal/benchkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSubsetLosesNothing is the CI run of the benchmark: it builds the
// command from this checkout, replays every conversation of
// testdata/fidelity through it, asks three questions of each, and fails
// if the tool breaks, a compaction fails, or any message is lost or
// altered. The shares it measures are not checked: they are targets,
// reported by make fidelity, not tests.
func TestSubsetLosesNothing(t *testing.T) {
	root := filepath.Join("..", "..")
	bin, err := benchkit.BuildCommand(root, t.TempDir())
	require.NoError(t, err)

	o := &options{Options: benchkit.Options{Bin: bin, Data: filepath.Join(root, "testdata", "fidelity"),
		Budget: 4000, Limit: 5, Keep: t.TempDir(), Label: "test", Quiet: true}, questions: 3}
	rep, err := run(context.Background(), o)
	require.NoError(t, err)
	require.Len(t, rep.Conversations, 5)
	assert.Empty(t, rep.problems())
	for _, c := range rep.Conversations {
		assert.Empty(t, c.Lost, "%s: lost messages", c.Name)
		assert.Empty(t, c.Altered, "%s: altered messages", c.Name)
		assert.Equal(t, c.Messages, c.InActive+c.InRecall, "%s: every message is kept or recalled", c.Name)
		assert.Greater(t, c.Run.Compactions, int64(0), "%s: the replay compacted", c.Name)
		assert.Equal(t, int64(4000), c.Run.Limit, "%s: the limit is the budget", c.Name)
		assert.LessOrEqual(t, c.TruncTokens, int64(4000), "%s: truncation fits the budget", c.Name)
		assert.Greater(t, c.TruncMessages, 0, "%s", c.Name)
		assert.Len(t, c.Results, 3, "%s", c.Name)
	}
	md := markdown(rep)
	for _, c := range rep.Conversations {
		assert.Contains(t, md, "| "+c.Name+" |")
	}
}

func TestContextAnswers(t *testing.T) {
	q := &question{ID: "q", Category: "what", Answers: []string{"Volvo 240"}, Evidence: []string{"m2"}}
	archive := message{ID: "a", Role: "system", Text: "[Context Summary — 3 messages compressed]\n[Batch 1 — depth 0, …]\nAssistant: bought the old volvo 240 estate"}
	ok, unit := contextAnswers(q, []message{archive})
	assert.True(t, ok, "case-insensitive, in the archive")
	assert.Equal(t, "archive", unit)
	ok, unit = contextAnswers(q, []message{{ID: "m2", Role: "assistant", Text: "it was cheap"}})
	assert.True(t, ok, "an evidence message kept verbatim answers by itself")
	assert.Equal(t, "m2", unit)
	ok, _ = contextAnswers(q, []message{{ID: "m9", Role: "user", Text: "a Volvo"}})
	assert.False(t, ok)

	when := &question{ID: "w", Category: "when", Answers: []string{"2023-03-04", "March 4, 2023"}, Anchors: []string{"wheel-throwing"}, Evidence: []string{"m1"}}
	header := message{ID: "a", Role: "system", Text: "[Context Summary — 9 messages compressed]\n[Batch 1 — depth 0, 2023-03-04T17:12:05.432Z to 2023-03-19T18:00:00.000Z]\nUser: my first wheel-throwing class!"}
	ok, _ = contextAnswers(when, []message{header})
	assert.False(t, ok, "a date range on another line than the event does not answer")
	dated := message{ID: "a", Role: "system", Text: "[Context Summary — 9 messages compressed]\n2023-03-04 User: my first wheel-throwing class!"}
	ok, _ = contextAnswers(when, []message{dated})
	assert.True(t, ok, "a dated summary line answers")
	ok, _ = contextAnswers(when, []message{{ID: "x", Role: "user", Text: "wheel-throwing again", Date: "2023-03-04"}})
	assert.False(t, ok, "a kept message that is not evidence needs the date in its text")
	when.accept = acceptedDates(when.Answers)
	ok, _ = contextAnswers(when, []message{{ID: "a", Role: "system", Text: "[Context Summary — 1 message compressed]\n[4 Mar 2023] User: wheel-throwing!"}})
	assert.True(t, ok, "another spelling of the date")
	assert.Contains(t, acceptedDates([]string{"2023-03-04"}), "2023/03/04")
}

func TestHitFinds(t *testing.T) {
	q := &question{ID: "q", Category: "who", Answers: []string{"Rosalind"}, Evidence: []string{"m7"}}
	assert.True(t, hitFinds(q, &benchkit.Hit{Kind: "message", ID: "m7"}))
	assert.False(t, hitFinds(q, &benchkit.Hit{Kind: "message", ID: "m8"}))
	assert.True(t, hitFinds(q, &benchkit.Hit{Kind: "batch", ID: "b", SourceIDs: []string{"m1", "m7"}, Text: "User: our teacher Rosalind"}))
	assert.False(t, hitFinds(q, &benchkit.Hit{Kind: "batch", ID: "b", SourceIDs: []string{"m7"}, Text: "User: our teacher"}), "the summary lost the answer")
	assert.False(t, hitFinds(q, &benchkit.Hit{Kind: "batch", ID: "b", SourceIDs: []string{"m1"}, Text: "Rosalind"}), "the batch does not cover the evidence")
}

func TestSubsetSpreadsQuestions(t *testing.T) {
	qs := make([]question, 10)
	for i := range qs {
		qs[i].ID = string(rune('a' + i))
	}
	got := subset(qs, 3)
	assert.Equal(t, []string{"a", "d", "g"}, []string{got[0].ID, got[1].ID, got[2].ID})
	assert.Len(t, subset(qs, 0), 10)
	assert.Len(t, subset(qs, 20), 10)
}

// TestLostCheckFindsLoss checks that the lost-message check can fail: a
// message the store does not hold is lost, one it holds with other bytes
// is altered.
func TestLostCheckFindsLoss(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "x.db")
	raws := []string{
		`{"id":"m1","conversation_id":"c","role":"user","content":"hello","created_at":"2024-01-01T00:00:00.000Z"}`,
		`{"id":"m2","conversation_id":"c","role":"assistant","content":"hi","created_at":"2024-01-01T00:00:01.000Z"}`,
		`{"id":"m3","conversation_id":"c","role":"user","content":"bye","created_at":"2024-01-01T00:00:02.000Z"}`,
	}
	cv := &conversation{Name: "c", Q: questionsFile{ConversationID: "c"}}
	for _, r := range raws {
		cv.Messages = append(cv.Messages, benchkit.ParseMessage([]byte(r)))
	}
	arch, err := benchkit.OpenArchive(db, "c")
	require.NoError(t, err)
	defer arch.Close()
	stored := strings.Replace(raws[1], `"hi"`, `"hi!"`, 1)
	require.NoError(t, arch.Store().AppendMessages(ctx, "c", []store.Message{
		{ID: "m1", ConversationID: "c", Role: "user", Content: "hello", Raw: []byte(raws[0])},
		{ID: "m2", ConversationID: "c", Role: "assistant", Content: "hi!", Raw: []byte(stored)},
	}))
	active, err := arch.Store().ActiveMessages(ctx, "c")
	require.NoError(t, err)
	var final []message
	for _, m := range active {
		final = append(final, benchkit.ParseMessage(m.Raw))
	}
	r := &convResult{}
	require.NoError(t, lostCheck(ctx, r, cv, final, arch))
	assert.Equal(t, []string{"m3"}, r.Lost)
	assert.Equal(t, []string{"m2"}, r.Altered)
	assert.Equal(t, 2, r.InActive)
}
