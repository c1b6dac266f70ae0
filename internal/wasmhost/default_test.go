package wasmhost

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/clipfold/clipfold/embed"
)

// TestDefaultWasmNeedsNothingBuilt: in a directory with no build/ (a
// fresh clone), a Runtime with no module given runs the embedded build;
// $CLIPFOLD_WASM selects another file, and a file it names that is not
// there is an error naming the variable. FindWasm, for the tools that need
// a file, says what to do.
func TestDefaultWasmNeedsNothingBuilt(t *testing.T) {
	ctx := context.Background()
	t.Chdir(t.TempDir())
	t.Setenv("CLIPFOLD_WASM", "")

	wasm, path, err := DefaultWasm()
	require.NoError(t, err)
	assert.Empty(t, path)
	assert.True(t, bytes.Equal(embed.Wasm, wasm), "the embedded build")
	rt, err := NewRuntime(ctx, Options{CacheDir: "-"})
	require.NoError(t, err)
	defer rt.Close(ctx)
	inst, err := rt.NewInstance(ctx)
	require.NoError(t, err)
	out, err := inst.Call(ctx, "version", []byte(`{}`))
	require.NoError(t, err)
	assert.Equal(t, int64(1), gjson.GetBytes(out, "abi").Int(), string(out))

	_, err = FindWasm()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "make build")
	assert.Contains(t, err.Error(), "CLIPFOLD_WASM")

	other := filepath.Join(t.TempDir(), "other.wasm")
	require.NoError(t, os.WriteFile(other, []byte("\x00asm\x01\x00\x00\x00"), 0o644))
	t.Setenv("CLIPFOLD_WASM", other)
	wasm, path, err = DefaultWasm()
	require.NoError(t, err)
	assert.Equal(t, other, path)
	assert.Equal(t, []byte("\x00asm\x01\x00\x00\x00"), wasm)

	t.Setenv("CLIPFOLD_WASM", filepath.Join(t.TempDir(), "missing.wasm"))
	_, _, err = DefaultWasm()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "$CLIPFOLD_WASM")
	_, err = NewRuntime(ctx, Options{CacheDir: "-"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "missing.wasm")
}
