package core

import (
	"strings"
	"time"
)

// Sources and their reading: every message of the input (a summarization
// request's messages, or a compaction chunk's) becomes a source, one line
// of the summary at most, cut into the candidate sentences that scoring
// weighs. Tool results are read with their calls (extractive_tool.go
// writes the calls and reads JSON as facts).

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
