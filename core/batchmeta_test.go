package core_test

import (
	"testing"
	"time"

	"github.com/clipfold/clipfold/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ParseBlock reads what every host reads: a batch, a free-form block, or
// metadata that cannot be read, with the field at fault.
func TestParseBlock(t *testing.T) {
	b := sampleBatch()
	m, ok, problem := core.ParseBlock(core.FormatBatchBlock("c1", &b))
	require.True(t, ok, problem)
	assert.Equal(t, "c1", m.ConversationID)
	assert.False(t, m.Legacy)
	assert.Equal(t, b, m.Batch)

	m, ok, problem = core.ParseBlock("[depth:2|start:2026-02-28T10:00:00Z|end:2026-02-28T11:00:00.5Z|count:7]\nold summary")
	require.True(t, ok, problem)
	assert.True(t, m.Legacy)
	assert.Equal(t, core.Batch{Content: "old summary", Depth: 2, MessageCount: 7, Method: core.MethodLLM,
		Start: time.Date(2026, 2, 28, 10, 0, 0, 0, time.UTC), End: time.Date(2026, 2, 28, 11, 0, 0, 500_000_000, time.UTC)}, m.Batch)

	for _, free := range []string{"", "just text", "a note\n{not metadata on the second line}"} {
		_, ok, problem = core.ParseBlock(free)
		assert.False(t, ok, free)
		assert.Empty(t, problem, "free text is no batch and nothing is wrong with it: %q", free)
	}

	const start = `"start":"2026-02-28T10:00:00.000Z","end":"2026-02-28T10:19:00.000Z"`
	for line, want := range map[string]string{
		// Read as depth-2 batches by hosts that parsed metadata loosely:
		`{"conversation_id":"c1","depth":"2",` + start + `,"count":3}`:                         `depth: must be a whole number from 0, got "2"`,
		`{"depth":2,` + start + `,"count":3}`:                                                  "conversation_id: is required",
		`{"conversation_id":"c1","depth":2,"end":"2026-02-28T10:19:00.000Z","count":3}`:        "start: is required",
		`{"conversation_id":"c1","depth":2.5,` + start + `,"count":3}`:                         "depth: must be a whole number from 0, got 2.5",
		`{"conversation_id":"c1","depth":-2,` + start + `,"count":3}`:                          "depth: must be a whole number from 0, got -2",
		`{"conversation_id":"c1","depth":2,` + start + `,"count":"3"}`:                         `count: must be a whole number from 0, got "3"`,
		`{"conversation_id":"c1","depth":2,"start":"yesterday","end":"now","count":3}`:         `start: must be an RFC 3339 time, got "yesterday"`,
		`{"conversation_id":7,"depth":2,` + start + `,"count":3}`:                              "conversation_id: must be a string, got 7",
		`{"conversation_id":"c1","depth":2,` + start + `,"count":3,"source_message_ids":"m1"}`: `source_message_ids: must be an array of strings, got "m1"`,
		`{"conversation_id":"c1","depth":2,` + start + `,"count":3,"source_message_ids":[1]}`:  "source_message_ids[0]: must be a string, got 1",
		`{"conversation_id":"c1","depth":2,` + start + `,"count":3,"method":false}`:            "method: must be a string, got false",
		`{"conversation_id":"c1"`:                      "metadata line: not valid JSON",
		`{"a":1}{"b":2}`:                               "metadata line: not valid JSON",
		`[depth:2|start:x|end:y|count:3]`:              `legacy header: start: "x" is not valid`,
		`[depth:2|start:2026-02-28T10:00:00Z|count:3]`: "legacy header: end is missing",
		`[depth:2`: `legacy header: must end with "]"`,
	} {
		_, ok, problem := core.ParseBlock(line + "\nsummary")
		assert.False(t, ok, line)
		assert.Equal(t, want, problem, line)
		_, ok = core.ParseBatchBlock("c1", core.BatchLabelPrefix("c1")+"2026-02-28T10:19:00.000Z", line+"\nsummary")
		assert.False(t, ok, "compress leaves a malformed block alone: %s", line)
	}
}
