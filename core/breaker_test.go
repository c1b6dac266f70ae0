package core

import (
	"testing"
	"time"
	"unsafe"
)

// TestBreakerKeyIsACopy: the conversation id usually views the call's
// input; the breaker must not keep (or see changes to) those bytes.
func TestBreakerKeyIsACopy(t *testing.T) {
	buf := []byte("conv-1")
	view := unsafe.String(&buf[0], len(buf))
	var b Breakers
	b.fail(view, time.Unix(0, 0))
	copy(buf, "conv-2") // the buffer is reused for another input
	if got := b.Failures("conv-1"); got != 1 {
		t.Fatalf("Failures(conv-1) = %d after the input's bytes changed, want 1", got)
	}
	if got := b.Failures("conv-2"); got != 0 {
		t.Fatalf("Failures(conv-2) = %d, want 0", got)
	}
}
