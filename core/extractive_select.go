package core

import (
	"slices"
	"strings"
)

// Line selection and rendering: the budget a summary gets, the sentences
// chosen within it best first, and the summary written from them, one
// dated and labelled line per source in the input's order.

// summarize scores, chooses and renders within maxTokens.
func (ex *extractor) summarize(maxTokens int) string {
	if maxTokens <= 0 {
		maxTokens = 1024
	}
	if len(ex.sents) == 0 && len(ex.guides) > 0 {
		// Only a previous summary: it is all there is to summarize.
		guides := ex.guides
		ex.guides, ex.guideHash, ex.guideWords = nil, nil, nil
		for i, g := range guides {
			ex.addLines(g, i)
		}
	}
	if len(ex.sents) == 0 && ex.skipped != "" {
		// Only the structure of a summary (batch headers, section
		// titles): it is all there is to say.
		ex.addBare(ex.skipped, "", "", exLine, spNone, 0)
	}
	if len(ex.sents) == 0 {
		return ""
	}
	budget := maxTokens * 4
	if budget/4 != maxTokens { // overflow on an absurd maxTokens
		budget = int(^uint(0) >> 2)
	}
	if ex.newRunes > 0 {
		all := ex.newRunes + ex.lineRunes + ex.overhead
		budget = min(budget, max(all/extractiveRatioDiv, min(all, extractiveMinRunes)), extractiveChunkMax)
	} else {
		// A re-summarization: its batches are summaries already, and
		// folding them into one batch is the gain. Only max_tokens,
		// duplicates and filler shorten it, so the oldest facts are not
		// halved again at every fold.
		budget = min(budget, ex.lineRunes+ex.overhead, extractiveFoldMax)
	}
	ex.score()
	ex.selectSentences(budget)
	return ex.render(budget)
}

// cmp orders sentences best first: higher score, then earlier position.
func (ex *extractor) cmp(a, b int32) int {
	sa, sb := ex.sents[a].score, ex.sents[b].score
	switch {
	case sa > sb:
		return -1
	case sa < sb:
		return 1
	}
	return int(a - b)
}

// sourceCost is what opening a source's line costs: its date, label,
// ": " and the line break.
func (ex *extractor) sourceCost(src int32) int {
	s := &ex.srcs[src]
	c := runeCount(s.label) + 3
	if s.date != "" {
		c += dateLen
	}
	return c
}

// selectSentences marks the sentences to keep within budget code points,
// best first. A source's line overhead is charged when its first sentence
// is taken, so the total charged is never less than what render writes.
func (ex *extractor) selectSentences(budget int) {
	order := make([]int32, 0, len(ex.sents))
	for i := range ex.sents {
		if s := &ex.sents[i]; !s.dup && !s.filler {
			order = append(order, int32(i))
		}
	}
	slices.SortFunc(order, func(a, b int32) int { return ex.cmp(a, b) })
	opened := make([]bool, len(ex.srcs))
	used := 0
	take := func(k int32) {
		s := &ex.sents[k]
		if s.chosen {
			return
		}
		c := int(s.cost)
		if !opened[s.src] {
			c += ex.sourceCost(s.src)
		}
		if used+c <= budget {
			used += c
			s.chosen = true
			opened[s.src] = true
		}
	}
	if ex.newRunes == 0 {
		// A re-summarization covers its whole time span: first the best
		// sentence of every day, best days first, then the rest.
		days := map[string]bool{}
		for _, k := range order {
			d := ex.srcs[ex.sents[k].src].date
			if d == "" || days[d] || ex.sents[k].score <= 0 {
				continue
			}
			days[d] = true
			take(k)
		}
	}
	for _, k := range order {
		take(k)
	}
}

// render writes the chosen sentences in their original order, one line per
// source. When nothing fits (or only filler was said) it falls back to
// the best sentence cut to the budget, so the result is never empty while
// the input has text.
func (ex *extractor) render(budget int) string {
	var b strings.Builder
	b.Grow(min(budget, 1<<20) + 64)
	cur := int32(-1)
	prev := 0
	for i := range ex.sents {
		s := &ex.sents[i]
		if !s.chosen {
			continue
		}
		if s.src != cur {
			if cur >= 0 {
				b.WriteByte('\n')
			}
			cur = s.src
			src := &ex.srcs[s.src]
			if src.date != "" {
				b.WriteByte('[')
				b.WriteString(src.date)
				b.WriteString("] ")
			}
			if src.label != "" {
				b.WriteString(src.label)
				b.WriteString(": ")
			}
		} else if endsSentence(ex.sents[prev].text) && ex.sents[prev].count <= 1 {
			b.WriteByte(' ')
		} else {
			// Lines of a tool output or a list have no full stop, and a
			// repeat mark ends its sentence: keep them apart, so a later
			// fold can cut them again.
			b.WriteString(" | ")
		}
		writeCollapsed(&b, s.text, extractiveSentenceMax)
		if s.count > 1 {
			repeatMark(&b, s.count, s.last, ex.srcs[s.src].date)
		}
		prev = i
	}
	if b.Len() > 0 {
		return b.String()
	}
	// Fallback: the best sentence, filler or not, labelled and dated if
	// room allows; a sentence the previous summary holds, or noText, only
	// when nothing else is there.
	best := int32(-1)
	for pass := 0; pass < 2 && best < 0; pass++ {
		for i := range ex.sents {
			if pass == 0 && (ex.sents[i].dup || ex.sents[i].text == noText) {
				continue
			}
			if best < 0 || ex.cmp(int32(i), best) < 0 {
				best = int32(i)
			}
		}
	}
	s := &ex.sents[best]
	src := &ex.srcs[s.src]
	room := min(budget, extractiveSentenceMax)
	if src.date != "" && dateLen+runeCount(src.label)+2+min(int(s.runes), 12) <= room {
		b.WriteByte('[')
		b.WriteString(src.date)
		b.WriteString("] ")
		room -= dateLen
	}
	if l := src.label; l != "" && runeCount(l)+2+min(int(s.runes), 12) <= room {
		b.WriteString(l)
		b.WriteString(": ")
		room -= runeCount(l) + 2
	}
	writeCollapsed(&b, s.text, room)
	return b.String()
}
