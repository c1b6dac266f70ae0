package core

import (
	"testing"
	"unsafe"
)

// TestMessageSize keeps Message's small fields packed (see its comment).
func TestMessageSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes are for 64-bit layouts")
	}
	const want = 144
	if got := unsafe.Sizeof(Message{}); got > want {
		t.Fatalf("Message is %d bytes, want at most %d: keep its one-byte fields together", got, want)
	}
}
