package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/hostfuncs/store/sqlite"
	"github.com/clipfold/clipfold/hostfuncs/store/storetest"
)

func openOrFail(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s
}

func TestConformanceFile(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return openOrFail(t, filepath.Join(t.TempDir(), "clipfold.db"))
	})
}

func TestConformanceMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return openOrFail(t, sqlite.MemoryPath)
	})
}

// Two :memory: stores are two databases: nothing leaks between them.
func TestMemoryStoresAreSeparate(t *testing.T) {
	ctx := context.Background()
	a := openOrFail(t, sqlite.MemoryPath)
	b := openOrFail(t, sqlite.MemoryPath)
	require.NoError(t, a.AppendMessages(ctx, "c1", []store.Message{{ID: "m1", Role: "user", Content: "x"}}))
	got, err := b.ActiveMessages(ctx, "c1")
	require.NoError(t, err)
	assert.Empty(t, got)
}

// Reopening a file applies no migration and keeps the data; the file is
// in WAL mode so readers do not block the writer.
func TestReopenFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "clipfold.db")
	s, err := sqlite.Open(path)
	require.NoError(t, err)
	require.NoError(t, s.AppendMessages(ctx, "c1", []store.Message{{ID: "m1", Role: "user", Content: "x"}}))
	before, err := s.Dump(ctx)
	require.NoError(t, err)
	require.NoError(t, s.Close())

	s = openOrFail(t, path)
	after, err := s.Dump(ctx)
	require.NoError(t, err)
	assert.Equal(t, before, after, "reopening must not change the database")
	var versions int
	require.NoError(t, s.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&versions))
	assert.Equal(t, 6, versions)
	var mode string
	require.NoError(t, s.DB().QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode))
	assert.Equal(t, "wal", mode)
}

func TestOpenRejectsBadPaths(t *testing.T) {
	for _, p := range []string{"", "a?b.db", "a#b.db"} {
		_, err := sqlite.Open(p)
		assert.Error(t, err, "path %q", p)
	}
	_, err := sqlite.Open(filepath.Join(t.TempDir(), "no", "such", "dir", "x.db"))
	assert.Error(t, err)
}

// Two handles on one file stand in for two processes (say the Go and the
// Python host): racing commits through both still let exactly one win,
// and the losers see a conflict, not SQLITE_BUSY.
func TestConcurrentCommitsAcrossHandles(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shared.db")
	handles := []*sqlite.Store{openOrFail(t, path), openOrFail(t, path)}
	var msgs []store.Message
	for i := 1; i <= 6; i++ {
		msgs = append(msgs, store.Message{ID: fmt.Sprintf("m%d", i), Role: "user", Content: "x"})
	}
	require.NoError(t, handles[0].AppendMessages(ctx, "c1", msgs))

	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			errs[i] = handles[i%2].Commit(ctx, &core.Commit{
				ConversationID: "c1", OperationID: fmt.Sprintf("op%d", i),
				ArchiveWrites:    []core.ArchiveWrite{{Label: core.BatchLabelPrefix("c1") + fmt.Sprint(i), Content: "s", Tier: "archival"}},
				RemoveMessageIDs: []string{"m1", "m2", "m3"},
				Insert:           core.InsertMessage{ID: fmt.Sprintf("ca%d", i), Content: "[Context Summary]"},
			})
		}(i)
	}
	close(start)
	wg.Wait()
	ok, conflicts := 0, 0
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, core.ErrConflict):
			conflicts++
		default:
			t.Errorf("commit %d: %v", i, err)
		}
	}
	assert.Equal(t, 1, ok)
	assert.Equal(t, n-1, conflicts)
	blocks, err := handles[1].ListBlocks(ctx, "archival", core.BatchLabelPrefix("c1"))
	require.NoError(t, err)
	assert.Len(t, blocks, 1)
}

// The store vectors of testdata/store, read with testdata/store/state.sql.
func TestVectors(t *testing.T) {
	query := storetest.StateSQL(t)
	storetest.RunVectors(t, func(t *testing.T) store.Store {
		return openOrFail(t, sqlite.MemoryPath)
	}, func(ctx context.Context, s store.Store) ([]byte, error) {
		var state string
		err := s.(*sqlite.Store).DB().QueryRowContext(ctx, query).Scan(&state)
		return []byte(state), err
	})
}

// TestOpenWaitsForARollbackJournalFile: a file in rollback-journal mode (as
// the Node host leaves it) is put in WAL mode when opened. The switch needs
// the exclusive lock; while another connection writes, SQLite answers
// SQLITE_BUSY at once without waiting (two connections that both hold a
// read lock and both want to write would otherwise deadlock). Open waits
// for the other connection, reading or writing, instead of failing with
// "database is locked".
func TestOpenWaitsForARollbackJournalFile(t *testing.T) {
	for _, holder := range []struct{ name, begin string }{
		{"reader", "BEGIN DEFERRED"},
		{"writer", "BEGIN IMMEDIATE"},
	} {
		t.Run(holder.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "rollback.db")
			s, err := sqlite.Open(path)
			require.NoError(t, err)
			require.NoError(t, s.AppendMessages(ctx, "c1", []store.Message{{ID: "m1", Role: "user", Content: "x"}}))
			_, err = s.DB().ExecContext(ctx, `PRAGMA journal_mode = DELETE`)
			require.NoError(t, err)
			require.NoError(t, s.Close())

			other, err := sql.Open("sqlite", path)
			require.NoError(t, err)
			defer other.Close()
			conn, err := other.Conn(ctx)
			require.NoError(t, err)
			defer conn.Close()
			_, err = conn.ExecContext(ctx, holder.begin)
			require.NoError(t, err)
			var n int
			require.NoError(t, conn.QueryRowContext(ctx, `SELECT COUNT(*) FROM messages`).Scan(&n))
			require.Equal(t, 1, n)

			opened := make(chan error, 1)
			go func() {
				s, err := sqlite.Open(path)
				if err == nil {
					var mode string
					err = s.DB().QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode)
					if err == nil && mode != "wal" {
						err = fmt.Errorf("journal mode %q after Open, want wal", mode)
					}
					_ = s.Close()
				}
				opened <- err
			}()
			select {
			case err := <-opened:
				t.Fatalf("Open returned while another connection held the file: %v", err)
			case <-time.After(300 * time.Millisecond):
			}
			_, err = conn.ExecContext(ctx, "ROLLBACK")
			require.NoError(t, err)
			require.NoError(t, <-opened)
		})
	}
}
