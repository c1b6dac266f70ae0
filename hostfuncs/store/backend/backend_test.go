package backend_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/hostfuncs/store/backend"
	"github.com/clipfold/clipfold/hostfuncs/store/sqlite"
)

func TestOpenPicksTheBackend(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, dsn := range []string{":memory:", "sqlite::memory:", filepath.Join(dir, "a.db"), "sqlite:" + filepath.Join(dir, "b.db")} {
		s, err := backend.Open(ctx, dsn)
		require.NoError(t, err, dsn)
		assert.IsType(t, &sqlite.Store{}, s, dsn)
		require.NoError(t, s.Close())
	}
	assert.FileExists(t, filepath.Join(dir, "a.db"))
	assert.FileExists(t, filepath.Join(dir, "b.db"))

	// A postgres:// URL goes to the PostgreSQL store: nothing listens on
	// port 1, so its error says so.
	for _, dsn := range []string{"postgres://u@127.0.0.1:1/x?connect_timeout=2", "postgresql://u@127.0.0.1:1/x?connect_timeout=2"} {
		_, err := backend.Open(ctx, dsn)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "postgres: open")
	}
}
