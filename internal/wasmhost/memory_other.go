//go:build !(unix && (amd64 || arm64 || riscv64 || ppc64le || s390x || loong64))

package wasmhost

// newLinearMemory grows a linear memory by copying, as wazero's default
// does, where address space cannot be reserved as on unix (see
// memory_unix.go).
func newLinearMemory(_, max uint64) sizedMemory { return &sliceMemory{max: max} }
