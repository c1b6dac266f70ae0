package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clipfold/clipfold/internal/benchkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSubsetLosesNothing is the CI run of the benchmark: it builds the
// command from this checkout and replays the first turns of the 884-message
// session at a hundredth of the full scale, synchronously and ahead of
// time, with the plug-in under test ($CLIPFOLD_WASM, else the command's
// embedded one), then compacts the session at once and checks the
// fold-in. It fails if the tool breaks, a compaction fails or a message
// is lost; the waits are reported by make ahead, not tested.
func TestSubsetLosesNothing(t *testing.T) {
	root := filepath.Join("..", "..")
	bin, err := benchkit.BuildCommand(root, t.TempDir())
	require.NoError(t, err)
	wasm := os.Getenv("CLIPFOLD_WASM")
	if wasm != "" {
		wasm, err = filepath.Abs(wasm)
		require.NoError(t, err)
	}
	o := &options{bin: bin, wasm: wasm, data: filepath.Join(root, "testdata", "conversations"),
		pySrc: filepath.Join(root, "bindings", "python", "src"), sessions: []string{"debugging-session"},
		windows: map[string]int{"": 20000}, scale: 0.01, turn: 2 * time.Second, latency: time.Second, maxLatency: 3 * time.Second,
		compactLatency: 10 * time.Millisecond, turns: 15, jobs: 2, countRuns: 1, keep: t.TempDir(), label: "test", quiet: true}
	rep, err := run(context.Background(), o)
	require.NoError(t, err)
	assert.Empty(t, rep.problems())
	require.Len(t, rep.Replays, 2)
	for _, c := range rep.Replays {
		assert.Empty(t, c.Lost, "%s: lost messages", c.mode())
		assert.Zero(t, c.Failed, c.mode())
		assert.Greater(t, c.Compactions, 0, "%s: the replay compacted", c.mode())
		assert.Greater(t, c.SummarizerCalls, 0, c.mode())
		assert.Greater(t, c.Messages, 100, "%s: the turns replayed", c.mode())
		if c.Ahead {
			assert.Equal(t, c.ModelCalls, c.Waits.N, "every model call's wait")
			assert.Equal(t, c.Compactions, c.CompactionWaits.N, "every compaction's wait")
			assert.Zero(t, c.OverLimit, "no model call over the limit")
		}
	}
	require.NotNil(t, rep.Compact)
	assert.Equal(t, 884, rep.Compact.Messages)
	assert.Equal(t, 878, rep.Compact.Compressed)
	assert.Empty(t, rep.Compact.Lost)
	assert.True(t, rep.Compact.FoldIn, "the later compaction carries the earlier summary")
	md := markdown(rep)
	assert.Contains(t, md, "**Scale: 0.01**")
	assert.Equal(t, 2, strings.Count(md, "| debugging-session | 20,000 | Go |"))
	assert.Contains(t, md, "## The 884-message session at once")
}

// Bad flags are refused, naming the flag.
func TestFlags(t *testing.T) {
	for _, args := range [][]string{{"-scale", "0"}, {"-scale", "2"}, {"-model-max-tokens", "x=y"}, {"-jobs", "0"},
		{"-latency", "3s", "-max-latency", "1s"}} {
		var o options
		fs := flag.NewFlagSet("ahead", flag.ContinueOnError)
		parsed := o.register(fs)
		require.NoError(t, fs.Parse(args))
		err := parsed()
		require.Error(t, err, args)
		assert.Contains(t, err.Error(), args[0], args)
	}
}
