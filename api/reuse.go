package api

import "github.com/clipfold/clipfold/core"

// Memory an Env's calls reuse, when the plug-in asks for it (ReuseMemory).
//
// Under TinyGo the collector scans the plug-in's static data
// conservatively (tinygo-org/tinygo#4704, #5249): a constant that happens
// to hold a number inside the heap keeps whatever object lies there alive
// for good. A multi-megabyte buffer made and dropped per call is almost
// always hit by one of those numbers, so an instance's memory grew by
// about an input and an output per 10k-message call. Buffers kept and
// reused from call to call are never garbage, so nothing large is left
// to be pinned. Native callers (tests, the Go host's own decoding) leave
// it off: their Env may be shared, and Go's collector has no such problem.
type scratch struct {
	arena    arena          // the bytes decoded values keep (under TinyGo)
	msgs     []core.Message // the largest message slice so far, zero beyond dirty
	dirty    int            // msgs[:dirty] may hold this call's messages
	out      []byte         // the largest output buffer so far
	msgsBusy bool           // msgs is handed out in this call
	outBusy  bool           // out is handed out in this call
}

// ReuseMemory makes e keep its message slice and output buffer from one
// call to the next. Calls must not overlap, and EndCall must follow each
// call once its output has been read or copied.
func (e *Env) ReuseMemory() { e.scratch = &scratch{} }

// EndCall ends a call: the messages it decoded are cleared, so that they
// keep nothing alive, and both buffers are free for the next call.
func (e *Env) EndCall() {
	s := e.scratch
	if s == nil {
		return
	}
	clear(s.msgs[:s.dirty])
	s.dirty = 0
	s.arena.reset()
	s.msgsBusy, s.outBusy = false, false
}

// messages is decodeMessages into the reused slice, when there is one
// and it is free.
func (e *Env) messages(o object, key string, rules msgRules) ([]core.Message, core.HistoryShape, error) {
	s := e.scratch
	if s == nil || s.msgsBusy {
		return decodeMessagesInto(nil, e.arena(), o, key, rules)
	}
	s.msgsBusy = true
	msgs, shape, err := decodeMessagesInto(s.msgs[:0], &s.arena, o, key, rules)
	if cap(msgs) > cap(s.msgs) { // a larger slice was made: keep it instead
		s.msgs = msgs[:cap(msgs)]
	}
	// The decoder writes at most one element past those it returns (the
	// one whose error it reports).
	s.dirty = min(len(msgs)+1, len(s.msgs))
	return msgs, shape, err
}

// outBuffer returns an empty buffer of capacity at least n for an
// export's output: the reused one when it is free and large enough.
func (e *Env) outBuffer(n int) []byte {
	s := e.scratch
	if s == nil || s.outBusy {
		return make([]byte, 0, n)
	}
	s.outBusy = true
	if cap(s.out) < n {
		s.out = make([]byte, 0, n)
	}
	return s.out[:0]
}

// arena returns the arena of the Env's reused memory, or nil.
func (e *Env) arena() *arena {
	if e.scratch == nil {
		return nil
	}
	return &e.scratch.arena
}
