// Package jumpthread rewrites a module built by standard Go for
// GOARCH=wasm so that its forward jumps branch straight to their target
// instead of through the function's dispatch table.
//
// Go's Wasm backend compiles every function into one loop around a
// br_table (cmd/internal/obj/wasm: the "entryPointLoop"). Each basic block
// that is the target of a jump, or a place to resume after a call,
// starts right after the end of one of the blocks nested inside that
// loop, and every jump is
//
//	i32.const K ; local.set 0 (PC_B) ; br $entryPointLoop
//
// so it goes back to the top of the function and through the br_table,
// which picks block K's end. The br_table is an indirect jump shared by
// all the jumps of the function, and no runtime we host on threads
// through it (Cranelift and wazero compile it as written).
//
// When block K still encloses the jump (the target lies ahead), "br to
// the end of block K" lands on the same instruction with the same
// locals and memory: the path it skips (enter the loop, enter empty
// blocks, read PC_B, br_table) has no effects. Thread replaces the br's
// depth and nothing else, keeping the local.set so that PC_B holds what
// it held before.
//
// Backward jumps need more: the target's block has already ended. For an
// innermost loop that at most two values of PC_B can enter other than at
// its head, Thread moves the blocks of the loop's body into a new Wasm
// loop at the head, makes the back edges direct branches to it, and sends
// the other entries (a jump into a rotated loop's condition, a call's
// resume point) from the head to their block by comparing PC_B (rewrite.go).
// Other loops, and resumption after a call elsewhere, keep the table.
//
// Only the exact shape Go emits is rewritten; a function that does not
// have it, or that uses an instruction this package does not decode, is
// copied unchanged. The output carries a custom section naming this pass,
// and a module that has it is returned as it is.
package jumpthread

import (
	"errors"
	"fmt"
)

// Stats says what Thread did.
type Stats struct {
	Funcs     int // function bodies in the code section
	Rewritten int // bodies with at least one jump threaded
	Jumps     int // jumps through the dispatch loop
	Threaded  int // of those, now direct branches
	Skipped   int // bodies left alone because they could not be decoded
	Loops     int // loops made Wasm loops (rewrite.go)
	BackEdges int // their back edges, now direct branches
}

func (s Stats) String() string {
	return fmt.Sprintf("%d of %d jumps threaded in %d of %d functions (%d skipped); %d loops with %d back edges made Wasm loops", s.Threaded, s.Jumps, s.Rewritten, s.Funcs, s.Skipped, s.Loops, s.BackEdges)
}

var (
	errTruncated = errors.New("truncated")
	errDepth     = errors.New("branch depth beyond the enclosing labels")
)

// Reloop turns the loop pass (rewrite.go) on (tests and comparisons turn it off).
var Reloop = true

// Thread returns module with the forward jumps of its Go functions
// threaded. Sections other than the code section are copied as they are;
// the output is invalid only if module was.
func Thread(module []byte) ([]byte, Stats, error) {
	var st Stats
	if len(module) < 8 || string(module[:4]) != "\x00asm" || module[4] != 1 || module[5] != 0 || module[6] != 0 || module[7] != 0 {
		return nil, st, errors.New("jumpthread: not a WebAssembly 1.0 binary module")
	}
	if hasMarker(module) {
		return module, st, nil
	}
	r := reader{b: module, i: 8}
	out := make([]byte, 0, len(module)+64)
	out = append(out, module[:8]...)
	// Mark the module first (custom sections may come anywhere): the loop
	// pass must not run on its own output. The section is not empty, as
	// wazero 1.12 fails to read an empty custom section at a module's end.
	out = append(out, 0)
	out = appendU32(out, uint32(1+len(marker)+len(markerData)))
	out = appendU32(out, uint32(len(marker)))
	out = append(out, marker...)
	out = append(out, markerData...)
	for r.i < len(module) {
		start := r.i
		id, err := r.byte()
		if err != nil {
			return nil, st, err
		}
		size, err := r.u32()
		if err != nil {
			return nil, st, fmt.Errorf("jumpthread: section %d: %w", id, err)
		}
		if uint64(size) > uint64(len(module)-r.i) {
			return nil, st, fmt.Errorf("jumpthread: section %d: size %d beyond the end", id, size)
		}
		payload := module[r.i : r.i+int(size)]
		r.i += int(size)
		if id != 10 {
			out = append(out, module[start:r.i]...) // as it was, byte for byte
			continue
		}
		if payload, err = threadCode(payload, &st); err != nil {
			return nil, st, fmt.Errorf("jumpthread: code section: %w", err)
		}
		out = append(out, id)
		out = appendU32(out, uint32(len(payload)))
		out = append(out, payload...)
	}
	return out, st, nil
}

// markerData is the content of the marker section: the pass's version.
const markerData = "1"

// marker names the custom section Thread adds to its output.
const marker = "clipfold.jumpthread"

// hasMarker reports whether module has Thread's custom section.
func hasMarker(module []byte) bool {
	r := reader{b: module, i: 8}
	for r.i < len(module) {
		id, err := r.byte()
		if err != nil {
			return false
		}
		size, err := r.u32()
		if err != nil || uint64(size) > uint64(len(module)-r.i) {
			return false
		}
		end := r.i + int(size)
		if id == 0 {
			if n, err := r.u32(); err == nil && r.i <= end && uint64(n) <= uint64(end-r.i) && string(module[r.i:r.i+int(n)]) == marker {
				return true
			}
		}
		r.i = end
	}
	return false
}

// threadCode rewrites a code section's payload.
func threadCode(payload []byte, st *Stats) ([]byte, error) {
	rewritten := st.Rewritten
	r := reader{b: payload}
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	out := appendU32(make([]byte, 0, len(payload)), n)
	for f := uint32(0); f < n; f++ {
		size, err := r.u32()
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", f, err)
		}
		if uint64(size) > uint64(len(payload)-r.i) {
			return nil, fmt.Errorf("function %d: size %d beyond the end", f, size)
		}
		body := payload[r.i : r.i+int(size)]
		r.i += int(size)
		st.Funcs++
		nb, c, err := rewrite(body)
		if err != nil {
			st.Skipped++
		}
		if c.threaded > 0 || c.loops > 0 {
			st.Rewritten++
		}
		st.Jumps += c.jumps
		st.Threaded += c.threaded
		st.Loops += c.loops
		st.BackEdges += c.backs
		out = appendU32(out, uint32(len(nb)))
		out = append(out, nb...)
	}
	if r.i != len(payload) {
		return nil, fmt.Errorf("%d bytes after the last function", len(payload)-r.i)
	}
	if st.Rewritten == rewritten {
		return payload, nil // as it was, byte for byte
	}
	return out, nil
}

// Opcodes this package looks at.
const (
	opBlock    = 0x02
	opLoop     = 0x03
	opIf       = 0x04
	opElse     = 0x05
	opEnd      = 0x0B
	opBr       = 0x0C
	opBrTable  = 0x0E
	opLocalGet = 0x20
	opLocalSet = 0x21
	opI32Const = 0x41
)

// label is an entry of the label stack while walking a body.
type label struct {
	id   int
	kind byte // opBlock, opLoop or opIf
}

// dispatch recognizes Go's entry dispatch, given a br_table that follows
// "local.get 0" as the function's first branch: it sits inside nothing
// but empty blocks, inside a loop that is the outermost label or directly
// inside the outermost block (Go's unwindExit), and selects only those
// blocks. It returns the loop's id and, for each table entry, the id of
// the block it selects, or -1 when this is not that shape.
func dispatch(stack []label, depths []uint32) (int, []int) {
	p := len(stack) - 1
	for p >= 0 && stack[p].kind == opBlock {
		p--
	}
	if p < 0 || p > 1 || stack[p].kind != opLoop || (p == 1 && stack[0].kind != opBlock) {
		return -1, nil
	}
	targets := make([]int, len(depths))
	for k, d := range depths {
		q := len(stack) - 1 - int(d)
		if uint64(d) >= uint64(len(stack)) || q <= p {
			return -1, nil // every entry selects one of the loop's blocks
		}
		targets[k] = stack[q].id
	}
	return stack[p].id, targets
}
