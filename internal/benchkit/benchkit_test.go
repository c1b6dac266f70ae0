package benchkit

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBM25(t *testing.T) {
	docs := []Doc{
		{ID: "1", Text: "The cat sat on the mat"},
		{ID: "2", Text: "A dog and a cat"},
		{ID: "3", Text: "Nothing here"},
		{ID: "4", Text: "cat cat cat"},
	}
	assert.Equal(t, []string{"cat"}, BM25Tokens("The CAT"), "stop words go, case folds")
	assert.Equal(t, []string{"maya", "flat"}, BM25Tokens("Maya's flat!"))
	ix := NewBM25(docs)
	ids, matched := ix.Search("Where is the cat?", 10)
	assert.Equal(t, 3, matched)
	assert.Equal(t, "4", ids[0], "highest term frequency first")
	ids, matched = ix.Search("unicorn", 10)
	assert.Empty(t, ids)
	assert.Zero(t, matched)

	// One document scored by hand: N=4, n(cat)=3, avgdl=(3+2+1+3)/4=2.25.
	idf := math.Log(1 + (4-3+0.5)/(3+0.5))
	want := idf * 1 * 2.2 / (1 + 1.2*(1-0.75+0.75*2/2.25)) // document "2": tokens dog, cat
	got := ix.score(1, []string{"cat"})
	assert.InDelta(t, want, got, 1e-12)
}

func TestParseMessage(t *testing.T) {
	m := ParseMessage([]byte(`{"id":"x","role":"assistant","content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}],"tool_calls":[{"id":"call_1","type":"function","function":{"name":"grep","arguments":"{\"q\":\"z\"}"}}],"created_at":"2024-01-02T03:04:05.000Z"}`))
	assert.Equal(t, "x", m.ID)
	assert.Equal(t, "2024-01-02", m.Date)
	assert.Equal(t, "a\nb\ngrep {\"q\":\"z\"}", m.Text)
	assert.Equal(t, "a\nb", m.Content)
	assert.Equal(t, []ToolCall{{ID: "call_1", Name: "grep", Arguments: `{"q":"z"}`}}, m.ToolCalls)
	assert.Equal(t, "call_1", ParseMessage([]byte(`{"id":"y","role":"tool","tool_call_id":"call_1","content":"hit"}`)).ToolCallID)
}

// TestSearchAdapterReadsBothShapes feeds the adapter today's search JSON
// (snippet only; batch ids under batch.source_message_ids, full text read
// from the store) and the shape search is moving to (full text and
// source_message_ids on the hit), through a stand-in command that only
// prints them.
func TestSearchAdapterReadsBothShapes(t *testing.T) {
	dir := t.TempDir()
	today := `{"query":"q","hits":[{"kind":"batch","id":"blk_1","snippet":"…[x]…","rank":1.5,"batch":{"depth":0,"source_message_ids":["m1","m2"]}},{"kind":"message","id":"m3","snippet":"s","in_context":true}]}`
	next := `{"query":"q","hits":[{"kind":"batch","id":"blk_2","score":2.5,"start_time":"2024-01-01T00:00:00.000Z","end_time":"2024-01-02T00:00:00.000Z","source_message_ids":["m4"],"text":"2024-01-01 User: full text"}]}`
	for name, out := range map[string]string{"today": today, "next": next} {
		script := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\ncat <<'EOF'\n"+out+"\nEOF\n"), 0o755))
	}
	ctx := context.Background()
	looked := ""
	blocks := func(id string) (string, error) { looked = id; return "summary of " + id, nil }

	hits, _, err := (&CLI{Bin: filepath.Join(dir, "today")}).Search(ctx, "q", "db", 5, blocks)
	require.NoError(t, err)
	require.Len(t, hits, 2)
	assert.Equal(t, Hit{Kind: "batch", ID: "blk_1", SourceIDs: []string{"m1", "m2"}, Text: "summary of blk_1"}, hits[0])
	assert.Equal(t, "blk_1", looked, "today's batch text comes from the store")
	assert.Equal(t, Hit{Kind: "message", ID: "m3", InContext: true}, hits[1])

	looked = ""
	hits, _, err = (&CLI{Bin: filepath.Join(dir, "next")}).Search(ctx, "q", "db", 5, blocks)
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Equal(t, Hit{Kind: "batch", ID: "blk_2", SourceIDs: []string{"m4"}, Text: "2024-01-01 User: full text"}, hits[0])
	assert.Empty(t, looked, "a hit that carries its text is not looked up")
}

func TestFormat(t *testing.T) {
	assert.Equal(t, "1,234,567", Commas(1234567))
	assert.Equal(t, "999", Commas(999))
	assert.Equal(t, "-1,234", Commas(-1234))
	assert.Equal(t, "1/3 (33%)", Pct(1, 3))
	assert.Equal(t, "–", Pct(0, 0))
}
