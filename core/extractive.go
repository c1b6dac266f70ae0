package core

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ExtractiveSummary is clipfold's offline "LLM": it answers a
// summarization request (BuildSummarizationRequest or
// BuildResummarizationRequest) by picking the most informative sentences
// of the request's messages, with no model at all. It is the `extractive`
// provider of the Go host and the `fallback: "extractive"` path of
// compress, so it must work anywhere the plug-in runs: plain hand-written
// scanning (no regexp, no reflection, no goroutines), deterministic (no
// clock, no randomness, no map iteration decides anything), O(total text).
//
// What it does:
//   - Sentences are cut from every message (lines first, then ". ", "! ",
//     "? " and CJK stops). The system prompt, the directive (the last user
//     message) and the structural lines of a clip-archive are ignored.
//   - Each sentence is scored: decisions ("decided", "agreed", "we will",
//     "let's go with"), errors and fixes, constraints ("must", "never",
//     "deadline", "budget", …), questions and identifiers (paths, URLs,
//     versions, numbers, CamelCase/snake_case names, error codes, ticket
//     ids, quoted strings) raise it; acknowledgements and greetings
//     ("thanks", "sounds good", "ok") are dropped outright. What the user
//     says weighs most, tool output least (it counts through its errors
//     and identifiers); lines of source code, the assistant restating the
//     previous message, and near-duplicates that differ only in numbers
//     ("attempt 1", "attempt 2") are marked down. Later messages get a
//     small recency bonus, and every further sentence taken from the same
//     message a small penalty, so one long tool dump cannot fill the
//     summary.
//   - Sentences of the previous summary and of summary batches carry a
//     strong weight, because facts must survive repeated fold-in
//     compaction; but a share of the budget (extractiveNewShare) is first
//     reserved for the new messages, so old facts cannot crowd out
//     everything new either.
//   - Duplicates (same words, ignoring case, punctuation and spacing) are
//     kept once. A huge sentence is cut at a word boundary with "…".
//   - The chosen sentences come out in their original order, grouped per
//     message, one line per message with light attribution ("User: …",
//     "Assistant: …", "Tool: …", "Tool call: …"); lines of a tool output
//     are joined with " | ". Lines of a previous summary that carry such a
//     label keep it and are cut at " | " again, so the format is stable
//     across folds.
//
// Length: the result's EstimateTokens is at most req.MaxTokens (1024 when
// MaxTokens ≤ 0), and the new text is cut to about half when it is long
// (an extractive summary that keeps everything would not compact
// anything); the previous summary is not halved again, so the summary can
// grow fold after fold up to MaxTokens. The result is non-empty whenever the request has any text
// other than the directive: an empty summary is a failure to the pipeline.
// Text is counted and cut by code points; invalid UTF-8 is replaced by
// U+FFFD, so the output is always valid UTF-8.
func ExtractiveSummary(req *ModelRequest) string {
	if req == nil {
		return ""
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = 1024
	}
	var ex extractor
	ex.collect(req.Messages)
	if len(ex.sents) == 0 {
		return ""
	}
	budget := maxTokens * 4
	if budget/4 != maxTokens { // overflow on an absurd MaxTokens
		budget = int(^uint(0) >> 2)
	}
	// Compress even when MaxTokens is generous (a summary that keeps
	// everything compacts nothing): keep about a third of long new text,
	// all of very short text. The previous summary is context, not the thing
	// asked for: it may take about as much room again (the most
	// informative of it wins, so facts travel forward to the batches the
	// clip-archive shows) but not all of it, so that fold after fold the
	// oldest details thin out instead of every batch repeating the one
	// before it in full (repetition made small histories end in no_gain). A
	// re-summarization (no new messages) keeps half of its batches.
	if ex.newRunes > 0 {
		// +64: room for the "User: " labels of what is kept whole.
		own := max(ex.newRunes/extractiveRatioDiv, min(ex.newRunes+64, extractiveMinRunes))
		budget = min(budget, own+min(ex.priorRunes*2/3, max(own, extractiveMinRunes)))
	} else {
		budget = min(budget, max(ex.priorRunes/2, min(ex.priorRunes+64, 3*extractiveMinRunes)))
	}
	ex.score()
	ex.selectSentences(budget)
	return ex.render(budget)
}

// Tuning of ExtractiveSummary. They are constants, not config, because
// the extractive summary only has to be a good-enough stand-in for an LLM.
const (
	// extractiveRatioDiv: a long input is cut to about 1/extractiveRatioDiv
	// of its code points (before MaxTokens applies).
	extractiveRatioDiv = 3
	// extractiveMinRunes: inputs shorter than this many code points are not
	// cut by the ratio, only by MaxTokens and the filler rule; longer ones
	// keep at least this much.
	extractiveMinRunes = 320
	// extractiveNewShare: the part of the budget reserved first for new
	// messages when a previous summary competes with them.
	extractiveNewShare = 0.15
	// extractiveSentenceMax: the longest a single sentence may be, in code
	// points, before it is cut (a stack trace on one line, a JSON dump).
	extractiveSentenceMax = 320
	// extractiveRestateWords bounds the content words remembered per
	// source for restatement detection.
	extractiveRestateWords = 64
	// extractivePriorWeight is added to every previous-summary sentence.
	extractivePriorWeight = 3.0
)

// Source kinds of extracted sentences.
const (
	exUser uint8 = iota
	exAssistant
	exTool
	exToolCall
	exSystem
	exPrior
)

// exSource is one message of the request, or one line of a previous
// summary / summary batch (each becomes one output line).
type exSource struct {
	label string // "User", …; "" for unlabelled previous-summary lines
	kind  uint8
	// speaker is the kind the base weight comes from: kind itself, or for
	// a previous-summary line the kind its label names, so a tool dump
	// that made it into a summary does not outweigh what the user said.
	speaker uint8
	msg     int // index of the request message, for the recency bonus
}

// exSent is one candidate sentence.
type exSent struct {
	text   string // trimmed, valid UTF-8, not yet whitespace-collapsed
	src    int32
	runes  int32 // code points after whitespace collapsing
	cost   int32 // code points it takes in the output (cut, plus separator)
	score  float64
	filler bool
	dup    bool
	chosen bool
	// informative: the sentence has some signal (keyword, question,
	// identifier); only such new sentences use the reserved share.
	informative bool
	repeats     uint8
	hash        uint64
	features    exFeatures
}

type extractor struct {
	// words holds the content-word hashes of the sentence scan just read;
	// prevWords and curWords those of the previous and the current source
	// (bounded), for restatement detection.
	words, prevWords, curWords []uint64
	wordsSrc                   int32
	srcs                       []exSource
	sents                      []exSent
	priorRunes                 int // code points of previous-summary sentences
	newRunes                   int // code points of the other sentences
	lowerBuf                   [32]byte
}

// collect turns the request's messages into sources and sentences.
func (ex *extractor) collect(msgs []ModelMessage) {
	last := len(msgs) - 1
	for last >= 0 && isDirective(&msgs[last]) {
		last--
	}
	ex.sents = make([]exSent, 0, 64)
	for i := 0; i <= last; i++ {
		m := &msgs[i]
		c := m.Content
		if c == "" || isDirective(m) {
			continue
		}
		if !utf8.ValidString(c) {
			c = strings.ToValidUTF8(c, "\uFFFD")
		}
		switch m.Role {
		case RoleSystem:
			if rest, ok := strings.CutPrefix(c, PreviousSummaryPrefix); ok {
				ex.addSummary(rest, i)
			} else if rest, ok := strings.CutPrefix(c, SummaryBatchPrefix); ok {
				ex.addSummary(rest, i)
			} else if strings.HasPrefix(c, ClipArchivePrefix) {
				ex.addSummary(c, i)
			} else {
				ex.addMessage(c, "System", exSystem, i)
			}
		case RoleUser, RoleTool:
			if rest, ok := strings.CutPrefix(c, ToolResultPrefix); ok {
				ex.addMessage(rest, "Tool", exTool, i)
			} else if m.Role == RoleTool {
				ex.addMessage(c, "Tool", exTool, i)
			} else {
				ex.addMessage(c, "User", exUser, i)
			}
		case RoleAssistant:
			if strings.HasPrefix(c, ToolCallPrefix) {
				ex.addToolCalls(c, i)
			} else {
				ex.addMessage(c, "Assistant", exAssistant, i)
			}
		default:
			ex.addMessage(c, "", exUser, i)
		}
	}
}

// isDirective reports whether m is the summarization directive, which is
// an instruction to the summarizer and never part of what is summarized.
func isDirective(m *ModelMessage) bool {
	return m.Role == RoleUser && strings.TrimSpace(m.Content) == DefaultDirective
}

func (ex *extractor) newSource(label string, kind uint8, msg int) int32 {
	speaker := kind
	if kind == exPrior {
		switch label {
		case "Assistant":
			speaker = exAssistant
		case "Tool":
			speaker = exTool
		case "Tool call":
			speaker = exToolCall
		case "System":
			speaker = exSystem
		default:
			speaker = exUser
		}
	}
	ex.srcs = append(ex.srcs, exSource{label: label, kind: kind, speaker: speaker, msg: msg})
	return int32(len(ex.srcs) - 1)
}

// addMessage cuts one message into sentences, all of one source.
func (ex *extractor) addMessage(c, label string, kind uint8, msg int) {
	src := int32(-1)
	forEachLine(c, func(line string) {
		forEachSentence(line, func(s string) {
			if src < 0 {
				src = ex.newSource(label, kind, msg)
			}
			ex.addSentence(s, src)
		})
	})
}

// addToolCalls reads "[Tool call]: name(args)" lines; each call is one
// sentence of a "Tool call" source (arguments are JSON, not prose, so
// they are not cut at ". ").
func (ex *extractor) addToolCalls(c string, msg int) {
	src := int32(-1)
	forEachLine(c, func(line string) {
		line = strings.TrimPrefix(line, ToolCallPrefix)
		line = strings.TrimSpace(line)
		if !hasAlnum(line) {
			return
		}
		if src < 0 {
			src = ex.newSource("Tool call", exToolCall, msg)
		}
		ex.addSentence(line, src)
	})
}

// exLabels are the attributions ExtractiveSummary writes; a previous
// summary line starting with one keeps it.
var exLabels = [...]string{"User", "Assistant", "Tool call", "Tool", "System"}

// addSummary reads a previous summary or a summary batch: every line is a
// source of its own, labelled when it starts with one of exLabels. The
// structural lines of a clip-archive (header, batch headers, section
// titles, the omission marker) and archived metadata lines are skipped.
func (ex *extractor) addSummary(c string, msg int) {
	forEachLine(c, func(line string) {
		if strings.HasPrefix(line, ClipArchivePrefix) || strings.HasPrefix(line, "[Batch ") ||
			strings.HasPrefix(line, "## ") || strings.HasPrefix(line, "[... ") ||
			strings.HasPrefix(line, "[depth:") || strings.HasPrefix(line, `{"conversation_id":`) {
			return
		}
		label := ""
		for _, l := range exLabels {
			if len(line) > len(l)+2 && strings.HasPrefix(line, l) && line[len(l)] == ':' && line[len(l)+1] == ' ' {
				label = l
				line = strings.TrimSpace(line[len(l)+2:])
				break
			}
		}
		if label == "Tool call" { // JSON arguments: not prose, one sentence
			if hasAlnum(line) {
				ex.addSentence(line, ex.newSource(label, exPrior, msg))
			}
			return
		}
		src := int32(-1)
		forEachSentence(line, func(s string) {
			if src < 0 {
				src = ex.newSource(label, exPrior, msg)
			}
			ex.addSentence(s, src)
		})
	})
}

func (ex *extractor) addSentence(s string, src int32) {
	n := collapsedRunes(s)
	if ex.srcs[src].kind == exPrior {
		ex.priorRunes += n
	} else {
		ex.newRunes += n
	}
	ex.sents = append(ex.sents, exSent{text: s, src: src, runes: int32(min(n, 1<<30))})
}

// forEachLine calls f with every trimmed, non-empty line of s, with a
// leading list marker ("- ", "* ", "• ", "> ") removed.
func forEachLine(s string, f func(string)) {
	for len(s) > 0 {
		var line string
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			line, s = s[:i], s[i+1:]
		} else {
			line, s = s, ""
		}
		line = strings.TrimSpace(line)
		for {
			if len(line) >= 2 && (line[0] == '-' || line[0] == '*' || line[0] == '>') && line[1] == ' ' {
				line = strings.TrimSpace(line[2:])
			} else if strings.HasPrefix(line, "• ") {
				line = strings.TrimSpace(line[len("• "):])
			} else {
				break
			}
		}
		if line != "" {
			f(line)
		}
	}
}

// forEachSentence calls f with every sentence of one line that holds a
// letter or a digit. " | " always separates (render writes it between
// lines that have no full stop). A sentence ends at '.', '!' or '?' (a run of them,
// with closing quotes and brackets) followed by a space, unless the word
// before is a common abbreviation or a single letter ("e.g.", "Dr.",
// "J. Smith"), and right after a CJK full stop, exclamation or question
// mark. "v1.2.3", "main.go" and "3.5" never end a sentence: no space
// follows their dots.
func forEachSentence(line string, f func(string)) {
	start := 0
	emit := func(end int) {
		s := strings.TrimSpace(line[start:end])
		if hasAlnum(s) {
			f(s)
		}
	}
	for i := 0; i < len(line); {
		c := line[i]
		if c == '|' && i > 0 && line[i-1] == ' ' && i+1 < len(line) && line[i+1] == ' ' {
			// " | " separates lines that a previous fold put on one line.
			emit(i)
			start = i + 1
			i++
			continue
		}
		if c == '.' || c == '!' || c == '?' {
			j := i + 1
			for j < len(line) && (line[j] == '.' || line[j] == '!' || line[j] == '?' || line[j] == '"' || line[j] == '\'' || line[j] == ')' || line[j] == ']') {
				j++
			}
			if j < len(line) && (line[j] == ' ' || line[j] == '\t') && !(c == '.' && isAbbrevBefore(line[start:i])) {
				emit(j)
				start = j
			}
			i = j
			continue
		}
		if c >= utf8.RuneSelf {
			r, w := utf8.DecodeRuneInString(line[i:])
			if r == '。' || r == '！' || r == '？' {
				emit(i + w)
				start = i + w
			}
			i += w
			continue
		}
		i++
	}
	if start < len(line) {
		emit(len(line))
	}
}

// isAbbrevBefore reports whether the text s, which a '.' follows, ends
// with a word the dot does not end a sentence after.
func isAbbrevBefore(s string) bool {
	i := len(s)
	for i > 0 && s[i-1] != ' ' && s[i-1] != '(' {
		i--
	}
	w := s[i:]
	if len(w) == 1 && isASCIILetter(w[0]) {
		return true // initials: "J. Smith"
	}
	switch strings.ToLower(w) {
	case "e.g", "i.e", "etc", "vs", "mr", "mrs", "ms", "dr", "st", "no", "approx", "cf", "inc", "ltd", "jr", "sr", "fig":
		return true
	}
	return false
}

func hasAlnum(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if isASCIILetter(c) || isDigit(c) {
				return true
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
		i += w
	}
	return false
}

// collapsedRunes counts the code points of s with every run of
// whitespace counted as one space, which is how the sentence is written.
func collapsedRunes(s string) int {
	n := 0
	space := false
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			if isSpace(c) {
				if !space {
					n++
				}
				space = true
				continue
			}
		} else {
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
		}
		space = false
		n++
	}
	return n
}

func isSpace(c byte) bool       { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' }
func isDigit(c byte) bool       { return c >= '0' && c <= '9' }
func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isUpper(c byte) bool       { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool       { return c >= 'a' && c <= 'z' }

// exFeatures are what one scan of a sentence finds.
type exFeatures struct {
	decision, errorish, constraint, rationale, action, question bool
	code                                                        bool // looks like source code
	idents                                                      int  // identifier points
	weak                                                        int  // acronyms, proper nouns
	words                                                       int
	nonFiller                                                   int // words that are not filler
}

// Weights of the sentence features.
const (
	wDecision = 4.0
	// Base weights by speaker: what the user says (constraints,
	// preferences, decisions) matters most; tool output matters through
	// its errors and identifiers only, and the assistant usually says
	// what it meant.
	wUserBase      = 2.0
	wAssistantBase = 1.2
	wToolBase      = -0.5
	wToolCallBase  = -0.6
	wError         = 3.0
	wConstraint    = 3.0
	wQuestion      = 1.5
	wRationale     = 1.0
	wAction        = 1.0
	wIdent         = 0.8 // per identifier point (strong ones have 2)
	wIdentMax      = 5.0
	wWeak          = 0.4
	wWeakMax       = 1.2
	wRecency       = 1.0
	wRankStep      = 0.6 // penalty per earlier-chosen sentence of the same message
	wRankMax       = 3.0
	wRepeat        = 0.5 // bonus per repetition of a sentence, …
	wRepeatMax     = 1.5 // … capped
	wRestate       = 3.0 // penalty for restating the previous message
	wCode          = 2.0 // penalty for a line of source code
	wNear          = 1.5 // penalty per earlier near-duplicate, …
	wNearMax       = 4.5 // … capped
)

// score computes every sentence's features, hash and score, marks
// duplicates and filler, and applies the per-message rank penalty.
func (ex *extractor) score() {
	seen := make(map[uint64]int32, len(ex.sents))
	near := make(map[uint64]int32, len(ex.sents))
	for i := range ex.sents {
		s := &ex.sents[i]
		var hl uint64
		s.features, s.hash, hl = ex.scan(s.text)
		f := &s.features
		src := &ex.srcs[s.src]
		if j, ok := seen[s.hash]; ok {
			// Said again: keep the first, which gains a bounded bonus.
			s.dup = true
			if d := &ex.sents[j]; float64(d.repeats)*wRepeat < wRepeatMax {
				d.repeats++
				d.score += wRepeat
			}
			continue
		}
		seen[s.hash] = int32(i)
		// Near-duplicates (log lines, retries) add little: each one more
		// of the same shape weighs less.
		nearCount := near[hl]
		near[hl] = nearCount + 1
		s.filler = f.nonFiller == 0 && !f.decision && !f.errorish && !f.constraint &&
			!f.rationale && !f.action && f.idents == 0 && src.kind != exPrior
		var v float64
		switch src.speaker {
		case exUser, exSystem:
			v = wUserBase
		case exAssistant:
			v = wAssistantBase
		case exTool:
			v = wToolBase
		case exToolCall:
			v = wToolCallBase
		}
		if src.kind == exPrior {
			v += extractivePriorWeight
		}
		if f.code {
			// Source code is dense with names, "err" and quotes but is
			// rarely what a summary needs: what the code does is said in
			// prose around it.
			f.decision, f.constraint, f.errorish, f.rationale, f.action, f.question = false, false, false, false, false, false
			f.idents = min(f.idents, 2)
			v -= wCode
		}
		if src.speaker == exToolCall {
			// Arguments are data, not speech: "decision" in a ticket body
			// is not a decision. Only identifiers and errors count.
			f.decision, f.constraint, f.rationale, f.action, f.question = false, false, false, false, false
		}
		s.informative = f.decision || f.errorish || f.constraint || f.question || f.rationale ||
			f.action || f.idents > 0
		if restated := ex.restates(s.src); restated {
			// The assistant echoing what the user just said (or the
			// reverse) adds nothing the first statement does not have.
			v -= wRestate
			s.informative = false
		}
		if f.decision {
			v += wDecision
		}
		if f.errorish {
			v += wError
		}
		if f.constraint {
			v += wConstraint
		}
		if f.question {
			// A substantial question asked by the user is an open issue; a
			// short one ("Still there?") or the assistant's own clarifying
			// question is worth less.
			q := wQuestion
			if f.nonFiller < 3 {
				q /= 2
			}
			if src.speaker == exAssistant {
				q /= 2
			}
			v += q
		}
		if f.rationale {
			v += wRationale
		}
		if f.action {
			v += wAction
		}
		v += min(float64(f.idents)*wIdent, wIdentMax)
		v += min(float64(f.weak)*wWeak, wWeakMax)
		if f.words < 3 && f.idents == 0 {
			v -= 1.5
		}
		cut := min(int(s.runes), extractiveSentenceMax)
		s.cost = int32(cut + 3) // and its separator, " " or " | "
		// Long sentences cost more of the budget: a mild penalty.
		v -= float64(cut) / 400
		v -= min(float64(nearCount)*wNear, wNearMax)
		s.score = v
	}
	ex.recency()
	ex.rankPenalty()
}

// restates reports whether the sentence just scanned (its content words
// are in ex.words) is speech (user, assistant, system, or such lines of a
// previous summary) that mostly repeats the source before src (speech or a
// tool result, "Policy: X" then "X"): at least 4 content words, 70% of
// them found there. Only the first
// extractiveRestateWords content words of a source are remembered, which
// bounds the work per sentence.
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
	if sp == exToolCall {
		ex.curWords = ex.curWords[:0]
		ex.prevWords = ex.prevWords[:0]
		return false
	}
	speech := sp == exUser || sp == exAssistant || sp == exSystem
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
// messages: later context matters more (the directive says "PRIORITIZE:
// Recent context over older context").
func (ex *extractor) recency() {
	if len(ex.srcs) == 0 {
		return
	}
	lastMsg := ex.srcs[len(ex.srcs)-1].msg
	firstNew := -1
	for i := range ex.srcs {
		if ex.srcs[i].kind != exPrior {
			firstNew = ex.srcs[i].msg
			break
		}
	}
	for i := range ex.sents {
		s := &ex.sents[i]
		src := &ex.srcs[s.src]
		if src.kind == exPrior || s.dup {
			continue
		}
		if lastMsg > firstNew {
			s.score += wRecency * float64(src.msg-firstNew) / float64(lastMsg-firstNew)
		}
	}
}

// rankPenalty lowers the score of every sentence by how many better
// sentences its own message has, so the summary covers many messages
// instead of one long one. Previous-summary lines are exempt: each is a
// source of its own already.
func (ex *extractor) rankPenalty() {
	var idx []int32
	for i := 0; i < len(ex.sents); {
		j := i
		for j < len(ex.sents) && ex.sents[j].src == ex.sents[i].src {
			j++
		}
		if j-i > 1 && ex.srcs[ex.sents[i].src].kind != exPrior {
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

// selectSentences marks the sentences to keep within budget code points.
// Pass 1 reserves up to extractiveNewShare of the budget for the best
// informative new sentences (those with any signal: a keyword, a question,
// an identifier), so a previous summary cannot crowd out everything new;
// pass 2 ranks everything left together — previous-summary sentences with
// their strong weight — and fills the budget. Label overhead is charged
// when a source's first sentence is taken, so the total charged is never
// less than what render writes.
func (ex *extractor) selectSentences(budget int) {
	order := make([]int32, 0, len(ex.sents))
	newTotal := 0
	for i := range ex.sents {
		s := &ex.sents[i]
		if s.dup || s.filler {
			continue
		}
		order = append(order, int32(i))
		if s.informative && ex.srcs[s.src].kind != exPrior {
			newTotal += int(s.cost) + runeCount(ex.srcs[s.src].label) + 3
		}
	}
	slices.SortFunc(order, func(a, b int32) int { return ex.cmp(a, b) })
	opened := make([]bool, len(ex.srcs))
	used := 0
	take := func(k int32, limit int) {
		s := &ex.sents[k]
		c := int(s.cost)
		if !opened[s.src] {
			c += runeCount(ex.srcs[s.src].label) + 3 // ": " and "\n"
		}
		if used+c <= limit {
			used += c
			s.chosen = true
			opened[s.src] = true
		}
	}
	reserve := min(int(float64(budget)*extractiveNewShare), newTotal)
	for _, k := range order {
		if s := &ex.sents[k]; s.informative && ex.srcs[s.src].kind != exPrior {
			take(k, reserve)
		}
	}
	for _, k := range order {
		if !ex.sents[k].chosen {
			take(k, budget)
		}
	}
}

// render writes the chosen sentences in their original order, one line per
// source. When nothing fits (or only filler was said) it falls back to
// the best sentence cut to the budget, so the result is never empty while
// the input has text.
func (ex *extractor) render(budget int) string {
	var b strings.Builder
	b.Grow(budget + budget/2)
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
			if l := ex.srcs[s.src].label; l != "" {
				b.WriteString(l)
				b.WriteString(": ")
			}
		} else if endsSentence(ex.sents[prev].text) {
			b.WriteByte(' ')
		} else {
			// Lines of a tool output or a list have no full stop: keep
			// them apart, so a later fold can cut them again.
			b.WriteString(" | ")
		}
		writeCollapsed(&b, s.text, extractiveSentenceMax)
		prev = i
	}
	if b.Len() > 0 {
		return b.String()
	}
	// Fallback: the best sentence, filler or not, labelled if room allows.
	best := int32(-1)
	for i := range ex.sents {
		if ex.sents[i].dup {
			continue
		}
		if best < 0 || ex.cmp(int32(i), best) < 0 {
			best = int32(i)
		}
	}
	if best < 0 {
		return ""
	}
	s := &ex.sents[best]
	room := min(budget, extractiveSentenceMax)
	if l := ex.srcs[s.src].label; l != "" && runeCount(l)+2+min(int(s.runes), 12) <= room {
		b.WriteString(l)
		b.WriteString(": ")
		room -= runeCount(l) + 2
	}
	writeCollapsed(&b, s.text, room)
	return b.String()
}

// endsSentence reports whether s ends like a sentence, so the next one can
// follow after a plain space. A sentence cut by writeCollapsed ends with
// "…", which counts.
func endsSentence(s string) bool {
	if len(s) > extractiveSentenceMax { // may be cut: ends with "…"
		return true
	}
	for len(s) > 0 {
		r, w := utf8.DecodeLastRuneInString(s)
		switch r {
		case '"', '\'', ')', ']', '”', '’':
			s = s[:len(s)-w]
			continue
		case '.', '!', '?', '…', '。', '！', '？', ':', ';':
			return true
		}
		return false
	}
	return false
}

// writeCollapsed writes s with whitespace runs collapsed to one space,
// cut to at most max code points: a longer sentence is cut at the last
// space in its final fifth when there is one, and ends with "…".
func writeCollapsed(b *strings.Builder, s string, max int) {
	if max <= 0 {
		return
	}
	n := collapsedRunes(s)
	limit := n
	if n > max {
		limit = max - 1 // room for "…"
	}
	// Find the byte end of the first limit collapsed code points, and the
	// last space before it.
	end, lastSpace, count := 0, -1, 0
	space := false
	for end < len(s) && count < limit {
		c := s[end]
		w := 1
		if c >= utf8.RuneSelf {
			_, w = utf8.DecodeRuneInString(s[end:])
		} else if isSpace(c) {
			if !space {
				lastSpace = end
				count++
			}
			space = true
			end++
			continue
		}
		space = false
		count++
		end += w
	}
	if n > max && lastSpace > 0 && collapsedRunes(s[:lastSpace]) >= limit*4/5 {
		end = lastSpace
	}
	space = false
	for i := 0; i < end; {
		c := s[i]
		if c < utf8.RuneSelf && isSpace(c) {
			if !space {
				b.WriteByte(' ')
			}
			space = true
			i++
			continue
		}
		space = false
		j := i + 1
		for j < end && s[j] >= utf8.RuneSelf && !utf8.RuneStart(s[j]) {
			j++
		}
		b.WriteString(s[i:j])
		i = j
	}
	if n > max {
		b.WriteString("…")
	}
}

// scan reads one sentence once: words (ASCII letter runs, lower-cased into
// a fixed buffer) are classified by exWordClass with one-word look-behind
// for phrases ("we will", "should not", "sounds good", "root cause");
// whitespace-separated tokens are checked for identifiers. The hash h, for
// duplicate detection, covers the lower-cased letters and digits only; hl
// covers the ASCII letters only, to spot near-duplicates that differ in
// numbers ("attempt 1", "attempt 2").
func (ex *extractor) scan(s string) (f exFeatures, h, hl uint64) {
	const prime = 1099511628211
	ex.words = ex.words[:0]
	h = 14695981039346656037
	hl = h
	var prev uint32 // class of the previous word
	tokStart, wordStart := -1, -1
	firstTok := true
	quotes, codePunct := 0, 0
	endWord := func(i int) {
		if wordStart >= 0 {
			prev = ex.classify(s[wordStart:i], prev, &f)
			wordStart = -1
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, w := utf8.DecodeRuneInString(s[i:])
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				lr := uint64(unicode.ToLower(r))
				h = (h ^ lr) * prime
				hl = (hl ^ lr) * prime
			} else if r == '？' {
				f.question = true
			}
			endWord(i)
			if tokStart < 0 {
				tokStart = i
			}
			i += w
			continue
		}
		k := exByteClass[c]
		if k&bcLetter != 0 { // the common case
			lc := uint64(c | 0x20)
			h = (h ^ lc) * prime
			hl = (hl ^ lc) * prime
			if wordStart < 0 {
				wordStart = i
			}
			if tokStart < 0 {
				tokStart = i
			}
			i++
			continue
		}
		if k&bcDigit != 0 {
			h = (h ^ uint64(c)) * prime
		}
		if c == '\'' && wordStart >= 0 && i+1 < len(s) && isASCIILetter(s[i+1]) {
			i++ // an apostrophe inside a word: "let's", "can't"
			continue
		}
		endWord(i)
		if k&bcSpace != 0 {
			if tokStart >= 0 {
				checkToken(s[tokStart:i], firstTok, &f)
				firstTok = false
				tokStart = -1
			}
			i++
			continue
		}
		switch c {
		case '?':
			f.question = true
		case '"', '`':
			quotes++
		case '{', '}', ';', '=', '(', ')', '&', '*', '[', ']', '<', '>':
			codePunct++
		}
		if tokStart < 0 {
			tokStart = i
		}
		i++
	}
	endWord(len(s))
	if tokStart >= 0 {
		checkToken(s[tokStart:], firstTok, &f)
	}
	if quotes >= 2 {
		f.idents++
	}
	f.code = codePunct >= 3 && codePunct*25 >= len(s) || strings.Contains(s, ":=")
	return f, h, hl
}

// Byte classes of ASCII, for scan's inner loop.
const (
	bcLetter uint8 = 1 << iota
	bcDigit
	bcSpace
)

var exByteClass = func() (t [256]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = bcLetter
		t[c-'a'+'A'] = bcLetter
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = bcDigit
	}
	for _, c := range " \t\r\v\f\n" {
		t[c] = bcSpace
	}
	return t
}()

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// Word classes (bits).
const (
	cwFiller uint32 = 1 << iota
	cwDecision
	cwError
	cwConstraint
	cwRationale
	cwAction
	cwWe       // "we"
	cwWill     // "will"
	cwShould   // "should", "do", "does", "must"
	cwNot      // "not"
	cwLets     // "let's", "lets"
	cwGo       // "go", "going"
	cwWith     // "with"
	cwSounds   // "sounds", "looks"
	cwGood     // "good", "great", "fine"
	cwRoot     // "root"
	cwCause    // "cause"
	cwAt       // "at", "no"
	cwMostLeas // "most", "least", "later"
)

// classify lower-cases one ASCII word into the extractor's buffer, updates
// f and returns the word's class bits for the look-behind of the next.
func (ex *extractor) classify(w string, prev uint32, f *exFeatures) uint32 {
	f.words++
	if len(w) > len(ex.lowerBuf) {
		f.nonFiller++
		return 0
	}
	// Most words are lower case already and are looked up as they are;
	// the others are lower-cased into a fixed buffer (the conversion does
	// not escape, so it does not allocate).
	var cls uint32
	upper := false
	for i := 0; i < len(w); i++ {
		if isUpper(w[i]) {
			upper = true
			break
		}
	}
	if upper {
		lb := ex.lowerBuf[:len(w)]
		for i := 0; i < len(w); i++ {
			lb[i] = w[i] | 0x20*b2u(isUpper(w[i]))
		}
		cls = exWordClass(string(lb))
	} else {
		cls = exWordClass(w)
	}
	if cls&cwWill != 0 && prev&cwWe != 0 {
		cls |= cwDecision
	}
	if cls&cwNot != 0 && prev&cwShould != 0 {
		cls |= cwConstraint
	}
	if cls&cwWith != 0 && prev&cwGo != 0 {
		cls |= cwDecision
	}
	if cls&cwGo != 0 && prev&cwLets != 0 {
		cls |= cwDecision
	}
	if cls&cwGood != 0 && prev&cwSounds != 0 {
		cls |= cwFiller
	}
	if cls&cwCause != 0 && prev&cwRoot != 0 {
		cls |= cwError | cwRationale
	}
	if cls&cwMostLeas != 0 && prev&cwAt != 0 {
		cls |= cwConstraint
	}
	if cls&cwDecision != 0 {
		f.decision = true
	}
	if cls&cwError != 0 {
		f.errorish = true
	}
	if cls&cwConstraint != 0 {
		f.constraint = true
	}
	if cls&cwRationale != 0 {
		f.rationale = true
	}
	if cls&cwAction != 0 {
		f.action = true
	}
	if cls&cwFiller == 0 {
		f.nonFiller++
		if len(w) >= 3 && cls == 0 {
			h := uint64(14695981039346656037)
			for i := 0; i < len(w); i++ {
				h = (h ^ uint64(w[i]|0x20*b2u(isUpper(w[i])))) * 1099511628211
			}
			ex.words = append(ex.words, h)
		}
	}
	return cls
}

// exWordClass is the small lexicon of the extractive summarizer. Phrase
// parts ("we", "will", "should", "not", …) are filler on their own so
// that "ok, we will see" is not mistaken for content, but they form a
// decision or constraint together (see classify).
func exWordClass(w string) uint32 {
	switch w {
	// decisions
	case "decided", "decide", "decides", "decision", "decisions", "agreed", "agree", "agreement",
		"chose", "chosen", "settled", "approved", "approve", "finalized", "finalised", "confirmed", "we'll":
		return cwDecision
	// errors, failures, bugs, fixes
	case "error", "errors", "fail", "fails", "failed", "failing", "failure", "failures",
		"bug", "bugs", "fix", "fixed", "fixes", "fixing", "hotfix", "crash", "crashed", "crashes",
		"crashing", "exception", "exceptions", "panic", "panicked", "traceback", "timeout", "timeouts",
		"refused", "broken", "regression", "outage", "incident", "denied", "invalid", "leak", "leaks",
		"deadlock", "corrupted", "corruption", "workaround", "patch", "patched", "rollback", "fatal",
		"unavailable", "rejected", "declined", "overflow", "mismatch", "missing", "wrong":
		return cwError
	// constraints, requirements, preferences, policies
	case "must", "mustn't":
		return cwConstraint | cwShould
	case "never", "always", "required", "require", "requires", "requirement", "requirements",
		"deadline", "deadlines", "budget", "budgets", "constraint", "constraints", "mandatory",
		"cannot", "can't", "shouldn't", "don't", "limit", "limits", "maximum", "minimum", "prefer",
		"prefers", "preferred", "policy", "policies", "only", "forbidden", "compliance", "sla",
		"cap", "capped", "eligible", "ineligible", "due":
		return cwConstraint
	// rationale
	case "because", "reason", "reasons", "therefore", "rationale", "caused", "causes", "why":
		return cwRationale
	case "cause":
		return cwRationale | cwCause
	// pending work
	case "todo", "pending", "blocked", "blocker", "blockers", "remaining", "unresolved", "follow-up",
		"followup", "escalate", "escalated", "escalation", "planned", "milestone":
		return cwAction
	// phrase parts
	case "we":
		return cwFiller | cwWe
	case "will":
		return cwFiller | cwWill
	case "should", "do", "does":
		return cwFiller | cwShould
	case "not":
		return cwFiller | cwNot
	case "let's", "lets":
		return cwFiller | cwLets
	case "go", "going":
		return cwFiller | cwGo
	case "with":
		return cwFiller | cwWith
	case "sounds", "looks":
		return cwFiller | cwSounds
	case "good", "great", "fine":
		return cwFiller | cwGood
	case "root":
		return cwRoot
	case "at", "no":
		return cwFiller | cwAt
	case "most", "least", "later":
		return cwFiller | cwMostLeas
	// filler: acknowledgements, greetings, small talk, glue words
	case "thanks", "thank", "thx", "ty", "ok", "okay", "k", "cool", "nice", "awesome", "perfect",
		"sure", "yes", "yeah", "yep", "yup", "nope", "hi", "hello", "hey", "bye", "goodbye",
		"cheers", "welcome", "np", "lol", "got", "it", "alright", "right", "appreciate",
		"appreciated", "much", "so", "you", "that", "this", "sense", "makes", "the", "a", "an",
		"morning", "afternoon", "evening", "there", "again", "for", "help", "helping", "helpful",
		"wonderful", "fantastic", "excellent", "noted", "understood", "indeed", "absolutely",
		"definitely", "please", "hmm", "oh", "ah", "sorry", "let", "me", "check", "one", "moment",
		"sec", "second", "all", "well", "done", "is", "just", "be", "i", "i'm", "and", "have",
		"day", "your", "lot", "glad", "happy", "to", "hear", "really", "very", "too", "works",
		"it's", "that's", "here", "on", "of", "as", "in", "can", "now", "see",
		"look", "into", "sir", "ma'am", "bro", "folks", "everyone", "team", "guys", "same",
		"wow", "hah", "haha", "anyway", "quick", "what", "how", "are",
		"doing", "yours", "love", "like", "amazing", "it'll", "take", "care", "talk", "soon",
		"you're", "we're", "i'll", "i've", "you'll", "there's", "my", "our", "pleasure",
		"anytime", "gotcha", "roger", "ack", "hiya", "greetings":
		return cwFiller
	}
	return 0
}

// checkToken counts the identifiers one whitespace-separated token holds:
// URLs, e-mail addresses, paths, file names, versions and other numbers,
// error codes and ticket ids (anything with a digit), CamelCase and
// snake_case names. All-caps words and capitalised words not at the start
// of the sentence (acronyms, names) count as weak identifiers.
func checkToken(t string, first bool, f *exFeatures) {
	// Trim surrounding punctuation.
	for len(t) > 0 && strings.IndexByte("\"'`([{<*_,;:", t[0]) >= 0 {
		t = t[1:]
	}
	for len(t) > 0 && strings.IndexByte("\"'`)]}>*_,;:.!?", t[len(t)-1]) >= 0 {
		t = t[:len(t)-1]
	}
	if len(t) < 2 {
		return
	}
	var digits, letters, uppers, lowers int
	var lowerUpper, snake, slash, dotExt, at, url bool
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case isDigit(c):
			digits++
		case isUpper(c):
			uppers++
			letters++
			if i > 0 && isLower(t[i-1]) {
				lowerUpper = true
			}
		case isLower(c):
			lowers++
			letters++
		case c == '_':
			if i > 0 && i+1 < len(t) && (isASCIILetter(t[i-1]) || isDigit(t[i-1])) && isASCIILetter(t[i+1]) {
				snake = true
			}
		case c == '/':
			slash = true
		case c == '.':
			if i > 0 && i+1 < len(t) && (isASCIILetter(t[i-1]) || isDigit(t[i-1])) && isASCIILetter(t[i+1]) && i >= 2 {
				dotExt = true
			}
		case c == '@':
			if i > 0 && i+1 < len(t) {
				at = true
			}
		case c == ':':
			if strings.HasPrefix(t[i:], "://") {
				url = true
			}
		}
	}
	// Strong identifiers (2 points) are the ones a reader would search
	// for later; medium ones (1 point) are names and numbers.
	switch {
	case url, at:
		f.idents += 2
	case digits > 0 && uppers > 0 && len(t) >= 4 && (digits >= 3 || strings.IndexByte(t, '-') > 0 || t[0] == '#'):
		f.idents += 2 // codes and ids: E1234, ABC-123, ACC-778812, #A-99812
	case slash && letters > 0 && (t[0] == '/' || t[0] == '.' || t[0] == '~' || strings.Count(t, "/") >= 2 || dotExt):
		f.idents += 2 // paths
	case snake, lowerUpper, dotExt:
		f.idents++
	case digits > 0 && (len(t) >= 2 || letters > 0):
		f.idents++
	case letters >= 2 && uppers == letters && letters >= 3:
		f.weak++
	case !first && uppers == 1 && isUpper(t[0]) && lowers > 0:
		f.weak++
	}
}
