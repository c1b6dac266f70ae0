package api

import (
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"
)

// The input scanner: one pass over an export's input that checks
// everything parseInput requires (JSON syntax as strict as gjson.Valid,
// UTF-8 inside strings, nesting within MaxDepth, an object at the root)
// and records where each top-level member's value lies. It replaces four
// passes (utf8.Valid, a depth scan, gjson.Valid, and one gjson.Get per
// top-level key, each of which walks over every value before it, such as
// a multi-megabyte "messages"). It only says yes or no: when it says no,
// parseInput runs the old checks to explain why, so error messages do not
// depend on it. FuzzScanInput holds it to the old checks' verdicts.

// member is a top-level key of the input object and its value.
type member struct {
	key   string // as written, without quotes (escapes included)
	raw   string // the value's JSON text
	elems int    // for an array, its number of elements; else -1
}

// object is an export's input: its top-level members in order.
type object struct {
	members []member
	long    int // scanInput: where an array over MaxElements opens, or -1
}

// Get returns the value of the first member named key, as gjson.Get on
// the input would (Type JSON, Raw the text, for an object or array;
// parsed for anything else), or a Result that does not exist.
func (o object) Get(key string) gjson.Result {
	r, _ := o.array(key)
	return r
}

// array is Get plus, when the value is an array the scanner counted, its
// number of elements (else -1): decodeMessages sizes its slice by it.
func (o object) array(key string) (gjson.Result, int) {
	for i := range o.members {
		m := &o.members[i]
		if m.key == key || (hasBackslash(m.key) && gjson.Parse(`"`+m.key+`"`).Str == key) {
			return gjson.Parse(m.raw), m.elems
		}
	}
	return gjson.Result{}, -1
}

func hasBackslash(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			return true
		}
	}
	return false
}

// scanInput returns in's top-level members when in is a valid JSON object
// that parseInput accepts, and ok false otherwise.
func scanInput(in []byte) (o object, ok bool) {
	s := inputScanner{b: in, long: -1}
	o.long = -1
	defer func() { o.long = s.long }()
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return o, false
	}
	s.i++
	members := make([]member, 0, 4)
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
	} else {
		for {
			if s.i >= len(s.b) || s.b[s.i] != '"' {
				return o, false
			}
			s.i++
			k0 := s.i
			if !s.str() {
				return o, false
			}
			key := bytesToString(s.b[k0 : s.i-1])
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] != ':' {
				return o, false
			}
			s.i++
			s.ws()
			v0 := s.i
			if !s.value(1) {
				return o, false
			}
			elems := -1
			if s.b[v0] == '[' {
				elems = s.elems
			}
			members = append(members, member{key: key, raw: bytesToString(s.b[v0:s.i]), elems: elems})
			s.ws()
			if s.i >= len(s.b) {
				return o, false
			}
			if s.b[s.i] == '}' {
				s.i++
				break
			}
			if s.b[s.i] != ',' {
				return o, false
			}
			s.i++
			s.ws()
		}
	}
	s.ws()
	if s.i != len(s.b) {
		return o, false
	}
	return object{members: members}, true
}

type inputScanner struct {
	b     []byte
	i     int
	elems int // elements of the last array closed at depth 2 (a top-level member's)
	long  int // where an array of more than MaxElements elements opens; -1 for none
}

func (s *inputScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value scans one value inside a container at nesting depth (the root
// object is depth 1).
func (s *inputScanner) value(depth int) bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		s.i++
		return s.str()
	case c == '{' || c == '[':
		if depth+1 > MaxDepth {
			return false
		}
		return s.container(depth + 1)
	case c == '-' || ('0' <= c && c <= '9'):
		return s.number()
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	}
	return false
}

// container scans an object or array whose opening bracket is at s.i.
func (s *inputScanner) container(depth int) bool {
	open := s.i
	obj := s.b[s.i] == '{'
	end := byte(']')
	if obj {
		end = '}'
	}
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == end {
		s.i++
		if depth == 2 {
			s.elems = 0
		}
		return true
	}
	for n := 1; ; n++ {
		if !obj && n > MaxElements {
			s.long = open
			return false
		}
		if obj {
			if s.i >= len(s.b) || s.b[s.i] != '"' {
				return false
			}
			// A key of plain bytes is scanned here (under Wasm the call
			// costs more than the key); anything else, errors included,
			// by str from the key's start.
			b, j := s.b, s.i+1
			for j < len(b) && plainStringByte[b[j]] {
				j++
			}
			if j < len(b) && b[j] == '"' {
				s.i = j + 1
			} else if s.i++; !s.str() {
				return false
			}
			if s.i < len(s.b) && s.b[s.i] <= ' ' { // ws, without its call in compact JSON
				s.ws()
			}
			if s.i >= len(s.b) || s.b[s.i] != ':' {
				return false
			}
			s.i++
			if s.i < len(s.b) && s.b[s.i] <= ' ' { // ws, without its call in compact JSON
				s.ws()
			}
		}
		if s.i < len(s.b) && s.b[s.i] == '"' { // value's commonest case, without the call
			// A short plain string here too; a longer one, or anything
			// else, goes on in str from where this stopped.
			b, j := s.b, s.i+1
			for lim := min(j+16, len(b)); j < lim && plainStringByte[b[j]]; {
				j++
			}
			if j < len(b) && b[j] == '"' {
				s.i = j + 1
			} else if s.i = j; !s.str() {
				return false
			}
		} else if !s.value(depth) {
			return false
		}
		if s.i < len(s.b) && s.b[s.i] <= ' ' {
			s.ws()
		}
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case end:
			s.i++
			if depth == 2 {
				s.elems = n
			}
			return true
		case ',':
			s.i++
			if s.i < len(s.b) && s.b[s.i] <= ' ' { // ws, without its call in compact JSON
				s.ws()
			}
		default:
			return false
		}
	}
}

// str scans a string's contents and closing quote (s.i is just past the
// opening quote): no control characters, valid escapes, valid UTF-8. On
// failure s.i is at the offending byte (firstSyntaxError reports it).
func (s *inputScanner) str() bool {
	b := s.b
	i := s.i
	for i < len(b) {
		// Eight plain bytes at a time (see plainWord), then one at a time.
		for i+8 <= len(b) && plainWord(*(*uint64)(unsafe.Pointer(&b[i]))) {
			i += 8
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		if plainStringByte[c] {
			i++
			continue
		}
		switch {
		case c == '"':
			s.i = i + 1
			return true
		case c < ' ':
			s.i = i
			return false
		case c == '\\':
			if i+1 >= len(b) {
				s.i = i + 1
				return false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for k := i + 2; k < i+6; k++ {
					if k >= len(b) || !isHex(b[k]) {
						s.i = k
						return false
					}
				}
				i += 6
			default:
				s.i = i + 1
				return false
			}
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				s.i = i
				return false
			}
			i += n
		}
	}
	s.i = len(b)
	return false
}

// plainWord reports whether none of the eight bytes in x (a string's
// next eight, read at once) is a control character, a quote, a backslash
// or non-ASCII: the bit tricks of "Bit Twiddling Hacks" (haszero,
// hasless), which can report false alarms but never miss one.
func plainWord(x uint64) bool {
	const (
		lo = 0x0101010101010101
		hi = 0x8080808080808080
	)
	quote, backslash := x^(lo*'"'), x^(lo*'\\')
	bad := (x - lo*' ') | (quote-lo)&^quote | (backslash-lo)&^backslash
	return (bad&^x|x)&hi == 0
}

// plainStringByte marks the bytes a string may contain as they are:
// printable ASCII other than the quote and the backslash.
var plainStringByte = func() (t [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func (s *inputScanner) digits() int {
	n := 0
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *inputScanner) number() bool {
	if s.b[s.i] == '-' {
		s.i++
	}
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '0':
		s.i++
	case '1' <= c && c <= '9':
		s.digits()
	default:
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}

func (s *inputScanner) lit(w string) bool {
	if len(s.b)-s.i < len(w) || bytesToString(s.b[s.i:s.i+len(w)]) != w {
		return false
	}
	s.i += len(w)
	return true
}
