package api

import (
	"unsafe"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/internal/le"
	"github.com/tidwall/gjson"
)

// A walker over JSON text that scanInput has already validated, used on
// the hot path of decoding messages: one pass per message that finds each
// member's value and hands it over as the gjson.Result gjson's ForEach
// would, jumping over string contents with strings.IndexByte. gjson's own
// ForEach over an array first walks each element to find its end and then
// walks it again for its members. Every function is bounds-checked and
// returns -1 (or false) on text that is not as expected; callers then
// fall back to gjson.

// at returns s[i], or 0 past the end.
func at(s string, i int) byte {
	if i < 0 || i >= len(s) {
		return 0
	}
	return s[i]
}

func skipWS(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index after the string whose opening quote is
// at s[i].
func skipString(s string, i int) int {
	end, _ := stringEnd(s, i)
	return end
}

// stringEnd returns the index after the string whose opening quote is at
// s[i], and whether the string has escapes. It looks at eight bytes at a
// time for a quote or a backslash (bytes of multi-byte UTF-8 sequences
// are never either).
func stringEnd(s string, i int) (end int, escaped bool) {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	p := unsafe.Pointer(unsafe.StringData(s))
	for j := i + 1; j < len(s); {
		if j+8 <= len(s) {
			x := *(*uint64)(unsafe.Add(p, j))
			q, b := x^(lo*'"'), x^(lo*'\\')
			if ((q-lo)&^q|(b-lo)&^b)&hi == 0 {
				j += 8
				continue
			}
		}
		switch s[j] {
		case '"':
			return j + 1, escaped
		case '\\':
			escaped = true
			j += 2 // the escaped byte is never the string's end
			continue
		}
		j++
	}
	return -1, escaped
}

// skipContainer returns the index after the object or array that opens
// at s[i].
func skipContainer(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '"':
			e := skipString(s, j)
			if e < 0 {
				return -1
			}
			j = e - 1
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return j + 1
			}
		}
	}
	return -1
}

// skipValue returns the index after the value that starts at s[i].
func skipValue(s string, i int) int {
	switch at(s, i) {
	case 0:
		return -1
	case '"':
		return skipString(s, i)
	case '{', '[':
		return skipContainer(s, i)
	}
	j := i
	for j < len(s) {
		switch s[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
		j++
	}
	return j
}

// stringAt sets *r to the Result of the string whose opening quote is at
// s[i] and returns the index after it. Results go through a pointer: see
// decodeMessagesCopy.
func stringAt(s string, i int, r *gjson.Result) int {
	end, escaped := stringEnd(s, i)
	if end < 0 {
		return -1
	}
	raw := s[i:end]
	if escaped {
		*r = gjson.Parse(raw) // unescapes
		return end
	}
	r.Type, r.Raw, r.Str, r.Num, r.Index, r.Indexes = gjson.String, raw, raw[1:len(raw)-1], 0, 0, nil
	return end
}

// keyAt returns the unescaped key whose opening quote is at s[i] and the
// index after it.
func keyAt(s string, i int) (string, int) {
	end, escaped := stringEnd(s, i)
	if end < 0 {
		return "", -1
	}
	if escaped {
		return gjson.Parse(s[i:end]).Str, end
	}
	return s[i+1 : end-1], end
}

// valueAt sets *r to the Result of the value at s[i] and returns the index
// after it.
func valueAt(s string, i int, r *gjson.Result) int {
	switch at(s, i) {
	case '"':
		return stringAt(s, i, r)
	case '{', '[':
		end := skipContainer(s, i)
		if end < 0 {
			return -1
		}
		r.Type, r.Raw, r.Str, r.Num, r.Index, r.Indexes = gjson.JSON, s[i:end], "", 0, 0, nil
		return end
	}
	end := skipValue(s, i)
	if end < 0 {
		return -1
	}
	*r = gjson.Parse(s[i:end])
	return end
}

// walkObject hands d.key each member of the object that opens at s[i], in
// order, until it returns false. It returns the index after the object
// (or after the member where d.key stopped) and false if the text is not
// a well-formed object.
//
// Plain keys and string values are scanned here, not through keyAt and
// valueAt: under standard Go's Wasm a call costs more than scanning a
// short string, and a message is mostly short strings (ten per message;
// decoding 10k messages under wazero went from 15.9 to 13.2 ms). Anything
// else goes through the general functions.
func walkObject(s string, i int, d *msgDecoder) (int, bool) {
	if at(s, i) != '{' {
		return -1, false
	}
	j := skipWS(s, i+1)
	if at(s, j) == '}' {
		return j + 1, true
	}
	for {
		if at(s, j) != '"' {
			return -1, false
		}
		var k string
		kend := -1
		for e := j + 1; e < len(s); e++ {
			if c := s[e]; c == '"' {
				k, kend = s[j+1:e], e+1
				break
			} else if c == '\\' {
				break
			}
		}
		if kend < 0 {
			if k, kend = keyAt(s, j); kend < 0 {
				return -1, false
			}
		}
		// skipWS's calls only where there is whitespace: compact JSON
		// has none, and under Wasm the call costs more than the test.
		if j = kend; at(s, j) <= ' ' {
			j = skipWS(s, j)
		}
		if at(s, j) != ':' {
			return -1, false
		}
		if j++; at(s, j) <= ' ' {
			j = skipWS(s, j)
		}
		var vend int
		if at(s, j) == '"' {
			// A short value's end found here, a longer one's by stringEnd
			// from where this stopped (the bytes before are plain).
			e, lim := j+1, min(j+17, len(s))
			for e < lim && s[e] != '"' && s[e] != '\\' {
				e++
			}
			var escaped bool
			if e < len(s) && s[e] == '"' {
				vend = e + 1
			} else {
				vend, escaped = stringEnd(s, e-1)
			}
			switch {
			case vend < 0:
				return -1, false
			case escaped:
				d.v = gjson.Parse(s[j:vend]) // unescapes
			default:
				if d.plainMember(k, s[j+1:vend-1]) {
					goto next
				}
				r := &d.v
				r.Type, r.Raw, r.Str, r.Num, r.Index, r.Indexes = gjson.String, s[j:vend], s[j+1:vend-1], 0, 0, nil
			}
		} else if vend = valueAt(s, j, &d.v); vend < 0 {
			return -1, false
		}
		if !d.key(k, &d.v) {
			return vend, true
		}
	next:
		if j = vend; at(s, j) <= ' ' {
			j = skipWS(s, j)
		}
		switch at(s, j) {
		case ',':
			if j++; at(s, j) <= ' ' {
				j = skipWS(s, j)
			}
		case '}':
			return j + 1, true
		default:
			return -1, false
		}
	}
}

// plainMember is key's work for a member whose value is a string without
// escapes, where that cannot fail, done without building a gjson.Result
// and without key's second switch. It reports false for everything else,
// which goes to key (FuzzDecodeMessages holds the two to gjson's path).
//
// It tells the names apart by length and first and last eight bytes,
// not by comparing strings: standard Go's Wasm cannot merge loads
// (cmd/internal/sys.Arch.CanMergeLoads), so comparing with a constant
// longer than six bytes calls runtime.memequal; without those calls,
// decoding 10k messages on Wasmtime takes 12% less time.
func (d *msgDecoder) plainMember(k, v string) bool {
	m := d.m
	switch h := head8(k); {
	case len(k) == 7 && h == nameContent:
		m.Content = v
	case len(k) == 2 && h == nameID:
		m.ID, d.hasID = v, v != ""
	case len(k) == 4 && h == nameRole:
		r, ok := core.ParseRole(v)
		if !ok {
			return false
		}
		m.Role, d.hasRole = r, true
		if r == core.RoleTool {
			d.fits &= toolRoleShapes
		}
	case len(k) == 10 && h == nameCreatedAt && tail8(k) == nameCreatedAtEnd:
		t, err := core.ParseTime(v)
		if err != nil {
			return false
		}
		m.CreatedAt, m.HasCreatedAt = t, true
	case len(k) == 15 && h == nameConversationID && tail8(k) == nameConversationIDEnd:
		m.ConversationID = v
	case len(k) == 12 && h == nameToolCallID && tail8(k) == nameToolCallIDEnd:
		m.ToolCallID = v
		d.fits &= toolCallIDShapes
	default:
		return false
	}
	return true
}

// The names plainMember handles, as head8 (and tail8, past eight bytes)
// read them; TestMemberNames checks each.
const (
	nameID                                    = 0x6469                                 // "id"
	nameRole                                  = 0x656c6f72                             // "role"
	nameContent                               = 0x746e65746e6f63                       // "content"
	nameCreatedAt, nameCreatedAtEnd           = 0x5f64657461657263, 0x74615f6465746165 // "created_at"
	nameConversationID, nameConversationIDEnd = 0x61737265766e6f63, 0x64695f6e6f697461 // "conversation_id"
	nameToolCallID, nameToolCallIDEnd         = 0x6c61635f6c6f6f74, 0x64695f6c6c61635f // "tool_call_id"
)

// head8 is the first eight bytes of k as a little-endian number, its
// bytes zero-padded when shorter.
func head8(k string) uint64 {
	if len(k) >= 8 {
		return le.Load64(unsafe.Pointer(unsafe.StringData(k)))
	}
	var h uint64
	for i := len(k) - 1; i >= 0; i-- {
		h = h<<8 | uint64(k[i])
	}
	return h
}

// tail8 is the last eight bytes of k, which has at least eight.
func tail8(k string) uint64 {
	return le.Load64(unsafe.Pointer(unsafe.StringData(k[len(k)-8:])))
}

// pathAt names the value that starts at byte off of s, a JSON object
// whose text up to and around that value is valid, as error messages
// name fields: history, request.messages, batches[3].content. It returns
// "input" when off is not the start of a value inside s.
func pathAt(s string, off int) string {
	path := ""
	i := skipWS(s, 0)
	for i != off {
		c := at(s, i)
		if c != '{' && c != '[' {
			return "input"
		}
		found := false
		for k, j := 0, skipWS(s, i+1); at(s, j) != '}' && at(s, j) != ']' && j >= 0; k++ {
			name := ""
			if c == '{' {
				end := skipString(s, j)
				if end < 0 {
					return "input"
				}
				name = s[j+1 : end-1]
				if j = skipWS(s, end); at(s, j) != ':' {
					return "input"
				}
				j = skipWS(s, j+1)
			}
			end := skipValue(s, j)
			if j == off || end < 0 || off < end {
				switch {
				case c == '[':
					path = idx(path, k)
				case path == "":
					path = name
				default:
					path += "." + name
				}
				i, found = j, true
				break
			}
			if j = skipWS(s, end); at(s, j) == ',' {
				j = skipWS(s, j+1)
			}
		}
		if !found {
			return "input"
		}
	}
	if path == "" {
		return "input"
	}
	return path
}
