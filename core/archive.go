package core

import (
	"strconv"
	"strings"
)

// BuildClipArchive renders the clip-archive text (seed 004,
// context-compaction.AC3.1–3.4): a header counting totalCompressed
// messages across max depth + 1 compaction cycles, then every batch when
// there are at most clipFirst + clipLast of them; otherwise the first
// clipFirst under "## Earliest context", a separator counting the omitted
// ones and pointing to memory_read, and the last clipLast under
// "## Recent context". Batches are numbered by position among all
// batches; a blank line follows each block; the text is trimmed.
func BuildClipArchive(batches []Batch, clipFirst, clipLast, totalCompressed int) string {
	if len(batches) == 0 {
		return "[Context Summary — 0 messages compressed]"
	}
	maxDepth := 0
	size := 128
	for i := range batches {
		if batches[i].Depth > maxDepth {
			maxDepth = batches[i].Depth
		}
		size += len(batches[i].Content) + 96
	}
	var b strings.Builder
	b.Grow(size)
	// max depth + 1 in 64 bits: under TinyGo int has 32, and a depth may
	// be MaxInt.
	b.WriteString("[Context Summary — ")
	b.WriteString(strconv.Itoa(totalCompressed))
	b.WriteString(" messages compressed across ")
	b.WriteString(strconv.FormatInt(int64(maxDepth)+1, 10))
	if maxDepth == 0 {
		b.WriteString(" compaction cycle]\n")
	} else {
		b.WriteString(" compaction cycles]\n")
	}
	n := len(batches)
	writeBatch := func(i int) {
		bt := &batches[i]
		b.WriteString("[Batch ")
		b.WriteString(strconv.Itoa(i + 1))
		b.WriteString(" — depth ")
		b.WriteString(strconv.Itoa(bt.Depth))
		b.WriteString(", ")
		b.WriteString(FormatTime(bt.Start))
		b.WriteString(" to ")
		b.WriteString(FormatTime(bt.End))
		b.WriteString("]\n")
		b.WriteString(bt.Content)
		b.WriteString("\n\n")
	}
	if n-clipFirst <= clipLast { // n ≤ clipFirst + clipLast, a sum that may overflow
		for i := 0; i < n; i++ {
			writeBatch(i)
		}
		return strings.TrimSpace(b.String())
	}
	if clipFirst > 0 {
		b.WriteString("## Earliest context\n")
		for i := 0; i < clipFirst; i++ {
			writeBatch(i)
		}
	}
	b.WriteString("[... ")
	b.WriteString(strconv.Itoa(n - clipFirst - clipLast))
	b.WriteString(" earlier summaries omitted, searchable via memory_read ...]\n\n")
	if clipLast > 0 {
		b.WriteString("## Recent context\n")
		for i := n - clipLast; i < n; i++ {
			writeBatch(i)
		}
	}
	return strings.TrimSpace(b.String())
}
