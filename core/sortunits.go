package core

import (
	"cmp"
	"math"
	"slices"
)

// unit is a tool unit (or single message) of a split: the best score of
// its members and its first member's index.
type unit struct {
	score float64
	first int
}

// compareUnits is the split's order: ascending score as cmp.Compare has
// it (NaN first, -0 equal to +0), ties by first.
func compareUnits(a, b unit) int {
	if c := cmp.Compare(a.score, b.score); c != 0 {
		return c
	}
	return cmp.Compare(a.first, b.first)
}

// sortUnits sorts units, given in ascending first, by compareUnits. Long
// lists take a stable LSD radix sort on the scores' bits, which keeps
// ties in their given order: a comparison sort calls its comparator
// through a closure some 14 times per unit at 10k units, and under
// standard Go's Wasm each such call costs more than a radix pass. The
// sort keys replace the scores in place (as bit patterns), so the only
// extra memory is one copy of the list: a split of 10k messages holds
// everything it allocates until it returns. Callers must not read the
// scores afterwards. TestSortUnits holds it to slices.SortFunc.
func sortUnits(order []unit) {
	if len(order) < 256 {
		slices.SortFunc(order, compareUnits)
		return
	}
	// The keys are the scores' bits, read with math.Float64bits inline (a
	// closure call per read was 150,000 calls per 10k-unit sort under
	// TinyGo, which does not inline it at -opt=z).
	for i := range order {
		order[i].score = math.Float64frombits(orderedBits(order[i].score))
	}
	src, dst := order, make([]unit, len(order))
	var count [256]int
	for shift := uint(0); shift < 64; shift += 8 {
		count = [256]int{}
		for i := range src {
			count[byte(math.Float64bits(src[i].score)>>shift)]++
		}
		if count[byte(math.Float64bits(src[0].score)>>shift)] == len(src) {
			continue // every key has this byte: the pass would change nothing
		}
		pos := 0
		for b, c := range count {
			count[b] = pos
			pos += c
		}
		for i := range src {
			d := byte(math.Float64bits(src[i].score) >> shift)
			dst[count[d]] = src[i]
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &order[0] {
		copy(order, src)
	}
}

// orderedBits maps a float64 to a uint64 whose unsigned order is
// cmp.Compare's: NaN lowest, -0 and +0 equal.
func orderedBits(f float64) uint64 {
	switch {
	case f != f:
		return 0
	case f == 0:
		f = 0 // +0
	}
	b := math.Float64bits(f)
	if b>>63 != 0 {
		return ^b // negative: larger magnitude, smaller key
	}
	return b | 1<<63
}
