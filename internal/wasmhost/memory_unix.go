//go:build unix && (amd64 || arm64 || riscv64 || ppc64le || s390x || loong64)

package wasmhost

import (
	"sync/atomic"
	"syscall"
)

// newLinearMemory keeps a linear memory in a reservation of virtual
// memory (see mmapMemory).
func newLinearMemory(cap, max uint64) sizedMemory { return newMmapMemory(cap, max) }

// mmapMemory is a linear memory that grows in place. wazero's default
// grows a memory by appending to a Go slice: every memory.grow copies the
// whole memory and zeroes the new part, and TinyGo's heap doubles the
// memory each time it runs out, so a call that ends with 750 MB of heap
// copied and zeroed about twice that (a second of a 64 MiB call), and the
// Go collector ran beside it. Here the maximum is reserved up front as
// inaccessible address space, and growing makes the next pages readable
// and writable: nothing is copied, and the kernel supplies them zeroed
// when first touched.
type mmapMemory struct {
	buf       []byte // the whole reservation
	committed int    // buf[:committed] is readable and writable
	size      atomic.Uint64
}

// newMmapMemory reserves max bytes, or, when the system refuses (an
// address-space limit, say), returns a memory that grows as wazero's
// own does: wazero has no way to decline an allocator's offer.
func newMmapMemory(cap, max uint64) sizedMemory {
	const page = 64 << 10
	size := (max + page - 1) / page * page
	if size == 0 || size > 1<<33 || max < cap {
		return &sliceMemory{max: max}
	}
	buf, err := syscall.Mmap(-1, 0, int(size), syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return &sliceMemory{max: max}
	}
	return &mmapMemory{buf: buf}
}

// Reallocate returns the memory at size bytes, or nil (memory.grow then
// fails in the guest) beyond the reservation or when the kernel refuses.
func (m *mmapMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.buf)) {
		return nil
	}
	if n := int(size); n > m.committed {
		const step = 1 << 20 // commit in whole megabytes, fewer system calls
		to := min((n+step-1)/step*step, len(m.buf))
		if err := syscall.Mprotect(m.buf[m.committed:to], syscall.PROT_READ|syscall.PROT_WRITE); err != nil {
			return nil
		}
		m.committed = to
	}
	m.size.Store(size)
	return m.buf[:size:size]
}

func (m *mmapMemory) Size() uint64 { return m.size.Load() }

// Free releases the reservation.
func (m *mmapMemory) Free() {
	if m.buf != nil {
		_ = syscall.Munmap(m.buf)
		m.buf, m.committed = nil, 0
	}
}
