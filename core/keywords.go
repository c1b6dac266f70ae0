package core

import (
	"strings"
	"unsafe"
)

// keywordMatcher finds which of up to 61 ASCII keywords occur in a text,
// ignoring ASCII case, in one pass of one table step per byte: an
// Aho–Corasick automaton compiled to a full transition table. It is
// built once per keyword list and never changed, so copies of a Scoring
// share it. The same pass also finds what else Score asks of a content
// (the bits past the keywords': a '?', and the two runes that lower-case
// to ASCII letters), which otherwise took two or three more passes over
// every content.
type keywordMatcher struct {
	// next[r+b] is the row of the state after byte b in the state whose
	// row is r; a state's row is its number times 256, so that a step is
	// one add and one load (the loop is bound by that chain, natively and
	// in Wasm). States at which some keyword ends are numbered last:
	// their rows are accept and up.
	next   []uint32
	accept uint32
	out    []uint64 // keywords (bit k: lower[k]) ending at each state, by number
	maxLen int      // the longest pattern's length in bytes
}

const (
	// maxStates bounds the table (1 KiB per state) at 4 MiB: 61 keywords
	// of 67 bytes each. Longer lists are searched the slow way.
	maxStates = 1 << 12

	maxKeywords = 61
	keywordBits = 1<<maxKeywords - 1
	// bitQuestion marks a '?' in the text.
	bitQuestion = 1 << 61
	// bitToASCII marks U+0130 (İ, lower-cased to "i̇") or U+212A (Kelvin
	// sign, to "k"): the only non-ASCII runes strings.ToLower maps to
	// ASCII letters, so text with them needs the slow keyword search.
	bitToASCII = 1<<62 | 1<<63
)

// pseudoPatterns are searched for alongside the keywords, with these bits.
var pseudoPatterns = [...]struct {
	s   string
	bit uint64
}{{"?", bitQuestion}, {"\u0130", 1 << 62}, {"\u212a", 1 << 63}}

// newKeywordMatcher compiles the lower-cased, de-duplicated, ASCII
// keywords lower (at most maxKeywords) and the pseudo-patterns. It
// returns nil for more keywords or when they need more than maxStates
// states; callers then search the slow way.
func newKeywordMatcher(lower []string) *keywordMatcher {
	if len(lower) > maxKeywords {
		return nil
	}
	type pattern struct {
		s   string
		bit uint64
	}
	patterns := make([]pattern, 0, len(lower)+len(pseudoPatterns))
	for k, kw := range lower {
		patterns = append(patterns, pattern{kw, 1 << k})
	}
	for _, p := range pseudoPatterns {
		patterns = append(patterns, pattern{p.s, p.bit})
	}
	n := 1
	for _, p := range patterns {
		n += len(p.s)
	}
	if n > maxStates {
		return nil
	}
	// The trie: children as a dense table (0 = none; the root is state 0
	// and never a child), and the keywords ending at each node.
	trie := make([]uint16, 0, n<<8)
	trie = append(trie, make([]uint16, 256)...)
	out := make([]uint64, 1, n)
	for _, p := range patterns {
		kw := p.s
		s := 0
		for i := 0; i < len(kw); i++ {
			c := int(kw[i])
			if trie[s<<8|c] == 0 {
				trie[s<<8|c] = uint16(len(out))
				trie = append(trie, make([]uint16, 256)...)
				out = append(out, 0)
			}
			s = int(trie[s<<8|c])
		}
		out[s] |= p.bit
	}
	// Breadth-first, fill in the missing transitions from each state's
	// longest proper suffix that is also a trie node (its fail state), and
	// inherit that state's keywords. trie becomes the transition table.
	states := len(out)
	fail := make([]uint16, states)
	queue := make([]uint16, 0, states)
	for c := 0; c < 256; c++ {
		if t := trie[c]; t != 0 {
			queue = append(queue, t) // depth 1: fail to the root
		}
	}
	for h := 0; h < len(queue); h++ {
		s := int(queue[h])
		f := int(fail[s])
		out[s] |= out[f]
		for c := 0; c < 256; c++ {
			if t := trie[s<<8|c]; t != 0 {
				fail[t] = trie[f<<8|c]
				queue = append(queue, t)
			} else {
				trie[s<<8|c] = trie[f<<8|c]
			}
		}
	}
	// Fold case: keywords are lower case, so 'A'–'Z' step like 'a'–'z'.
	for s := 0; s < states; s++ {
		row := trie[s<<8 : s<<8+256]
		for c := 'A'; c <= 'Z'; c++ {
			row[c] = row[c+'a'-'A']
		}
	}
	// Number the states without output first, then those with: the root
	// stays 0 (if it has output, every state inherits it).
	row := make([]uint32, states)
	k, accept := uint32(0), uint32(0)
	for _, withOut := range [2]bool{false, true} {
		if withOut {
			accept = k << 8
		}
		for s := 0; s < states; s++ {
			if (out[s] != 0) == withOut {
				row[s] = k << 8
				k++
			}
		}
	}
	m := &keywordMatcher{next: make([]uint32, states<<8), accept: accept, out: make([]uint64, states)}
	for _, p := range patterns {
		m.maxLen = max(m.maxLen, len(p.s))
	}
	for s := 0; s < states; s++ {
		r := row[s]
		m.out[r>>8] = out[s]
		for c, t := range trie[s<<8 : s<<8+256] {
			m.next[r+uint32(c)] = row[t]
		}
	}
	return m
}

// scan returns the set of keywords (and pseudo-patterns) occurring in c
// and whether c is all ASCII. Bytes of multi-byte sequences match no
// keyword byte, so the set is also right for non-ASCII text, unless the
// text has a rune that lower-cases to an ASCII letter (bitToASCII; see
// Scoring.contentFacts).
func (m *keywordMatcher) scan(c string) (found uint64, ascii bool) {
	// The table is read without bounds checks (a compare and a branch per
	// byte under Wasm, where this loop is a third of a large split): a
	// state's row r is a multiple of 256 below len(next), so r+b is in
	// range for every byte b; TestKeywordTableRows checks the rows.
	next, out, accept := unsafe.Pointer(unsafe.SliceData(m.next)), m.out, int(m.accept)
	var r int // an int, not a uint32: Wasm then has no zero-extension in the chain
	var hi byte
	i := 0
	if ov := m.maxLen - 1; len(c) >= 64 && ov < len(c)/4 {
		// Two walks at once, over the first half and from just before
		// the second (a keyword ending there starts at most ov bytes
		// before it): each step waits on the load of the one before, so
		// two independent chains take little longer than one.
		half := len(c) / 2
		pa, pb := unsafe.Pointer(unsafe.StringData(c)), unsafe.Pointer(unsafe.StringData(c[half-ov:]))
		var rb int
		for j := 0; j < half; j++ {
			x, y := *(*byte)(unsafe.Add(pa, j)), *(*byte)(unsafe.Add(pb, j))
			hi |= x | y
			r = int(*(*uint32)(unsafe.Add(next, (r+int(x))*4)))
			rb = int(*(*uint32)(unsafe.Add(next, (rb+int(y))*4)))
			if r >= accept {
				found |= out[r>>8]
			}
			if rb >= accept {
				found |= out[rb>>8]
			}
		}
		c, i, r = c[half-ov:], half, rb // the rest of the second walk
	}
	for ; i < len(c); i++ {
		b := c[i]
		hi |= b
		r = int(*(*uint32)(unsafe.Add(next, (r+int(b))*4)))
		if r >= accept {
			found |= out[r>>8]
		}
	}
	return found, hi < 0x80
}

// countKeywordsSlow is the definition: how many of the lower-cased
// keywords occur in c lower-cased by Unicode's rules.
func countKeywordsSlow(c string, lower []string) int {
	lc := strings.ToLower(c)
	n := 0
	for _, k := range lower {
		if strings.Contains(lc, k) {
			n++
		}
	}
	return n
}
