package core

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
)

// Hash tables for the per-message bookkeeping of large histories: which
// ids repeat (FirstDuplicate) and how often each content occurs
// (AssignIDs). Each is one or two slices made up front, with no
// allocation per key and nothing for a collector to scan: under TinyGo a
// Go map of two million keys allocates as it fills, and each allocation
// may start a collection over the whole heap (decodeHistory of a 64 MiB
// history spent 88% of a minute in them). Probing is linear over a table
// at most half full; the hash is keyed by a random seed, so that no input
// can be made to collide on purpose.

// hashSeed keys the hashes below. The tables' answers never depend on it.
var hashSeed = rand.Uint64()

const (
	hashK0 = 0xa0761d6478bd642f
	hashK1 = 0xe7037ed1a0b428db
	hashK2 = 0x8ebc6af09c88c6e3
)

// mix is a multiply-fold: the high and low halves of a×b, xored.
func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// hashString is a seeded hash of s, eight bytes a step.
func hashString(s string, seed uint64) uint64 {
	h := mix(seed^hashK0, uint64(len(s))^hashK1)
	for len(s) >= 8 {
		h = mix(h^le64(s), hashK1)
		s = s[8:]
	}
	var t uint64
	for i := 0; i < len(s); i++ {
		t |= uint64(s[i]) << (8 * i)
	}
	return mix(h^t, hashK2)
}

// tableSize is the number of slots for n keys: a power of two at least
// twice n (and at least 8), and its mask.
func tableSize(n int) (int, uint64) {
	size := 8
	for size < 2*n {
		size <<= 1
	}
	return size, uint64(size - 1)
}

// FirstDuplicate returns the smallest i whose key(i) equals key(j) of an
// earlier j, and that j (its first occurrence), or -1, -1 when the n
// keys all differ.
func FirstDuplicate(n int, key func(i int) string) (i, j int) {
	size, mask := tableSize(n)
	// A slot holds the key's hash in its high half and 1 + its index in
	// the low half (0: empty), so that probing past other keys reads no
	// key (under Wasm each key is a cache miss into the messages).
	slots := make([]uint64, size)
	for i := 0; i < n; i++ {
		k := key(i)
		h := hashString(k, hashSeed)
		tag := h &^ (1<<32 - 1)
		for p := h & mask; ; p = (p + 1) & mask {
			s := slots[p]
			if s == 0 {
				slots[p] = tag | uint64(i+1)
				break
			}
			if s&^(1<<32-1) == tag && key(int(uint32(s)-1)) == k {
				return i, int(uint32(s) - 1)
			}
		}
	}
	return -1, -1
}

// occurrences counts digests: add returns how many times d was added
// before.
type occurrences struct {
	slots  []int32 // 1 + the index in keys of the digest there; 0 empty
	keys   [][16]byte
	counts []int32
	mask   uint64
}

// newOccurrences makes room for n distinct digests.
func newOccurrences(n int) *occurrences {
	size, mask := tableSize(n)
	return &occurrences{slots: make([]int32, size), keys: make([][16]byte, 0, n), counts: make([]int32, 0, n), mask: mask}
}

func digestHash(d *[16]byte) uint64 {
	return mix(binary.LittleEndian.Uint64(d[:8])^hashSeed, binary.LittleEndian.Uint64(d[8:])^hashK0)
}

func (o *occurrences) add(d [16]byte) int {
	if 2*(len(o.keys)+1) > len(o.slots) { // more than the room made: rehash
		size, mask := tableSize(2 * len(o.keys))
		o.slots, o.mask = make([]int32, size), mask
		for k := range o.keys {
			p := digestHash(&o.keys[k]) & mask
			for o.slots[p] != 0 {
				p = (p + 1) & mask
			}
			o.slots[p] = int32(k + 1)
		}
	}
	for p := digestHash(&d) & o.mask; ; p = (p + 1) & o.mask {
		s := o.slots[p]
		if s == 0 {
			o.keys = append(o.keys, d)
			o.counts = append(o.counts, 1)
			o.slots[p] = int32(len(o.keys))
			return 0
		}
		if o.keys[s-1] == d {
			k := o.counts[s-1]
			o.counts[s-1] = k + 1
			return int(k)
		}
	}
}

// u64Counts maps uint64 keys (hashes of words and sentences) to int32
// values, as a Go map would, in one slice that doubles when half full:
// a few allocations for any number of keys (see the top of the file).
// Keys are mixed with the seed before probing, since they may come from
// the input.
type u64Counts struct {
	slots []u64Slot
	n     int
	mask  uint64
}

type u64Slot struct {
	key  uint64
	val  int32
	full bool
}

// newU64Counts makes room for n keys.
func newU64Counts(n int) *u64Counts {
	size, mask := tableSize(n)
	return &u64Counts{slots: make([]u64Slot, size), mask: mask}
}

// get returns k's value and whether k is there.
func (m *u64Counts) get(k uint64) (int32, bool) {
	for p := mix(k^hashSeed, hashK1) & m.mask; ; p = (p + 1) & m.mask {
		s := &m.slots[p]
		if !s.full {
			return 0, false
		}
		if s.key == k {
			return s.val, true
		}
	}
}

// at returns where k's value is, adding k with 0 if it is not there.
// The pointer is good until the next call of at.
func (m *u64Counts) at(k uint64) *int32 {
	if 2*(m.n+1) > len(m.slots) {
		old := m.slots
		size, mask := tableSize(2 * (m.n + 1))
		m.slots, m.mask, m.n = make([]u64Slot, size), mask, 0
		for i := range old {
			if old[i].full {
				*m.at(old[i].key) = old[i].val
			}
		}
	}
	for p := mix(k^hashSeed, hashK1) & m.mask; ; p = (p + 1) & m.mask {
		s := &m.slots[p]
		if !s.full {
			s.key, s.full = k, true
			m.n++
			return &s.val
		}
		if s.key == k {
			return &s.val
		}
	}
}
