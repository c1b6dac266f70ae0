package core

import (
	"math/bits"
	"strconv"
	"unsafe"
)

// Derived message ids (docs/spec.md#derived-ids).
//
// Frameworks keep their messages without ids, and send the whole list
// again every turn, or replace it with the compacted one and append to
// it. A message's id must therefore not depend on its position, which
// shifts when a list is replaced, but on what the message says: its
// conversation, its role as clipfold reads it, its text and its tool
// calls and results (the shape-normalized content; the exact bytes of the
// JSON are not part of it). Identical messages are told apart by an
// occurrence counter: the k-th message with the same content, among the
// call's messages without an id, is occurrence k.
//
// The id is "d_", or "clip_" for a clip-archive, then 24 hex digits (96
// bits) of FNV-1a 128 over the 16-byte FNV-1a 128 digest of the content
// followed by k in decimal. The content is serialized as
//
//	conversation_id NUL role NUL Content
//	then per entry of ToolCalls, in order: NUL ("c" | "r") NUL ID NUL Name NUL Arguments
//	then, when ToolCallID is set: NUL "t" NUL ToolCallID
//
// (role as Role.String; "c" a call, "r" a result). FNV is a few lines and
// the same in every language (tools/vectors/gen_vectors.py transcribes
// it); crypto hashes would cost the plug-in its size for nothing: these
// ids need stability, not secrecy.

// fnv128 is FNV-1a with 128-bit state (hi, lo).
type fnv128 struct{ hi, lo uint64 }

func newFNV128() fnv128 { return fnv128{0x6c62272e07bb0142, 0x62b821756295c58d} }

// write hashes s. The FNV-128 prime is 2^88 + 0x13b.
func (h *fnv128) write(s string) { h.hi, h.lo = fnvAdd(h.hi, h.lo, s) }

// writeBytes is write for bytes.
func (h *fnv128) writeBytes(s []byte) { h.hi, h.lo = fnvAdd(h.hi, h.lo, s) }

func fnvAdd[S string | []byte](hi, lo uint64, s S) (uint64, uint64) {
	for i := 0; i < len(s); i++ {
		lo ^= uint64(s[i])
		c, l := bits.Mul64(lo, 0x13b)
		hi = hi*0x13b + c + lo<<24
		lo = l
	}
	return hi, lo
}

func (h *fnv128) sum() [16]byte {
	var out [16]byte
	for i := 0; i < 8; i++ {
		out[i] = byte(h.hi >> (56 - 8*i))
		out[8+i] = byte(h.lo >> (56 - 8*i))
	}
	return out
}

// contentDigest is the FNV-1a 128 digest of m's normalized content in
// conversation conv.
func contentDigest(conv string, m *Message) [16]byte {
	h := newFNV128()
	h.write(conv)
	h.write("\x00")
	h.write(m.Role.String())
	h.write("\x00")
	h.write(m.Content)
	for i := range m.ToolCalls {
		tc := &m.ToolCalls[i]
		if tc.Result {
			h.write("\x00r\x00")
		} else {
			h.write("\x00c\x00")
		}
		h.write(tc.ID)
		h.write("\x00")
		h.write(tc.Name)
		h.write("\x00")
		h.write(tc.Arguments)
	}
	if m.ToolCallID != "" {
		h.write("\x00t\x00")
		h.write(m.ToolCallID)
	}
	return h.sum()
}

// derivedID is the id of occurrence k of a message with digest d.
func derivedID(d [16]byte, k int, archive bool) string {
	var c idChunks
	return c.derivedID(d, k, archive)
}

// idChunks hands out ids from 4 KiB chunks: a history of two million
// messages without ids then makes five hundred allocations, not two
// million (under TinyGo each allocation may start a collection over the
// whole heap; see hashindex.go). Chunks hold no pointers.
type idChunks struct{ buf []byte }

const idChunk = 4 << 10

// derivedID is the package's derivedID, its string from the chunks.
func (c *idChunks) derivedID(d [16]byte, k int, archive bool) string {
	var buf [32]byte
	h := newFNV128()
	h.writeBytes(d[:])
	h.writeBytes(strconv.AppendInt(buf[:0], int64(k), 10))
	s := h.sum()
	const maxLen = len("clip_") + 24
	if cap(c.buf)-len(c.buf) < maxLen {
		c.buf = make([]byte, 0, idChunk)
	}
	start := len(c.buf)
	if archive {
		c.buf = append(c.buf, "clip_"...)
	} else {
		c.buf = append(c.buf, "d_"...)
	}
	for _, x := range s[:12] {
		c.buf = append(c.buf, hexDigits[x>>4], hexDigits[x&0xf])
	}
	b := c.buf[start:len(c.buf):len(c.buf)]
	return unsafe.String(&b[0], len(b))
}

// AssignIDs gives every message of msgs without an ID its derived id in
// conversation conv (see above). Messages with an ID keep it and do not
// count as occurrences.
func AssignIDs(conv string, msgs []Message) {
	var seen *occurrences
	var ids idChunks
	for i := range msgs {
		m := &msgs[i]
		if m.ID != "" {
			continue
		}
		if seen == nil {
			seen = newOccurrences(len(msgs) - i)
		}
		d := contentDigest(conv, m)
		m.ID = ids.derivedID(d, seen.add(d), IsClipArchive(m))
	}
}

// ClipArchiveID is the id the clip-archive m gets: the derived id of the
// message it is rendered as, so a caller that sends it back without an id
// (every shape but the native one carries none) sends the same message.
func ClipArchiveID(conv string, m *InsertMessage) string {
	msg := Message{Role: RoleSystem, Content: m.Content}
	return derivedID(contentDigest(conv, &msg), 0, true)
}

// DerivedID is the derived id of m in conversation conv when no other
// message of the call has the same content (occurrence 0): the id a
// replaced message without an id of its own gets, so that a caller who
// sends it back sends the same message.
func DerivedID(conv string, m *Message) string {
	return derivedID(contentDigest(conv, m), 0, IsClipArchive(m))
}
