// Package harness loads the built clipfold.wasm with the Extism Go SDK
// (wazero underneath) and calls its exports: the conformance runner over
// ../testdata/vectors, fault injection and benchmarks live in its tests,
// and the clipfold command (./cmd/clipfold) is built on it.
//
// A Runtime is the compiled module (compile once, it is the expensive
// part); an Instance is one plug-in instance, which is not safe for
// concurrent use; a Pool hands instances to goroutines.
//
// Two things an Instance does beyond the SDK: it stages large inputs and
// outputs directly in the plug-in's memory (stage.go; Options.NoStaging
// turns it off), and it replaces itself with a fresh instance when a call
// leaves the plug-in's memory above Options.MaxMemory.
//
// ./wasmtimehost is the same host on Wasmtime instead of wazero (a module
// of its own, because it needs cgo): about twice as fast on large inputs,
// same answers.
package harness
