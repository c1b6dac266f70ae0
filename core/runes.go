package core

import (
	"unicode/utf8"
	"unsafe"
)

// runeCount is utf8.RuneCountInString, eight ASCII bytes at a time. The
// standard one decodes rune by rune, which under standard Go's Wasm costs
// a few nanoseconds a byte, and token estimates count every content's
// runes on every shouldCompact. Invalid bytes count one each, as there
// (FuzzRuneCount holds it to utf8.RuneCountInString).
func runeCount(s string) int {
	const hi = 0x8080808080808080
	p := unsafe.Pointer(unsafe.StringData(s))
	n, i := 0, 0
	for i < len(s) {
		for i+8 <= len(s) && *(*uint64)(unsafe.Add(p, i))&hi == 0 {
			i += 8
			n += 8
		}
		if i >= len(s) {
			break
		}
		if s[i] < utf8.RuneSelf {
			i++
		} else {
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
		}
		n++
	}
	return n
}
