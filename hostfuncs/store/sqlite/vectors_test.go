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
