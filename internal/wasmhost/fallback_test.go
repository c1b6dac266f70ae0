package wasmhost

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	extism "github.com/extism/go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	wazeroapi "github.com/tetratelabs/wazero/api"

	"github.com/clipfold/clipfold/embed"
)

// TestNoStagingWarnsOnceAndStillBoundsMemory plays a go-sdk whose Plugin
// fields moved (the reflection in sdkModules finds nothing): calls take
// the SDK's path, the program hears it once, and Options.MaxMemory still
// replaces an instance whose memory outgrew it.
func TestNoStagingWarnsOnceAndStillBoundsMemory(t *testing.T) {
	readSDKModules = func(*extism.Plugin) (wazeroapi.Module, wazeroapi.Module) { return nil, nil }
	noStagingWarning = sync.Once{}
	t.Cleanup(func() { readSDKModules, noStagingWarning = sdkModules, sync.Once{} })

	ctx := context.Background()
	var mu sync.Mutex
	var warnings []string
	rt, err := NewRuntime(ctx, Options{Wasm: embed.Wasm, CacheDir: "-", MaxMemory: 8 << 20,
		Logger: func(level extism.LogLevel, msg string) {
			mu.Lock()
			defer mu.Unlock()
			if strings.Contains(msg, "cannot stage") {
				warnings = append(warnings, msg)
			}
		}})
	require.NoError(t, err)
	defer rt.Close(ctx)
	a, err := rt.NewInstance(ctx)
	require.NoError(t, err)
	defer a.Close(ctx)
	b, err := rt.NewInstance(ctx)
	require.NoError(t, err)
	defer b.Close(ctx)
	assert.Len(t, warnings, 1, "said once per process, not per instance")

	var sb strings.Builder
	sb.WriteString(`{"messages":[`)
	for i := range 10_000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"role":"user","content":"message %d %s"}`, i, strings.Repeat("words of a turn ", 25))
	}
	sb.WriteString(`]}`)
	_, err = a.Call(ctx, "split", []byte(sb.String()))
	require.NoError(t, err)
	st := a.Stats()
	assert.Zero(t, st.StagedCalls, "the SDK's path")
	assert.Equal(t, 1, st.Replaced, "memory is bounded without the SDK's module handle")
	assert.Less(t, st.MemorySize, uint32(8<<20), "the replacement is fresh")
	_, err = a.Call(ctx, "split", []byte(`{"messages":[{"role":"user","content":"hi"}]}`))
	require.NoError(t, err)
	assert.Len(t, warnings, 1)
}
