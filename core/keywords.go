package core

import (
	"strings"
	"unsafe"

	"github.com/clipfold/clipfold/internal/le"
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
	// A state's row is its 256 entries, one per byte; r, the row's byte
	// offset in next (the state's number times 1024), is what every entry
	// holds, so that a step is one add and one load: the entry at byte
	// offset r+4b is the row of the state after byte b. States at which
	// some keyword ends are numbered last: their rows are accept and up.
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
			accept = k << 10
		}
		for s := 0; s < states; s++ {
			if (out[s] != 0) == withOut {
				row[s] = k << 10
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
		m.out[r>>10] = out[s]
		for c, t := range trie[s<<8 : s<<8+256] {
			m.next[r>>2+uint32(c)] = row[t]
		}
	}
	return m
}

// scan returns the set of keywords (and pseudo-patterns) occurring in c
// and whether c is all ASCII. Bytes of multi-byte sequences match no
// keyword byte, so the set is also right for non-ASCII text, unless the
// text has a rune that lower-cases to an ASCII letter (bitToASCII; see
// Scoring.contentFacts).
//
// This loop is a third of a large split, so it is written for the two
// engines that run the plug-in. Two walks at once: each step waits on the
// load of the one before, and under V8 two independent chains take little
// longer than one (split of 10k messages in Node ~23 → ~20 ms). Text read
// eight bytes per load, the bytes taken out of the word by shifts: under
// wazero every load is bounds-checked, half a dozen instructions (Go
// host, 10k: 33–34 → 29.5–30 ms; V8 unchanged).
func (m *keywordMatcher) scan(c string) (found uint64, ascii bool) {
	// The table is read without bounds checks (a compare and a branch per
	// byte under Wasm): an entry is the byte offset of a state's row, a
	// multiple of 1024 inside the table, so adding four times any byte
	// stays in it; TestKeywordTableRows checks the rows.
	next, out, accept := unsafe.Pointer(unsafe.SliceData(m.next)), m.out, int(m.accept)
	var r int     // an int, not a uint32: Wasm then has no zero-extension in the chain
	var hw uint64 // every word read, or-ed
	var hi byte   // every byte read alone, or-ed
	i := 0
	if ov := m.maxLen - 1; len(c) >= 64 && ov < len(c)/4 {
		// Two walks at once, over the first half and from just before
		// the second (a keyword ending there starts at most ov bytes
		// before it).
		half := len(c) / 2 &^ 7
		pa, pb := unsafe.Pointer(unsafe.StringData(c)), unsafe.Pointer(unsafe.StringData(c[half-ov:]))
		var rb int
		for j := 0; j < half; j += 8 {
			x, y := le.Load64(unsafe.Add(pa, j)), le.Load64(unsafe.Add(pb, j))
			hw |= x | y
			r = int(*(*uint32)(unsafe.Add(next, r+int(x>>0&0xff)<<2)))
			rb = int(*(*uint32)(unsafe.Add(next, rb+int(y>>0&0xff)<<2)))
			if r >= accept {
				found |= out[r>>10]
			}
			if rb >= accept {
				found |= out[rb>>10]
			}
			r = int(*(*uint32)(unsafe.Add(next, r+int(x>>8&0xff)<<2)))
			rb = int(*(*uint32)(unsafe.Add(next, rb+int(y>>8&0xff)<<2)))
			if r >= accept {
				found |= out[r>>10]
			}
			if rb >= accept {
				found |= out[rb>>10]
			}
			r = int(*(*uint32)(unsafe.Add(next, r+int(x>>16&0xff)<<2)))
			rb = int(*(*uint32)(unsafe.Add(next, rb+int(y>>16&0xff)<<2)))
			if r >= accept {
				found |= out[r>>10]
			}
			if rb >= accept {
				found |= out[rb>>10]
			}
			r = int(*(*uint32)(unsafe.Add(next, r+int(x>>24&0xff)<<2)))
			rb = int(*(*uint32)(unsafe.Add(next, rb+int(y>>24&0xff)<<2)))
			if r >= accept {
				found |= out[r>>10]
			}
			if rb >= accept {
				found |= out[rb>>10]
			}
			r = int(*(*uint32)(unsafe.Add(next, r+int(x>>32&0xff)<<2)))
			rb = int(*(*uint32)(unsafe.Add(next, rb+int(y>>32&0xff)<<2)))
			if r >= accept {
				found |= out[r>>10]
			}
			if rb >= accept {
				found |= out[rb>>10]
			}
			r = int(*(*uint32)(unsafe.Add(next, r+int(x>>40&0xff)<<2)))
			rb = int(*(*uint32)(unsafe.Add(next, rb+int(y>>40&0xff)<<2)))
			if r >= accept {
				found |= out[r>>10]
			}
			if rb >= accept {
				found |= out[rb>>10]
			}
			r = int(*(*uint32)(unsafe.Add(next, r+int(x>>48&0xff)<<2)))
			rb = int(*(*uint32)(unsafe.Add(next, rb+int(y>>48&0xff)<<2)))
			if r >= accept {
				found |= out[r>>10]
			}
			if rb >= accept {
				found |= out[rb>>10]
			}
			r = int(*(*uint32)(unsafe.Add(next, r+int(x>>56&0xff)<<2)))
			rb = int(*(*uint32)(unsafe.Add(next, rb+int(y>>56&0xff)<<2)))
			if r >= accept {
				found |= out[r>>10]
			}
			if rb >= accept {
				found |= out[rb>>10]
			}
		}
		c, i, r = c[half-ov:], half, rb // the rest of the second walk
	}
	p := unsafe.Pointer(unsafe.StringData(c))
	for ; i+8 <= len(c); i += 8 {
		w := le.Load64(unsafe.Add(p, i))
		hw |= w
		r = int(*(*uint32)(unsafe.Add(next, r+int(w>>0&0xff)<<2)))
		if r >= accept {
			found |= out[r>>10]
		}
		r = int(*(*uint32)(unsafe.Add(next, r+int(w>>8&0xff)<<2)))
		if r >= accept {
			found |= out[r>>10]
		}
		r = int(*(*uint32)(unsafe.Add(next, r+int(w>>16&0xff)<<2)))
		if r >= accept {
			found |= out[r>>10]
		}
		r = int(*(*uint32)(unsafe.Add(next, r+int(w>>24&0xff)<<2)))
		if r >= accept {
			found |= out[r>>10]
		}
		r = int(*(*uint32)(unsafe.Add(next, r+int(w>>32&0xff)<<2)))
		if r >= accept {
			found |= out[r>>10]
		}
		r = int(*(*uint32)(unsafe.Add(next, r+int(w>>40&0xff)<<2)))
		if r >= accept {
			found |= out[r>>10]
		}
		r = int(*(*uint32)(unsafe.Add(next, r+int(w>>48&0xff)<<2)))
		if r >= accept {
			found |= out[r>>10]
		}
		r = int(*(*uint32)(unsafe.Add(next, r+int(w>>56&0xff)<<2)))
		if r >= accept {
			found |= out[r>>10]
		}
	}
	for ; i < len(c); i++ {
		b := c[i]
		hi |= b
		r = int(*(*uint32)(unsafe.Add(next, r+int(b)<<2)))
		if r >= accept {
			found |= out[r>>10]
		}
	}
	return found, hi < 0x80 && hw&0x8080808080808080 == 0
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
