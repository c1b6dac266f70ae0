package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRun(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in.json")
	require.NoError(t, os.WriteFile(in, []byte(`{"messages":[{"role":"user","content":"hi"}]}`), 0o644))
	var out strings.Builder
	require.NoError(t, run([]string{"shouldCompact", in, "3"}, &out))
	require.Contains(t, out.String(), "call 3: ")
	require.Contains(t, out.String(), "error: <nil>")
	require.Contains(t, out.String(), "shouldCompact: median ")

	require.ErrorContains(t, run([]string{"nope", in}, &out), `no export "nope"`)
	require.ErrorContains(t, run([]string{"split", in, "0"}, &out), "CALLS must be a positive number")
	require.Error(t, run([]string{"split"}, &out))
}
