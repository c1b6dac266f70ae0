package core

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sentence scanning: one pass over a sentence finds its words (classified
// with one-word look-behind), content words, identifier tokens, a hash
// for duplicates and a shape for near-duplicates.

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
