package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadmeCommands runs the command lines of the README as a newcomer
// types them after `make demo`: the demo target's lines of the Makefile
// first, then every line of the README's sh blocks that starts with
// ./build/clipfold, through bash, in a directory holding the repository's
// testdata and a build directory with this test's binary. Each must
// succeed.
func TestReadmeCommands(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Symlink(abs(t, filepath.Join(repoRoot, "testdata")), filepath.Join(dir, "testdata")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "build"), 0o755))
	require.NoError(t, os.Symlink(bin, filepath.Join(dir, "build", "clipfold")))

	demo := makeRecipe(t, "demo")
	require.NotEmpty(t, demo, "the Makefile has no demo target running $(CLI)")
	lines := readmeCommands(t)
	require.GreaterOrEqual(t, len(lines), 5, "the README's ./build/clipfold lines")
	for _, line := range append(demo, lines...) {
		cmd := exec.Command("bash", "-c", line)
		cmd.Dir = dir
		cmd.Env = cleanEnv(nil)
		r := execCLI(t, cmd)
		require.Equal(t, 0, r.code, "%s\nstdout:\n%s\nstderr:\n%s", line, clip(r.stdout), clip(r.stderr))
	}
	// The last README line writes its output where it says.
	require.FileExists(t, filepath.Join(dir, "compacted.json"))
}

// readmeCommands are the README's lines starting with ./build/clipfold in
// sh blocks, trailing comments removed.
func readmeCommands(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, "README.md"))
	require.NoError(t, err)
	defer f.Close()
	comment := regexp.MustCompile(`\s+#\s.*$`)
	var out []string
	inSh := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```"):
			inSh = !inSh && line == "```sh"
		case inSh && strings.HasPrefix(line, "./build/clipfold "):
			out = append(out, strings.TrimSpace(comment.ReplaceAllString(line, "")))
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// makeRecipe is the lines of a Makefile target's recipe that run the
// command ($(CLI)), as ./build/clipfold.
func makeRecipe(t *testing.T, target string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	require.NoError(t, err)
	var out []string
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, target+":"):
			in = true
		case in && !strings.HasPrefix(line, "\t"):
			in = false
		case in && strings.Contains(line, "$(CLI) "):
			out = append(out, strings.ReplaceAll(strings.TrimSpace(line), "$(CLI)", "./build/clipfold"))
		}
	}
	return out
}
