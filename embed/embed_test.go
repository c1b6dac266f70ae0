package embed_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/clipfold/clipfold/embed"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite clipfold.wasm.sum for the clipfold.wasm now in place (make embed does this)")

// buildScripts decide how the plug-in is built besides its Go sources.
var buildScripts = []string{
	"scripts/build-tinygo.sh",
	"scripts/install-tinygo.sh",
	"scripts/tinygo/clipfold-wasip1.json.in",
}

// sourcesHash is a SHA-256 over everything that goes into the TinyGo
// build: every non-test .go file of this module's packages that ./plugin
// depends on for wasip1, the path and version of every other module it
// depends on, and the build scripts (which pin TinyGo and its flags).
// Build tags are ignored on purpose: a file for either compiler counts.
func sourcesHash(t *testing.T, root string) string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if .Module}}{{.Module.Path}}\t{{.Module.Version}}\t{{.Dir}}{{end}}", "./plugin")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	out, err := cmd.Output()
	require.NoError(t, err, "go list ./plugin")
	h := sha256.New()
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	sort.Strings(lines)
	seen := map[string]bool{}
	for _, l := range lines {
		f := strings.Split(l, "\t")
		require.Len(t, f, 3, "go list line %q", l)
		mod, version, dir := f[0], f[1], f[2]
		if mod != "github.com/clipfold/clipfold" {
			if !seen[mod] {
				seen[mod] = true
				fmt.Fprintf(h, "module %s %s\n", mod, version)
			}
			continue
		}
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		sort.Strings(files)
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			hashFile(t, h, root, f)
		}
	}
	for _, s := range buildScripts {
		hashFile(t, h, root, filepath.Join(root, s))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func hashFile(t *testing.T, h interface{ Write([]byte) (int, error) }, root, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	rel, err := filepath.Rel(root, path)
	require.NoError(t, err)
	fmt.Fprintf(h, "file %s %d\n", filepath.ToSlash(rel), len(b))
	_, _ = h.Write(b)
}

// pinnedToolchain reads the TinyGo version and the LLVM major version
// scripts/install-tinygo.sh pins, as build-tinygo.sh writes them in a
// toolchain line ("tinygo=0.41.1 llvm=19").
func pinnedToolchain(t *testing.T, root string) (tinygo, llvm string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "scripts/install-tinygo.sh"))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "readonly TINYGO_VERSION="); ok {
			tinygo = strings.TrimPrefix(v, "v")
		}
		if v, ok := strings.CutPrefix(line, "readonly LLVM_PREFERENCE=("); ok {
			llvm = strings.TrimSuffix(v, ")")
		}
	}
	require.NotEmpty(t, tinygo, "install-tinygo.sh pins no TINYGO_VERSION")
	require.Regexp(t, `^[0-9]+$`, llvm, "install-tinygo.sh pins one LLVM version (LLVM_PREFERENCE=(NN))")
	return tinygo, llvm
}

// checkToolchain fails unless line ("tinygo=… llvm=… clang=… …") names the
// pinned TinyGo and LLVM.
func checkToolchain(t *testing.T, root, line, what string) {
	t.Helper()
	tinygo, llvm := pinnedToolchain(t, root)
	fields := map[string]string{}
	for _, f := range strings.Fields(line) {
		k, v, _ := strings.Cut(f, "=")
		fields[k] = v
	}
	require.Equal(t, tinygo, fields["tinygo"], "%s: built with TinyGo %q, but scripts/install-tinygo.sh pins %q", what, fields["tinygo"], tinygo)
	require.Equal(t, llvm, fields["llvm"], "%s: built with LLVM %q, but scripts/install-tinygo.sh pins %q", what, fields["llvm"], llvm)
}

// TestEmbeddedIsFresh holds embed/clipfold.wasm to its record,
// clipfold.wasm.sum: the hash of the sources and build scripts it was
// built from (they must be today's), its own hash, and the toolchain that
// built it (it must be the pinned one; make embed refuses another).
func TestEmbeddedIsFresh(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	wasmSum := sha256.Sum256(embed.Wasm)
	want := fmt.Sprintf("sources %s\nwasm %s\n", sourcesHash(t, root), hex.EncodeToString(wasmSum[:]))
	if *update {
		tc, err := os.ReadFile(filepath.Join(root, "build/clipfold-tinygo.wasm.toolchain"))
		require.NoError(t, err, "build/clipfold-tinygo.wasm.toolchain is missing: make embed builds it (scripts/build-tinygo.sh)")
		line := strings.TrimSpace(string(tc))
		checkToolchain(t, root, line, "build/clipfold-tinygo.wasm")
		require.NoError(t, os.WriteFile("clipfold.wasm.sum", []byte(want+"toolchain "+line+"\n"), 0o644))
		return
	}
	got, err := os.ReadFile("clipfold.wasm.sum")
	require.NoError(t, err, "embed/clipfold.wasm.sum is missing: run make embed")
	record, toolchain, _ := strings.Cut(string(got), "toolchain ")
	require.Equal(t, want, record,
		"embed/clipfold.wasm is stale (the plug-in's sources or build scripts changed since it was built) "+
			"or not the file recorded: run `make embed` and commit embed/")
	require.NotEmpty(t, toolchain, "embed/clipfold.wasm.sum records no toolchain: run `make embed`")
	checkToolchain(t, root, toolchain, "embed/clipfold.wasm")
	require.Equal(t, []byte("\x00asm"), embed.Wasm[:4], "clipfold.wasm is a Wasm module")
}
