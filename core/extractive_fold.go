package core

import (
	"slices"
	"strconv"
	"strings"
)

// Folding: the input of a re-summarization. Summary batches are read
// back line by line, each line a source with the date and label it
// carries (summaryLine); a previous summary only guides the choice
// (addGuide); a collapsed line of tool output keeps its repeat mark, read
// back and written again with its counts added up.

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
