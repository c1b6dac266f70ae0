package core_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/clipfold/clipfold/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docs/spec.md#archived-batches: batches are labelled
// compaction-batch-{conversation_id}-{end_time}; archived content is one JSON
// metadata line (conversation_id, operation_id, depth, start, end, count,
// source_message_ids, method), "\n", then the summary; the legacy header
// "[depth:N|start:ISO|end:ISO|count:M]\n" is read too; a conversation only
// claims its own blocks (metadata conversation_id, or for legacy blocks a
// label whose remainder after the prefix is a timestamp).

func sampleBatch() core.Batch {
	return core.Batch{
		Content:          "The team agreed on Postgres.\nSecond line.",
		Depth:            1,
		Start:            time.Date(2026, 2, 28, 10, 0, 0, 0, time.UTC),
		End:              time.Date(2026, 2, 28, 10, 59, 30, 250_000_000, time.UTC),
		MessageCount:     12,
		SourceMessageIDs: []string{"m1", "m2", "m3"},
		OperationID:      "op_abc",
		Method:           core.MethodExtractive,
	}
}

func TestBatchLabel(t *testing.T) {
	b := sampleBatch()
	assert.Equal(t, "compaction-batch-c1-", core.BatchLabelPrefix("c1"))
	assert.Equal(t, "compaction-batch-c1-2026-02-28T10:59:30.250Z", core.BatchLabel("c1", &b))
	// end_time printed in UTC with milliseconds whatever the zone.
	b.End = time.Date(2026, 2, 28, 12, 59, 30, 250_999_000, time.FixedZone("EET", 2*3600))
	assert.Equal(t, "compaction-batch-c1-2026-02-28T10:59:30.250Z", core.BatchLabel("c1", &b))
	assert.True(t, strings.HasPrefix(core.BatchLabel("c1", &b), core.BatchLabelPrefix("c1")))
}

// metaLine splits an archived block and decodes its metadata line.
func metaLine(t *testing.T, block string) (map[string]any, string) {
	t.Helper()
	first, rest, found := strings.Cut(block, "\n")
	require.True(t, found, "no newline after the metadata line: %q", block)
	var meta map[string]any
	require.NoError(t, json.Unmarshal([]byte(first), &meta), "metadata line %q", first)
	return meta, rest
}

func TestFormatBatchBlock(t *testing.T) {
	b := sampleBatch()
	meta, rest := metaLine(t, core.FormatBatchBlock("c1", &b))
	assert.Equal(t, map[string]any{
		"conversation_id":    "c1",
		"operation_id":       "op_abc",
		"depth":              1.0,
		"start":              "2026-02-28T10:00:00.000Z",
		"end":                "2026-02-28T10:59:30.250Z",
		"count":              12.0,
		"source_message_ids": []any{"m1", "m2", "m3"},
		"method":             "extractive",
	}, meta)
	assert.Equal(t, b.Content, rest, "the summary follows the line verbatim")

	t.Run("method defaults to llm, no ids is an empty list", func(t *testing.T) {
		b := sampleBatch()
		b.Method, b.SourceMessageIDs = "", nil
		meta, _ := metaLine(t, core.FormatBatchBlock("c1", &b))
		assert.Equal(t, "llm", meta["method"])
		assert.Equal(t, []any{}, meta["source_message_ids"])
	})
	t.Run("awkward strings stay on one line and survive", func(t *testing.T) {
		b := sampleBatch()
		conv := "c\"1\\\n\r\t\u2028\u0001é🙂"
		b.SourceMessageIDs = []string{"id\nwith newline", `quote"d`, "\u0000"}
		b.OperationID = "op\n2"
		block := core.FormatBatchBlock(conv, &b)
		meta, rest := metaLine(t, block)
		assert.Equal(t, conv, meta["conversation_id"])
		assert.Equal(t, "op\n2", meta["operation_id"])
		assert.Equal(t, []any{"id\nwith newline", `quote"d`, "\u0000"}, meta["source_message_ids"])
		assert.Equal(t, b.Content, rest)
	})
	t.Run("times in UTC", func(t *testing.T) {
		b := sampleBatch()
		zone := time.FixedZone("X", -5*3600)
		b.Start = time.Date(2026, 2, 28, 5, 0, 0, 0, zone)
		meta, _ := metaLine(t, core.FormatBatchBlock("c1", &b))
		assert.Equal(t, "2026-02-28T10:00:00.000Z", meta["start"])
	})
}

func TestParseBatchBlock(t *testing.T) {
	label := "compaction-batch-c1-2026-02-28T10:59:30.250Z"
	legacy := "[depth:2|start:2026-02-28T10:00:00.000Z|end:2026-02-28T10:59:30.250Z|count:40]\nOld summary.\nline 2"
	legacyWant := core.Batch{
		Content: "Old summary.\nline 2", Depth: 2,
		Start:        time.Date(2026, 2, 28, 10, 0, 0, 0, time.UTC),
		End:          time.Date(2026, 2, 28, 10, 59, 30, 250_000_000, time.UTC),
		MessageCount: 40, Method: core.MethodLLM,
	}
	tests := []struct {
		name         string
		conversation string
		label        string
		content      string
		ok           bool
		want         core.Batch
	}{
		{name: "legacy header", conversation: "c1", label: label, content: legacy, ok: true, want: legacyWant},
		{name: "legacy header, empty summary", conversation: "c1", label: label,
			content: "[depth:0|start:2026-02-28T10:00:00.000Z|end:2026-02-28T10:59:30.250Z|count:1]\n", ok: true,
			want: core.Batch{Start: legacyWant.Start, End: legacyWant.End, MessageCount: 1, Method: core.MethodLLM}},
		{name: "legacy header with an offset time", conversation: "c1", label: label,
			content: "[depth:0|start:2026-02-28T12:00:00+02:00|end:2026-02-28T10:59:30.25Z|count:3]\nx", ok: true,
			want: core.Batch{Content: "x", Start: legacyWant.Start, End: legacyWant.End, MessageCount: 3, Method: core.MethodLLM}},
		// c1's prefix is also a prefix of c1-x's labels: a legacy block
		// is c1's only when what follows the prefix is a timestamp.
		{name: "legacy block of c1-x is not c1's", conversation: "c1",
			label: "compaction-batch-c1-x-2026-02-28T10:59:30.250Z", content: legacy},
		{name: "legacy block of c1-x is c1-x's", conversation: "c1-x",
			label: "compaction-batch-c1-x-2026-02-28T10:59:30.250Z", content: legacy, ok: true, want: legacyWant},
		{name: "legacy block under another prefix", conversation: "c1", label: "notes-2026-02-28T10:59:30.250Z", content: legacy},
		{name: "legacy header without count", conversation: "c1", label: label,
			content: "[depth:0|start:2026-02-28T10:00:00.000Z|end:2026-02-28T10:59:30.250Z]\nx"},
		{name: "legacy header with a bad depth", conversation: "c1", label: label,
			content: "[depth:one|start:2026-02-28T10:00:00.000Z|end:2026-02-28T10:59:30.250Z|count:1]\nx"},
		{name: "legacy header with a negative count", conversation: "c1", label: label,
			content: "[depth:0|start:2026-02-28T10:00:00.000Z|end:2026-02-28T10:59:30.250Z|count:-1]\nx"},
		{name: "legacy header with a bad time", conversation: "c1", label: label,
			content: "[depth:0|start:yesterday|end:2026-02-28T10:59:30.250Z|count:1]\nx"},
		{name: "legacy header not closed", conversation: "c1", label: label,
			content: "[depth:0|start:2026-02-28T10:00:00.000Z|end:2026-02-28T10:59:30.250Z|count:1\nx"},

		{name: "metadata of another conversation", conversation: "c1", label: label,
			content: `{"conversation_id":"c1-x","operation_id":"op","depth":0,"start":"2026-02-28T10:00:00.000Z","end":"2026-02-28T10:59:30.250Z","count":1,"source_message_ids":[],"method":"llm"}` + "\nx"},
		{name: "metadata: method absent is llm", conversation: "c1", label: label,
			content: `{"conversation_id":"c1","depth":0,"start":"2026-02-28T10:00:00.000Z","end":"2026-02-28T10:59:30.250Z","count":2,"source_message_ids":["a","b"]}` + "\nsum",
			ok:      true, want: core.Batch{Content: "sum", Start: legacyWant.Start, End: legacyWant.End, MessageCount: 2,
				SourceMessageIDs: []string{"a", "b"}, Method: core.MethodLLM}},
		// The label does not matter when the metadata names the conversation.
		{name: "metadata under any label", conversation: "c1", label: "compaction-batch-c1-whatever",
			content: `{"conversation_id":"c1","operation_id":"op","depth":3,"start":"2026-02-28T10:00:00.000Z","end":"2026-02-28T10:59:30.250Z","count":9,"source_message_ids":["z"],"method":"extractive"}` + "\nsum",
			ok:      true, want: core.Batch{Content: "sum", Depth: 3, Start: legacyWant.Start, End: legacyWant.End, MessageCount: 9,
				SourceMessageIDs: []string{"z"}, OperationID: "op", Method: core.MethodExtractive}},
		{name: "metadata that is not JSON", conversation: "c1", label: label, content: "{conversation_id: c1}\nx"},
		{name: "metadata with a string depth", conversation: "c1", label: label,
			content: `{"conversation_id":"c1","depth":"0","start":"2026-02-28T10:00:00.000Z","end":"2026-02-28T10:59:30.250Z","count":1}` + "\nx"},
		{name: "metadata with a negative depth", conversation: "c1", label: label,
			content: `{"conversation_id":"c1","depth":-1,"start":"2026-02-28T10:00:00.000Z","end":"2026-02-28T10:59:30.250Z","count":1}` + "\nx"},
		// 2³² would wrap to 0 in a 32-bit int (the plug-in's, under TinyGo).
		{name: "metadata with a depth over MaxInt", conversation: "c1", label: label,
			content: `{"conversation_id":"c1","depth":4294967296,"start":"2026-02-28T10:00:00.000Z","end":"2026-02-28T10:59:30.250Z","count":1}` + "\nx"},
		{name: "metadata with a count over MaxInt", conversation: "c1", label: label,
			content: `{"conversation_id":"c1","depth":0,"start":"2026-02-28T10:00:00.000Z","end":"2026-02-28T10:59:30.250Z","count":4294967297}` + "\nx"},
		{name: "metadata at MaxInt", conversation: "c1", label: label,
			content: `{"conversation_id":"c1","depth":2147483647,"start":"2026-02-28T10:00:00.000Z","end":"2026-02-28T10:59:30.250Z","count":2147483647}` + "\nx",
			ok:      true, want: core.Batch{Content: "x", Depth: core.MaxInt, Start: legacyWant.Start, End: legacyWant.End,
				MessageCount: core.MaxInt, Method: core.MethodLLM}},
		{name: "metadata without end", conversation: "c1", label: label,
			content: `{"conversation_id":"c1","depth":0,"start":"2026-02-28T10:00:00.000Z","count":1}` + "\nx"},
		{name: "plain text is not a batch", conversation: "c1", label: label, content: "just a note\nwith lines"},
		{name: "empty block", conversation: "c1", label: label, content: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := core.ParseBatchBlock(tc.conversation, tc.label, tc.content)
			require.Equal(t, tc.ok, ok)
			if !tc.ok {
				return
			}
			assert.True(t, tc.want.Start.Equal(got.Start), "start %v, want %v", got.Start, tc.want.Start)
			assert.True(t, tc.want.End.Equal(got.End), "end %v, want %v", got.End, tc.want.End)
			got.Start, got.End = tc.want.Start, tc.want.End
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestBatchBlockRoundTrip: what FormatBatchBlock writes, ParseBatchBlock
// reads back unchanged, under the label BatchLabel gives.
func TestBatchBlockRoundTrip(t *testing.T) {
	for _, conv := range []string{"c1", "c1-x", "conv \"quoted\"\n", "日本"} {
		b := sampleBatch()
		got, ok := core.ParseBatchBlock(conv, core.BatchLabel(conv, &b), core.FormatBatchBlock(conv, &b))
		require.True(t, ok, "conversation %q", conv)
		assert.True(t, b.Start.Equal(got.Start) && b.End.Equal(got.End))
		got.Start, got.End = b.Start, b.End
		assert.Equal(t, b, got, "conversation %q", conv)
		// and another conversation never claims it
		_, ok = core.ParseBatchBlock(conv+"-other", core.BatchLabel(conv, &b), core.FormatBatchBlock(conv, &b))
		assert.False(t, ok)
	}
}
