package core

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func runeSeeds() []string {
	return []string{"", "a", "abcdefgh", "abcdefghi", "naïve decision — agreed", strings.Repeat("é", 9),
		"\xff", "abcdefg\xff", "\xe2\x84", "abcdefgh\xe2\x84\xaa!", "\xf0\x9f\x98\x80 emoji", "\xed\xa0\x80 surrogate",
		strings.Repeat("x", 63) + "\xc3", "\x80\x80\x80\x80\x80\x80\x80\x80\x80"}
}

func TestRuneCount(t *testing.T) {
	for _, s := range runeSeeds() {
		for pad := 0; pad < 9; pad++ { // every alignment of the words
			in := strings.Repeat("p", pad) + s
			if got, want := runeCount(in), utf8.RuneCountInString(in); got != want {
				t.Errorf("runeCount(%q) = %d, want %d", in, got, want)
			}
		}
	}
}

func FuzzRuneCount(f *testing.F) {
	for _, s := range runeSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := runeCount(s), utf8.RuneCountInString(s); got != want {
			t.Fatalf("runeCount(%q) = %d, want %d", s, got, want)
		}
	})
}
