package le_test

import (
	"testing"
	"unsafe"

	"github.com/clipfold/clipfold/internal/le"
)

func TestLoad64IsLittleEndian(t *testing.T) {
	b := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	if got := le.Load64(unsafe.Pointer(&b[0])); got != 0x0807060504030201 {
		t.Fatalf("Load64 = %#x, want 0x0807060504030201 (the first byte lowest)", got)
	}
}
