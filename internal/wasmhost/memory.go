package wasmhost

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero/experimental"
)

// sizedMemory is a linear memory that says its size.
type sizedMemory interface {
	experimental.LinearMemory
	Size() uint64
}

// memories are the linear memories wazero made for one instance: the
// plug-in's and the Extism kernel's. They are made by this package's
// allocator (withMemory), so an instance's memory is known without
// reaching into the SDK's Plugin, and Options.MaxMemory holds whatever
// path the calls take.
type memories struct {
	mu   sync.Mutex
	list []sizedMemory
}

// withMemory makes the instances instantiated with ctx allocate their
// linear memories with newLinearMemory and record them in ms.
func withMemory(ctx context.Context, ms *memories) context.Context {
	return experimental.WithMemoryAllocator(ctx, experimental.MemoryAllocatorFunc(func(cap, max uint64) experimental.LinearMemory {
		m := newLinearMemory(cap, max)
		ms.mu.Lock()
		ms.list = append(ms.list, m)
		ms.mu.Unlock()
		return m
	}))
}

// largest is the size of the instance's largest linear memory, in bytes.
func (ms *memories) largest() uint64 {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	var n uint64
	for _, m := range ms.list {
		n = max(n, m.Size())
	}
	return n
}

// sliceMemory is a linear memory in a Go slice, grown by copying, as
// wazero's default.
type sliceMemory struct {
	buf  []byte
	max  uint64
	size atomic.Uint64
}

func (m *sliceMemory) Reallocate(size uint64) []byte {
	switch {
	case size > m.max:
		return nil
	case size <= uint64(cap(m.buf)):
		m.buf = m.buf[:size]
	default:
		m.buf = append(m.buf, make([]byte, int(size)-len(m.buf))...)
	}
	m.size.Store(size)
	return m.buf
}

func (m *sliceMemory) Size() uint64 { return m.size.Load() }

func (m *sliceMemory) Free() { m.buf = nil }
