package api

import (
	"strings"

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
	j := i + 1
	for {
		k := strings.IndexByte(s[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		bs := 0
		for p := j - 1; p > i && s[p] == '\\'; p-- {
			bs++
		}
		if bs%2 == 0 {
			return j + 1
		}
		j++
	}
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

// stringResult is the Result of the string token raw (quotes included).
func stringResult(raw string) gjson.Result {
	if strings.IndexByte(raw, '\\') >= 0 {
		return gjson.Parse(raw) // unescapes
	}
	return gjson.Result{Type: gjson.String, Raw: raw, Str: raw[1 : len(raw)-1]}
}

// valueAt returns the Result of the value at s[i] and the index after it.
func valueAt(s string, i int) (gjson.Result, int) {
	end := skipValue(s, i)
	if end < 0 {
		return gjson.Result{}, -1
	}
	raw := s[i:end]
	switch s[i] {
	case '"':
		return stringResult(raw), end
	case '{', '[':
		return gjson.Result{Type: gjson.JSON, Raw: raw}, end
	}
	return gjson.Parse(raw), end
}

// walkObject calls f with each member of the object that opens at s[i],
// in order, until f returns false. It returns the index after the object
// (or after the member where f stopped) and false if the text is not a
// well-formed object.
func walkObject(s string, i int, f func(k, v gjson.Result) bool) (int, bool) {
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
		kend := skipString(s, j)
		if kend < 0 {
			return -1, false
		}
		k := stringResult(s[j:kend])
		j = skipWS(s, kend)
		if at(s, j) != ':' {
			return -1, false
		}
		j = skipWS(s, j+1)
		v, vend := valueAt(s, j)
		if vend < 0 {
			return -1, false
		}
		if !f(k, v) {
			return vend, true
		}
		j = skipWS(s, vend)
		switch at(s, j) {
		case ',':
			j = skipWS(s, j+1)
		case '}':
			return j + 1, true
		default:
			return -1, false
		}
	}
}
