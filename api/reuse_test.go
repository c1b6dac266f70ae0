package api

import (
	"fmt"
	"strings"
	"testing"

	"github.com/clipfold/clipfold/internal/benchdata"
	"github.com/stretchr/testify/require"
)

// TestArena: copies hold their bytes with no room to grow into a
// neighbour, long values get their own allocation, and after reset the
// same chunks serve the next call, none added.
func TestArena(t *testing.T) {
	var a arena
	fill := func(round int) [][]byte {
		var got [][]byte
		for i := 0; i < 3000; i++ {
			s := fmt.Sprintf("round %d value %d %s", round, i, strings.Repeat("x", i%300))
			b := a.copy(s)
			require.Equal(t, s, string(b))
			require.Equal(t, len(b), cap(b), "a copy must not grow into the next one")
			got = append(got, b)
		}
		long := strings.Repeat("y", arenaChunk)
		require.Equal(t, long, string(a.copy(long)))
		return got
	}
	first := fill(1)
	chunks := len(a.chunks)
	require.Greater(t, chunks, 1)
	for i, b := range first {
		require.True(t, strings.HasPrefix(string(b), fmt.Sprintf("round 1 value %d ", i)), "copy %d was overwritten", i)
	}
	a.reset()
	fill(2)
	require.Equal(t, chunks, len(a.chunks), "the second call made new chunks")
	require.Equal(t, "", (*arena)(nil).keep(""))
}

// TestReuseMemory runs calls of every size and kind, failing ones
// included, on one Env that reuses its memory, and compares each output
// with a fresh Env's: nothing of one call leaks into the next.
func TestReuseMemory(t *testing.T) {
	reused := DefaultEnv()
	reused.ReuseMemory()
	batch := `{"content":"s","depth":0,"start_time":"2026-02-28T10:00:00.000Z","end_time":"2026-02-28T11:00:00.000Z","message_count":1}`
	calls := []struct{ export, in string }{
		{"split", string(benchdata.History(1000))},
		{"split", string(benchdata.History(10))},
		{"score", string(benchdata.History(300))},
		{"split", `{"messages":[{"role":"user","content":"a"},{"role":7}]}`},
		{"chunk", string(benchdata.History(50))},
		{"shouldCompact", string(benchdata.History(2000))},
		{"estimateTokens", string(benchdata.History(20))},
		{"buildSummarizationRequest", string(benchdata.History(40))},
		{"buildClipArchive", `{"batches":[` + strings.TrimSuffix(strings.Repeat(batch+",", 30), ",") + `]}`},
		{"buildResummarizationRequest", `{"batch_contents":["one","two"]}`},
		{"providerRequest", `{"provider":"anthropic","request":{"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}}`},
		{"decodeHistory", `{"conversation_id":"c","history":` + strings.TrimSuffix(strings.TrimPrefix(string(benchdata.History(30)), `{"messages":`), `,"config":{"keep_recent":20}}`) + `}`},
		{"split", string(benchdata.History(1000))},
	}
	for round := 0; round < 2; round++ {
		for i, c := range calls {
			h, ok := Lookup(c.export)
			require.True(t, ok, c.export)
			want, wantErr := h(DefaultEnv(), []byte(c.in))
			got, gotErr := h(reused, []byte(c.in))
			got = append([]byte(nil), got...) // as the plug-in copies it out before EndCall
			reused.EndCall()
			require.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(gotErr), "call %d (%s)", i, c.export)
			require.Equal(t, string(want), string(got), "call %d (%s)", i, c.export)
		}
	}
	require.NotZero(t, cap(reused.scratch.msgs))
	require.NotZero(t, cap(reused.scratch.out))
	for _, m := range reused.scratch.msgs[:cap(reused.scratch.msgs)] {
		require.Nil(t, m.Raw, "EndCall left a message behind")
	}
}
