package core_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clipfold/clipfold/core"
	"github.com/stretchr/testify/assert"
)

var t0 = time.Date(2026, 2, 28, 10, 0, 0, 0, time.UTC)

// batchN is batch i (1-based) of a run: an hour each from 10:00 UTC,
// ending at :59.
func batchN(i, depth int) core.Batch {
	start := t0.Add(time.Duration(i-1) * time.Hour)
	return core.Batch{Content: "Summary " + strconv.Itoa(i) + ".", Depth: depth, Start: start, End: start.Add(59 * time.Minute), MessageCount: 10}
}

func batchesN(n int) []core.Batch {
	out := make([]core.Batch, n)
	for i := range out {
		out[i] = batchN(i+1, 0)
	}
	return out
}

// line is the "[Batch i — depth d, START to END]" line of batchN(i, d)
// followed by its content.
func line(i, depth int) string {
	h := 9 + i // batch 1 starts at 10:00
	return "[Batch " + strconv.Itoa(i) + " — depth " + strconv.Itoa(depth) + ", 2026-02-28T" +
		pad2(h) + ":00:00.000Z to 2026-02-28T" + pad2(h) + ":59:00.000Z]\nSummary " + strconv.Itoa(i) + "."
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

const sep = "[... %d earlier summaries omitted, searchable via memory_read ...]"

func omitted(k int) string { return strings.Replace(sep, "%d", strconv.Itoa(k), 1) }

// TestBuildClipArchive checks the text of seed 004 /
// docs/spec.md#clip-archive-format: header "[Context Summary — N messages
// compressed across M compaction cycle(s)]" with M = max depth + 1 ("cycle"
// for one, "cycles" for more, as the conformance vectors have it); every
// batch when there are at most clip_first + clip_last; otherwise
// "## Earliest context" with the first clip_first, the separator counting
// the omitted ones, "## Recent context" with the last clip_last — a section
// header only when its section is not empty; batch lines numbered by
// position among all batches; a blank line after each block; the whole text
// trimmed; no batches → "[Context Summary — 0 messages compressed]".
func TestBuildClipArchive(t *testing.T) {
	deep := batchesN(6)
	deep[2].Depth = 3 // an omitted batch: M still counts it
	deep[4].Depth = 1
	mixed := []core.Batch{batchN(1, 2), batchN(2, 0), batchN(3, 1)}

	tests := []struct {
		name                string
		batches             []core.Batch
		clipFirst, clipLast int
		total               int
		want                string
	}{
		{name: "no batches", batches: nil, clipFirst: 2, clipLast: 2, total: 0,
			want: "[Context Summary — 0 messages compressed]"},
		{name: "no batches: 0 whatever the total says", batches: []core.Batch{}, clipFirst: 2, clipLast: 2, total: 7,
			want: "[Context Summary — 0 messages compressed]"},
		{name: "one batch, depth 0: one cycle", batches: batchesN(1), clipFirst: 2, clipLast: 2, total: 3,
			want: "[Context Summary — 3 messages compressed across 1 compaction cycle]\n" + line(1, 0)},
		{name: "fewer than clip_first + clip_last: all, no sections, no separator (AC3.4)",
			batches: batchesN(3), clipFirst: 2, clipLast: 2, total: 30,
			want: "[Context Summary — 30 messages compressed across 1 compaction cycle]\n" +
				line(1, 0) + "\n\n" + line(2, 0) + "\n\n" + line(3, 0)},
		{name: "exactly clip_first + clip_last: all, no separator",
			batches: batchesN(4), clipFirst: 2, clipLast: 2, total: 40,
			want: "[Context Summary — 40 messages compressed across 1 compaction cycle]\n" +
				line(1, 0) + "\n\n" + line(2, 0) + "\n\n" + line(3, 0) + "\n\n" + line(4, 0)},
		{name: "one over: one omitted",
			batches: batchesN(5), clipFirst: 2, clipLast: 2, total: 50,
			want: "[Context Summary — 50 messages compressed across 1 compaction cycle]\n" +
				"## Earliest context\n" + line(1, 0) + "\n\n" + line(2, 0) + "\n\n" +
				omitted(1) + "\n\n" +
				"## Recent context\n" + line(4, 0) + "\n\n" + line(5, 0)},
		{name: "6 batches, 2 + 2: batches 1-2 and 5-6, 2 omitted (AC3.1, AC3.2)",
			batches: batchesN(6), clipFirst: 2, clipLast: 2, total: 60,
			want: "[Context Summary — 60 messages compressed across 1 compaction cycle]\n" +
				"## Earliest context\n" + line(1, 0) + "\n\n" + line(2, 0) + "\n\n" +
				omitted(2) + "\n\n" +
				"## Recent context\n" + line(5, 0) + "\n\n" + line(6, 0)},
		{name: "asymmetric 1 + 3",
			batches: batchesN(6), clipFirst: 1, clipLast: 3, total: 60,
			want: "[Context Summary — 60 messages compressed across 1 compaction cycle]\n" +
				"## Earliest context\n" + line(1, 0) + "\n\n" +
				omitted(2) + "\n\n" +
				"## Recent context\n" + line(4, 0) + "\n\n" + line(5, 0) + "\n\n" + line(6, 0)},
		{name: "clip_first 0: no Earliest section",
			batches: batchesN(6), clipFirst: 0, clipLast: 1, total: 60,
			want: "[Context Summary — 60 messages compressed across 1 compaction cycle]\n" +
				omitted(5) + "\n\n" + "## Recent context\n" + line(6, 0)},
		{name: "clip_last 0: no Recent section, the separator ends the text",
			batches: batchesN(6), clipFirst: 1, clipLast: 0, total: 60,
			want: "[Context Summary — 60 messages compressed across 1 compaction cycle]\n" +
				"## Earliest context\n" + line(1, 0) + "\n\n" + omitted(5)},
		{name: "clip_first = clip_last = 0: the separator alone",
			batches: batchesN(2), clipFirst: 0, clipLast: 0, total: 20,
			want: "[Context Summary — 20 messages compressed across 1 compaction cycle]\n" + omitted(2)},
		{name: "M = max depth + 1, plural, each line its own depth",
			batches: mixed, clipFirst: 2, clipLast: 2, total: 60,
			want: "[Context Summary — 60 messages compressed across 3 compaction cycles]\n" +
				line(1, 2) + "\n\n" + line(2, 0) + "\n\n" + line(3, 1)},
		{name: "M counts the depth of an omitted batch",
			batches: deep, clipFirst: 2, clipLast: 2, total: 60,
			want: "[Context Summary — 60 messages compressed across 4 compaction cycles]\n" +
				"## Earliest context\n" + line(1, 0) + "\n\n" + line(2, 0) + "\n\n" +
				omitted(2) + "\n\n" +
				"## Recent context\n" + line(5, 1) + "\n\n" + line(6, 0)},
		{name: "depth 1 alone: 2 cycles",
			batches: []core.Batch{batchN(1, 1)}, clipFirst: 2, clipLast: 2, total: 5,
			want: "[Context Summary — 5 messages compressed across 2 compaction cycles]\n" + line(1, 1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := core.BuildClipArchive(tc.batches, tc.clipFirst, tc.clipLast, tc.total)
			assert.Equal(t, tc.want, got)
			// Every clip-archive is recognised as one by the next split.
			m := system(got)
			assert.True(t, core.IsClipArchive(&m))
		})
	}
}

// TestBuildClipArchiveText: batch contents are copied as they are (inner
// whitespace, non-ASCII), only the whole text is trimmed, and times are
// printed UTC with milliseconds.
func TestBuildClipArchiveText(t *testing.T) {
	hdr := "[Context Summary — 4 messages compressed across 1 compaction cycle]\n"
	berlin := time.FixedZone("CET", 3600)
	b := func(content string) core.Batch {
		return core.Batch{Content: content, Start: t0, End: t0.Add(time.Hour)}
	}
	const times = "2026-02-28T10:00:00.000Z to 2026-02-28T11:00:00.000Z]\n"

	t.Run("trailing whitespace of the last batch is trimmed", func(t *testing.T) {
		got := core.BuildClipArchive([]core.Batch{b("last.\n\n  \t")}, 2, 2, 4)
		assert.Equal(t, hdr+"[Batch 1 — depth 0, "+times+"last.", got)
	})
	t.Run("inner whitespace is kept", func(t *testing.T) {
		got := core.BuildClipArchive([]core.Batch{b("  one\n"), b("two")}, 2, 2, 4)
		assert.Equal(t, hdr+"[Batch 1 — depth 0, "+times+"  one\n\n\n[Batch 2 — depth 0, "+times+"two", got)
	})
	t.Run("empty content", func(t *testing.T) {
		got := core.BuildClipArchive([]core.Batch{b("")}, 2, 2, 4)
		assert.Equal(t, hdr+"[Batch 1 — depth 0, 2026-02-28T10:00:00.000Z to 2026-02-28T11:00:00.000Z]", got)
	})
	t.Run("non-ASCII content", func(t *testing.T) {
		got := core.BuildClipArchive([]core.Batch{b("Первая строка\nзначение 🙂")}, 2, 2, 4)
		assert.Equal(t, hdr+"[Batch 1 — depth 0, "+times+"Первая строка\nзначение 🙂", got)
	})
	t.Run("times in UTC with milliseconds (finer digits dropped, as the vectors do)", func(t *testing.T) {
		x := core.Batch{Content: "z", Start: time.Date(2026, 2, 28, 11, 0, 0, 0, berlin),
			End: time.Date(2026, 2, 28, 10, 30, 0, 123_999_999, time.UTC)}
		got := core.BuildClipArchive([]core.Batch{x}, 2, 2, 3)
		assert.Equal(t, "[Context Summary — 3 messages compressed across 1 compaction cycle]\n"+
			"[Batch 1 — depth 0, 2026-02-28T10:00:00.000Z to 2026-02-28T10:30:00.123Z]\nz", got)
	})
}

// TestBuildClipArchiveExtremes: clip_first, clip_last and depths may be
// anything config validation lets through (up to core.MaxInt). The
// shipped plug-in is TinyGo's, where int has 32 bits, so these run under
// GOARCH=386 too (make check-32bit): clip_first + clip_last and
// depth + 1 must not wrap around.
func TestBuildClipArchiveExtremes(t *testing.T) {
	all3 := "[Context Summary — 30 messages compressed across 1 compaction cycle]\n" +
		line(1, 0) + "\n\n" + line(2, 0) + "\n\n" + line(3, 0)
	assert.Equal(t, all3, core.BuildClipArchive(batchesN(3), core.MaxInt, core.MaxInt, 30))
	assert.Equal(t, all3, core.BuildClipArchive(batchesN(3), core.MaxInt, 1, 30))
	assert.Equal(t, all3, core.BuildClipArchive(batchesN(3), 1, core.MaxInt, 30))
	assert.Equal(t, all3, core.BuildClipArchive(batchesN(3), 0, core.MaxInt, 30))

	deepest := batchN(1, core.MaxInt)
	got := core.BuildClipArchive([]core.Batch{deepest}, 2, 2, 10)
	assert.True(t, strings.HasPrefix(got, "[Context Summary — 10 messages compressed across 2147483648 compaction cycles]\n"), got)
	assert.Contains(t, got, "[Batch 1 — depth 2147483647, ")
}
