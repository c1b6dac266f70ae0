package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// buildHello cross-compiles a tiny command the way `make dist` builds
// clipfold (CGO_ENABLED=0, -trimpath, -X main.cliVersion) for p.
func buildHello(t *testing.T, dir string, p Platform, version string) string {
	t.Helper()
	src := filepath.Join(dir, "src")
	require.NoError(t, os.MkdirAll(src, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(src, "go.mod"), []byte("module example.com/hello\n\ngo 1.21\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, "main.go"),
		[]byte("package main\n\nvar cliVersion = \"dev\"\n\nfunc main() { println(cliVersion) }\n"), 0o644))
	out := filepath.Join(dir, BinaryName("hello", p))
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w -X main.cliVersion="+version, "-o", out, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch, "GOFLAGS=")
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	return out
}

// Each executable format is read and checked against the platform its
// name claims; a file for another CPU or OS, or stamped with another
// version, is rejected with a reason.
func TestCheckBinaryReadsEachFormat(t *testing.T) {
	dir := t.TempDir()
	const version = "1.2.3+abc"
	cases := []struct {
		p      Platform
		format string
		wrong  Platform // what the file is not
	}{
		{Platform{"linux", "arm64"}, "ELF 64-bit EM_AARCH64 executable, static", Platform{"linux", "amd64"}},
		{Platform{"darwin", "arm64"}, "Mach-O 64-bit CpuArm64 executable", Platform{"windows", "arm64"}},
		{Platform{"windows", "amd64"}, "PE32+ console executable, machine amd64", Platform{"windows", "arm64"}},
	}
	for _, c := range cases {
		t.Run(c.p.OS+"-"+c.p.Arch, func(t *testing.T) {
			bin := buildHello(t, t.TempDir(), c.p, version)
			desc, err := CheckBinary(bin, c.p, "example.com/hello", version)
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(desc, c.format), desc)

			_, err = CheckBinary(bin, c.wrong, "example.com/hello", version)
			require.Error(t, err, "accepted as %v", c.wrong)
			_, err = CheckBinary(bin, c.p, "example.com/hello", "1.2.3+other")
			require.ErrorContains(t, err, "is not stamped in")
			_, err = CheckBinary(bin, c.p, MainPackage, version)
			require.ErrorContains(t, err, `built from "example.com/hello"`)
		})
	}
	_, err := CheckBinary(filepath.Join(dir, "missing"), Platform{"linux", "amd64"}, MainPackage, version)
	require.Error(t, err)
}

func TestCheckSums(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"a.whl": "wheel", "b.tgz": "tarball"}
	var sums strings.Builder
	for _, name := range []string{"a.whl", "b.tgz"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(files[name]), 0o644))
		h := sha256.Sum256([]byte(files[name]))
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(h[:]), name)
	}
	write := func(s string) { require.NoError(t, os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(s), 0o644)) }
	expected := map[string]bool{"a.whl": true, "b.tgz": true, "SHA256SUMS": true}

	write(sums.String())
	require.NoError(t, CheckSums(dir, expected))
	// sha256sum -c agrees that the format is its own
	if _, err := exec.LookPath("sha256sum"); err == nil {
		cmd := exec.Command("sha256sum", "-c", "--strict", "SHA256SUMS")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}

	require.ErrorContains(t, CheckSums(dir, map[string]bool{"c.exe": true}), "not listed: c.exe")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.tgz"), []byte("changed"), 0o644))
	require.ErrorContains(t, CheckSums(dir, expected), "b.tgz: SHA-256")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.tgz"), []byte(files["b.tgz"]), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "extra"), []byte("x"), 0o644))
	require.ErrorContains(t, CheckSums(dir, expected), "not listed: extra")
	require.NoError(t, os.Remove(filepath.Join(dir, "extra")))
	write(strings.Replace(sums.String(), "  ", " ", 1))
	require.ErrorContains(t, CheckSums(dir, expected), "line 1")
}
