package harness_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/clipfold/clipfold/api"
	"github.com/clipfold/clipfold/harness"
	"github.com/clipfold/clipfold/internal/wasmhost"
	"github.com/stretchr/testify/require"
)

var vectorDir = filepath.Join("..", "testdata", "vectors")

// TestVectorsNative runs every conformance vector against the api package
// natively: the reference the .wasm must match.
func TestVectorsNative(t *testing.T) {
	vs, err := harness.LoadVectors(vectorDir)
	require.NoError(t, err)
	env := api.DefaultEnv()
	for _, v := range vs {
		t.Run(v.Export+"/"+v.Name, func(t *testing.T) {
			h, ok := api.Lookup(v.Export)
			require.True(t, ok, "vector for export %q, which api.Lookup does not know: an export lost its handler (or the vector names a wrong one)", v.Export)
			out, err := h(env, v.InputBytes())
			require.NoError(t, v.Check(out, err))
		})
	}
}

// TestVectorsWasm runs the same vectors through the real .wasm loaded by
// the Extism Go SDK, on one instance, so state leaking between calls
// would show.
func TestVectorsWasm(t *testing.T) {
	vs, err := harness.LoadVectors(vectorDir)
	require.NoError(t, err)
	inst := newInstance(t)
	nonEmpty := 0
	for _, v := range vs {
		if len(v.InputBytes()) > 0 {
			nonEmpty++
		}
		t.Run(v.Export+"/"+v.Name, func(t *testing.T) {
			out, err := inst.Call(context.Background(), v.Export, v.InputBytes())
			require.NoError(t, v.Check(out, err))
		})
	}
	require.Equal(t, nonEmpty, inst.Stats().StagedCalls, "every non-empty input is staged and called directly")
}

// TestVectorsWasmSDKCall runs the vectors through the Extism SDK's own
// call (Options.NoStaging), input and output through the Extism kernel as
// in a plain Extism SDK: it must give the same answers and errors as the
// Go host's direct calls, which TestVectorsWasm takes.
func TestVectorsWasmSDKCall(t *testing.T) {
	vs, err := harness.LoadVectors(vectorDir)
	require.NoError(t, err)
	rt := newRuntime(t, wasmhost.Options{NoStaging: true})
	inst, err := rt.NewInstance(context.Background())
	require.NoError(t, err)
	defer inst.Close(context.Background())
	for _, v := range vs {
		t.Run(v.Export+"/"+v.Name, func(t *testing.T) {
			out, err := inst.Call(context.Background(), v.Export, v.InputBytes())
			require.NoError(t, v.Check(out, err))
		})
	}
	require.Zero(t, inst.Stats().StagedCalls)
}
