//go:build !(unix && (amd64 || arm64 || riscv64 || ppc64le || s390x || loong64))

package wasmhost

import "context"

// withMemory leaves wazero's default linear memory where address space
// cannot be reserved this way (see memory_unix.go).
func withMemory(ctx context.Context) context.Context { return ctx }
