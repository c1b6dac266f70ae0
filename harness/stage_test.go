package harness_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/clipfold/clipfold/api"
	"github.com/clipfold/clipfold/hostfuncs"
	"github.com/clipfold/clipfold/internal/wasmhost"
	extism "github.com/extism/go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// TestStagingMatchesStandardPath: inputs staged directly in the plug-in's
// memory and exports called directly (the Go host's default) give the
// same bytes, and the same errors, as the Extism SDK's call, through the
// kernel, that a plain Extism SDK makes.
func TestStagingMatchesStandardPath(t *testing.T) {
	ctx := context.Background()
	staged := newInstance(t)
	require.True(t, staged.Staging(), "the default Go host must stage inputs")

	rt, err := wasmhost.NewRuntime(ctx, wasmhost.Options{NoStaging: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close(ctx) })
	plain, err := rt.NewInstance(ctx)
	require.NoError(t, err)
	require.False(t, plain.Staging())

	big := benchHistory(2000)
	small := benchHistory(3)
	unterminated := big[:len(big)-1]
	badRole := []byte(strings.Replace(string(big), `"role":"assistant"`, `"role":"robot"`, 1))

	cases := []struct {
		name, export string
		in           []byte
	}{
		{"split big", "split", big},
		{"score big", "score", big},
		{"chunk big", "chunk", big},
		{"split small", "split", small},
		{"unknown export", "nosuchexport", small},
		{"invalid JSON", "split", unterminated},
		{"bad role", "score", badRole},
		{"estimateTokens", "estimateTokens", textInput(100_000)},
		// Inputs of at most 256 KiB leave their buffer to the plug-in's
		// next staged call: a larger one followed by smaller ones reuses
		// it, a longer one after them needs a new one.
		{"split medium (buffer kept)", "split", benchHistory(300)},
		{"shouldCompact per turn (kept buffer reused)", "shouldCompact", benchHistory(100)},
		{"score per turn (reused again)", "score", benchHistory(60)},
		{"split medium again", "split", benchHistory(300)},
	}
	stagedBefore := staged.Stats().StagedCalls
	// Twice each, interleaved, so that a staged call is followed by both
	// kinds of call on the same instance.
	for round := 0; round < 2; round++ {
		for _, c := range cases {
			want, wantErr := plain.Call(ctx, c.export, c.in)
			got, gotErr := staged.Call(ctx, c.export, c.in)
			if wantErr != nil {
				var ce, ge *wasmhost.CallError
				if !errors.As(wantErr, &ce) { // not the export's failure: no such export
					require.Error(t, gotErr, c.name)
					assert.Equal(t, wantErr.Error(), gotErr.Error(), c.name)
					continue
				}
				require.True(t, errors.As(gotErr, &ge), "%s: staged call gave %v, want %v", c.name, gotErr, wantErr)
				assert.Equal(t, *ce, *ge, c.name)
				continue
			}
			require.NoError(t, gotErr, c.name)
			require.NotEmpty(t, want, c.name)
			assert.True(t, string(want) == string(got), "%s: staged output (%d bytes) differs from the standard path's (%d bytes)", c.name, len(got), len(want))
		}
	}
	// Every case but the unknown export, twice.
	assert.Equal(t, 2*(len(cases)-1), staged.Stats().StagedCalls-stagedBefore, "staged calls")
	assert.Zero(t, plain.Stats().StagedCalls)
}

// TestStagingOutputIsACopy: the output of a staged call stays intact when
// the next call reuses the plug-in's memory.
func TestStagingOutputIsACopy(t *testing.T) {
	ctx := context.Background()
	inst := newInstance(t)
	first, err := inst.Call(ctx, "split", benchHistory(500))
	require.NoError(t, err)
	keep := string(first)
	_, err = inst.Call(ctx, "split", benchHistory(700))
	require.NoError(t, err)
	assert.True(t, keep == string(first), "a later call changed an earlier output")
}

// recordingCaller records every host-function input before a real Host
// answers it.
type recordingCaller struct {
	h   *hostfuncs.Host
	log []string
}

// timeLeft is the part of a request that depends on the clock.
var timeLeft = regexp.MustCompile(`"timeout_ms":\d+`)

func (r *recordingCaller) CallHost(name string, input []byte) ([]byte, error) {
	r.log = append(r.log, name+" "+timeLeft.ReplaceAllString(string(input), `"timeout_ms":…`))
	return r.h.CallHost(name, input)
}

// TestStagingCompressHostInputsInPlace: with Options.Host, a staged
// compress hands its host-function inputs over in its own memory; the
// host receives exactly the bytes the Extism-memory path delivers, and
// the outcome is the same.
func TestStagingCompressHostInputsInPlace(t *testing.T) {
	ctx := context.Background()
	hist := conversation("direct", 300)
	in := compressInput(t, "direct", hist, map[string]any{
		"now": "2026-03-01T12:00:00.000Z", "operation_id": "op-direct"})

	run := func(opts func(api.HostCaller) wasmhost.Options) (*wasmhost.Instance, *recordingCaller, []byte) {
		rec := &recordingCaller{h: &hostfuncs.Host{LLM: &scriptLLM{}, Store: newMemStore(hist)}}
		rt, err := wasmhost.NewRuntime(ctx, opts(rec))
		require.NoError(t, err)
		t.Cleanup(func() { _ = rt.Close(ctx) })
		inst, err := rt.NewInstance(ctx)
		require.NoError(t, err)
		out, err := inst.Call(ctx, "compress", in)
		require.NoError(t, err)
		return inst, rec, out
	}
	direct, dRec, dOut := run(func(h api.HostCaller) wasmhost.Options { return wasmhost.Options{Host: h} })
	require.True(t, direct.Stats().DirectHostArgs)
	require.Equal(t, 1, direct.Stats().StagedCalls)
	plain, pRec, pOut := run(func(h api.HostCaller) wasmhost.Options {
		return wasmhost.Options{HostFunctions: hostfuncs.Bind(h), NoStaging: true}
	})
	require.False(t, plain.Stats().DirectHostArgs)

	require.Greater(t, len(dRec.log), 10, "compress made too few host calls to compare")
	require.Equal(t, len(pRec.log), len(dRec.log), "host calls")
	for k := range pRec.log {
		if a, b := dRec.log[k], pRec.log[k]; a != b {
			i := 0
			for i < len(a) && i < len(b) && a[i] == b[i] {
				i++
			}
			lo := max(0, i-150)
			t.Fatalf("host call %d differs at byte %d:\nin place: …%.300s\nExtism:   …%.300s", k, i, a[lo:], b[lo:])
		}
	}
	res, want := gjson.ParseBytes(dOut), gjson.ParseBytes(pOut)
	require.False(t, res.Get("failed").Bool(), res.Get("failure_message").String())
	for _, f := range []string{"batches_created", "messages_compressed", "operation_id", "active_history.#"} {
		assert.Equal(t, want.Get(f).Raw, res.Get(f).Raw, f)
	}
}

// TestOptionsHostAndHostFunctionsConflict: a Runtime gets its host
// functions one way.
func TestOptionsHostAndHostFunctionsConflict(t *testing.T) {
	h := &hostfuncs.Host{}
	_, err := wasmhost.NewRuntime(context.Background(), wasmhost.Options{Host: h, HostFunctions: hostfuncs.Bind(h)})
	require.ErrorContains(t, err, "both set")
}

// TestBadManifestConfigFailsEachCall: NewInstance's own first call does
// not turn a bad manifest value into an instantiation failure; every call
// reports it, naming the key, with or without staging.
func TestBadManifestConfigFailsEachCall(t *testing.T) {
	ctx := context.Background()
	for _, noStaging := range []bool{false, true} {
		rt := newRuntime(t, wasmhost.Options{Config: map[string]string{"keep_recent": "-3"}, NoStaging: noStaging})
		inst, err := rt.NewInstance(ctx)
		require.NoError(t, err)
		for _, in := range [][]byte{[]byte(`{"messages":[]}`), benchHistory(200)} {
			_, err = inst.Call(ctx, "split", in)
			var ce *wasmhost.CallError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "invalid_input", ce.Code)
			assert.Contains(t, ce.Message, "manifest config.keep_recent")
		}
	}
}

// TestDirectCallLogsWarnings: the plug-in's log lines (here, compress
// warning about an unknown config key) reach Options.Logger from a direct
// call as from the SDK's call: the kernel import it uses finds the kernel
// in the call's context.
func TestDirectCallLogsWarnings(t *testing.T) {
	ctx := context.Background()
	hist := conversation("warn", 40)
	in := compressInput(t, "warn", hist, map[string]any{"dry_run": true,
		"config": map[string]any{"no_such_key": 1, "keep_recent": 10}})
	for _, noStaging := range []bool{false, true} {
		var lines []string
		rt := newRuntime(t, wasmhost.Options{NoStaging: noStaging,
			Host:   &hostfuncs.Host{LLM: &scriptLLM{}, Store: newMemStore(hist)},
			Logger: func(_ extism.LogLevel, msg string) { lines = append(lines, msg) }})
		inst, err := rt.NewInstance(ctx)
		require.NoError(t, err)
		out, err := inst.Call(ctx, "compress", in)
		require.NoError(t, err)
		require.Contains(t, gjson.GetBytes(out, "warnings").Raw, "no_such_key")
		require.Len(t, lines, 1, "noStaging=%v", noStaging)
		assert.Contains(t, lines[0], "no_such_key")
		assert.Equal(t, !noStaging, inst.Stats().StagedCalls == 1)
	}
}
