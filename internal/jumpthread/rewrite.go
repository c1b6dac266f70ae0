package jumpthread

import (
	"errors"
	"slices"
)

// A body is decoded once (decodeShape: its instructions, the dispatch
// table, and the segments the table selects among) and written once
// (emit): forward jumps to the block that ends at their target, and the
// loops planLoops picks made Wasm loops.
//
// Loops: a loop's back edge goes through the dispatch table. For an
// innermost loop that at most maxChecks values of PC_B other than the
// head's can enter, the blocks of its body are moved inside a new Wasm
// loop placed at the head, the back edges become direct branches to it,
// and the other entries are sent on from the head by comparing PC_B
// (which the fall-in from segment H-1 sets, since after an indirect call
// Go leaves anything in it):
//
//	block B_{J+1}                      block B_{J+1}
//	  block B_J                          block B_H
//	    …                                  … dispatch …
//	      block B_H                        end                 ; seg H-1 falls in
//	        … dispatch …                   loop L
//	      end  seg H            ⇒            block B_J … block B_{H+1}
//	      end  seg H+1                         seg H           ; back edge: br L
//	    …                                    end  seg H+1 …
//	  end  seg J                           end  seg J
//	end  seg J+1                         end (L)
//	                                   end  seg J+1
//
// The dispatch table can no longer reach B_{H+1}..B_J directly: its
// entries for them point at B_H, and the checks at the head send each
// PC_B value that can arrive there (a jump from before the loop or from
// after it, a call's resume point) to its block. A loop with more such
// values keeps the table.

// funcLabel is the label of the function body itself (a br to it returns).
const funcLabel = -2

// inst is one decoded instruction of a body.
type inst struct {
	start, end int   // its bytes in the body
	op         byte  // first byte
	label      int   // block/loop/if: the label it opens
	target     int   // br/br_if: the label it branches to
	targets    []int // br_table: the labels it branches to (last: default)
	k          int   // a jump (br after "i32.const k; local.set 0"): k; else -1
	viaTable   bool  // a br to the dispatch loop
	seg        int   // the segment it is in (-1 before the dispatch)
}

// shape is a function body decoded for relooping.
type shape struct {
	body     []byte
	code     int // where the expression starts (after the locals)
	insts    []inst
	entry    int   // the dispatch loop's label
	dispatch int   // index of the dispatch br_table
	blocks   []int // segment → the block whose end starts it, innermost first
	ends     []int // segment → index of that end instruction
	openers  []int // segment → index of that block's opening instruction
	segOf    map[int]int
	resumes  []int // PC_B values of return addresses this body stores
}

// decodeShape decodes a body as Go made it. It returns nil, and no
// error, for a body without Go's dispatch.
func decodeShape(body []byte) (*shape, error) {
	r := reader{b: body}
	if err := r.locals(); err != nil {
		return nil, err
	}
	sh := &shape{body: body, code: r.i, entry: -1, dispatch: -1, segOf: map[int]int{}}
	var stack []label
	openAt := map[int]int{} // label → index of its opener
	nextID, seg := 0, -1
	branched := false // a branch before the dispatch: not Go's shape
	for r.i < len(body) {
		in := inst{start: r.i, label: -1, target: -1, k: -1}
		op, err := r.byte()
		if err != nil {
			return nil, err
		}
		in.op = op
		switch op {
		case opBlock, opLoop, opIf:
			if err := r.blockType(); err != nil {
				return nil, err
			}
			in.label = nextID
			openAt[nextID] = len(sh.insts)
			stack = append(stack, label{id: nextID, kind: op})
			nextID++
		case opEnd:
			if len(stack) == 0 {
				break
			}
			id := stack[len(stack)-1].id
			stack = stack[:len(stack)-1]
			if s, ok := sh.segOf[id]; ok && sh.dispatch >= 0 {
				seg = s
				sh.ends[s] = len(sh.insts)
			}
			in.label = id
		case opBr, 0x0D:
			if in.target, err = r.branch(stack); err != nil {
				return nil, err
			}
			branched = branched || sh.dispatch < 0
			in.viaTable = op == opBr && in.target == sh.entry
			if op == opBr && len(sh.insts) >= 2 {
				c, set := sh.insts[len(sh.insts)-2], sh.insts[len(sh.insts)-1]
				if c.op == opI32Const && set.op == opLocalSet && set.end-set.start == 2 && body[set.start+1] == 0 {
					cr := reader{b: body[:c.end], i: c.start + 1}
					if v, err := cr.s64(); err == nil && v >= 0 && v < 1<<30 {
						in.k = int(v)
					}
				}
			}
		case opBrTable:
			n, err := r.u32()
			if err != nil {
				return nil, err
			}
			if uint64(n) > uint64(len(body)) {
				return nil, errTruncated
			}
			for k := uint32(0); k <= n; k++ {
				id, err := r.branch(stack)
				if err != nil {
					return nil, err
				}
				in.targets = append(in.targets, id)
			}
			if sh.dispatch < 0 && !branched {
				branched = true
				if len(sh.insts) == 0 {
					return nil, nil
				}
				if g := sh.insts[len(sh.insts)-1]; g.op != opLocalGet || g.end-g.start != 2 || body[g.start+1] != 0 {
					return nil, nil
				}
				depths := make([]uint32, len(in.targets))
				for k, id := range in.targets {
					for p := len(stack) - 1; p >= 0; p-- {
						if stack[p].id == id {
							depths[k] = uint32(len(stack) - 1 - p)
						}
					}
				}
				entry, _ := dispatch(stack, depths)
				if entry < 0 {
					return nil, nil
				}
				sh.entry, sh.dispatch = entry, len(sh.insts)
				// The blocks between the loop and the table, innermost first.
				for p := len(stack) - 1; p >= 0 && stack[p].id != entry; p-- {
					sh.segOf[stack[p].id] = len(sh.blocks)
					sh.blocks = append(sh.blocks, stack[p].id)
					sh.openers = append(sh.openers, openAt[stack[p].id])
				}
				sh.ends = make([]int, len(sh.blocks))
			}
		default:
			if err := r.skipImmediates(op); err != nil {
				return nil, err
			}
			// "i64.const PC_F<<16|PC_B; i64.store": a call's return
			// address, where the frame resumes after unwinding.
			if op == 0x37 && len(sh.insts) > 0 {
				if c := sh.insts[len(sh.insts)-1]; c.op == 0x42 {
					cr := reader{b: body[:c.end], i: c.start + 1}
					if v, err := cr.s64(); err == nil && v >= 1<<16 {
						sh.resumes = append(sh.resumes, int(v&0xffff))
					}
				}
			}
		}
		in.end = r.i
		in.seg = seg
		sh.insts = append(sh.insts, in)
	}
	if sh.dispatch < 0 {
		return nil, nil
	}
	return sh, nil
}

// branch reads a branch depth and returns the label it selects on stack
// (funcLabel for the function's own).
func (r *reader) branch(stack []label) (int, error) {
	d, err := r.u32()
	switch {
	case err != nil:
		return 0, err
	case uint64(d) > uint64(len(stack)):
		return 0, errDepth
	case uint64(d) == uint64(len(stack)):
		return funcLabel, nil
	}
	return stack[len(stack)-1-int(d)].id, nil
}

// loop is a loop to make: segments h..j, with the values of PC_B that
// can arrive at its head meaning "go to that segment" (checks).
type loop struct {
	h, j   int
	checks []int
	kh     int // a PC_B value that selects segment h
}

// maxChecks bounds the checks at a loop's head: each runs on every
// iteration, so a loop with more entries keeps the table.
const maxChecks = 2

// counts is what rewrite did to one body.
type counts struct{ jumps, threaded, loops, backs int }

// rewrite threads the jumps of one function body (its locals and
// expression) and, when Reloop is on, makes its eligible innermost loops
// Wasm loops. It returns body itself when it changes nothing, and an
// error when body cannot be decoded.
func rewrite(body []byte) ([]byte, counts, error) {
	sh, err := decodeShape(body)
	if sh == nil {
		return body, counts{}, err
	}
	var loops []loop
	if Reloop {
		loops = sh.planLoops()
	}
	out, c, ok := sh.emit(loops)
	if !ok && loops != nil {
		out, c, ok = sh.emit(nil)
	}
	if !ok {
		return body, counts{}, errors.New("the rewritten body does not nest")
	}
	if c.threaded == 0 && c.loops == 0 {
		return body, c, nil
	}
	return out, c, nil
}

// planLoops picks the innermost loops to make (see the top of this file).
func (sh *shape) planLoops() []loop {
	nseg := len(sh.blocks)
	table := sh.insts[sh.dispatch].targets
	callIn := make([]bool, nseg)
	for _, in := range sh.insts {
		if (in.op == 0x10 || in.op == 0x11) && in.seg >= 0 {
			callIn[in.seg] = true
		}
	}
	segOf := func(id int) int {
		if s, ok := sh.segOf[id]; ok {
			return s
		}
		return -1
	}
	// jumpSeg is the segment a jump goes to, or -1.
	jumpSeg := func(in inst) int {
		if !in.viaTable || in.k < 0 {
			return -1
		}
		return sh.segOfTarget(in.k)
	}
	plan := func(h, j int) (loop, bool) {
		l := loop{h: h, j: j, kh: -1}
		moved := func(s int) bool { return s > h && s <= j }
		if moved(sh.segOfTarget(0)) || moved(sh.segOfTarget(1)) || moved(segOf(table[len(table)-1])) {
			return l, false
		}
		arrive := map[int]bool{}
		for k := 0; k < len(table)-1; k++ {
			s := segOf(table[k])
			if s == h && l.kh < 0 {
				l.kh = k
			}
			if moved(s) && callIn[s-1] {
				arrive[k] = true // a resume point
			}
		}
		for _, k := range sh.resumes {
			if moved(sh.segOfTarget(k)) {
				arrive[k] = true
			}
		}
		for _, in := range sh.insts {
			t := jumpSeg(in)
			if !moved(t) {
				if in.op == opBrTable && in.seg >= 0 && sh.insts[sh.dispatch].start != in.start {
					for _, id := range in.targets {
						if moved(segOf(id)) {
							return l, false
						}
					}
				}
				continue
			}
			// Backward jumps come through the head; so do forward ones
			// from before the loop, whose block has moved inside it.
			if inside := in.seg >= h && in.seg <= j; t <= in.seg || !inside {
				arrive[in.k] = true
			}
		}
		if l.kh < 0 || len(arrive) > maxChecks {
			return l, false
		}
		for k := range arrive {
			l.checks = append(l.checks, k)
		}
		slices.Sort(l.checks)
		return l, true
	}
	var loops []loop
	taken := make([]bool, nseg)
	for size := 0; size < nseg; size++ {
		for _, in := range sh.insts {
			t := jumpSeg(in)
			if t < 0 || in.seg < t || in.seg-t != size {
				continue
			}
			free := true
			for s := t; s <= in.seg; s++ {
				free = free && !taken[s]
			}
			if !free {
				continue
			}
			if l, ok := plan(t, in.seg); ok {
				for s := t; s <= in.seg; s++ {
					taken[s] = true
				}
				loops = append(loops, l)
			}
		}
	}
	return loops
}

// emit writes the body with its jumps threaded and loops made. ok is
// false if a branch's target would not enclose it (a bug: the caller
// keeps the body).
func (sh *shape) emit(loops []loop) (out []byte, c counts, ok bool) {
	const loopIDs = 1 << 30 // ids of the new loops: loopIDs + index in loops
	skip := map[int]bool{}  // openers of moved blocks, at the top
	openAfter := map[int]int{}
	closeBefore := map[int]int{}
	redirect := map[int]int{} // moved block → the loop head's block
	loopOf := make([]int, len(sh.blocks))
	for s := range loopOf {
		loopOf[s] = -1
	}
	for n, l := range loops {
		for s := l.h; s <= l.j; s++ {
			loopOf[s] = n
		}
		for s := l.h + 1; s <= l.j; s++ {
			skip[sh.openers[s]] = true
			redirect[sh.blocks[s]] = sh.blocks[l.h]
		}
		openAfter[sh.ends[l.h]] = n
		if l.j+1 < len(sh.blocks) {
			closeBefore[sh.ends[l.j+1]] = n
		} else {
			for i := len(sh.insts) - 1; i >= 0; i-- {
				if in := sh.insts[i]; in.op == opEnd && in.label == sh.entry {
					closeBefore[i] = n
					break
				}
			}
		}
	}
	c.loops = len(loops)
	out = make([]byte, 0, len(sh.body)+32*len(loops))
	out = append(out, sh.body[:sh.code]...)
	var stack []int
	depth := func(id int) (uint32, bool) {
		if id == funcLabel {
			return uint32(len(stack)), true
		}
		for p := len(stack) - 1; p >= 0; p-- {
			if stack[p] == id {
				return uint32(len(stack) - 1 - p), true
			}
		}
		return 0, false
	}
	table := sh.insts[sh.dispatch].targets
	for i, in := range sh.insts {
		raw := sh.body[in.start:in.end]
		switch in.op {
		case opBlock, opLoop, opIf:
			if skip[i] {
				continue
			}
			out = append(out, raw...)
			stack = append(stack, in.label)
		case opEnd:
			if n, ok := closeBefore[i]; ok {
				if len(stack) == 0 || stack[len(stack)-1] != loopIDs+n {
					return nil, c, false
				}
				out = append(out, opEnd)
				stack = stack[:len(stack)-1]
			}
			n, head := openAfter[i]
			if head && loops[n].h > 0 {
				// Falling into the head from the segment before: say so
				// in PC_B, which may hold anything here.
				out = append(out, opI32Const)
				out = appendS32(out, int32(loops[n].kh))
				out = append(out, opLocalSet, 0)
			}
			if len(stack) > 0 {
				if stack[len(stack)-1] != in.label {
					return nil, c, false
				}
				stack = stack[:len(stack)-1]
			}
			out = append(out, raw...)
			if head {
				l := loops[n]
				out = append(out, opLoop, 0x40)
				stack = append(stack, loopIDs+n)
				for s := l.j; s > l.h; s-- {
					o := sh.insts[sh.openers[s]]
					out = append(out, sh.body[o.start:o.end]...)
					stack = append(stack, o.label)
				}
				for _, k := range l.checks {
					d, ok := depth(table[k])
					if !ok {
						return nil, c, false
					}
					out = append(out, opLocalGet, 0, opI32Const)
					out = appendS32(out, int32(k))
					out = append(out, 0x46, 0x0D) // i32.eq; br_if
					out = appendU32(out, d)
				}
			}
		case opBr, 0x0D:
			target := in.target
			if in.viaTable && in.k >= 0 && in.seg >= 0 {
				c.jumps++
				t := sh.segOfTarget(in.k)
				n := loopOf[t]
				switch {
				case n >= 0 && t <= in.seg && in.seg <= loops[n].j:
					target = loopIDs + n // a back edge: the head sends it on
					c.backs++
				case t > in.seg:
					// Ahead: its block encloses the jump, unless it moved
					// into a loop this jump is outside of; then the loop
					// head's block does, and the head sends it on.
					target = sh.blocks[t]
					if n >= 0 && in.seg < loops[n].h {
						target = sh.blocks[loops[n].h]
					}
					c.threaded++
				}
			}
			d, ok := depth(target)
			if !ok {
				return nil, c, false
			}
			out = append(out, in.op)
			out = appendU32(out, d)
		case opBrTable:
			out = append(out, opBrTable)
			out = appendU32(out, uint32(len(in.targets)-1))
			for _, id := range in.targets {
				if r, ok := redirect[id]; ok && i == sh.dispatch {
					id = r
				}
				d, ok := depth(id)
				if !ok {
					return nil, c, false
				}
				out = appendU32(out, d)
			}
		default:
			out = append(out, raw...)
		}
	}
	if len(stack) != 0 {
		return nil, c, false
	}
	return out, c, true
}

// segOfTarget is the segment the dispatch table sends PC_B = k to.
func (sh *shape) segOfTarget(k int) int {
	table := sh.insts[sh.dispatch].targets
	if k < len(table)-1 {
		return sh.segOf[table[k]]
	}
	return sh.segOf[table[len(table)-1]]
}
