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
	for _, v := range vs {
		t.Run(v.Export+"/"+v.Name, func(t *testing.T) {
			out, err := inst.Call(context.Background(), v.Export, v.InputBytes())
			require.NoError(t, v.Check(out, err))
		})
	}
}

// TestVectorsWasmStaged runs the vectors with every input staged
// (StageMin 1): the staged path must give the same answers and errors as
// the Extism-memory path, which the vectors' small inputs otherwise take.
func TestVectorsWasmStaged(t *testing.T) {
	vs, err := harness.LoadVectors(vectorDir)
	require.NoError(t, err)
	rt := newRuntime(t, wasmhost.Options{StageMin: 1})
	inst, err := rt.NewInstance(context.Background())
	require.NoError(t, err)
	defer inst.Close(context.Background())
	for _, v := range vs {
		t.Run(v.Export+"/"+v.Name, func(t *testing.T) {
			out, err := inst.Call(context.Background(), v.Export, v.InputBytes())
			require.NoError(t, v.Check(out, err))
		})
	}
	require.Greater(t, inst.Stats().StagedCalls, len(vs)/2, "most vectors must have been staged")
}
