// Package api is the JSON face of clipfold: one function per export of
// docs/spec.md#exports, bytes in, bytes out, plus the codecs of every wire
// type.
//
// The plug-in (../plugin) is a thin shell over this package: it reads the
// Extism input, calls the function of the same name and writes the output
// or the error. Go hosts that want the exact plug-in behaviour without
// Wasm call the same functions natively, which is how the conformance
// vectors prove the two never drift and how benchmarks compare them.
//
// Reading uses gjson over the input without copying it: a message's Raw
// bytes are a sub-slice of the input, so every message a response returns
// is echoed byte-for-byte. Writing appends to one byte slice; there is no
// reflection anywhere, which keeps the TinyGo build small.
package api
