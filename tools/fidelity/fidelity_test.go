package main

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/internal/wasmhost"
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
	wasm, err := wasmhost.FindWasm()
	require.NoError(t, err, "make build first")
	bin := filepath.Join(t.TempDir(), "clipfold")
	build := exec.Command("go", "build", "-o", bin, "./cmd/clipfold")
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, "building the command: %s", out)

	o := &options{bin: bin, wasm: wasm, data: filepath.Join(root, "testdata", "fidelity"), questions: 3,
		budget: 4000, limit: 5, keep: t.TempDir(), label: "test", quiet: true}
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
	assert.True(t, hitFinds(q, &hit{Kind: "message", ID: "m7"}))
	assert.False(t, hitFinds(q, &hit{Kind: "message", ID: "m8"}))
	assert.True(t, hitFinds(q, &hit{Kind: "batch", ID: "b", SourceIDs: []string{"m1", "m7"}, Text: "User: our teacher Rosalind"}))
	assert.False(t, hitFinds(q, &hit{Kind: "batch", ID: "b", SourceIDs: []string{"m7"}, Text: "User: our teacher"}), "the summary lost the answer")
	assert.False(t, hitFinds(q, &hit{Kind: "batch", ID: "b", SourceIDs: []string{"m1"}, Text: "Rosalind"}), "the batch does not cover the evidence")
}

func TestBM25(t *testing.T) {
	msgs := []message{
		{ID: "1", Text: "The cat sat on the mat"},
		{ID: "2", Text: "A dog and a cat"},
		{ID: "3", Text: "Nothing here"},
		{ID: "4", Text: "cat cat cat"},
	}
	assert.Equal(t, []string{"cat"}, bm25Tokens("The CAT"), "stop words go, case folds")
	assert.Equal(t, []string{"maya", "flat"}, bm25Tokens("Maya's flat!"))
	ix := newBM25(msgs)
	ids, matched := ix.search("Where is the cat?", 10)
	assert.Equal(t, 3, matched)
	assert.Equal(t, "4", ids[0], "highest term frequency first")
	ids, matched = ix.search("unicorn", 10)
	assert.Empty(t, ids)
	assert.Zero(t, matched)

	// One document scored by hand: N=4, n(cat)=3, avgdl=(3+2+1+3)/4=2.25.
	idf := math.Log(1 + (4-3+0.5)/(3+0.5))
	want := idf * 1 * 2.2 / (1 + 1.2*(1-0.75+0.75*2/2.25)) // document "2": tokens dog, cat
	got := ix.score(1, []string{"cat"})
	assert.InDelta(t, want, got, 1e-12)
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

func TestParseMessage(t *testing.T) {
	m := parseMessage([]byte(`{"id":"x","role":"assistant","content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}],"tool_calls":[{"id":"call_1","type":"function","function":{"name":"grep","arguments":"{\"q\":\"z\"}"}}],"created_at":"2024-01-02T03:04:05.000Z"}`))
	assert.Equal(t, "x", m.ID)
	assert.Equal(t, "2024-01-02", m.Date)
	assert.Equal(t, "a\nb\ngrep {\"q\":\"z\"}", m.Text)
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
		cv.Messages = append(cv.Messages, parseMessage([]byte(r)))
	}
	arch, err := openArchive(db, "c")
	require.NoError(t, err)
	defer arch.Close()
	stored := strings.Replace(raws[1], `"hi"`, `"hi!"`, 1)
	require.NoError(t, arch.st.AppendMessages(ctx, "c", []store.Message{
		{ID: "m1", ConversationID: "c", Role: "user", Content: "hello", Raw: []byte(raws[0])},
		{ID: "m2", ConversationID: "c", Role: "assistant", Content: "hi!", Raw: []byte(stored)},
	}))
	active, err := arch.st.ActiveMessages(ctx, "c")
	require.NoError(t, err)
	var final []message
	for _, m := range active {
		final = append(final, parseMessage(m.Raw))
	}
	r := &convResult{}
	require.NoError(t, lostCheck(ctx, r, cv, final, arch))
	assert.Equal(t, []string{"m3"}, r.Lost)
	assert.Equal(t, []string{"m2"}, r.Altered)
	assert.Equal(t, 2, r.InActive)
}

// TestSearchAdapterReadsBothShapes feeds the adapter today's search JSON
// (snippet only; batch ids under batch.source_message_ids, full text read
// from the store) and the shape search is moving to (full text and
// source_message_ids on the hit), through a stand-in command that only
// prints them.
func TestSearchAdapterReadsBothShapes(t *testing.T) {
	dir := t.TempDir()
	today := `{"query":"q","hits":[{"kind":"batch","id":"blk_1","snippet":"…[x]…","rank":1.5,"batch":{"depth":0,"source_message_ids":["m1","m2"]}},{"kind":"message","id":"m3","snippet":"s"}]}`
	next := `{"query":"q","hits":[{"kind":"batch","id":"blk_2","score":2.5,"start_time":"2024-01-01T00:00:00.000Z","end_time":"2024-01-02T00:00:00.000Z","source_message_ids":["m4"],"text":"2024-01-01 User: full text"}]}`
	for name, out := range map[string]string{"today": today, "next": next} {
		script := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\ncat <<'EOF'\n"+out+"\nEOF\n"), 0o755))
	}
	ctx := context.Background()
	looked := ""
	blocks := func(id string) (string, error) { looked = id; return "summary of " + id, nil }

	hits, _, err := (&cli{bin: filepath.Join(dir, "today")}).search(ctx, "q", "db", 5, blocks)
	require.NoError(t, err)
	require.Len(t, hits, 2)
	assert.Equal(t, hit{Kind: "batch", ID: "blk_1", SourceIDs: []string{"m1", "m2"}, Text: "summary of blk_1"}, hits[0])
	assert.Equal(t, "blk_1", looked, "today's batch text comes from the store")
	assert.Equal(t, hit{Kind: "message", ID: "m3"}, hits[1])

	looked = ""
	hits, _, err = (&cli{bin: filepath.Join(dir, "next")}).search(ctx, "q", "db", 5, blocks)
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Equal(t, hit{Kind: "batch", ID: "blk_2", SourceIDs: []string{"m4"}, Text: "2024-01-01 User: full text"}, hits[0])
	assert.Empty(t, looked, "a hit that carries its text is not looked up")
}
