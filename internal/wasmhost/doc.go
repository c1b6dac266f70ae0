// Package wasmhost runs the clipfold plug-in on wazero through the Extism
// Go SDK: the machinery under the module root package's Compactor and
// the harness's tests.
//
// A Runtime is the compiled module (compile once, it is the expensive
// part); an Instance is one plug-in instance, which is not safe for
// concurrent use; a Pool hands instances to goroutines.
//
// Two things an Instance does beyond the SDK: it calls exports directly,
// their inputs and outputs staged in the plug-in's memory (stage.go;
// Options.NoStaging turns it off), and it replaces itself with a fresh
// instance when a call leaves the plug-in's memory above
// Options.MaxMemory.
package wasmhost
