package clipfold_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/clipfold/clipfold"
	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/hostfuncs/store/sqlite"
	"github.com/stretchr/testify/require"
)

// Compactions racing each other, through the plug-in under test and a
// real SQLite store: goroutines sharing one Compactor, and two Compactors
// (as two processes) on one file. A lost race is not a failure of
// summarizing: on one Compactor a conversation's compactions take turns
// and never conflict; across Compactors the loser gets commit_conflict,
// which never opens the circuit breaker. Nothing is lost either way.

var raceConfig = map[string]any{"keep_recent": 4, "chunk_size": 40, "max_summary_tokens": 60, "model_max_tokens": 1200,
	"context_budget": 0.5, "max_consecutive_failures": 3}

// openOn opens a Compactor on the plug-in under test and st.
func openOn(t *testing.T, st store.Store) *clipfold.Compactor {
	t.Helper()
	wasm := pluginUnderTest(t)
	c, err := clipfold.Open(context.Background(), clipfold.Options{Wasm: wasm, Config: raceConfig, Store: st})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func openSQLite(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// turns is frameworkTurn 0 … n-1, one list.
func turns(n int) []json.RawMessage {
	var out []json.RawMessage
	for i := 0; i < n; i++ {
		out = append(out, frameworkTurn(i)...)
	}
	return out
}

// storedIDs is every message id st holds for conv, active and in recall,
// sorted; clip-archives left out.
func storedIDs(t *testing.T, st *sqlite.Store, conv string) []string {
	t.Helper()
	var ids []string
	for _, table := range []string{"messages", "recall"} {
		rows, err := st.DB().Query("SELECT id FROM "+table+" WHERE conversation_id = ?", conv)
		require.NoError(t, err)
		for rows.Next() {
			var id string
			require.NoError(t, rows.Scan(&id))
			if !strings.HasPrefix(id, "clip_") {
				ids = append(ids, id)
			}
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())
	}
	slices.Sort(ids)
	return ids
}

// requireNothingLost: st holds every message of sent once, and nothing else.
func requireNothingLost(t *testing.T, st *sqlite.Store, conv string, sent []json.RawMessage) {
	t.Helper()
	msgs, err := clipfold.DecodeHistory(conv, sent)
	require.NoError(t, err)
	want := make([]string, len(msgs))
	for i := range msgs {
		want[i] = msgs[i].ID
	}
	slices.Sort(want)
	require.Equal(t, want, storedIDs(t, st, conv))
}

func TestCompressGoroutinesSharingACompactorTakeTurns(t *testing.T) {
	const workers, rounds = 8, 4
	prefix := func(i, k int) int { return 3 + 2*k + i%3 } // turns: each goroutine a little ahead or behind
	for _, callerOwned := range []bool{false, true} {
		name := "store-owned"
		if callerOwned {
			name = "caller-owned"
		}
		t.Run(name, func(t *testing.T) {
			st := openSQLite(t, filepath.Join(t.TempDir(), "c.db"))
			c := openOn(t, st)
			all := turns(prefix(2, rounds-1))
			var mu sync.Mutex
			var results []*clipfold.Result
			var errs []error
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := 0; i < workers; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					for k := 0; k < rounds; k++ {
						res, err := c.Compress(context.Background(), "c1", all[:4*prefix(i, k)],
							&clipfold.CompressOptions{OnlyIfDue: true, CallerOwned: callerOwned})
						mu.Lock()
						results, errs = append(results, res), append(errs, err)
						mu.Unlock()
					}
				}()
			}
			close(start)
			wg.Wait()
			compactions := 0
			for i, res := range results {
				require.NoError(t, errs[i])
				require.False(t, res.Failed, "%s: %s", res.FailureCode, res.FailureMessage)
				require.Zero(t, res.ConsecutiveFailures)
				if res.MessagesCompressed > 0 {
					compactions++
				}
			}
			require.Positive(t, compactions)
			if !callerOwned {
				requireNothingLost(t, st, "c1", all)
			}
		})
	}
}

// raceStore is a store whose ListBlocks (memory_list: the compaction has
// summarized and is about to build its commit) first runs before, once.
type raceStore struct {
	store.Store
	before func()
}

func (s *raceStore) ListBlocks(ctx context.Context, tier, labelPrefix string) ([]core.Block, error) {
	if f := s.before; f != nil {
		s.before = nil
		f()
	}
	return s.Store.ListBlocks(ctx, tier, labelPrefix)
}

// Two Compactors on one SQLite file, as two processes: again and again
// b's compaction loses to a's, which commits while b is summarizing. b's
// result is commit_conflict saying another compaction won; the breaker
// never counts it, so b is never refused; nothing is lost.
func TestCompressLostRaceIsCommitConflict(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shared.db")
	aStore := openSQLite(t, path)
	a := openOn(t, aStore)
	bStore := &raceStore{Store: openSQLite(t, path)}
	b := openOn(t, bStore)
	var sent []json.RawMessage
	for k := 0; k < 10; k++ {
		sent = turns(12 + 6*k)
		bStore.before = func() {
			won, err := a.Compress(ctx, "c1", sent, nil)
			require.NoError(t, err)
			require.False(t, won.Failed, "%s: %s", won.FailureCode, won.FailureMessage)
			require.Positive(t, won.MessagesCompressed)
		}
		res, err := b.Compress(ctx, "c1", sent, nil)
		require.NoError(t, err)
		require.Nil(t, bStore.before, "b's compaction reached memory_list")
		require.True(t, res.Failed)
		require.Equal(t, "commit_conflict", res.FailureCode, "round %d: %s", k, res.FailureMessage)
		require.True(t, strings.HasPrefix(res.FailureMessage, "another compaction of this conversation won"), res.FailureMessage)
		require.NotContains(t, res.FailureMessage, "already stored")
		require.Zero(t, res.ConsecutiveFailures, "round %d", k)
	}
	requireNothingLost(t, aStore, "c1", sent)
	// The breaker stayed closed: b compacts as soon as it wins.
	sent = turns(76)
	res, err := b.Compress(ctx, "c1", sent, nil)
	require.NoError(t, err)
	require.False(t, res.Failed, "%s: %s", res.FailureCode, res.FailureMessage)
	requireNothingLost(t, aStore, "c1", sent)
}
