// Command distcheck checks what `make dist` put into dist/ before anyone
// ships it:
//
//	go run ./tools/distcheck -version 0.1.0+abc123 [-run=false] dist
//
// It checks
//
//   - the clipfold command for every platform of the release, each file an
//     executable of the format and CPU its name says (ELF, Mach-O, PE read
//     with debug/elf, debug/macho, debug/pe), built by Go with CGO_ENABLED=0
//     and -trimpath (its build information, read with debug/buildinfo),
//     stamped with the version, statically linked on Linux;
//   - the Python wheel and sdist and the npm tarball of that version;
//   - SHA256SUMS naming every other file of dist/ with its right sum;
//   - the native binary runs: `clipfold version --json` reports the stamped
//     version and the embedded plug-in.
//
// It prints one line per file (every file is checked) and exits 1 if any
// has a problem.
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// Platforms are the GOOS/GOARCH pairs a release ships the command for.
var Platforms = []Platform{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// Platform is one GOOS/GOARCH pair.
type Platform struct{ OS, Arch string }

// BinaryName is the file name of the command for p in dist/.
func BinaryName(base string, p Platform) string {
	name := fmt.Sprintf("%s-%s-%s", base, p.OS, p.Arch)
	if p.OS == "windows" {
		name += ".exe"
	}
	return name
}

func main() {
	version := flag.String("version", "", "the version the binaries must be stamped with (main.cliVersion), e.g. 0.1.0+abc123")
	run := flag.Bool("run", true, "run the binary for this machine's platform")
	flag.Parse()
	if flag.NArg() != 1 || *version == "" {
		fmt.Fprintln(os.Stderr, "usage: distcheck -version VERSION DIR")
		os.Exit(2)
	}
	if err := Check(os.Stdout, flag.Arg(0), *version, *run); err != nil {
		fmt.Fprintln(os.Stderr, "distcheck:", err)
		os.Exit(1)
	}
}

// release is the plain version, without build metadata: 0.1.0 of
// 0.1.0+abc123. File names carry it; the binaries' stamp carries both.
func release(version string) string {
	r, _, _ := strings.Cut(version, "+")
	return r
}

// Check checks dir as described in the package comment, printing one line
// per file to w.
func Check(w io.Writer, dir, version string, run bool) error {
	rel := release(version)
	var problems []string
	fail := func(name string, err error) {
		problems = append(problems, fmt.Sprintf("%s: %v", name, err))
		fmt.Fprintf(w, "FAIL %s: %v\n", name, err)
	}
	expected := map[string]bool{"SHA256SUMS": true}
	for _, p := range Platforms {
		name := BinaryName("clipfold-"+rel, p)
		expected[name] = true
		desc, err := CheckBinary(filepath.Join(dir, name), p, MainPackage, version)
		if err != nil {
			fail(name, err)
			continue
		}
		fmt.Fprintf(w, "ok   %-36s %s\n", name, desc)
	}
	for _, name := range []string{
		"clipfold-" + rel + "-py3-none-any.whl", // the Python wheel
		"clipfold-" + rel + ".tar.gz",           // its sdist
		"clipfold-" + rel + ".tgz",              // the npm tarball
	} {
		expected[name] = true
		fi, err := os.Stat(filepath.Join(dir, name))
		switch {
		case err != nil:
			fail(name, err)
		case fi.Size() == 0:
			fail(name, errors.New("empty"))
		default:
			fmt.Fprintf(w, "ok   %-36s %d bytes\n", name, fi.Size())
		}
	}
	if err := CheckSums(dir, expected); err != nil {
		fail("SHA256SUMS", err)
	} else {
		fmt.Fprintf(w, "ok   %-36s every file, sums match\n", "SHA256SUMS")
	}
	if run {
		native := Platform{runtime.GOOS, runtime.GOARCH}
		name := BinaryName("clipfold-"+rel, native)
		if !expected[name] {
			fail(name, fmt.Errorf("no binary for this machine's platform %s/%s", native.OS, native.Arch))
		} else if out, err := RunVersion(filepath.Join(dir, name), version); err != nil {
			fail(name+" version", err)
		} else {
			fmt.Fprintf(w, "ok   %-36s runs: %s\n", name, out)
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%d problem(s) in %s", len(problems), dir)
	}
	return nil
}

// MainPackage is the command's package.
const MainPackage = "github.com/clipfold/clipfold/cmd/clipfold"

// CheckBinary checks that path is an executable for p built from the Go
// package mainPkg with CGO_ENABLED=0 and -trimpath, its main.cliVersion
// stamped as version, and describes it.
func CheckBinary(path string, p Platform, mainPkg, version string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	format, err := executableFormat(path, p)
	if err != nil {
		return "", err
	}
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("no Go build information: %w", err)
	}
	if bi.Path != mainPkg {
		return "", fmt.Errorf("built from %q, not %s", bi.Path, mainPkg)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	for key, want := range map[string]string{"GOOS": p.OS, "GOARCH": p.Arch, "CGO_ENABLED": "0", "-trimpath": "true"} {
		if settings[key] != want {
			return "", fmt.Errorf("build setting %s is %q, want %q", key, settings[key], want)
		}
	}
	// With -trimpath the build information leaves -ldflags out, so the
	// stamp is looked for as the string the linker wrote (-s -w keep it).
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if !bytes.Contains(data, []byte(version)) {
		return "", fmt.Errorf("the version %q is not stamped in (-ldflags -X main.cliVersion=%s)", version, version)
	}
	return fmt.Sprintf("%s, %.1f MB, %s", format, float64(fi.Size())/1e6, bi.GoVersion), nil
}

// executableFormat reads path as the executable format of p's OS and
// checks its CPU.
func executableFormat(path string, p Platform) (string, error) {
	switch p.OS {
	case "linux":
		f, err := elf.Open(path)
		if err != nil {
			return "", fmt.Errorf("not an ELF file: %w", err)
		}
		defer f.Close()
		want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[p.Arch]
		if f.Machine != want || f.Class != elf.ELFCLASS64 || f.Type != elf.ET_EXEC {
			return "", fmt.Errorf("ELF %s %s %s, want a 64-bit %s executable", f.Class, f.Type, f.Machine, want)
		}
		for _, prog := range f.Progs {
			if prog.Type == elf.PT_INTERP {
				return "", errors.New("dynamically linked (has an interpreter); want a static binary")
			}
		}
		if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
			return "", fmt.Errorf("needs shared libraries %v; want a static binary", libs)
		}
		return fmt.Sprintf("ELF 64-bit %s executable, static", f.Machine), nil
	case "darwin":
		f, err := macho.Open(path)
		if err != nil {
			return "", fmt.Errorf("not a (thin) Mach-O file: %w", err)
		}
		defer f.Close()
		want := map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[p.Arch]
		if f.Cpu != want || f.Type != macho.TypeExec {
			return "", fmt.Errorf("Mach-O %v %v, want a %v executable", f.Cpu, f.Type, want)
		}
		return fmt.Sprintf("Mach-O 64-bit %v executable", f.Cpu), nil
	case "windows":
		f, err := pe.Open(path)
		if err != nil {
			return "", fmt.Errorf("not a PE file: %w", err)
		}
		defer f.Close()
		want := map[string]uint16{"amd64": pe.IMAGE_FILE_MACHINE_AMD64, "arm64": pe.IMAGE_FILE_MACHINE_ARM64}[p.Arch]
		oh, ok := f.OptionalHeader.(*pe.OptionalHeader64)
		switch {
		case f.Machine != want:
			return "", fmt.Errorf("PE machine %#x, want %#x", f.Machine, want)
		case f.Characteristics&pe.IMAGE_FILE_EXECUTABLE_IMAGE == 0 || f.Characteristics&pe.IMAGE_FILE_DLL != 0:
			return "", fmt.Errorf("PE characteristics %#x: not an executable", f.Characteristics)
		case !ok:
			return "", errors.New("not a PE32+ (64-bit) image")
		case oh.Subsystem != pe.IMAGE_SUBSYSTEM_WINDOWS_CUI:
			return "", fmt.Errorf("PE subsystem %d, want the console (%d)", oh.Subsystem, pe.IMAGE_SUBSYSTEM_WINDOWS_CUI)
		}
		return fmt.Sprintf("PE32+ console executable, machine %s", p.Arch), nil
	}
	return "", fmt.Errorf("unknown OS %q", p.OS)
}

// CheckSums checks that dir/SHA256SUMS lists exactly the files of dir but
// itself, in `sha256sum` format, each with its SHA-256, and that every
// expected file is among them.
func CheckSums(dir string, expected map[string]bool) error {
	f, err := os.Open(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		return err
	}
	defer f.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 || strings.ContainsAny(name, "/\\") {
			return fmt.Errorf("line %d: %q is not `<sha256>  <file>`", n, sc.Text())
		}
		if listed[name] {
			return fmt.Errorf("line %d: %s listed twice", n, name)
		}
		listed[name] = true
		got, err := fileSHA256(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		if got != sum {
			return fmt.Errorf("%s: SHA-256 %s, SHA256SUMS says %s", name, got, sum)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var missing []string
	for _, e := range entries {
		if e.Name() != "SHA256SUMS" && !listed[e.Name()] {
			missing = append(missing, e.Name())
		}
	}
	for name := range expected {
		if name != "SHA256SUMS" && !listed[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("not listed: %s", strings.Join(missing, ", "))
	}
	return nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// RunVersion runs `path version --json` with no plug-in override and
// checks it reports version and the embedded plug-in.
func RunVersion(path, version string) (string, error) {
	cmd := exec.Command(path, "version", "--json")
	cmd.Env = withoutEnv(os.Environ(), "CLIPFOLD_WASM")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("%v: %s", err, ee.Stderr)
		}
		return "", err
	}
	var v struct {
		Clipfold     string `json:"clipfold"`
		PluginSource string `json:"plugin_source"`
		Plugin       struct {
			Version string `json:"version"`
		} `json:"plugin"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return "", fmt.Errorf("version --json printed %q: %w", out, err)
	}
	if v.Clipfold != version || v.PluginSource != "embedded" || v.Plugin.Version == "" {
		return "", fmt.Errorf("version --json printed %s; want clipfold %q and the embedded plug-in", strings.TrimSpace(string(out)), version)
	}
	return fmt.Sprintf("clipfold %s, embedded plug-in %s", v.Clipfold, v.Plugin.Version), nil
}

func withoutEnv(env []string, key string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}
