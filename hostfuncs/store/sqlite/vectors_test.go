package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/clipfold/clipfold/hostfuncs/store/storetest"
)

// The vector cache of one store sees what another store (another
// process, in life) commits to the same file (PRAGMA data_version).
func TestVectorCacheSeesOtherWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	storetest.SharedDatabase(t, openOrFail(t, path), openOrFail(t, path))
}

// Two stores on one file (two processes, in life) syncing the same list
// at once append each message once, and neither fails.
func TestAppendNewTwoHandles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	storetest.AppendNewRace(t, openOrFail(t, path), openOrFail(t, path))
}
