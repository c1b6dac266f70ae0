package api

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	"github.com/clipfold/clipfold/core"
	"github.com/tidwall/gjson"
)

// MaxInputBytes is the largest input an export parses
// (docs/spec.md#errors-and-limits: 64 MiB).
const MaxInputBytes = 64 << 20

// MaxElements bounds the elements of any array in an input. Real
// histories have thousands of messages and an archive hundreds of batches;
// a bound keeps an input of millions of tiny elements (64 MiB of
// {"role":"user","content":"hi"} is two million messages) from costing
// the plug-in minutes and gigabytes of memory (RATIONALE.md, "At most
// 250,000 elements per array").
const MaxElements = 250_000

// MaxDepth bounds JSON nesting. Real inputs nest a few levels; a bound
// keeps a hostile "[[[[…" from exhausting the stack of a recursive parser.
const MaxDepth = 256

// parseInput checks an export's input and returns its root object:
// size, UTF-8, nesting depth, JSON syntax, and that it is an object.
// scanInput does it in one pass; only when it refuses the input do the
// separate checks below run, to say what is wrong.
func parseInput(in []byte) (object, error) {
	if len(in) > MaxInputBytes {
		return object{}, &core.Error{Code: core.CodeTooLarge, Msg: "input is " + strconv.Itoa(len(in)) + " bytes; the limit is " + strconv.Itoa(MaxInputBytes)}
	}
	o, ok := scanInput(in)
	if ok {
		return o, nil
	}
	if o.long >= 0 {
		return object{}, &core.Error{Code: core.CodeTooLarge, Msg: pathAt(bytesToString(in), o.long) +
			": has more than " + strconv.Itoa(MaxElements) + " elements; the limit is " + strconv.Itoa(MaxElements)}
	}
	if err := checkShape(in); err != nil {
		return object{}, err
	}
	if !gjson.ValidBytes(in) {
		return object{}, &core.Error{Code: core.CodeInvalidJSON, Msg: "input is not valid JSON" + syntaxHint(in)}
	}
	r := gjson.Parse(bytesToString(in))
	if !r.IsObject() {
		return object{}, &core.Error{Code: core.CodeInvalidInput, Msg: "input must be a JSON object, got " + typeName(r)}
	}
	// The scanner refused what the checks accept: a bug in one of them
	// (FuzzScanInput looks for it). Serve the input all the same.
	return objectOf(r), nil
}

// objectOf is the object r, its members found in one walk.
func objectOf(r gjson.Result) object {
	o := object{long: -1}
	r.ForEach(func(k, v gjson.Result) bool {
		o.members = append(o.members, member{key: k.Raw[1 : len(k.Raw)-1], raw: v.Raw, elems: -1})
		return true
	})
	return o
}

// checkShape rejects empty input, invalid UTF-8 and nesting deeper than
// MaxDepth before any recursive parsing. It is on every call's path, so it
// is two fast passes: utf8.Valid, then a structural scan that jumps over
// string contents with bytes.IndexByte.
func checkShape(in []byte) error {
	i := 0
	for i < len(in) && isSpace(in[i]) {
		i++
	}
	if i == len(in) {
		return &core.Error{Code: core.CodeInvalidJSON, Msg: "input is empty; expected a JSON object"}
	}
	if !utf8.Valid(in) {
		return &core.Error{Code: core.CodeInvalidJSON, Msg: "input is not valid UTF-8 at byte " + strconv.Itoa(firstInvalidUTF8(in))}
	}
	depth := 0
	for i := 0; i < len(in); i++ {
		switch in[i] {
		case '"':
			// Jump to the closing quote: one not preceded by an odd run of
			// backslashes. An unterminated string is left to the validator.
			for {
				j := bytes.IndexByte(in[i+1:], '"')
				if j < 0 {
					return nil
				}
				i += j + 1
				bs := 0
				for k := i - 1; k >= 0 && in[k] == '\\'; k-- {
					bs++
				}
				if bs%2 == 0 {
					break
				}
			}
		case '{', '[':
			depth++
			if depth > MaxDepth {
				return &core.Error{Code: core.CodeInvalidInput, Msg: "JSON nests deeper than " + strconv.Itoa(MaxDepth) + " levels at byte " + strconv.Itoa(i)}
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}

func firstInvalidUTF8(in []byte) int {
	for i := 0; i < len(in); {
		r, size := utf8.DecodeRune(in[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(in)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// syntaxHint locates a syntax error as " at line L, column C (byte B)" by
// finding the longest valid prefix boundary cheaply: the position where a
// streaming scan first fails. It runs only on the error path.
func syntaxHint(in []byte) string {
	off := firstSyntaxError(in)
	if off < 0 {
		return ""
	}
	line, col := 1, 1
	for _, c := range in[:off] {
		if c == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return " at line " + strconv.Itoa(line) + ", column " + strconv.Itoa(col) + " (byte " + strconv.Itoa(off) + ")"
}

func typeName(r gjson.Result) string {
	switch r.Type {
	case gjson.Null:
		return "null"
	case gjson.False, gjson.True:
		return "a boolean"
	case gjson.Number:
		return "a number"
	case gjson.String:
		return "a string"
	}
	if r.IsArray() {
		return "an array"
	}
	if r.IsObject() {
		return "an object"
	}
	return "nothing"
}
