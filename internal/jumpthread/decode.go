package jumpthread

import "fmt"

// reader decodes the parts of the binary format threadBody walks over.
// Every read is bounds-checked: a malformed body is an error, never a
// panic.
type reader struct {
	b []byte
	i int
}

func (r *reader) byte() (byte, error) {
	if r.i >= len(r.b) {
		return 0, errTruncated
	}
	c := r.b[r.i]
	r.i++
	return c, nil
}

// u32 reads an unsigned LEB128 of at most 5 bytes.
func (r *reader) u32() (uint32, error) {
	var v uint64
	for s := uint(0); s < 35; s += 7 {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(c&0x7f) << s
		if c < 0x80 {
			if v > 1<<32-1 {
				return 0, fmt.Errorf("u32 overflows at byte %d", r.i)
			}
			return uint32(v), nil
		}
	}
	return 0, fmt.Errorf("u32 longer than 5 bytes at byte %d", r.i)
}

// s64 reads a signed LEB128 of at most 10 bytes.
func (r *reader) s64() (int64, error) {
	var v int64
	for s := uint(0); s < 70; s += 7 {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= int64(c&0x7f) << s
		if c < 0x80 {
			if s+7 < 64 && c&0x40 != 0 {
				v |= -1 << (s + 7)
			}
			return v, nil
		}
	}
	return 0, fmt.Errorf("s64 longer than 10 bytes at byte %d", r.i)
}

func (r *reader) skip(n int) error {
	if n > len(r.b)-r.i {
		return errTruncated
	}
	r.i += n
	return nil
}

// locals skips a function body's local declarations.
func (r *reader) locals() error {
	groups, err := r.u32()
	if err != nil {
		return err
	}
	for g := uint32(0); g < groups; g++ {
		if _, err := r.u32(); err != nil {
			return err
		}
		if _, err := r.byte(); err != nil {
			return err
		}
	}
	return nil
}

// blockType skips a block type: empty, a value type, or a type index
// (an s33).
func (r *reader) blockType() error {
	_, err := r.s64()
	return err
}

// skipImmediates skips the immediates of op, for the instructions of
// WebAssembly 1.0 and the sign-extension, non-trapping conversion,
// bulk-memory and reference-types extensions (what Go emits and more).
// Anything else, SIMD included, is an error: the body is left alone.
func (r *reader) skipImmediates(op byte) error {
	var err error
	switch {
	case op == 0x00 || op == 0x01 || op == opElse || op == 0x0F || op == 0x1A || op == 0x1B || op == 0xD1:
	case op == 0x0D || op == 0x10 || (op >= 0x20 && op <= 0x26) || op == 0xD2:
		_, err = r.u32()
	case op == 0x11:
		if _, err = r.u32(); err == nil {
			_, err = r.u32()
		}
	case op == 0x1C: // select with types
		var n uint32
		if n, err = r.u32(); err == nil {
			err = r.skip(int(min(n, 1<<30)))
		}
	case op >= 0x28 && op <= 0x3E: // memarg
		if _, err = r.u32(); err == nil {
			_, err = r.u32()
		}
	case op == 0x3F || op == 0x40 || op == 0xD0:
		_, err = r.byte()
	case op == opI32Const || op == 0x42:
		_, err = r.s64()
	case op == 0x43:
		err = r.skip(4)
	case op == 0x44:
		err = r.skip(8)
	case op >= 0x45 && op <= 0xC4:
	case op == 0xFC:
		err = r.skipFC()
	default:
		err = fmt.Errorf("opcode 0x%02x not decoded", op)
	}
	return err
}

// skipFC skips a 0xFC-prefixed instruction's sub-opcode and immediates.
func (r *reader) skipFC() error {
	sub, err := r.u32()
	if err != nil {
		return err
	}
	var n int // u32 immediates
	switch {
	case sub <= 7: // trunc_sat
	case sub == 8: // memory.init data 0
		n = 2
	case sub == 9 || sub == 11 || sub == 13 || sub == 15 || sub == 16 || sub == 17:
		n = 1 // data.drop, memory.fill 0, elem.drop, table.grow/size/fill
	case sub == 10 || sub == 12 || sub == 14: // memory.copy 0 0, table.init, table.copy
		n = 2
	default:
		return fmt.Errorf("opcode 0xfc %d not decoded", sub)
	}
	for ; n > 0; n-- {
		if _, err := r.u32(); err != nil {
			return err
		}
	}
	return nil
}

func appendU32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendS32(b []byte, v int32) []byte {
	x := int64(v)
	for {
		c := byte(x & 0x7f)
		x >>= 7
		if (x == 0 && c&0x40 == 0) || (x == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
