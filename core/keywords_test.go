package core

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"unicode/utf8"
)

func TestKeywordsAndLength(t *testing.T) {
	def := DefaultScoring()
	custom := DefaultScoring()
	custom.SetKeywords([]string{"he", "she", "his", "hers", "A+B", "x"})
	unicodeKW := DefaultScoring()
	unicodeKW.SetKeywords([]string{"größe", "error"})
	many := make([]string, 70)
	for i := range many {
		many[i] = "kw" + strings.Repeat("z", i)
	}
	tooMany := DefaultScoring()
	tooMany.SetKeywords(many)
	most := DefaultScoring() // as many as the automaton takes
	most.SetKeywords(many[:maxKeywords])
	oneOver := DefaultScoring()
	oneOver.SetKeywords(many[:maxKeywords+1])
	questionKW := DefaultScoring()
	questionKW.SetKeywords([]string{"why?", "?!"})
	none := DefaultScoring()
	none.SetKeywords(nil)
	// The pseudo-patterns take 6 states and the root one: the longest
	// keyword the automaton takes is maxStates-7 bytes.
	longest := strings.Repeat("ab", (maxStates-7)/2) + "c"
	fits, tooLong := DefaultScoring(), DefaultScoring()
	fits.SetKeywords([]string{longest})
	tooLong.SetKeywords([]string{longest + "d"})

	tests := []struct {
		name     string
		s        *Scoring
		text     string
		keywords int
	}{
		{"empty", &def, "", 0},
		{"none", &def, "all good here", 0},
		{"one", &def, "there is an error", 1},
		{"repeated counts once", &def, "error error ERROR", 1},
		{"case-insensitive", &def, "We AGREED on the FIX", 2},
		{"inside words", &def, "prefixed debugger failures", 3}, // fix, bug, fail
		{"all of them", &def, "error fail bug fix decision agreed constraint requirement", 8},
		{"overlapping (suffix links)", &custom, "ushers", 3}, // she, he, hers
		{"punctuation keyword", &custom, "a+b=c", 1},
		{"single byte", &custom, "xylophone", 1},
		{"partial at end", &def, "a decisio", 0},
		{"non-ASCII text", &def, "Der Fehler: ERROR in Größe", 1},
		{"Kelvin sign lower-cases to k", &custom, "\u212Aey", 0},
		{"dotted capital I lower-cases to i", &def, "F\u0130X the build", 1},
		{"non-ASCII text, ASCII keyword", &def, "naïve decision — agreed", 2},
		{"non-ASCII keyword", &unicodeKW, "Die GRÖSSE und die Größe", 1},
		{"over 64 keywords", &tooMany, "kw and kwzz", 3},
		{"61 keywords, the automaton's most", &most, "kw and kwzz?", 3},
		{"62 keywords, searched the slow way", &oneOver, "kw and kwzz?", 3},
		{"a question", &def, "is it a bug?", 1},
		{"keywords with a question mark", &questionKW, "Why? Why?!", 2},
		{"a question next to a rune that lower-cases to ASCII", &def, "\u212A? fix", 1},
		{"no keywords", &none, "error", 0},
		{"the longest keyword the automaton takes", &fits, "an error: x" + strings.ToUpper(longest) + "x?", 1},
		{"the longest keyword, cut short", &fits, longest[:len(longest)-1] + " error", 0},
		{"a keyword too long for the automaton", &tooLong, "error " + longest + "d", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, k, runes := tc.s.contentFacts(tc.text)
			if want := strings.IndexByte(tc.text, '?') >= 0; q != want {
				t.Errorf("question = %v, want %v", q, want)
			}
			if k != tc.keywords {
				t.Errorf("keywords = %d, want %d", k, tc.keywords)
			}
			if want := countKeywordsSlow(tc.text, tc.s.lower); k != want && tc.s.lower != nil {
				t.Errorf("keywords = %d, definition says %d", k, want)
			}
			if want := utf8.RuneCountInString(tc.text); runes != want {
				t.Errorf("runes = %d, want %d", runes, want)
			}
		})
	}
	if tooMany.match != nil || unicodeKW.match != nil || oneOver.match != nil || tooLong.match != nil {
		t.Error("keyword lists the automaton cannot take must use the slow search")
	}
	if most.match == nil || def.match == nil || fits.match == nil {
		t.Error("keyword lists the automaton can take must use it")
	}
}

// FuzzKeywordsAndLength checks the automaton (Scoring.contentFacts)
// against the definitions.
func FuzzKeywordsAndLength(f *testing.F) {
	f.Add("error, fail, bug", "the BUG was a failure of the fix")
	f.Add("he,she,his,hers", "ushers and his")
	f.Add("aa,aaa,a", "aaaa")
	f.Add("ab,bc,abc", "xabcx")
	f.Add("é,error", "ERRÉUR error")
	f.Add("fix,kelvin", "F\u0130X \u212Aelvin")
	f.Add("why?,?", "why? \u0130?")
	f.Fuzz(func(t *testing.T, kws, text string) {
		s := DefaultScoring()
		s.SetKeywords(strings.Split(kws, ","))
		q, k, runes := s.contentFacts(text)
		if want := strings.IndexByte(text, '?') >= 0; q != want {
			t.Fatalf("question(%q) = %v, want %v", text, q, want)
		}
		if want := countKeywordsSlow(text, s.lower); k != want {
			t.Fatalf("keywords(%q in %q) = %d, want %d", s.lower, text, k, want)
		}
		if want := utf8.RuneCountInString(text); runes != want {
			t.Fatalf("runes = %d, want %d", runes, want)
		}
	})
}

// TestKeywordsAcrossTheMidpoint: long texts are walked in two halves at
// once; a keyword (or '?', or a non-ASCII rune) anywhere, the midpoint
// included, is found as in one walk.
func TestKeywordsAcrossTheMidpoint(t *testing.T) {
	s := DefaultScoring()
	filler := strings.Repeat("lorem ipsum dolor sit amet ", 10)
	for _, needle := range []string{"requirement", "Decision", "?", "é", "fail"} {
		for n := 60; n <= 140; n += 7 {
			base := filler[:n]
			for at := 0; at <= n; at++ {
				text := base[:at] + needle + base[at:]
				q, k, runes := s.contentFacts(text)
				require.Equal(t, strings.Contains(text, "?"), q, text)
				require.Equal(t, countKeywordsSlow(text, s.lower), k, text)
				require.Equal(t, utf8.RuneCountInString(text), runes, text)
			}
		}
	}
}

// TestKeywordTableRows: every entry of a matcher's table is the start of
// a row inside the table (as a byte offset), which scan relies on to
// read it unchecked.
func TestKeywordTableRows(t *testing.T) {
	lists := [][]string{DefaultKeywords, {"a"}, {"ab", "b", "abc"}, {"x"}}
	long := make([]string, maxKeywords)
	for i := range long {
		long[i] = strings.Repeat(string(rune('a'+i%26)), 1+i)
	}
	lists = append(lists, long)
	for _, kws := range lists {
		m := newKeywordMatcher(kws)
		if m == nil {
			t.Fatalf("%v: no matcher", kws)
		}
		if len(m.next)%256 != 0 || int(m.accept)%1024 != 0 {
			t.Fatalf("%v: table of %d entries, accept %d", kws, len(m.next), m.accept)
		}
		for i, r := range m.next {
			if r%1024 != 0 || int(r/4) >= len(m.next) {
				t.Fatalf("%v: next[%d] = %d is not the byte offset of a row of a %d-entry table", kws, i, r, len(m.next))
			}
		}
		if len(m.out) != len(m.next)/256 {
			t.Fatalf("%v: %d outputs for %d rows", kws, len(m.out), len(m.next)/256)
		}
	}
}
