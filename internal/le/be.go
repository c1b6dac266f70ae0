//go:build ppc64 || s390x || mips || mips64

package le

import (
	"math/bits"
	"unsafe"
)

// Load64 reads the eight bytes at p, the first byte the lowest: the
// machine's big-endian load, byte-swapped.
func Load64(p unsafe.Pointer) uint64 { return bits.ReverseBytes64(*(*uint64)(p)) }
