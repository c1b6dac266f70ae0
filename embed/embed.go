// Package embed holds the shipped clipfold plug-in: clipfold.wasm, the
// TinyGo build of ../plugin, committed so that nothing downstream needs a
// Wasm toolchain (as github.com/ncruces/go-sqlite3/embed ships SQLite).
// The module root package loads it by default; the Python and Node
// packages bundle the same file.
//
// `make embed` rebuilds it with the pinned TinyGo and records, in
// clipfold.wasm.sum, a hash of every source that goes into it and the
// file's own SHA-256. TestEmbeddedIsFresh (run by `go test ./...`, hence
// CI) fails when the sources changed since, or when the file is not the
// one recorded.
package embed

import _ "embed"

// Wasm is the plug-in module (TinyGo build, wasip1 reactor).
//
//go:embed clipfold.wasm
var Wasm []byte
