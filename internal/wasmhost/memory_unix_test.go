//go:build unix && (amd64 || arm64 || riscv64 || ppc64le || s390x || loong64)

package wasmhost

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero/experimental"
)

// TestLinearMemories: both memories keep what was written as they grow,
// give zeroed bytes past it, and refuse to grow past their maximum.
func TestLinearMemories(t *testing.T) {
	const page = 64 << 10
	for name, m := range map[string]experimental.LinearMemory{
		"mmap":  newMmapMemory(page, 256*page),
		"slice": &sliceMemory{max: 256 * page},
	} {
		t.Run(name, func(t *testing.T) {
			defer m.Free()
			b := m.Reallocate(page)
			require.Len(t, b, page)
			b[0], b[page-1] = 1, 2
			b = m.Reallocate(100 * page)
			require.Len(t, b, 100*page)
			require.Equal(t, byte(1), b[0])
			require.Equal(t, byte(2), b[page-1])
			for _, c := range b[page:] {
				if c != 0 {
					t.Fatal("grown memory is not zeroed")
				}
			}
			b[100*page-1] = 3
			b = m.Reallocate(256 * page)
			require.Equal(t, byte(3), b[100*page-1])
			require.True(t, m.Reallocate(256*page+1) == nil, "grew past its maximum")
		})
	}
	big := newMmapMemory(page, 1<<40)
	_, ok := big.(*sliceMemory)
	require.True(t, ok, "a reservation past 8 GiB falls back to a slice")
	require.Len(t, big.Reallocate(2*page), 2*page)
	big.Free()
}
