// Package harness tests a built clipfold.wasm from Go, on wazero through
// the Extism Go SDK: the conformance runner over ../testdata/vectors
// (Vector, LoadVectors), and in its tests fault injection at every host
// call, hostile input, staging, memory bounds and the benchmarks that
// tools/benchreport reads. It is test tooling; Go programs use the module
// root package (github.com/clipfold/clipfold).
package harness
