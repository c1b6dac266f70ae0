package core

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text helpers of the extractive summarizer: lines, sentences, tokens,
// whitespace collapsing. Hand-written scanning (no regexp): the plug-in
// runs them under TinyGo.

// forEachLine calls f with every trimmed, non-empty line of s, with a
// leading list marker ("- ", "* ", "• ", "> ") removed.
func forEachLine(s string, f func(string)) {
	for len(s) > 0 {
		var line string
		if line, s = nextLine(s); line != "" {
			f(line)
		}
	}
}

// nextLine returns the first line of s, trimmed and without list
// bullets (possibly empty), and the rest of s after it. The loops of
// forEachLine and forEachSentence are also written out with nextLine and
// nextSentence where they run per message: under TinyGo a closure that
// captures a variable it changes costs allocations per call.
func nextLine(s string) (line, rest string) {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		line, rest = s[:i], s[i+1:]
	} else {
		line = s
	}
	line = strings.TrimSpace(line)
	for {
		if len(line) >= 2 && (line[0] == '-' || line[0] == '*' || line[0] == '>') && line[1] == ' ' {
			line = strings.TrimSpace(line[2:])
		} else if strings.HasPrefix(line, "• ") {
			line = strings.TrimSpace(line[len("• "):])
		} else {
			return line, rest
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
	for from := 0; ; {
		s, next, ok := nextSentence(line, from)
		if !ok {
			return
		}
		f(s)
		from = next
	}
}

// nextSentence returns the first sentence of line[from:] (see
// forEachSentence) that holds a letter or a digit, trimmed, and where the
// one after it starts; ok is false when there is none.
func nextSentence(line string, from int) (s string, next int, ok bool) {
	for from < len(line) {
		end, resume := sentenceEnd(line, from)
		s, from = strings.TrimSpace(line[from:end]), resume
		if hasAlnum(s) {
			return s, from, true
		}
	}
	return "", from, false
}

// sentenceEnd returns where the sentence that starts at line[start]
// ends and where the next one starts.
func sentenceEnd(line string, start int) (end, next int) {
	for i := start; i < len(line); {
		c := line[i]
		if c == '|' && i > 0 && line[i-1] == ' ' && i+1 < len(line) && line[i+1] == ' ' {
			// " | " separates lines that a previous fold put on one line.
			return i, i + 1
		}
		if c == '.' || c == '!' || c == '?' {
			j := i + 1
			for j < len(line) && (line[j] == '.' || line[j] == '!' || line[j] == '?' || line[j] == '"' || line[j] == '\'' || line[j] == ')' || line[j] == ']') {
				j++
			}
			if j < len(line) && (line[j] == ' ' || line[j] == '\t') && !(c == '.' && isAbbrevBefore(line[start:i])) &&
				!strings.HasPrefix(line[j+1:], "(×") { // a repeat mark stays with its sentence
				return j, j
			}
			i = j
			continue
		}
		if c >= utf8.RuneSelf {
			r, w := utf8.DecodeRuneInString(line[i:])
			if r == '。' || r == '！' || r == '？' {
				return i + w, i + w
			}
			i += w
			continue
		}
		i++
	}
	return len(line), len(line)
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

// checkToken counts the identifiers one whitespace-separated token holds:
// URLs, e-mail addresses, paths, file names, versions and other numbers,
// error codes and ticket ids (anything with a digit), CamelCase and
// snake_case names. All-caps words and capitalised words not at the start
// of the sentence (acronyms, names) count as weak identifiers.
//
// It returns the token as trimmed and its identifier points (strong
// ones count 2) and weak points, also added to f.
func checkToken(t string, first bool, f *exFeatures) (tok string, points, weak int) {
	// Trim surrounding punctuation.
	for len(t) > 0 && strings.IndexByte("\"'`([{<*_,;:", t[0]) >= 0 {
		t = t[1:]
	}
	for len(t) > 0 && strings.IndexByte("\"'`)]}>*_,;:.!?", t[len(t)-1]) >= 0 {
		t = t[:len(t)-1]
	}
	if len(t) < 2 || t[0] == 'I' && (t[1] == '\'' || strings.HasPrefix(t[1:], "’")) {
		return t, 0, 0 // too short, or "I'm", "I’ve": not a name
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
		points = 2
	case digits > 0 && uppers > 0 && len(t) >= 4 && (digits >= 3 || strings.IndexByte(t, '-') > 0 || t[0] == '#'):
		points = 2 // codes and ids: E1234, ABC-123, ACC-778812, #A-99812
	case slash && letters > 0 && (t[0] == '/' || t[0] == '.' || t[0] == '~' || strings.Count(t, "/") >= 2 || dotExt):
		points = 2 // paths
	case snake, lowerUpper, dotExt:
		points = 1
	case digits > 0 && (len(t) >= 2 || letters > 0):
		points = 1
	case letters >= 2 && uppers == letters && letters >= 3:
		weak = 1
	case !first && uppers == 1 && isUpper(t[0]) && lowers > 0:
		weak = 1
	}
	f.idents += points
	f.weak += weak
	return t, points, weak
}
