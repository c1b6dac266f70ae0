package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A [summarization] key written above any section header would be read as
// a top-level key and ignored: the command refuses the file, naming the
// key and where it belongs, instead of running with the defaults.
func TestConfigFileKeyOutsideAnySection(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "top.toml")
	require.NoError(t, os.WriteFile(f, []byte("token_estimator = \"chars4\"\n\n[summarization]\nchunk_size = 10\n"), 0o644))
	r := runCLI(t, dir, nil, "compact", abs(t, filepath.Join(cliData, "openai.json")), "--config", f, "--dry-run")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, f+": token_estimator is outside any section; it belongs under [summarization]")

	// A top-level key that is not clipfold's stays the file's business.
	require.NoError(t, os.WriteFile(f, []byte("title = \"my agent\"\n\n[summarization]\nchunk_size = 10\n"), 0o644))
	r = runCLI(t, dir, nil, "compact", abs(t, filepath.Join(cliData, "openai.json")), "--config", f, "--dry-run", "--quiet")
	require.Equal(t, 0, r.code, r.stderr)
}
