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
// resume point) from the head to their block by comparing PC_B (loops.go).
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
	Loops     int // loops made Wasm loops (loops.go)
	BackEdges int // their back edges, now direct branches
}

func (s Stats) String() string {
	return fmt.Sprintf("%d of %d jumps threaded in %d of %d functions (%d skipped); %d loops with %d back edges made Wasm loops", s.Threaded, s.Jumps, s.Rewritten, s.Funcs, s.Skipped, s.Loops, s.BackEdges)
}

var errTruncated = errors.New("truncated")

// Reloop turns loops.go's pass on (tests and comparisons turn it off).
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
		if id == 10 {
			if payload, err = threadCode(payload, &st); err != nil {
				return nil, st, fmt.Errorf("jumpthread: code section: %w", err)
			}
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
		nb, jumps, threaded, err := threadBody(body)
		if err == nil && Reloop {
			var loops, backs int
			if nb, loops, backs = reloop(nb); loops > 0 {
				st.Loops += loops
				st.BackEdges += backs
				if threaded == 0 {
					st.Rewritten++
				}
			}
		}
		switch {
		case err != nil:
			st.Skipped++
			nb = body
		case threaded > 0:
			st.Rewritten++
		}
		if err == nil {
			st.Jumps += jumps
			st.Threaded += threaded
		}
		out = appendU32(out, uint32(len(nb)))
		out = append(out, nb...)
	}
	if r.i != len(payload) {
		return nil, fmt.Errorf("%d bytes after the last function", len(payload)-r.i)
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

// threadBody rewrites one function body (its locals and expression). It
// returns the body unchanged when threaded is 0.
func threadBody(body []byte) (out []byte, jumps, threaded int, err error) {
	r := reader{b: body}
	if err := r.locals(); err != nil {
		return nil, 0, 0, err
	}
	out = make([]byte, 0, len(body))
	out = append(out, body[:r.i]...)

	var (
		stack     []label
		nextID    int
		entryLoop = -1  // id of the dispatch loop, once found
		targets   []int // the dispatch br_table: index → label id (last: default)
		branched  bool  // a branch seen before the dispatch: not Go's shape
		prev      = [2]int{-1, -1}
	)
	for r.i < len(body) {
		start, ostart := r.i, len(out)
		op, err := r.byte()
		if err != nil {
			return nil, 0, 0, err
		}
		switch op {
		case opBlock, opLoop, opIf:
			if err := r.blockType(); err != nil {
				return nil, 0, 0, err
			}
			stack = append(stack, label{id: nextID, kind: op})
			nextID++
		case opEnd:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case opBr:
			d, err := r.u32()
			if err != nil {
				return nil, 0, 0, err
			}
			if entryLoop < 0 {
				branched = true
				break
			}
			if uint64(d) >= uint64(len(stack)) || stack[len(stack)-1-int(d)].id != entryLoop {
				break
			}
			k, ok := setsPCB(out, prev)
			if !ok {
				break
			}
			jumps++
			tgt := targets[len(targets)-1]
			if k < len(targets)-1 {
				tgt = targets[k]
			}
			for p := len(stack) - 1; p >= 0; p-- {
				if stack[p].id == tgt {
					out = append(out, opBr)
					out = appendU32(out, uint32(len(stack)-1-p))
					threaded++
					prev = [2]int{prev[1], ostart}
					goto next
				}
			}
		case opBrTable:
			n, err := r.u32()
			if err != nil {
				return nil, 0, 0, err
			}
			if uint64(n) > uint64(len(body)) {
				return nil, 0, 0, errTruncated
			}
			depths := make([]uint32, n+1)
			for k := range depths {
				if depths[k], err = r.u32(); err != nil {
					return nil, 0, 0, err
				}
			}
			if entryLoop < 0 && !branched && prev[1] >= 0 && len(out)-prev[1] == 2 && out[prev[1]] == opLocalGet && out[prev[1]+1] == 0 {
				entryLoop, targets = dispatch(stack, depths)
			}
			branched = true
		default:
			if err := r.skipImmediates(op); err != nil {
				return nil, 0, 0, err
			}
			if op == 0x0D { // br_if
				branched = true
			}
		}
		out = append(out, body[start:r.i]...)
		prev = [2]int{prev[1], ostart}
	next:
	}
	if threaded == 0 {
		return body, jumps, 0, nil
	}
	return out, jumps, threaded, nil
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

// setsPCB matches "i32.const K; local.set 0" as the last two
// instructions written to out (prev holds where they start) and returns K.
func setsPCB(out []byte, prev [2]int) (int, bool) {
	c, set := prev[0], prev[1]
	if c < 0 || set < 0 || out[c] != opI32Const || len(out)-set != 2 || out[set] != opLocalSet || out[set+1] != 0 {
		return 0, false
	}
	r := reader{b: out[:set], i: c + 1}
	v, err := r.s64()
	if err != nil || r.i != set || v < 0 || v > 1<<30 {
		return 0, false
	}
	return int(v), true
}
