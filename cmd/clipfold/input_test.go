package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Errors about the conversation file name it, and place the problem.
func TestInputErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		file, content string
		want          []string
	}{
		{"latin1.json", "[{\"role\":\"user\",\"content\":\"hello\"},\n {\"role\":\"user\",\"content\":\"caf\xe9\"}]",
			[]string{"latin1.json:2:31: the file is not valid UTF-8 (byte 66 is not part of a character)"}},
		{"latin1.jsonl", "{\"role\":\"user\",\"content\":\"hi\"}\n{\"role\":\"user\",\"content\":\"\xff\"}\n",
			[]string{"latin1.jsonl:2:27: the file is not valid UTF-8"}},
		// An error of the plug-in's decoder that names no message.
		{"many.jsonl", strings.Repeat(`{"role":"user","content":"m"}`+"\n", 250_001),
			[]string{"many.jsonl: history: has more than 250000 elements"}},
	}
	for _, tc := range cases {
		p := filepath.Join(dir, tc.file)
		require.NoError(t, os.WriteFile(p, []byte(tc.content), 0o644))
		r := runCLI(t, dir, nil, "compact", p)
		require.Equal(t, 1, r.code, r.stderr)
		for _, w := range tc.want {
			assert.Contains(t, r.stderr, w)
		}
		assert.NotContains(t, r.stderr, ": : ", "no empty name")
	}
}

// A file over the plug-in's input limit is refused by its size, before it
// is read; stdin after the limit.
func TestInputSizeLimit(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(200<<20)) // sparse: 200 MB of NULs
	require.NoError(t, f.Close())

	cmd := exec.Command(bin, "compact", big, "--db", filepath.Join(dir, "a.db"))
	cmd.Env = cleanEnv(nil)
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	assert.Equal(t, 1, cmd.ProcessState.ExitCode(), "%s", out)
	assert.Contains(t, string(out), big+": the file is 209,715,200 bytes; the limit is 67,108,864 bytes (64 MiB)")
	if rss, ok := maxRSS(cmd.ProcessState); ok {
		assert.Less(t, rss, int64(150<<20), "the file was not read (peak RSS %d bytes)", rss)
	}
	require.NoFileExists(t, filepath.Join(dir, "a.db"), "refused before the archive is touched")

	cmd = exec.Command(bin, "compact", "-", "--db", filepath.Join(dir, "a.db"))
	cmd.Env = cleanEnv(nil)
	cmd.Stdin = strings.NewReader(strings.Repeat(" ", maxFileBytes+1))
	out, err = cmd.CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "<stdin>: it is larger than 67,108,864 bytes; the limit is 67,108,864 bytes (64 MiB)")
}
