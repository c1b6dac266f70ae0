package api

import "strings"

// An arena holds the bytes that decoded values keep past decoding (each
// message's Raw and the strings viewing it, a request message's text, a
// batch's content) under TinyGo, in chunks that an Env reusing memory
// keeps from call to call.
//
// Those values must not point into the input: TinyGo's collector finds an
// object's head by walking back from each interior pointer, 64 bytes a
// step, at every collection, so 200,000 strings viewing a multi-megabyte
// input made one collection take seconds. They used to get an allocation
// each instead, which made a 2,000,000-message input two million
// allocations and a collector marking two million objects. In 4 KiB
// chunks a walk is at most 64 steps, a call allocates one chunk per 4 KiB
// of messages (none once the Env has made enough), and a chunk holds no
// pointers, so the collector never scans it. Go's collector finds heads in
// constant time, so the standard build keeps views into the input
// (copyMessages is false) and an arena is never used there.
type arena struct {
	chunks [][]byte // every chunk made so far
	next   int      // chunks[next] is being filled
	used   int      // bytes of chunks[next] handed out
}

// arenaChunk is a chunk's size; longer values get an allocation of
// their own.
const arenaChunk = 4 << 10

// copy returns a copy of s, its capacity its length, from the arena, or
// from an allocation of its own when a is nil or s is long.
func (a *arena) copy(s string) []byte {
	if a == nil || len(s) > arenaChunk/4 {
		return append(make([]byte, 0, len(s)), s...)
	}
	if a.next < len(a.chunks) && a.used+len(s) > arenaChunk {
		a.next, a.used = a.next+1, 0
	}
	if a.next == len(a.chunks) {
		a.chunks = append(a.chunks, make([]byte, arenaChunk))
	}
	b := a.chunks[a.next][a.used : a.used+len(s) : a.used+len(s)]
	copy(b, s)
	a.used += len(s)
	return b
}

// keep returns a decoded string that outlives decoding: under TinyGo a
// copy (from the arena when there is one), so that it does not point into
// the input; under Go s itself.
func (a *arena) keep(s string) string {
	if !copyMessages {
		return s
	}
	if a == nil {
		return strings.Clone(s)
	}
	return bytesToString(a.copy(s))
}

// reset makes every chunk free for the next call. Nothing may still point
// into them.
func (a *arena) reset() { a.next, a.used = 0, 0 }

// keep is arena.keep without an arena.
func keep(s string) string { return (*arena)(nil).keep(s) }
