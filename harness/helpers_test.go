package harness_test

import (
	"context"
	"testing"

	"github.com/clipfold/clipfold/internal/wasmhost"
	"github.com/stretchr/testify/require"
)

// newInstance loads the plug-in under test ($CLIPFOLD_WASM, else the
// embedded build: wasmhost.DefaultWasm) with stub host functions and returns one instance, closed when the test ends.
func newInstance(t testing.TB) *wasmhost.Instance {
	t.Helper()
	ctx := context.Background()
	rt, err := wasmhost.NewRuntime(ctx, wasmhost.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close(ctx) })
	inst, err := rt.NewInstance(ctx)
	require.NoError(t, err)
	return inst
}
