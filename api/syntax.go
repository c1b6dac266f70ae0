package api

import "unsafe"

// bytesToString views b as a string without copying. Inputs are never
// mutated after parsing starts, so the view stays valid.
func bytesToString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// firstSyntaxError returns the offset of the first JSON syntax error in
// in, or -1, to tell a person where their input breaks. It runs the input
// scanner (scan.go) over any JSON value; checkShape has already bounded
// the nesting depth and checked the UTF-8.
func firstSyntaxError(in []byte) int {
	s := inputScanner{b: in, long: -1}
	s.ws()
	if !s.value(0) {
		return s.i
	}
	s.ws()
	if s.i != len(s.b) {
		return s.i
	}
	return -1
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
