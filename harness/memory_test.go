package harness_test

import (
	"context"
	"testing"

	"github.com/clipfold/clipfold/internal/wasmhost"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInstanceReplacedAboveMaxMemory: a call that leaves the instance
// above Options.MaxMemory gets its answer; the next call runs on a fresh
// instance and answers the same.
func TestInstanceReplacedAboveMaxMemory(t *testing.T) {
	ctx := context.Background()
	rt := newRuntime(t, wasmhost.Options{MaxMemory: 8 << 20})
	inst, err := rt.NewInstance(ctx)
	require.NoError(t, err)
	defer inst.Close(ctx)
	small := benchHistory(50)
	first, err := inst.Call(ctx, "split", small)
	require.NoError(t, err)
	require.Zero(t, inst.Stats().Replaced, "a small call stays under 8 MiB")

	big := benchHistory(10_000) // needs ~12 MiB
	want, err := inst.Call(ctx, "split", big)
	require.NoError(t, err)
	assert.Equal(t, 1, inst.Stats().Replaced)
	assert.Less(t, inst.Stats().MemorySize, uint32(8<<20), "the replacement is fresh")

	got, err := inst.Call(ctx, "split", big)
	require.NoError(t, err)
	assert.True(t, string(want) == string(got), "the fresh instance answers the same")
	again, err := inst.Call(ctx, "split", small)
	require.NoError(t, err)
	assert.True(t, string(first) == string(again))
}

// TestPerfLargeCallsStayBounded: 40 splits of 10k messages on one
// instance never leave it above DefaultMaxMemory. (The standard build
// stays at ~12 MiB; TinyGo's retains memory call after call and is
// replaced now and then.)
func TestPerfLargeCallsStayBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("40 calls of 2.7 MB")
	}
	ctx := context.Background()
	inst := newInstance(t)
	defer inst.Close(ctx)
	in := benchHistory(10_000)
	var peak uint32
	for i := 1; i <= 40; i++ {
		_, err := inst.Call(ctx, "split", in)
		require.NoError(t, err, "call %d", i)
		m := inst.Stats().MemorySize
		require.NotZero(t, m, "no module handle: staging is off")
		require.LessOrEqual(t, m, uint32(wasmhost.DefaultMaxMemory), "call %d", i)
		peak = max(peak, m)
	}
	t.Logf("40 splits of %d bytes: largest memory after a call %.0f MiB, instance replaced %d times",
		len(in), float64(peak)/(1<<20), inst.Stats().Replaced)
}
