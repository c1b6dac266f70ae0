package core

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The extractive summarizer is clipfold's offline summarizer: it picks the
// most informative sentences of what it is given, with no model at all. It
// is what compress uses with `summarizer: "extractive"` and with
// `fallback: "extractive"` (ExtractiveSummarizeMessages,
// ExtractiveResummarize), and what the extractiveSummary export answers for
// hosts that need an offline LLM (ExtractiveSummary). It must work
// anywhere the plug-in runs: hand-written scanning (no regexp, no
// reflection, no goroutines), deterministic (no clock, no randomness, no
// map iteration decides anything), O(total text).
//
// What it does, for all three entry points:
//   - Each summary summarizes its own input. A previous summary (the
//     fold-in context of a summarization request, or the prior
//     clip-archive) only guides the choice: a sentence it already holds is
//     not picked again, one that mostly repeats its words is marked down,
//     and none of its lines is re-emitted. (Re-emitting it made every
//     batch carry the one before it: ten archives held 1,138 lines of
//     which 734 were unique.)
//   - Sentences are cut from every message (lines first, then ". ", "! ",
//     "? " and CJK stops) and scored by what they carry, whoever said it:
//     content words, names, numbers and identifiers, dates and times,
//     decisions, preferences, plans, constraints, errors and fixes. User
//     and assistant weigh the same (a fixed user bonus made summaries 3:1
//     user); tool output and tool-call arguments weigh less (a share of
//     what they show, wToolGain).
//   - Words, names and identifiers count by how rare they are in what is
//     being summarized (1/√n for one found in n sources): the paths,
//     acronyms and words a log repeats on every line say less than a fact
//     said once. Length costs: the summary's budget is in characters.
//   - A tool result is said with its call, "Tool name(arguments): …", and
//     JSON output as facts, "key: value; …" (extractive_tool.go); a call
//     whose result is there is not said again.
//   - Tool output and calls that repeat one shape (the same text but for
//     numbers and times: log lines, health checks, retries) collapse into
//     their first line, written "… (×12, to 2025-09-19)" and marked down
//     as routine; a re-summarization adds the counts up. Output collapses
//     only within one result or with output of the same call, and its ids
//     are part of its shape. Speech is never collapsed: "$4,000" then
//     "$5,000" is an update, not a repeat.
//   - Greetings, thanks, acknowledgements and content-free questions ("How
//     have you been?", "What about you?") are dropped outright. Lines of
//     source code, restatements of the previous message (or, when prose
//     says what a tool result shows, the raw result), near-duplicates
//     that differ only in numbers, and every further sentence of the same
//     message are marked down, so one long message cannot fill the summary.
//   - The chosen sentences come out one line per message (per tool
//     result), in chronological order, labelled ("User: …", "Assistant:
//     …", "Tool get_order(4471): …", "Tool call: …"; "Tool: …" for a
//     result whose call is not known) and, when the message has a
//     created_at, dated with its UTC day: "[2023-05-08] User: …". A
//     re-summarization keeps each line's date and label, keeps a sentence
//     said in several batches once, and covers its whole span: the best
//     sentence of every day is chosen first, so a busy day cannot push a
//     quiet one out of the fold.
//
// Length: the result's EstimateTokens is at most the max_tokens given
// (1024 when ≤ 0). New messages are cut to about a third of their text
// (an extractive summary that keeps everything would not compact
// anything) and at most extractiveChunkMax code points; batches being
// re-summarized only to max_tokens and extractiveFoldMax, without their
// duplicates and filler. The result is
// non-empty whenever the input has any text: an empty summary is a failure
// to the pipeline. Text is counted and cut by code points; invalid UTF-8
// is replaced by U+FFFD, so the output is always valid UTF-8.

// ExtractiveSummary answers a summarization request
// (BuildSummarizationRequest or BuildResummarizationRequest) like an LLM
// would, with the extractive summarizer. A request carries no dates, so
// its lines are not dated. The system prompt and the directive are not
// summarized; the "Previous summary of conversation" message only guides
// the choice; "Summary batch" messages are re-summarized line by line.
func ExtractiveSummary(req *ModelRequest) string {
	if req == nil {
		return ""
	}
	var ex extractor
	ex.collectRequest(req.Messages)
	return ex.summarize(req.MaxTokens)
}

// ExtractiveSummarizeMessages summarizes msgs (one chunk of a compaction)
// with the extractive summarizer: each kept line is dated from its
// message's created_at. previousSummary (the summary of the chunk before,
// or the prior clip-archive) guides the choice and is never re-emitted.
// Each message's text is middle-truncated to maxMessageChars code points
// first (0 = no limit), as in a summarization request.
func ExtractiveSummarizeMessages(previousSummary string, msgs []Message, maxTokens, maxMessageChars int) string {
	var ex extractor
	if previousSummary != "" {
		ex.addGuide(validText(previousSummary))
	}
	order := Identity(len(msgs))
	slices.SortStableFunc(order, func(a, b int) int { return msgs[a].CreatedAt.Compare(msgs[b].CreatedAt) })
	tools := newToolContext(msgs)
	for k, i := range order {
		ex.addCoreMessage(msgs, i, k, maxMessageChars, tools)
	}
	return ex.summarize(maxTokens)
}

// ExtractiveResummarize folds several batch summaries into one: their
// lines, with the dates and labels they carry, are scored and chosen like
// sentences of messages; a sentence several batches hold is kept once.
// Lines come out in date order (stable; an undated line sorts with the
// dated line before it in its batch), since batches cut in importance
// order overlap in time.
func ExtractiveResummarize(contents []string, maxTokens int) string {
	var ex extractor
	ex.addBatches(contents)
	return ex.summarize(maxTokens)
}

// addBatches reads the summary batches being re-summarized, their lines
// in date order (stable; an undated line sorts with the dated line before
// it in its batch).
func (ex *extractor) addBatches(contents []string) {
	type dline struct {
		day  string
		text string
	}
	var lines []dline
	for _, c := range contents {
		day := ""
		forEachLine(validText(c), func(line string) {
			if isDatePrefix(line) {
				day = line[1:11]
			}
			lines = append(lines, dline{day, line})
		})
	}
	slices.SortStableFunc(lines, func(a, b dline) int { return strings.Compare(a.day, b.day) })
	for i := range lines {
		ex.addLines(lines[i].text, i)
	}
}

// Tuning of the extractive summarizer. They are constants, not config,
// because the extractive summary only has to be a good-enough stand-in
// for an LLM.
const (
	// extractiveRatioDiv: new messages are cut to about
	// 1/extractiveRatioDiv of their code points (before max_tokens applies).
	extractiveRatioDiv = 3
	// extractiveMinRunes: new text shorter than this many code points is
	// not cut by the ratio, only by max_tokens and the filler rule; longer
	// text keeps at least this much.
	extractiveMinRunes = 400
	// extractiveSentenceMax: the longest a single sentence may be, in code
	// points, before it is cut (a stack trace on one line, a JSON dump).
	extractiveSentenceMax = 320
	// extractiveRestateWords bounds the content words remembered per
	// source for restatement detection.
	extractiveRestateWords = 64
	// dateLen is the length of a line's date prefix, "[2023-05-08] ".
	dateLen = 13
	// extractiveChunkMax and extractiveFoldMax bound a summary of new
	// messages and a re-summarization, in code points, whatever max_tokens
	// allows: like an LLM, the summarizer writes less than its limit, so
	// that a clip-archive (a fold and up to three chunk summaries shown)
	// stays about 1,000 tokens at any window. The fold holds the oldest
	// context and most of what the archive answers: it gets the room
	// (2,400 instead of 2,880 lost 10 of 132 answers of make fidelity;
	// chunk summaries of 300 instead of 400 lost 3).
	extractiveChunkMax = 400
	extractiveFoldMax  = 2880
)

// Source kinds.
const (
	exNew  uint8 = iota // a message being summarized
	exLine              // a line of a summary batch being re-summarized
)

// Speakers, from the message role or a summary line's label.
const (
	spUser uint8 = iota
	spAssistant
	spTool
	spToolCall
	spSystem
	spNone // an unlabelled summary line
)

// exSource is one message, or one line of a summary batch: each becomes
// at most one output line.
type exSource struct {
	label   string // "User", …; "" for unlabelled summary lines
	date    string // "2023-05-08", or "" when undated
	kind    uint8
	speaker uint8
	msg     int    // position among the input's messages, for the recency bonus
	call    uint64 // callKey of the label: a tool result's call
}

// exSent is one candidate sentence.
type exSent struct {
	text     string // trimmed, valid UTF-8, not yet whitespace-collapsed
	src      int32
	runes    int32 // code points after whitespace collapsing
	cost     int32 // code points it takes in the output (cut, plus separator)
	score    float64
	filler   bool
	dup      bool
	chosen   bool
	repeats  uint8
	hash     uint64
	features exFeatures
	// count is how many lines of tool output this sentence stands for
	// (itself and the near-duplicates collapsed into it; 0 means 1), and
	// last the latest date among them ("" when undated): it is written
	// " (×count, to last)".
	count int32
	last  string
}

type extractor struct {
	srcs  []exSource
	sents []exSent
	// guideHash holds the sentence hashes of the previous summary, and
	// guideWords its content-word hashes: a sentence already said there is
	// not picked again, one mostly made of its words is marked down.
	guideHash  map[uint64]struct{}
	guideWords map[uint64]struct{}
	guides     []string // the guide texts, summarized when nothing else is given
	// skipped is the first structural line of a summary (addLines), said
	// when the input holds nothing else.
	skipped string
	// Code points of new-message and summary-line sentences, and the
	// label/date overhead of their sources.
	newRunes, lineRunes, overhead int
	// words holds the content-word hashes of the sentence scan just read;
	// prevWords and curWords those of the previous and the current source
	// (bounded), for restatement detection.
	words, prevWords, curWords []uint64
	toks                       []exTok // the identifier tokens of the sentence scan just read
	wordsSrc                   int32
	lowerBuf                   [32]byte
	// idShape: scan counts the ids of a sentence in its shape (tokens of
	// letters and digits that are not dates, times or numbers).
	idShape bool
}

// validText replaces invalid UTF-8 by U+FFFD.
func validText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// collectRequest reads a summarization request's messages.
func (ex *extractor) collectRequest(msgs []ModelMessage) {
	last := len(msgs) - 1
	for last >= 0 && isDirective(&msgs[last]) {
		last--
	}
	var batches []string // "Summary batch" contents, read after the loop
	shown := resultCalls(msgs[:last+1])
	// A source and at least one sentence per message: made once, where
	// growing them would copy them again and again (and, under TinyGo,
	// each new copy can start a collection over everything read so far).
	if n := last + 1; cap(ex.sents)-len(ex.sents) < n {
		ex.sents = append(make([]exSent, 0, len(ex.sents)+n), ex.sents...)
		ex.srcs = append(make([]exSource, 0, len(ex.srcs)+n), ex.srcs...)
	}
	for i := 0; i <= last; i++ {
		m := &msgs[i]
		if isDirective(m) {
			continue
		}
		c := validText(m.Content)
		switch m.Role {
		case RoleSystem:
			if rest, ok := strings.CutPrefix(c, PreviousSummaryPrefix); ok {
				ex.addGuide(rest)
			} else if rest, ok := strings.CutPrefix(c, SummaryBatchPrefix); ok {
				batches = append(batches, rest)
			} else if strings.HasPrefix(c, ClipArchivePrefix) {
				ex.addGuide(c)
			} else {
				ex.addMessage(c, "System", spSystem, "", i)
			}
		case RoleUser:
			ex.addRendered(c, "User", spUser, i, shown)
		case RoleTool:
			ex.addRendered(c, "Tool", spTool, i, shown)
		case RoleAssistant:
			ex.addRendered(c, "Assistant", spAssistant, i, shown)
		default:
			ex.addMessage(c, "", spUser, "", i)
		}
	}
	if len(batches) > 0 {
		ex.addBatches(batches)
	}
}

// isDirective reports whether m is the summarization directive, which is
// an instruction to the summarizer and never part of what is summarized.
func isDirective(m *ModelMessage) bool {
	return m.Role == RoleUser && strings.TrimSpace(m.Content) == DefaultDirective
}

// addCoreMessage reads msgs[i], at position pos of a compaction chunk in
// time order: its tool results (each with its call), its text, and the
// calls it makes whose results are not in the chunk.
func (ex *extractor) addCoreMessage(msgs []Message, i, pos, maxChars int, tools *toolContext) {
	m := &msgs[i]
	date := dayOf(m.CreatedAt)
	switch m.Role {
	case RoleSystem:
		c := validText(ClampText(m.Content, maxChars))
		if IsClipArchive(m) {
			ex.addGuide(c) // an older clip-archive: already summarized
			return
		}
		ex.addMessage(c, "System", spSystem, date, pos)
		return
	case RoleTool:
		if !m.HasResults {
			ex.addToolResult(m.Content, tools.calls.find(m.ToolCallID, "", i), date, pos, maxChars)
			return
		}
	}
	said := false
	if m.HasResults {
		for j := range m.ToolCalls {
			if tc := &m.ToolCalls[j]; tc.Result {
				ex.addToolResult(tc.Arguments, tools.calls.find(tc.ID, tc.Name, i), date, pos, maxChars)
				said = true
			}
		}
	}
	text := m.Text()
	if text != "" || !said && !m.HasToolCalls {
		label, sp := "User", spUser
		if m.Role == RoleAssistant {
			label, sp = "Assistant", spAssistant
		}
		ex.addMessage(validText(ClampText(text, maxChars)), label, sp, date, pos)
	}
	for j := range m.ToolCalls {
		if tc := &m.ToolCalls[j]; !tc.Result && !tools.answered(tc.ID) {
			ex.addToolCallLines(validText(ClampText(compactCall(tc.Name, tc.Arguments, 0), maxChars)), date, pos)
		}
	}
}

// toolContext is what the messages of a chunk say about its tool calls:
// where each call is made, and which calls a result in the chunk answers.
type toolContext struct {
	calls *callIndex
	ans   map[string]struct{}
}

func newToolContext(msgs []Message) *toolContext {
	t := &toolContext{calls: newCallIndex(msgs)}
	mark := func(id string) {
		if id == "" {
			return
		}
		if t.ans == nil {
			t.ans = map[string]struct{}{}
		}
		t.ans[id] = struct{}{}
	}
	for i := range msgs {
		m := &msgs[i]
		if m.Role == RoleTool && !m.HasResults {
			mark(m.ToolCallID)
		}
		for j := range m.ToolCalls {
			if m.ToolCalls[j].Result {
				mark(m.ToolCalls[j].ID)
			}
		}
	}
	return t
}

// answered reports whether a result in the chunk answers the call id.
func (t *toolContext) answered(id string) bool {
	_, ok := t.ans[id]
	return ok && id != ""
}

// addToolResult reads one tool result: its output, labelled with its call
// ("Tool name(arguments)"; "Tool" when the call is not known). JSON is
// read as facts (jsonFacts), the rest line by line as text (a line of JSON
// among them as facts too). An output with no letter or digit says
// nothing: its call is said instead.
func (ex *extractor) addToolResult(out string, call *ToolCall, date string, msg, maxChars int) {
	label := "Tool"
	var args []string
	if call != nil {
		if call.Result {
			label = "Tool " + call.Name
		} else {
			label = "Tool " + validText(compactCall(call.Name, call.Arguments, callLabelArgs))
			args = argValues(call.Arguments)
		}
	}
	t := strings.TrimSpace(out)
	if call != nil && !call.Result && !hasAlnum(t) {
		ex.addToolCallLines(validText(ClampText(compactCall(call.Name, call.Arguments, 0), maxChars)), date, msg)
		return
	}
	if isJSONText(t) {
		// The whole output, not clamped: a cut document is not JSON. The
		// facts written stop at maxChars.
		limit := -1
		if maxChars > 0 {
			limit = maxChars
		}
		if ex.addFacts(t, args, limit, -1, label, date, msg) < 0 {
			ex.addBare(validText(ClampText(t, maxChars)), label, date, exNew, spTool, msg)
		}
		return
	}
	ex.addText(validText(ClampText(t, maxChars)), label, spTool, date, msg, args, true)
}

// addFacts adds the fact sentences of the JSON text s (jsonFacts) to the
// tool result's source src, made when it is -1, and returns it (-1 when
// there were none).
func (ex *extractor) addFacts(s string, args []string, limit int, src int32, label, date string, msg int) int32 {
	jsonFacts(s, args, limit, func(f string) {
		if src < 0 {
			src = ex.newSource(label, date, exNew, spTool, msg)
		}
		ex.addSentence(validText(f), src)
	})
	return src
}

// addRendered reads one message of a summarization request, as
// renderForSummary wrote it: its text under label, each "[Tool result…]"
// piece (up to the next piece) as a tool result with the call its header
// names, each "[Tool call]: " piece as a call unless a result's header in
// the request shows it (shown).
func (ex *extractor) addRendered(c, label string, speaker uint8, msg int, shown map[string]struct{}) {
	if !hasAlnum(c) && pieceKind(c) == pieceText {
		ex.addMessage(c, label, speaker, "", msg) // said, if only as filler
		return
	}
	kind, start := pieceText, 0
	flush := func(end int) {
		p := strings.TrimSpace(c[start:end])
		switch kind {
		case pieceText:
			if p != "" {
				ex.addMessage(p, label, speaker, "", msg)
			}
		case pieceResult:
			call, out := parseResultHeader(p)
			ex.addToolResult(out, call, "", msg, 0)
		case pieceCall:
			p = strings.TrimPrefix(p, ToolCallPrefix)
			if _, ok := shown[headerOf(p)]; ok {
				return
			}
			name, args := splitCall(p)
			ex.addToolCallLines(compactCall(name, args, 0), "", msg)
		}
	}
	for at := 0; at < len(c); {
		end := strings.IndexByte(c[at:], '\n')
		next := len(c)
		if end >= 0 {
			next = at + end + 1
		}
		if k := pieceKind(c[at:]); k != pieceText {
			if at > start || kind != pieceText {
				flush(at)
			}
			kind, start = k, at
		}
		at = next
	}
	if start < len(c) || kind != pieceText {
		flush(len(c))
	}
}

// Kinds of the pieces of a rendered message.
const (
	pieceText = iota
	pieceResult
	pieceCall
)

// pieceKind is the kind of piece a line starting s begins, pieceText for
// a line that continues the piece before it.
func pieceKind(s string) int {
	switch {
	case strings.HasPrefix(s, ToolResultPrefix), strings.HasPrefix(s, ToolResultOfPrefix):
		return pieceResult
	case strings.HasPrefix(s, ToolCallPrefix):
		return pieceCall
	}
	return pieceText
}

// parseResultHeader splits a "[Tool result…]" piece into the call its
// header names (nil for ToolResultPrefix; a name alone is a ToolCall with
// Result set) and the output.
func parseResultHeader(p string) (*ToolCall, string) {
	if rest, ok := strings.CutPrefix(p, ToolResultPrefix); ok {
		return nil, rest
	}
	rest := strings.TrimPrefix(p, ToolResultOfPrefix)
	if j := strings.Index(rest, ")]: "); j >= 0 {
		name, args := splitCall(rest[:j+1])
		return &ToolCall{Name: name, Arguments: args}, rest[j+4:]
	}
	if j := strings.Index(rest, "]: "); j >= 0 {
		return &ToolCall{Name: rest[:j], Result: true}, rest[j+3:]
	}
	return nil, rest
}

// splitCall splits "name(arguments)" (ok or not: a name alone).
func splitCall(c string) (name, args string) {
	i := strings.IndexByte(c, '(')
	if i < 0 || !strings.HasSuffix(c, ")") {
		return c, ""
	}
	return c[:i], c[i+1 : len(c)-1]
}

// headerOf is how a result's header would show the call "name(arguments)".
func headerOf(call string) string {
	name, args := splitCall(call)
	return CallHeader(&ToolCall{Name: name, Arguments: args})
}

// resultCalls are the calls the results of a request's messages show in
// their headers.
func resultCalls(msgs []ModelMessage) map[string]struct{} {
	var out map[string]struct{}
	for i := range msgs {
		c := msgs[i].Content
		for at := 0; at < len(c); {
			if strings.HasPrefix(c[at:], ToolResultOfPrefix) {
				if call, _ := parseResultHeader(c[at:]); call != nil && !call.Result {
					if out == nil {
						out = map[string]struct{}{}
					}
					out[call.Name+"("+call.Arguments+")"] = struct{}{}
				}
			}
			j := strings.IndexByte(c[at:], '\n')
			if j < 0 {
				break
			}
			at += j + 1
		}
	}
	return out
}

// dayOf is t's UTC day, "2006-01-02", or "" for the zero time (or a year
// outside 1..9999).
func dayOf(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	y, m, d := t.UTC().Date()
	if y < 1 || y > 9999 {
		return ""
	}
	b := [10]byte{byte('0' + y/1000), byte('0' + y/100%10), byte('0' + y/10%10), byte('0' + y%10), '-',
		byte('0' + int(m)/10), byte('0' + int(m)%10), '-', byte('0' + d/10), byte('0' + d%10)}
	return string(b[:])
}

func (ex *extractor) newSource(label, date string, kind, speaker uint8, msg int) int32 {
	ex.srcs = append(ex.srcs, exSource{label: label, date: date, kind: kind, speaker: speaker, msg: msg, call: callKey(label)})
	ex.overhead += runeCount(label) + 3
	if date != "" {
		ex.overhead += dateLen
	}
	return int32(len(ex.srcs) - 1)
}

// addMessage cuts one message into sentences, all of one source.
func (ex *extractor) addMessage(c, label string, speaker uint8, date string, msg int) {
	ex.addText(c, label, speaker, date, msg, nil, false)
}

// addText cuts a text into sentences, all of one source; with facts, a
// line of JSON is read as facts (a tool result's output; args are the
// values its call shows).
func (ex *extractor) addText(c, label string, speaker uint8, date string, msg int, args []string, facts bool) {
	src := int32(-1)
	bare := ""
	for rest := c; rest != ""; {
		var line string
		line, rest = nextLine(rest)
		if bare == "" {
			bare = line
		}
		if facts && line != "" && (line[0] == '{' || line[0] == '[') && isJSONText(line) {
			src = ex.addFacts(line, args, -1, src, label, date, msg)
			continue
		}
		for from := 0; ; {
			s, next, ok := nextSentence(line, from)
			if !ok {
				break
			}
			if src < 0 {
				src = ex.newSource(label, date, exNew, speaker, msg)
			}
			ex.addSentence(s, src)
			from = next
		}
	}
	if src < 0 {
		ex.addBare(bare, label, date, exNew, speaker, msg)
	}
}

// noText stands for a message with no text at all.
const noText = "(no text)"

// addBare makes a message or summary line that holds no sentence (no
// letter or digit: "👍", "...", or no text at all) a source of one
// sentence: line, its first non-blank line, or noText. That sentence is
// filler, never chosen while anything else is said, but it is said:
// importance-ordered chunking puts the least informative messages
// together, and a chunk of only such messages must still have a summary.
func (ex *extractor) addBare(line, label, date string, kind, speaker uint8, msg int) {
	if line == "" {
		line = noText
	}
	ex.addSentence(line, ex.newSource(label, date, kind, speaker, msg))
}

// addToolCallLines reads "[Tool call]: name(args)" lines (or bare
// "name(args)"); each call is one sentence of a "Tool call" source
// (arguments are JSON, not prose, so they are not cut at ". ").
func (ex *extractor) addToolCallLines(c, date string, msg int) {
	src := int32(-1)
	bare := ""
	forEachLine(c, func(line string) {
		line = strings.TrimSpace(strings.TrimPrefix(line, ToolCallPrefix))
		if !hasAlnum(line) {
			if bare == "" {
				bare = line
			}
			return
		}
		if src < 0 {
			src = ex.newSource("Tool call", date, exNew, spToolCall, msg)
		}
		ex.addSentence(line, src)
	})
	if src < 0 {
		ex.addBare(bare, "Tool call", date, exNew, spToolCall, msg)
	}
}

// exLabels are the attributions the summarizer writes; a summary line
// starting with one keeps it.
var exLabels = [...]string{"User", "Assistant", "Tool call", "Tool", "System"}

var exLabelSpeakers = [...]uint8{spUser, spAssistant, spToolCall, spTool, spSystem}

// summaryLine splits one line of a summary into its date ("" when it has
// none), label ("" when it has none) and text. skip is true for the
// structural lines of a clip-archive (header, batch headers, section
// titles, the omission marker) and archived metadata lines.
func summaryLine(line string) (date, label string, speaker uint8, text string, skip bool) {
	if strings.HasPrefix(line, ClipArchivePrefix) || strings.HasPrefix(line, "[Batch ") ||
		strings.HasPrefix(line, "## ") || strings.HasPrefix(line, "[... ") ||
		strings.HasPrefix(line, "[depth:") || strings.HasPrefix(line, `{"conversation_id":`) {
		return "", "", 0, "", true
	}
	if isDatePrefix(line) {
		date, line = line[1:11], strings.TrimSpace(line[12:])
	}
	speaker = spNone
	for k, l := range exLabels {
		if len(line) > len(l)+2 && strings.HasPrefix(line, l) && line[len(l)] == ':' && line[len(l)+1] == ' ' {
			label, speaker = l, exLabelSpeakers[k]
			line = strings.TrimSpace(line[len(l)+2:])
			return date, label, speaker, line, false
		}
	}
	if n := toolLabelLen(line); n > 0 {
		label, speaker = line[:n], spTool
		line = strings.TrimSpace(line[n+2:])
	}
	return date, label, speaker, line, false
}

// toolLabelLen is the length of a tool result's label at the start of a
// summary line, "Tool name(arguments)" followed by ": " (compactCall
// makes the first "): " its end), or 0.
func toolLabelLen(line string) int {
	rest, ok := strings.CutPrefix(line, "Tool ")
	if !ok {
		return 0
	}
	i := strings.IndexByte(rest, '(')
	if i <= 0 || strings.ContainsAny(rest[:i], " :") {
		return 0
	}
	j := strings.Index(rest[i:], "): ")
	if j < 0 || len(rest) == i+j+3 {
		return 0
	}
	return len("Tool ") + i + j + 1
}

// isDatePrefix reports whether s starts with "[dddd-dd-dd]".
func isDatePrefix(s string) bool {
	if len(s) < 12 || s[0] != '[' || s[11] != ']' || s[5] != '-' || s[8] != '-' {
		return false
	}
	for _, i := range [...]int{1, 2, 3, 4, 6, 7, 9, 10} {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// addLines reads a summary batch being re-summarized: every line is a
// source of its own, with the date and label it carries.
func (ex *extractor) addLines(c string, msg int) {
	forEachLine(c, func(line string) {
		date, label, speaker, text, skip := summaryLine(line)
		if skip || text == "" {
			if ex.skipped == "" {
				ex.skipped = line
			}
			return
		}
		if speaker == spToolCall { // JSON arguments: not prose, one sentence
			ex.addSentence(text, ex.newSource(label, date, exLine, speaker, msg))
			return
		}
		src := int32(-1)
		forEachSentence(text, func(s string) {
			if src < 0 {
				src = ex.newSource(label, date, exLine, speaker, msg)
			}
			ex.addSentence(s, src)
		})
		if src < 0 {
			ex.addBare(text, label, date, exLine, speaker, msg)
		}
	})
}

// addGuide records a previous summary: the hashes of its sentences and of
// their content words.
func (ex *extractor) addGuide(c string) {
	ex.guides = append(ex.guides, c)
	if ex.guideHash == nil {
		ex.guideHash = map[uint64]struct{}{}
		ex.guideWords = map[uint64]struct{}{}
	}
	forEachLine(c, func(line string) {
		_, _, _, text, skip := summaryLine(line)
		if skip {
			return
		}
		forEachSentence(text, func(s string) {
			_, h, _ := ex.scan(s)
			ex.guideHash[h] = struct{}{}
			for _, w := range ex.words {
				ex.guideWords[w] = struct{}{}
			}
		})
	})
}

func (ex *extractor) addSentence(s string, src int32) {
	var count int32
	var last string
	mark := 0
	if ex.srcs[src].kind == exLine {
		full := len(s)
		s, count, last = cutRepeatMark(s)
		if len(s) < full {
			mark = repeatMarkRunes(count, last, ex.srcs[src].date)
		}
	}
	n := collapsedRunes(s)
	if ex.srcs[src].kind == exLine {
		ex.lineRunes += n + mark // a fold of a fold must have room for the marks again
	} else {
		ex.newRunes += n
	}
	ex.overhead += 3 // its separator
	ex.sents = append(ex.sents, exSent{text: s, src: src, runes: int32(min(n, 1<<30)), count: count, last: last})
}

// repeatMark is what a collapsed line of tool output says of the lines it
// stands for: " (×12)" or " (×12, to 2025-09-19)".
func repeatMark(b *strings.Builder, count int32, last, date string) {
	b.WriteString(" (×")
	b.WriteString(strconv.Itoa(int(count)))
	if last != "" && last != date {
		b.WriteString(", to ")
		b.WriteString(last)
	}
	b.WriteByte(')')
}

// repeatMarkRunes is the length of repeatMark's text in code points.
func repeatMarkRunes(count int32, last, date string) int {
	n := 4 + len(strconv.Itoa(int(count)))
	if last != "" && last != date {
		n += 5 + len(last)
	}
	return n
}

// cutRepeatMark reads a repeat mark at the end of a summary line's
// sentence: the sentence without it, the count, and the last date.
func cutRepeatMark(s string) (string, int32, string) {
	if !strings.HasSuffix(s, ")") {
		return s, 0, ""
	}
	i := strings.LastIndex(s, " (×")
	if i < 0 {
		return s, 0, ""
	}
	body := s[i+len(" (×") : len(s)-1]
	last := ""
	if j := strings.Index(body, ", to "); j >= 0 {
		last = body[j+len(", to "):]
		body = body[:j]
		if !isDatePrefix("[" + last + "]") {
			return s, 0, ""
		}
	}
	n := 0
	for k := 0; k < len(body); k++ {
		if !isDigit(body[k]) || n > 1<<24 {
			return s, 0, ""
		}
		n = n*10 + int(body[k]-'0')
	}
	if len(body) == 0 || n < 2 {
		return s, 0, ""
	}
	return strings.TrimSpace(s[:i]), int32(n), last
}

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
// applies the per-message rank penalty.
func (ex *extractor) score() {
	seen := newU64Counts(len(ex.sents))
	near := newU64Counts(len(ex.sents))
	machine := newU64Counts(0)
	restated := make([]bool, len(ex.srcs)) // tool results that prose after them restates
	// Pass 1: every sentence's features, hashes and content words, and in
	// how many sources each content word occurs.
	shapes := make([]uint64, len(ex.sents))
	wordsAt := make([]int32, len(ex.sents)+1)
	var words []uint64
	df := newU64Counts(len(ex.sents))
	dfSrc := newU64Counts(len(ex.sents)) // the last source counted for a word, plus 1
	count := func(w uint64, src int32) {
		if last := dfSrc.at(w); *last != src+1 {
			*last = src + 1
			*df.at(w)++
		}
	}
	toksAt := make([]int32, len(ex.sents)+1)
	var toks []exTok
	for i := range ex.sents {
		s := &ex.sents[i]
		ex.idShape = ex.srcs[s.src].speaker == spTool
		s.features, s.hash, shapes[i] = ex.scan(s.text)
		wordsAt[i], toksAt[i] = int32(len(words)), int32(len(toks))
		words = append(words, ex.words...)
		toks = append(toks, ex.toks...)
		for _, w := range ex.words {
			count(w, s.src)
		}
		for _, t := range ex.toks {
			count(t.hash, s.src)
		}
	}
	ex.idShape = false
	wordsAt[len(ex.sents)], toksAt[len(ex.sents)] = int32(len(words)), int32(len(toks))
	for i := range ex.sents {
		s := &ex.sents[i]
		hl := shapes[i]
		ex.words = words[wordsAt[i]:wordsAt[i+1]]
		f := &s.features
		src := &ex.srcs[s.src]
		if _, ok := ex.guideHash[s.hash]; ok {
			s.dup = true // the previous summary says it already
			continue
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
				ex.absorb(j, int32(i))
				continue
			}
			*machine.at(key) = int32(i)
		}
		if j, ok := seen.get(s.hash); ok {
			// Said again: keep the first, which gains a bounded bonus.
			s.dup = true
			if d := &ex.sents[j]; float64(d.repeats)*wRepeat < wRepeatMax {
				d.repeats++
				d.score += wRepeat
			}
			continue
		}
		*seen.at(s.hash) = int32(i)
		// Near-duplicates (log lines, retries) add little: each one more
		// of the same shape weighs less.
		nc := near.at(hl)
		nearCount := *nc
		*nc = nearCount + 1
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
		gain := 0.0
		// Content words count by how much they say here: a word most
		// sources repeat (the shop, the server, the backup) says little.
		info := 0.0
		for _, w := range ex.words {
			info += infoWeight(dfOf(df, w))
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
		for _, t := range toks[toksAt[i]:toksAt[i+1]] {
			iw := infoWeight(dfOf(df, t.hash))
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
		v += gain
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
		s.score = v
	}
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
	ex.recency()
	ex.rankPenalty()
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

// scan reads one sentence once: words (runs of letters, lower-cased) are
// classified by exWordClass with one-word look-behind for phrases ("we
// will", "should not", "sounds good", "going to"); words beyond ASCII are
// content words; whitespace-separated tokens are checked for identifiers.
// The content words' hashes are left in ex.words. The hash h, for
// duplicate detection, covers the lower-cased letters and digits only; hl,
// the sentence's shape, covers the letters of the whitespace-separated
// tokens that hold no digit, to spot near-duplicates that differ only in
// numbers, times, dates and ids ("attempt 1", "attempt 2"; "[03-Mar-2025
// 23:45:21 UTC] PHP Notice: …", "[16-Mar-2025 14:17:53 UTC] PHP Notice:
// …").
func (ex *extractor) scan(s string) (f exFeatures, h, hl uint64) {
	const prime, offset = 1099511628211, 14695981039346656037
	ex.words, ex.toks = ex.words[:0], ex.toks[:0]
	h, hl = offset, offset
	th, tdig := uint64(offset), false // the current token's letters, and whether it has a digit
	endTok := func(tok string) {
		if !tdig && th != offset {
			hl = (hl ^ th) * prime
		} else if ex.idShape && tdig && th != offset && !timeLike(tok) {
			// An id (letters and digits, not a date or a time) of tool
			// output: part of its shape.
			hl = (hl ^ th ^ hashIdent(tok)) * prime
		}
		th, tdig = offset, false
	}
	var prev uint32 // class of the previous word
	tokStart, wordStart := -1, -1
	wordASCII, wordRunes, wh := true, 0, uint64(offset)
	firstTok := true
	quotes, codePunct := 0, 0
	endWord := func(i int) {
		if wordStart >= 0 {
			prev = ex.word(s[wordStart:i], wordASCII, wordRunes, wh, prev, &f)
			wordStart = -1
		}
	}
	startWord := func(i int) {
		if wordStart < 0 {
			wordStart, wordASCII, wordRunes, wh = i, true, 0, offset
		}
		if tokStart < 0 {
			tokStart = i
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, w := utf8.DecodeRuneInString(s[i:])
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r):
				lr := uint64(unicode.ToLower(r))
				h = (h ^ lr) * prime
				if unicode.IsDigit(r) {
					tdig = true
				} else {
					th = (th ^ lr) * prime
				}
				startWord(i)
				wordASCII = false
				wordRunes++
				wh = (wh ^ lr) * prime
			case r == '’' && wordStart >= 0 && i+w < len(s) && isASCIILetter(s[i+w]):
				// an apostrophe inside a word: "I’m", "don’t"
			default:
				if r == '？' {
					f.question = true
				}
				endWord(i)
				if tokStart < 0 {
					tokStart = i
				}
			}
			i += w
			continue
		}
		k := exByteClass[c]
		if k&bcLetter != 0 { // the common case
			lc := uint64(c | 0x20)
			h = (h ^ lc) * prime
			th = (th ^ lc) * prime
			startWord(i)
			wordRunes++
			wh = (wh ^ lc) * prime
			i++
			continue
		}
		if k&bcDigit != 0 {
			h = (h ^ uint64(c)) * prime
			tdig = true
		}
		if c == '\'' && wordStart >= 0 && i+1 < len(s) && isASCIILetter(s[i+1]) {
			i++ // an apostrophe inside a word: "let's", "can't"
			continue
		}
		endWord(i)
		if k&bcSpace != 0 {
			tok := ""
			if tokStart >= 0 {
				tok = s[tokStart:i]
			}
			endTok(tok)
			if tokStart >= 0 {
				ex.token(s[tokStart:i], firstTok, &f)
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
	tok := ""
	if tokStart >= 0 {
		tok = s[tokStart:]
	}
	endTok(tok)
	if tokStart >= 0 {
		ex.token(s[tokStart:], firstTok, &f)
	}
	if quotes >= 2 {
		f.idents++
	}
	f.code = codePunct >= 3 && codePunct*25 >= len(s) || strings.Contains(s, ":=")
	return f, h, hl
}

// token checks one whitespace-separated token for identifiers and
// records the ones it finds in ex.toks, by their lower-cased hash.
func (ex *extractor) token(t string, first bool, f *exFeatures) {
	t, points, weak := checkToken(t, first, f)
	if points == 0 && weak == 0 {
		return
	}
	const prime, offset = 1099511628211, 14695981039346656037
	h := uint64(offset) ^ tokenSalt
	for i := 0; i < len(t); i++ {
		h = (h ^ uint64(t[i]|0x20*b2u(isUpper(t[i])))) * prime
	}
	ex.toks = append(ex.toks, exTok{hash: h, points: int8(points), weak: int8(weak)})
}

// tokenSalt keeps identifier hashes apart from content-word hashes in
// the document-frequency table.
const tokenSalt = 0x9e3779b97f4a7c15

// exTok is an identifier token of a sentence.
type exTok struct {
	hash         uint64
	points, weak int8
}

// word classifies one word of a sentence: it updates f, records a content
// word's hash wh in ex.words and returns the word's class bits for the
// look-behind of the next. A word with letters beyond ASCII is a content
// word (a CJK run, which has no spaces, counts one per four code points).
func (ex *extractor) word(w string, ascii bool, runes int, wh uint64, prev uint32, f *exFeatures) uint32 {
	f.words++
	if !ascii {
		if runes >= 2 {
			f.content += max(1, runes/4)
			ex.words = append(ex.words, wh)
		}
		return 0
	}
	if len(w) > len(ex.lowerBuf) {
		f.content++
		ex.words = append(ex.words, wh)
		return 0
	}
	// Most words are lower case already and are looked up as they are;
	// the others are lower-cased into a fixed buffer (the conversion does
	// not escape, so it does not allocate). "’" becomes "'".
	plain := true
	for i := 0; i < len(w); i++ {
		if isUpper(w[i]) || w[i] >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	var cls uint32
	if plain {
		cls = exWordClass(w)
	} else {
		lb := ex.lowerBuf[:0]
		for i := 0; i < len(w); i++ {
			c := w[i]
			if c >= utf8.RuneSelf { // "’" (3 bytes): an apostrophe
				lb = append(lb, '\'')
				i += 2
				continue
			}
			lb = append(lb, c|0x20*b2u(isUpper(c)))
		}
		cls = exWordClass(string(lb))
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
	if cls&cwTo != 0 && prev&cwGo != 0 {
		cls |= cwAction // "going to"
	}
	if cls&cwGood != 0 && prev&cwSounds != 0 {
		cls |= cwSocial
	}
	if cls&cwCause != 0 && prev&cwRoot != 0 {
		cls |= cwError | cwRationale
	}
	if cls&cwMostLeas != 0 && prev&cwAt != 0 {
		cls |= cwConstraint
	}
	f.decision = f.decision || cls&cwDecision != 0
	f.errorish = f.errorish || cls&cwError != 0
	f.constraint = f.constraint || cls&cwConstraint != 0
	f.rationale = f.rationale || cls&cwRationale != 0
	f.action = f.action || cls&cwAction != 0
	f.pref = f.pref || cls&cwPref != 0
	f.time = f.time || cls&cwTime != 0
	f.social = f.social || cls&cwSocial != 0
	if cls == 0 && len(w) >= 3 {
		f.content++
		ex.words = append(ex.words, wh)
	}
	return cls
}
