package core

import (
	"strconv"
	"strings"
)

// memory_read is the tool an agent calls to search what compaction
// archived (and what is still in its context). Its answer goes into the
// next model input, so it must fit a budget: a search whose hits are long
// tool outputs would otherwise overflow the window the compaction saved.
// BuildMemoryRead words the answer for a model within MaxTokens, counted
// by the estimator that counts the window (TextTokens): the hits in rank
// order, each whole while it fits, then the best passage of the next one
// (the part holding the most query words), then a line naming what was
// left out and how to read it (by id). Every host's memory_read renders
// through it (the buildMemoryRead export), so they answer alike.

// DefaultMemoryReadTokens is memory_read's budget when none is given.
const DefaultMemoryReadTokens = 1000

// MinMemoryReadTokens is the smallest budget: room for one hit's header, a
// short passage and the note saying what was left out.
const MinMemoryReadTokens = 150

// memoryReadMaxListed bounds the ids the left-out note names; the rest
// are counted.
const memoryReadMaxListed = 8

// minPassageTokens is the least a passage may have: below it the hit is
// left out instead.
const minPassageTokens = 24

// inContextTokens bounds what a hit still in the agent's context shows:
// the agent has the message in front of it, so a longer one is shown as
// its excerpt about the query, and the budget goes to what it cannot see.
const inContextTokens = 80

// ReadHit is one search hit as memory_read shows it.
type ReadHit struct {
	Kind string // "message" or "batch"
	ID   string
	// Role is a message's role ("" for a batch).
	Role string
	// Start and End are the time the hit covers, as stored ("" unknown).
	Start, End string
	Score      float64
	// Text is a message's indexed text (its own words, then after
	// SearchContextSep the lines of its exchange, which are not shown) or
	// a batch's summary.
	Text string
	// InContext: the message is still in the agent's context.
	InContext bool
	// Sources are the ids of the messages a batch summarizes.
	Sources []string
}

// MemoryRead is memory_read's answer.
type MemoryRead struct {
	// Text is the answer for the model; TextTokens(Text) <= the budget.
	Text   string
	Tokens int
	// Whole are the ids of the hits shown whole (a hit in the context:
	// whole, or its excerpt of at most inContextTokens), Passage the id of
	// the hit shown in part to fill the budget ("" none), LeftOut the ids
	// of the hits not shown.
	Whole   []string
	Passage string
	LeftOut []string
}

// BuildMemoryRead renders hits (best first) as memory_read's answer to
// query within maxTokens (DefaultMemoryReadTokens when <= 0; at least
// MinMemoryReadTokens), counted under c's token_estimator.
func BuildMemoryRead(query string, hits []ReadHit, maxTokens int, c *Config) (MemoryRead, error) {
	return buildMemoryRead(query, hits, maxTokens, c, false)
}

// BuildMemoryReadByID is BuildMemoryRead for records the agent asked for
// by id (memory_read with an id): a record over the budget is shown as
// its passage holding the most words of query (its beginning without
// one), and the closing line says to ask again with the id and a query
// for another part, not to read it by id.
func BuildMemoryReadByID(query string, records []ReadHit, maxTokens int, c *Config) (MemoryRead, error) {
	return buildMemoryRead(query, records, maxTokens, c, true)
}

func buildMemoryRead(query string, hits []ReadHit, maxTokens int, c *Config, byID bool) (MemoryRead, error) {
	if maxTokens <= 0 {
		maxTokens = DefaultMemoryReadTokens
	}
	if maxTokens < MinMemoryReadTokens {
		return MemoryRead{}, Invalid("max_tokens", "must be at least "+strconv.Itoa(MinMemoryReadTokens)+", got "+strconv.Itoa(maxTokens))
	}
	var terms map[string]bool
	if q, err := AnalyzeSearchQuery(query, ""); err == nil {
		terms = make(map[string]bool, len(q.Terms))
		for _, t := range q.Terms {
			terms[t] = true
		}
	}
	r := memoryReader{query: query, hits: hits, budget: maxTokens, cfg: c, terms: terms, byID: byID}
	return r.build(), nil
}

type memoryReader struct {
	query  string
	hits   []ReadHit
	budget int
	cfg    *Config
	terms  map[string]bool
	byID   bool // records read by id: see BuildMemoryReadByID
}

func (r *memoryReader) tokens(s string) int { return TextTokens(s, r.cfg) }

// body is what a hit shows: a message's own words, a batch's summary.
func (r *memoryReader) body(h *ReadHit) string {
	t := h.Text
	if h.Kind != "batch" {
		t, _, _ = strings.Cut(t, SearchContextSep)
	}
	return strings.TrimSpace(t)
}

// header is a hit's first line: its number, kind, id, time and score.
func (r *memoryReader) header(i int, h *ReadHit, passage bool) string {
	var b strings.Builder
	b.WriteString("[")
	b.WriteString(strconv.Itoa(i + 1))
	b.WriteString("] ")
	if h.Kind == "batch" {
		b.WriteString("summary ")
	} else {
		b.WriteString("message ")
	}
	b.WriteString(h.ID)
	if h.Role != "" {
		b.WriteString(" · ")
		b.WriteString(h.Role)
	}
	switch {
	case h.Start != "" && h.End != "" && h.Start != h.End:
		b.WriteString(" · ")
		b.WriteString(h.Start)
		b.WriteString(" – ")
		b.WriteString(h.End)
	case h.End != "":
		b.WriteString(" · ")
		b.WriteString(h.End)
	case h.Start != "":
		b.WriteString(" · ")
		b.WriteString(h.Start)
	}
	if len(h.Sources) > 0 {
		b.WriteString(" · summarizes ")
		b.WriteString(joinIDs(h.Sources, memoryReadMaxListed))
	}
	if h.InContext {
		b.WriteString(" · in your context")
	}
	b.WriteString(" · score ")
	b.WriteString(strconv.FormatFloat(h.Score, 'g', 3, 64))
	if passage {
		b.WriteString(" · a passage")
	}
	return b.String()
}

// joinIDs joins ids, at most max of them, then how many more.
func joinIDs(ids []string, max int) string {
	if len(ids) <= max {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:max], ", ") + " and " + strconv.Itoa(len(ids)-max) + " more"
}

// note says what was left out, from hit from on, and how to read a hit
// whole (when one was cut, passage); "" when nothing needs saying. It
// names at most memoryReadMaxListed hits, fewer when naming them would
// take more than a quarter of the budget, then counts the rest.
func (r *memoryReader) note(from int, passage *ReadHit) string {
	left := r.hits[min(from, len(r.hits)):]
	if len(left) == 0 && passage == nil {
		return ""
	}
	readable := passage != nil && !passage.InContext
	for i := range left {
		readable = readable || !left[i].InContext
	}
	tail := ""
	switch {
	case r.byID && passage != nil:
		tail = ` Only a part fits the budget: ask again with this id and a query (what to look for) for another part.`
	case readable:
		tail = ` Read one whole: memory_read id="…".`
	case len(left) > 0:
		tail = " They are in your context already."
	}
	if len(left) == 0 {
		return strings.TrimSpace(tail)
	}
	head := "Left out (over the " + strconv.Itoa(r.budget) + "-token budget): "
	var names strings.Builder
	for i := range left {
		var one strings.Builder
		if i > 0 {
			one.WriteString(", ")
		}
		if left[i].Kind == "batch" {
			one.WriteString("summary ")
		} else {
			one.WriteString("message ")
		}
		one.WriteString(left[i].ID)
		if left[i].InContext {
			one.WriteString(" (in your context)")
		}
		more := ""
		if rest := len(left) - i - 1; rest > 0 {
			more = " and " + strconv.Itoa(rest) + " more"
		}
		if i == memoryReadMaxListed || (i > 0 && r.tokens(head+names.String()+one.String()+more+"."+tail) > r.budget/4) {
			return head + names.String() + " and " + strconv.Itoa(len(left)-i) + " more." + tail
		}
		names.WriteString(one.String())
	}
	return head + names.String() + "." + tail
}

// join assembles the answer from its parts, the empty ones left out.
func join(parts []string) string {
	var b strings.Builder
	for _, p := range parts {
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(p)
	}
	return b.String()
}

func (r *memoryReader) build() MemoryRead {
	if len(r.hits) == 0 {
		text := "Nothing matches " + strconv.Quote(r.query) + "."
		if r.tokens(text) > r.budget {
			text = "Nothing matches."
		}
		return MemoryRead{Text: text, Tokens: r.tokens(text)}
	}
	var parts []string
	out := MemoryRead{}
	n := 0
	for ; n < len(r.hits); n++ {
		h := &r.hits[n]
		head, body := r.header(n, h, false), r.body(h)
		if h.InContext && r.tokens(body) > inContextTokens {
			if p := r.passage(body, inContextTokens, func(p string) bool { return r.tokens(p) <= inContextTokens }); p != "" {
				head, body = head+" · an excerpt", p
			}
		}
		block := head + "\n" + body
		try := join(append(parts[:len(parts):len(parts)], block, r.note(n+1, nil)))
		if r.tokens(try) > r.budget {
			break
		}
		parts = append(parts, block)
		out.Whole = append(out.Whole, h.ID)
	}
	next := n
	var cut *ReadHit
	if n < len(r.hits) {
		if block, ok := r.passageBlock(parts, n); ok {
			parts = append(parts, block)
			out.Passage = r.hits[n].ID
			cut = &r.hits[n]
			next = n + 1
		}
	}
	for i := next; i < len(r.hits); i++ {
		out.LeftOut = append(out.LeftOut, r.hits[i].ID)
	}
	if note := r.note(next, cut); note != "" {
		parts = append(parts, note)
	}
	out.Text = join(parts)
	for r.tokens(out.Text) > r.budget && len(parts) > 0 {
		// The note alone is over the budget (many long ids): shorten it.
		parts = parts[:len(parts)-1]
		parts = append(parts, strconv.Itoa(len(out.LeftOut))+" more hits left out: ask a narrower question.")
		out.Text = join(parts)
		if r.tokens(out.Text) > r.budget {
			out.Text = strconv.Itoa(len(r.hits)) + " hits, over the budget: ask a narrower question."
			out.Whole, out.Passage, out.LeftOut = nil, "", idsOf(r.hits)
			break
		}
	}
	out.Tokens = r.tokens(out.Text)
	return out
}

func idsOf(hits []ReadHit) []string {
	out := make([]string, len(hits))
	for i := range hits {
		out[i] = hits[i].ID
	}
	return out
}

// passageBlock is hit n shown in part after parts: its header and the
// passage of its body holding the most query words that fits what is
// left of the budget with the note after it; ok is false when less than
// minPassageTokens would fit.
func (r *memoryReader) passageBlock(parts []string, n int) (string, bool) {
	h := &r.hits[n]
	head := r.header(n, h, true) + "\n"
	body := r.body(h)
	fixed := join(append(parts[:len(parts):len(parts)], head, r.note(n+1, h)))
	room := r.budget - r.tokens(fixed) - 2 // the ellipses
	if room < minPassageTokens || body == "" {
		return "", false
	}
	fits := func(p string) bool {
		return r.tokens(join(append(parts[:len(parts):len(parts)], head+p, r.note(n+1, h)))) <= r.budget
	}
	p := r.passage(body, room, fits)
	if p == "" {
		return "", false
	}
	return head + p, true
}

// passage returns the part of body around its densest run of query
// words that fits: at most room tokens by a first estimate, then cut
// until fits says it does, re-centred on the best run at each width. It
// starts and ends at word boundaries, with "…" where it cuts the body.
func (r *memoryReader) passage(body string, room int, fits func(string) bool) string {
	total := r.tokens(body)
	if total <= 0 {
		return ""
	}
	// Bytes per token of this body, to size the window.
	width := len(body) * room / total
	if width > len(body) {
		width = len(body)
	}
	words := tokenize(body)
	matches := r.matches(words)
	for width > 0 {
		start := bestStart(len(body), matches, width)
		lo, hi := snap(body, words, start, start+width)
		p := body[lo:hi]
		if lo > 0 {
			p = "…" + p
		}
		if hi < len(body) {
			p += "…"
		}
		if fits(p) {
			return p
		}
		width = width * 9 / 10
		if r.tokens(body[lo:hi]) < minPassageTokens/2 {
			return ""
		}
	}
	return ""
}

// match is a query word's place in a body and its weight: a word the body
// says often (a key of every JSON row) counts less than a rare one (the
// asked-for id), 1 / its occurrences.
type match struct {
	at     int
	weight float64
}

// matches are the query words of words, weighted.
func (r *memoryReader) matches(words []queryToken) []match {
	var out []match
	count := map[string]int{}
	stems := make([]string, len(words))
	for i, w := range words {
		if s := PorterStem(w.folded); r.terms[s] {
			stems[i] = s
			count[s]++
		}
	}
	for i, w := range words {
		if stems[i] != "" {
			out = append(out, match{at: w.start, weight: 1 / float64(count[stems[i]])})
		}
	}
	return out
}

// bestStart is the byte offset of a window of width bytes over a body of
// n bytes holding the most weight of matches (the earliest of equals),
// centred on the weighted middle of the matches it holds, so the rare
// words sit inside it, not at an edge; 0 without matches.
func bestStart(n int, matches []match, width int) int {
	if len(matches) == 0 || width >= n {
		return 0
	}
	bestI, bestJ, bestW, sum, j := 0, 0, 0.0, 0.0, 0
	for i := range matches {
		for j < len(matches) && matches[j].at < matches[i].at+width {
			sum += matches[j].weight
			j++
		}
		if sum > bestW+1e-12 {
			bestI, bestJ, bestW = i, j, sum
		}
		sum -= matches[i].weight
	}
	var mid float64
	for _, m := range matches[bestI:bestJ] {
		mid += float64(m.at) * m.weight
	}
	start := int(mid/bestW) - width/2
	if start+width > n {
		start = n - width
	}
	if start < 0 {
		start = 0
	}
	return start
}

// snap widens nothing: it moves [lo, hi) inward to word boundaries (the
// first word starting at or after lo, the last ending at or before hi),
// keeping the body's ends where they are.
func snap(body string, words []queryToken, lo, hi int) (int, int) {
	if hi > len(body) {
		hi = len(body)
	}
	if lo > 0 {
		for _, w := range words {
			if w.start >= lo {
				lo = w.start
				break
			}
		}
	}
	if hi < len(body) {
		end := lo
		for _, w := range words {
			if w.end > hi {
				break
			}
			if w.end > end {
				end = w.end
			}
		}
		hi = end
	}
	if hi < lo {
		hi = lo
	}
	return lo, hi
}
