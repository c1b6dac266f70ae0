package harness_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/clipfold/clipfold/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStagingMatchesStandardPath: large inputs staged directly in the
// plug-in's memory (the Go host's default) give the same bytes, and the
// same errors, as the Extism kernel path every other host uses.
func TestStagingMatchesStandardPath(t *testing.T) {
	ctx := context.Background()
	staged := newInstance(t)
	require.True(t, staged.Staging(), "the default Go host must stage large inputs")

	rt, err := harness.NewRuntime(ctx, harness.Options{NoStaging: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close(ctx) })
	plain, err := rt.NewInstance(ctx)
	require.NoError(t, err)
	require.False(t, plain.Staging())

	big := benchHistory(2000)
	require.Greater(t, len(big), harness.StageMin)
	small := benchHistory(3)
	require.Less(t, len(small), harness.StageMin)
	unterminated := big[:len(big)-1]
	badRole := []byte(strings.Replace(string(big), `"role":"assistant"`, `"role":"robot"`, 1))

	cases := []struct {
		name, export string
		in           []byte
	}{
		{"split big", "split", big},
		{"score big", "score", big},
		{"chunk big", "chunk", big},
		{"split small (never staged)", "split", small},
		{"invalid JSON", "split", unterminated},
		{"bad role", "score", badRole},
		{"estimateTokens", "estimateTokens", textInput(100_000)},
	}
	stagedBefore := harness.StagedCalls(staged)
	// Twice each, interleaved, so that a staged call is followed by both
	// kinds of call on the same instance.
	for round := 0; round < 2; round++ {
		for _, c := range cases {
			want, wantErr := plain.Call(ctx, c.export, c.in)
			got, gotErr := staged.Call(ctx, c.export, c.in)
			if wantErr != nil {
				var ce, ge *harness.CallError
				require.True(t, errors.As(wantErr, &ce), "%s: %v", c.name, wantErr)
				require.True(t, errors.As(gotErr, &ge), "%s: staged call gave %v, want %v", c.name, gotErr, wantErr)
				assert.Equal(t, *ce, *ge, c.name)
				continue
			}
			require.NoError(t, gotErr, c.name)
			require.NotEmpty(t, want, c.name)
			assert.True(t, string(want) == string(got), "%s: staged output (%d bytes) differs from the standard path's (%d bytes)", c.name, len(got), len(want))
		}
	}
	// Every case but the small one is over StageMin, twice.
	assert.Equal(t, 2*(len(cases)-1), harness.StagedCalls(staged)-stagedBefore, "staged calls")
	assert.Zero(t, harness.StagedCalls(plain))
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
