package core

import (
	"math"
	"slices"
)

// Scoring: every candidate sentence's features, duplicates and score —
// what it carries (content words by their rarity, names, identifiers,
// decisions, errors, …), less what it costs and repeats — and the
// per-source rank penalty that spreads the summary over many messages.

// exFeatures are what one scan of a sentence finds.
type exFeatures struct {
	decision, errorish, constraint, rationale, action, pref, time, question bool
	social                                                                  bool // a greeting, thanks, an acknowledgement
	code                                                                    bool // looks like source code
	idents                                                                  int  // identifier points
	weak                                                                    int  // acronyms, proper nouns
	words                                                                   int
	content                                                                 int // content words (not glue, not social)
}

// strong reports a signal that alone makes a sentence worth keeping.
func (f *exFeatures) strong() bool {
	return f.decision || f.errorish || f.constraint || f.idents > 0
}

// medium reports a signal that makes a short sentence worth keeping: "I
// love painting", "We meet on Friday".
func (f *exFeatures) medium() bool {
	return f.pref || f.action || f.time || f.rationale
}

// isFiller reports a sentence with nothing to keep: no strong signal and
// no content words ("Thanks!", "Sounds good"), a greeting or
// acknowledgement with little else ("Hi Caroline, great to see you!"), or
// a content-free question ("How have you been?", "What about you?").
func (f *exFeatures) isFiller() bool {
	if f.strong() {
		return false
	}
	n := f.content // names are content words too
	switch {
	case n == 0:
		return true
	case f.medium():
		return f.content == 0 && (f.social || f.question)
	case n < 2:
		return true
	case f.social || f.question:
		return n < 3
	}
	return false
}

// Weights of the sentence features.
const (
	wToolBase     = -1.0 // tool output counts through its errors and identifiers
	wToolCallBase = -1.2
	wToolGain     = 0.5 // what tool output and arguments show counts this much
	wRecur        = 1.0 // penalty per further line a collapsed line of tool output stands for, …
	wRecurMax     = 3.0 // … capped
	wContent      = 0.5 // per content word, …
	wContentMax   = 6.0 // … capped
	wDecision     = 3.0
	wError        = 2.5
	wConstraint   = 2.0
	wPref         = 1.5
	wAction       = 1.0
	wTime         = 1.0
	wRationale    = 1.0
	wQuestion     = 0.3
	wIdent        = 0.8 // per identifier point (strong ones have 2)
	wIdentMax     = 5.0
	wWeak         = 0.6
	wWeakMax      = 2.4
	wRecency      = 0.5
	wRankStep     = 0.6 // penalty per earlier-chosen sentence of the same message
	wRankMax      = 3.0
	wRepeat       = 0.5 // bonus per repetition of a sentence, …
	wRepeatMax    = 1.5 // … capped
	wRestate      = 3.0 // penalty for restating the previous message
	wSeen         = 2.5 // penalty for repeating the previous summary's words
	wCode         = 2.0 // penalty for a line of source code
	wNear         = 1.5 // penalty per earlier near-duplicate, …
	wNearMax      = 4.5 // … capped
	wShort        = 1.5 // penalty for fewer than three words and no identifier
	wLengthDiv    = 80  // penalty of one point per this many code points
)

// dfOf is df's count of w (0 when absent).
func dfOf(df *u64Counts, w uint64) int32 {
	n, _ := df.get(w)
	return n
}

// score computes every sentence's features, hash and score, marks
// duplicates (of each other and of the previous summary) and filler, and
// applies the per-message rank penalty. Its steps: scanSentences reads
// every sentence once; then, sentence by sentence in order, collapse
// marks the duplicates and weigh scores the rest; adjustAcross applies
// what only the whole input shows (prose restating a tool result, a line
// of tool output standing for many); recency and rankPenalty come last.
func (ex *extractor) score() {
	seen := newU64Counts(len(ex.sents))
	near := newU64Counts(len(ex.sents))
	machine := newU64Counts(0)
	restated := make([]bool, len(ex.srcs)) // tool results that prose after them restates
	sc := ex.scanSentences()
	for i := range ex.sents {
		s := &ex.sents[i]
		hl := sc.shapes[i]
		ex.words = sc.words[sc.wordsAt[i]:sc.wordsAt[i+1]]
		if ex.collapse(int32(i), hl, seen, machine) {
			continue
		}
		// Near-duplicates (log lines, retries) add little: each one more
		// of the same shape weighs less.
		nc := near.at(hl)
		nearCount := *nc
		*nc = nearCount + 1
		s.score = ex.weigh(int32(i), &sc, nearCount, restated)
	}
	ex.adjustAcross(restated)
	ex.recency()
	ex.rankPenalty()
}

// sentenceScan is what scanSentences finds for weigh: each sentence's
// shape hash, its content words and identifier tokens (sentence i's are
// words[wordsAt[i]:wordsAt[i+1]] and toks[toksAt[i]:toksAt[i+1]]), and in
// how many sources each word and token occurs (df).
type sentenceScan struct {
	shapes          []uint64
	wordsAt, toksAt []int32
	words           []uint64
	toks            []exTok
	df              *u64Counts
}

// scanSentences is the first pass: every sentence's features, hashes and
// content words, and in how many sources each content word occurs. It is
// a step of its own because a word's weight needs the counts of the
// whole input before any sentence can be scored.
func (ex *extractor) scanSentences() sentenceScan {
	sc := sentenceScan{
		shapes:  make([]uint64, len(ex.sents)),
		wordsAt: make([]int32, len(ex.sents)+1),
		df:      newU64Counts(len(ex.sents)),
	}
	dfSrc := newU64Counts(len(ex.sents)) // the last source counted for a word, plus 1
	count := func(w uint64, src int32) {
		if last := dfSrc.at(w); *last != src+1 {
			*last = src + 1
			*sc.df.at(w)++
		}
	}
	sc.toksAt = make([]int32, len(ex.sents)+1)
	for i := range ex.sents {
		s := &ex.sents[i]
		ex.idShape = ex.srcs[s.src].speaker == spTool
		s.features, s.hash, sc.shapes[i] = ex.scan(s.text)
		sc.wordsAt[i], sc.toksAt[i] = int32(len(sc.words)), int32(len(sc.toks))
		sc.words = append(sc.words, ex.words...)
		sc.toks = append(sc.toks, ex.toks...)
		for _, w := range ex.words {
			count(w, s.src)
		}
		for _, t := range ex.toks {
			count(t.hash, s.src)
		}
	}
	ex.idShape = false
	sc.wordsAt[len(ex.sents)], sc.toksAt[len(ex.sents)] = int32(len(sc.words)), int32(len(sc.toks))
	return sc
}

// collapse marks sentence i (of shape hl) a duplicate when it is one:
// said in the previous summary, a line of tool output of the shape of an
// earlier one (absorbed into it), or said before (the first gains a
// bounded bonus). It reports whether it marked i, which is then not
// scored; a step of its own because a duplicate needs no score at all.
func (ex *extractor) collapse(i int32, hl uint64, seen, machine *u64Counts) bool {
	s := &ex.sents[i]
	src := &ex.srcs[s.src]
	if _, ok := ex.guideHash[s.hash]; ok {
		s.dup = true // the previous summary says it already
		return true
	}
	if (src.speaker == spTool || src.speaker == spToolCall) && hl != noShape {
		// Tool output and calls that repeat one shape (log lines,
		// health checks, retries: the same text but for numbers and
		// times) collapse into the first, which says how many lines it
		// stands for and until when. Output collapses only with output
		// of the same call (the same tool, arguments that differ only
		// in numbers and ids: callKey) and, being data, only when its
		// ids are the same too (scan's idShape): the records of
		// orders 4471 and 4472 are two facts, not one said twice.
		key := hl
		if src.call != 0 {
			key = (hl ^ src.call) * 1099511628211
		}
		if j, ok := machine.get(key); ok {
			ex.absorb(j, i)
			return true
		}
		*machine.at(key) = i
	}
	if j, ok := seen.get(s.hash); ok {
		// Said again: keep the first, which gains a bounded bonus.
		s.dup = true
		if d := &ex.sents[j]; float64(d.repeats)*wRepeat < wRepeatMax {
			d.repeats++
			d.score += wRepeat
		}
		return true
	}
	*seen.at(s.hash) = i
	return false
}

// weigh is the score of sentence i, not a duplicate, whose content words
// are in ex.words and which has nearCount earlier near-duplicates: what
// marks it down (penalties), plus what it carries (gain), less what it
// costs. It also sets the sentence's filler mark and cost, and marks in
// restated a tool result the sentence restates. A step of its own: the
// one place that adds a sentence's score up.
func (ex *extractor) weigh(i int32, sc *sentenceScan, nearCount int32, restated []bool) float64 {
	s := &ex.sents[i]
	f := &s.features
	v := ex.penalties(i, restated)
	v += ex.gain(i, sc)
	if f.words < 3 && f.idents == 0 {
		v -= wShort
	}
	cut := min(int(s.runes), extractiveSentenceMax)
	s.cost = int32(cut + 3) // and its separator, " " or " | "
	// Long sentences cost more of the budget: a 320-character line
	// must carry 4 points more than a short one (at /300 a log line
	// that maxed out every capped feature beat any short fact).
	v -= float64(cut) / wLengthDiv
	v -= min(float64(nearCount)*wNear, wNearMax)
	return v
}

// penalties is where sentence i's score starts: the base of its speaker,
// less what marks it down (source code, restating the message before,
// repeating the previous summary's words). It drops the features that do
// not count for code and tool-call arguments and sets the filler mark,
// which read them, so it runs before gain.
func (ex *extractor) penalties(i int32, restated []bool) float64 {
	s := &ex.sents[i]
	f := &s.features
	src := &ex.srcs[s.src]
	var v float64
	switch src.speaker {
	case spTool:
		v = wToolBase
	case spToolCall:
		v = wToolCallBase
	}
	if f.code {
		// Source code is dense with names, "err" and quotes but is
		// rarely what a summary needs: what the code does is said in
		// prose around it.
		f.decision, f.constraint, f.errorish, f.rationale, f.action, f.pref, f.question = false, false, false, false, false, false, false
		f.idents = min(f.idents, 2)
		v -= wCode
	}
	if src.speaker == spToolCall {
		// Arguments are data, not speech: "decision" in a ticket body
		// is not a decision. Only identifiers and errors count.
		f.decision, f.constraint, f.rationale, f.action, f.pref, f.question, f.social = false, false, false, false, false, false, false
	}
	s.filler = f.isFiller() && src.speaker != spToolCall
	if ex.restates(s.src) {
		if ex.srcs[s.src-1].speaker == spTool {
			// Prose that says what a tool result shows says it better
			// than the raw output: the output is the redundant one.
			restated[s.src-1] = true
		} else {
			// Echoing what the other side just said adds nothing the
			// first statement does not have.
			v -= wRestate
		}
	}
	if ex.seenBefore() {
		v -= wSeen
	}
	return v
}

// gain is what sentence i carries: its content words and identifiers by
// their rarity in the input (sc.df), and its decisions, errors,
// constraints, preferences, actions, times, rationale and questions;
// tool output and arguments count a share of it. A step of its own: it
// is the part of the score that the features and the input's word counts
// alone decide.
func (ex *extractor) gain(i int32, sc *sentenceScan) float64 {
	s := &ex.sents[i]
	f := &s.features
	src := &ex.srcs[s.src]
	gain := 0.0
	// Content words count by how much they say here: a word most
	// sources repeat (the shop, the server, the backup) says little.
	info := 0.0
	for _, w := range ex.words {
		info += infoWeight(dfOf(sc.df, w))
	}
	info += float64(f.content - len(ex.words)) // CJK runs count more than once
	gain += min(info*wContent, wContentMax)
	if f.decision {
		gain += wDecision
	}
	if f.errorish {
		gain += wError
	}
	if f.constraint {
		gain += wConstraint
	}
	if f.pref {
		gain += wPref
	}
	if f.action {
		gain += wAction
	}
	if f.time {
		gain += wTime
	}
	if f.rationale {
		gain += wRationale
	}
	if f.question {
		gain += wQuestion
	}
	// Identifiers and names count by how rare they are here too: a
	// path or an acronym on every line of a log is not news.
	idents, weak := float64(f.idents), float64(f.weak)
	for _, t := range sc.toks[sc.toksAt[i]:sc.toksAt[i+1]] {
		iw := infoWeight(dfOf(sc.df, t.hash))
		idents -= float64(t.points) * (1 - iw)
		weak -= float64(t.weak) * (1 - iw)
	}
	gain += min(idents*wIdent, wIdentMax)
	gain += min(weak*wWeak, wWeakMax)
	if src.speaker == spTool || src.speaker == spToolCall {
		// Raw output and arguments are data: what they show counts,
		// but less than the same said in words.
		gain *= wToolGain
	}
	return gain
}

// adjustAcross applies what only the whole input shows: a tool result
// that prose after it restates (restated) is marked down, and a line of
// tool output that stands for several (collapse) costs its repeat mark
// and is marked down as routine. A step of its own because it reads
// marks that later sentences set.
func (ex *extractor) adjustAcross(restated []bool) {
	for i := range ex.sents {
		s := &ex.sents[i]
		if s.dup {
			continue
		}
		if s.count > 1 {
			s.cost += int32(repeatMarkRunes(s.count, s.last, ex.srcs[s.src].date))
		}
		if restated[s.src] {
			s.score -= wRestate
		}
		if s.count > 1 {
			// Output that recurs is routine: one line of it says so.
			s.score -= min(float64(s.count-1), wRecurMax) * wRecur
		}
	}
}

// infoWeight is what a content word found in n sources adds, 1/√n.
func infoWeight(n int32) float64 {
	if n <= 1 {
		return 1
	}
	return 1 / math.Sqrt(float64(n))
}

// noShape is scan's shape hash of a sentence without a digit-free token.
const noShape = 14695981039346656037

// absorb collapses sentence i into the earlier sentence j of the same
// shape: j stands for both, until the later of their dates.
func (ex *extractor) absorb(j, i int32) {
	d, s := &ex.sents[j], &ex.sents[i]
	s.dup = true
	d.count = max(d.count, 1) + max(s.count, 1)
	last := s.last
	if last == "" {
		last = ex.srcs[s.src].date
	}
	if last > d.last {
		d.last = last
	}
}

// seenBefore reports whether the sentence just scanned (its content words
// are in ex.words) is mostly made of the previous summary's words: at
// least 4 content words, 80% of them there.
func (ex *extractor) seenBefore() bool {
	if len(ex.guideWords) == 0 || len(ex.words) < 4 {
		return false
	}
	found := 0
	for _, w := range ex.words {
		if _, ok := ex.guideWords[w]; ok {
			found++
		}
	}
	return found*10 >= len(ex.words)*8
}

// restates reports whether the sentence just scanned (its content words
// are in ex.words) is speech (user, assistant, system, or such lines of a
// summary) that mostly repeats the source before src (speech or a tool
// result, "Policy: X" then "X"): at least 4 content words, 70% of them
// found there. Only the first extractiveRestateWords content words of a
// source are remembered, which bounds the work per sentence.
func (ex *extractor) restates(src int32) bool {
	if src != ex.wordsSrc {
		if src == ex.wordsSrc+1 {
			ex.prevWords, ex.curWords = ex.curWords, ex.prevWords[:0]
		} else {
			ex.prevWords, ex.curWords = ex.prevWords[:0], ex.curWords[:0]
		}
		ex.wordsSrc = src
	}
	sp := ex.srcs[src].speaker
	if sp == spToolCall {
		ex.curWords = ex.curWords[:0]
		ex.prevWords = ex.prevWords[:0]
		return false
	}
	speech := sp == spUser || sp == spAssistant || sp == spSystem
	found := 0
	if src > 0 && len(ex.prevWords) > 0 && len(ex.words) >= 4 {
		for _, w := range ex.words {
			for _, p := range ex.prevWords {
				if w == p {
					found++
					break
				}
			}
		}
	}
	for _, w := range ex.words {
		if len(ex.curWords) >= extractiveRestateWords {
			break
		}
		ex.curWords = append(ex.curWords, w)
	}
	return speech && len(ex.words) >= 4 && found*10 >= len(ex.words)*7
}

// recency adds up to wRecency by the message's position among the new
// messages: later context matters a little more.
func (ex *extractor) recency() {
	first, last := -1, -1
	for i := range ex.srcs {
		if ex.srcs[i].kind == exNew {
			if first < 0 {
				first = ex.srcs[i].msg
			}
			last = ex.srcs[i].msg
		}
	}
	if last <= first {
		return
	}
	for i := range ex.sents {
		s := &ex.sents[i]
		src := &ex.srcs[s.src]
		if src.kind != exNew || s.dup {
			continue
		}
		s.score += wRecency * float64(src.msg-first) / float64(last-first)
	}
}

// rankPenalty lowers the score of every sentence by how many better
// sentences its own source has, so the summary covers many messages
// instead of one long one.
func (ex *extractor) rankPenalty() {
	var idx []int32
	for i := 0; i < len(ex.sents); {
		j := i
		for j < len(ex.sents) && ex.sents[j].src == ex.sents[i].src {
			j++
		}
		if j-i > 1 {
			idx = idx[:0]
			for k := i; k < j; k++ {
				if !ex.sents[k].dup {
					idx = append(idx, int32(k))
				}
			}
			slices.SortFunc(idx, func(a, b int32) int { return ex.cmp(a, b) })
			for r, k := range idx {
				ex.sents[k].score -= min(float64(r)*wRankStep, wRankMax)
			}
		}
		i = j
	}
}
