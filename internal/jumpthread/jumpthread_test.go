package jumpthread

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

// goShaped is a module with one function (param i32 = PC_B, result i32)
// in the shape Go's Wasm backend emits: an unwind block, the entry loop,
// three resume blocks and the br_table choosing among them. Segment 0
// adds 1 to a counter and jumps forward to segment 2; segment 1 adds 10
// and jumps back to segment 0; segment 2 returns the counter. So f(0) =
// 1, f(1) = 11, f(2) = 0.
func goShaped(seg0Jump byte) []byte {
	body := []byte{
		1, 1, 0x7F, // one i32 local: the counter (local 1)
		0x02, 0x40, // block (unwindExit)
		0x03, 0x40, // loop (entryPointLoop)
		0x02, 0x40, 0x02, 0x40, 0x02, 0x40, // three resume blocks
		0x20, 0x00, // local.get 0
		0x0E, 3, 0, 1, 2, 0, // br_table 0 1 2 default 0
		0x0B,                            // end: segment 0
		0x20, 1, 0x41, 1, 0x6A, 0x21, 1, // c += 1
		0x41, 2, 0x21, 0x00, 0x0C, seg0Jump, // PC_B = 2; br entry loop
		0x0B,                             // end: segment 1
		0x20, 1, 0x41, 10, 0x6A, 0x21, 1, // c += 10
		0x41, 0, 0x21, 0x00, 0x0C, 1, // PC_B = 0; br entry loop (backward)
		0x0B,          // end: segment 2
		0x20, 1, 0x0F, // return c
		0x0B,    // end loop
		0x00,    // unreachable
		0x0B,    // end block
		0x41, 0, // i32.const 0
		0x0B, // end
	}
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = append(m, 1, 6, 1, 0x60, 1, 0x7F, 1, 0x7F)  // type: (i32) -> i32
	m = append(m, 3, 2, 1, 0)                       // function 0: type 0
	m = append(m, 7, 5, 1, 1, 'f', 0, 0)            // export "f"
	code := appendU32([]byte{1}, uint32(len(body))) // one body
	code = append(code, body...)
	m = append(m, 10)
	m = appendU32(m, uint32(len(code)))
	return append(m, code...)
}

// rotatedLoop is a Go-shaped function holding a loop as Go lays it out:
// segment 0 sets c = 0, n = 5 and jumps ahead into the condition
// (segment 2); the body (segment 1) adds 10 to c and falls into the
// condition, which decrements n and jumps back to the body while n >= 0;
// segment 3 returns c. PC_B 0 and 1 select segment 0, 2 the body, 3 the
// condition, 4 the return: f(0) = 50, f(2) = 10, f(3) = 0, f(4) = 0.
func rotatedLoop() []byte {
	body := []byte{
		1, 2, 0x7F, // locals 1 (c) and 2 (n)
		0x02, 0x40, 0x03, 0x40, // unwindExit, entryPointLoop
		0x02, 0x40, 0x02, 0x40, 0x02, 0x40, 0x02, 0x40,
		0x20, 0x00, 0x0E, 5, 0, 0, 1, 2, 3, 0,
		0x0B, // segment 0
		0x41, 0, 0x21, 1, 0x41, 5, 0x21, 2,
		0x41, 3, 0x21, 0x00, 0x0C, 3, // PC_B = 3; br entry (forward)
		0x0B,                             // segment 1: the body
		0x20, 1, 0x41, 10, 0x6A, 0x21, 1, // c += 10, fall through
		0x0B,                                           // segment 2: the condition
		0x20, 2, 0x41, 1, 0x6B, 0x22, 2, 0x41, 0, 0x4E, // (n -= 1) >= 0
		0x04, 0x40, 0x41, 2, 0x21, 0x00, 0x0C, 2, 0x0B, // then PC_B = 2; br entry (back)
		0x0B,          // segment 3
		0x20, 1, 0x0F, // return c
		0x0B, 0x00, 0x0B, 0x41, 0, 0x0B,
	}
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = append(m, 1, 6, 1, 0x60, 1, 0x7F, 1, 0x7F, 3, 2, 1, 0, 7, 5, 1, 1, 'f', 0, 0)
	code := appendU32([]byte{1}, uint32(len(body)))
	code = append(code, body...)
	m = append(m, 10)
	m = appendU32(m, uint32(len(code)))
	return append(m, code...)
}

func TestThreadRotatedLoop(t *testing.T) {
	in := rotatedLoop()
	out, st, err := Thread(in)
	require.NoError(t, err)
	require.Equal(t, 1, st.Threaded, "the jump into the condition")
	require.Equal(t, 1, st.Loops)
	require.Equal(t, 1, st.BackEdges)
	for pcb, res := range map[uint64]uint64{0: 50, 1: 50, 2: 10, 3: 0, 4: 0} {
		require.Equal(t, res, callF(t, in, pcb), "original, PC_B %d", pcb)
		require.Equal(t, res, callF(t, out, pcb), "threaded, PC_B %d", pcb)
	}
	// The back edge is a br to a loop now: no br to the entry loop is
	// left in the body (the forward jump was threaded too).
	require.NotContains(t, string(out), string([]byte{0x41, 2, 0x21, 0x00, 0x0C, 2}))

	Reloop = false
	defer func() { Reloop = true }()
	_, st, err = Thread(in)
	require.NoError(t, err)
	require.Zero(t, st.Loops)
}

func callF(t *testing.T, module []byte, pcb uint64) uint64 {
	t.Helper()
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	mod, err := r.Instantiate(ctx, module)
	require.NoError(t, err)
	res, err := mod.ExportedFunction("f").Call(ctx, pcb)
	require.NoError(t, err)
	return res[0]
}

func TestThreadGoShape(t *testing.T) {
	in := goShaped(2) // segment 0's jump: the loop is two labels out
	out, st, err := Thread(in)
	require.NoError(t, err)
	require.Equal(t, Stats{Funcs: 1, Rewritten: 1, Jumps: 2, Threaded: 1}, st)

	// Only segment 0's br changed: now to the block that ends before
	// segment 2, one label out. The backward jump keeps the loop (the
	// loop pass leaves it: PC_B = 1 selects segment 1, which would have
	// to move). The output is marked as threaded.
	want := goShaped(1)
	require.Equal(t, want[8:], out[len(out)-len(want)+8:])
	require.True(t, hasMarker(out))
	require.False(t, hasMarker(in))
	for pcb, res := range []uint64{1, 11, 0} {
		require.Equal(t, res, callF(t, in, uint64(pcb)), "original, PC_B %d", pcb)
		require.Equal(t, res, callF(t, out, uint64(pcb)), "threaded, PC_B %d", pcb)
	}

	again, st, err := Thread(out)
	require.NoError(t, err)
	require.Equal(t, out, again, "a marked module is left alone")
	require.Equal(t, Stats{}, st)
}

func TestThreadLeavesOtherShapes(t *testing.T) {
	// A br to the loop not preceded by "i32.const; local.set 0" is not a
	// Go jump; a body with an undecodable opcode is skipped whole.
	noSet := goShaped(2)
	i := bytes.Index(noSet, []byte{0x41, 2, 0x21, 0x00})
	copy(noSet[i:], []byte{0x01, 0x01, 0x01, 0x01}) // four nops
	out, st, err := Thread(noSet)
	require.NoError(t, err)
	require.Equal(t, noSet[8:], out[len(out)-len(noSet)+8:])
	require.Equal(t, 0, st.Threaded)

	simd := goShaped(2)
	i = bytes.Index(simd, []byte{0x00, 0x0B, 0x41, 0})
	simd[i] = 0xFD // unreachable → a SIMD prefix this package does not decode
	out, st, err = Thread(simd)
	require.NoError(t, err)
	require.Equal(t, simd[8:], out[len(out)-len(simd)+8:])
	require.Equal(t, 1, st.Skipped)
}

func TestThreadErrors(t *testing.T) {
	for name, in := range map[string][]byte{
		"empty":          nil,
		"not wasm":       []byte("\x7fELF\x02\x01\x01\x00"),
		"version 2":      []byte("\x00asm\x02\x00\x00\x00"),
		"section size":   []byte("\x00asm\x01\x00\x00\x00\x01\x7f"),
		"truncated leb":  []byte("\x00asm\x01\x00\x00\x00\x01\x80"),
		"code too short": append([]byte("\x00asm\x01\x00\x00\x00"), 10, 3, 1, 9, 0),
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := Thread(in)
			require.Error(t, err)
		})
	}
}

// FuzzThread: any input gives an error or a module; a module whose code
// was rewritten and that wazero accepts stays one it accepts; one that
// was not rewritten is copied; threading never grows a module by more
// than the rewritten branches and the marker can.
func FuzzThread(f *testing.F) {
	f.Add(goShaped(2))
	f.Add(goShaped(1))
	f.Add(rotatedLoop())
	f.Add([]byte("\x00asm\x01\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, in []byte) {
		out, st, err := Thread(in)
		if err != nil {
			return
		}
		require.LessOrEqual(t, st.Threaded, st.Jumps)
		require.LessOrEqual(t, len(out), len(in)+64*st.Funcs+64*st.Loops+len(marker)+len(markerData)+8)
		if st.Rewritten == 0 {
			// Nothing rewritten: the input's sections follow the marker
			// unchanged. (Not compiled: wazero spends seconds and a GiB
			// on a type section declaring 10^9 parameters, which the
			// fuzzer finds.)
			require.Equal(t, in[8:], out[len(out)-(len(in)-8):])
			return
		}
		ctx := context.Background()
		r := wazero.NewRuntime(ctx)
		defer r.Close(ctx)
		if _, err := r.CompileModule(ctx, in); err != nil {
			return
		}
		_, err = r.CompileModule(ctx, out)
		require.NoError(t, err, "the input compiles, the output must too")
	})
}

// TestThreadGoProgram builds testdata/prog with standard Go for wasip1,
// threads it, and runs both modules: same output. The program parks
// goroutines and grows its stack, so resumption through the dispatch
// table (left in place) is exercised next to the threaded jumps.
func TestThreadGoProgram(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	wasm := filepath.Join(t.TempDir(), "prog.wasm")
	cmd := exec.Command("go", "build", "-o", wasm, "./testdata/prog")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	in, err := os.ReadFile(wasm)
	require.NoError(t, err)

	out, st, err := Thread(in)
	require.NoError(t, err)
	require.Greater(t, st.Threaded, st.Jumps/2, "%s", st)
	require.Greater(t, st.Loops, 10, "%s", st)
	require.Zero(t, st.Skipped, "%s", st)

	want := runProgram(t, in)
	require.Contains(t, want, "squares 41541750\n")
	require.Equal(t, want, runProgram(t, out))
}

func runProgram(t *testing.T, module []byte) string {
	t.Helper()
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, r)
	var stdout, stderr bytes.Buffer
	_, err := r.InstantiateWithConfig(ctx, module, wazero.NewModuleConfig().WithStdout(&stdout).WithStderr(&stderr).WithArgs("prog"))
	var exit *sys.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 0 {
		err = nil
	}
	require.NoError(t, err, "stderr: %s", stderr.String())
	return stdout.String()
}

// TestPluginBuildIsThreaded: make build threads build/clipfold.wasm, so
// threading it again finds nothing left to do (skipped before a build,
// or when the build was made with JUMPTHREAD=0).
func TestPluginBuildIsThreaded(t *testing.T) {
	if os.Getenv("JUMPTHREAD") == "0" {
		t.Skip("JUMPTHREAD=0")
	}
	in, err := os.ReadFile("../../build/clipfold.wasm")
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("no build/clipfold.wasm (make build)")
	}
	require.NoError(t, err)
	require.True(t, hasMarker(in), "build/clipfold.wasm is not threaded: run make build")
}
