package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/hostfuncs/store"
)

// testAppendNew: AppendNew appends what the conversation holds nowhere,
// skips what it holds (active or recalled, whatever the content), and
// validates its input as AppendMessages does.
func testAppendNew(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	list := numbered("c1", 6)
	recallOne(t, s, "c1", "op1", list[:2])
	require.NoError(t, s.AppendMessages(ctx, "c1", list[2:3]))
	require.NoError(t, s.AppendMessages(ctx, "c2", numbered("c2", 6)), "another conversation's same ids are not held by c1")

	added, err := s.AppendNew(ctx, "c1", list)
	require.NoError(t, err)
	assert.Equal(t, ids(list[3:]), ids(added), "only what c1 holds nowhere is appended, in order")
	active, err := s.ActiveMessages(ctx, "c1")
	require.NoError(t, err)
	assert.Equal(t, append([]string{"ca-op1"}, ids(list[2:])...), ids(active))

	again, err := s.AppendNew(ctx, "c1", list)
	require.NoError(t, err)
	assert.Empty(t, again, "a list sent again appends nothing")

	changed := msg("c1", list[3].ID, "user", "other words under a held id", 30)
	again, err = s.AppendNew(ctx, "c1", []store.Message{changed})
	require.NoError(t, err)
	assert.Empty(t, again, "a held id is skipped whatever its content")

	_, err = s.AppendNew(ctx, "c1", []store.Message{msg("c1", "n1", "user", "a", 40), msg("c1", "n1", "user", "b", 41)})
	require.ErrorContains(t, err, "n1", "a repeated id within the list is refused, naming it")
	_, err = s.AppendNew(ctx, "c1", []store.Message{msg("c1", "n2", "robot", "a", 40)})
	require.Error(t, err, "an unknown role is refused")
	active, err = s.ActiveMessages(ctx, "c1")
	require.NoError(t, err)
	assert.Len(t, active, 5, "a refused list appends nothing")
}

// testAppendNewConcurrent: goroutines syncing the same growing list at
// once append each message exactly once, and none of them fails.
func testAppendNewConcurrent(t *testing.T, open Opener) {
	s := open(t)
	AppendNewRace(t, s, s)
}

// AppendNewRace syncs the same lists through a and b (two handles on one
// database, or the same store twice) from eight goroutines at once, in
// rounds over a growing list: every call succeeds, and every message is
// stored once, in order.
func AppendNewRace(t *testing.T, a, b store.Store) {
	ctx := context.Background()
	list := numbered("race", 40)
	total := 0
	for _, n := range []int{10, 25, 40} {
		var wg sync.WaitGroup
		counts := make([]int, 8)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				s := a
				if g%2 == 1 {
					s = b
				}
				added, err := s.AppendNew(ctx, "race", list[:n])
				assert.NoError(t, err, "goroutine %d", g)
				counts[g] = len(added)
			}(g)
		}
		wg.Wait()
		for _, c := range counts {
			total += c
		}
		active, err := a.ActiveMessages(ctx, "race")
		require.NoError(t, err)
		assert.Equal(t, ids(list[:n]), ids(active), fmt.Sprintf("after the round of %d: each message once, in order", n))
		assert.Equal(t, len(active), total, "what the calls say they appended is what is stored")
	}
}
