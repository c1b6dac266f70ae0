package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clipfold/clipfold/hostfuncs/store"

	sqlite3 "modernc.org/sqlite"
	sqlitelib "modernc.org/sqlite/lib"
)

// MinReadVersion is the oldest schema a read-only store reads: the
// queries of the current version run on it unchanged (version 4 lacks
// only the per-conversation keys, which its ids unique across the store
// satisfy, and finds no word after a NUL). An older database must be
// opened writable once, which migrates it.
const MinReadVersion = 4

// OpenReadOnly opens the database file at path for reading only (SCHEMA.md,
// "Opening for reading"): it never migrates, never writes and leaves no
// file behind, so an archive the user cannot write (a file of mode 0444,
// or in a directory they cannot write) can be searched and read. It reads
// schema versions MinReadVersion to the current one; an older database
// is refused with an error saying to open it writable once, a newer one
// with an error naming both versions. AppendMessages, Commit, PutVectors
// and Migrate answer an error matching store.ErrReadOnly; a search with
// an embedder ranks the vectors stored, embedding nothing.
//
// A WAL database that no process has open (no -shm file) and whose
// write-ahead log holds nothing (no -wal file, or an empty one) is read
// with the URI parameter immutable=1: SQLite then needs no -shm file
// (mode=ro would create one, and fails in a directory the process cannot
// write) and takes no locks, so a process that starts writing while it
// reads could make that read fail, never the file change. Otherwise the
// file is opened mode=ro, sharing the -shm of the processes that have it
// open; a -wal that holds commits with no -shm beside it needs a -shm
// made, which fails in a directory the process cannot write: the error
// says so.
func OpenReadOnly(path string) (*Store, error) {
	if path == "" || path == MemoryPath {
		return nil, fmt.Errorf("sqlite: open read-only %q: give a database file (a new in-memory database has nothing to read)", path)
	}
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("sqlite: open read-only %q: the path may not contain '?' or '#'", path)
	}
	info, err := os.Stat(path)
	switch {
	case err != nil:
		return nil, fmt.Errorf("sqlite: open read-only %q: %w", path, err)
	case info.IsDir():
		return nil, fmt.Errorf("sqlite: open read-only %q: a directory, not a database file", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open read-only %q: %w", path, err)
	}
	s, err := openReadOnly(abs, idleWAL(abs))
	switch {
	case err == nil:
		return s, nil
	case needsShm(err):
		if wi, werr := os.Stat(abs + "-wal"); werr == nil && wi.Size() > 0 {
			return nil, fmt.Errorf("sqlite: open read-only %q: its write-ahead log %s-wal holds commits not yet in the database file, "+
				"and reading them needs a %s-shm file this process cannot create: open the database once where it can be written "+
				"(or ask its owner to), which moves them into the file: %w", path, path, path, err)
		}
	}
	return nil, fmt.Errorf("sqlite: open read-only %q: %w", path, err)
}

// idleWAL says whether the database file abs is in WAL mode (its header's
// read and write versions are 2) with no -shm file beside it (no process
// has it open) and nothing in its write-ahead log: then the file alone is
// the whole database.
func idleWAL(abs string) bool {
	f, err := os.Open(abs)
	if err != nil {
		return false
	}
	defer f.Close()
	var h [20]byte
	if _, err := io.ReadFull(f, h[:]); err != nil || string(h[:16]) != "SQLite format 3\x00" || h[18] != 2 || h[19] != 2 {
		return false
	}
	if _, err := os.Stat(abs + "-shm"); !errors.Is(err, os.ErrNotExist) {
		return false
	}
	wi, err := os.Stat(abs + "-wal")
	return errors.Is(err, os.ErrNotExist) || err == nil && wi.Size() == 0
}

// openReadOnly opens abs mode=ro (immutable=1 too when immutable) and
// checks its schema version.
func openReadOnly(abs string, immutable bool) (*Store, error) {
	// In a URI '%' starts an escape; '?' and '#' were refused above.
	dsn := "file:" + strings.ReplaceAll(abs, "%", "%25") + "?mode=ro" +
		fmt.Sprintf("&_pragma=busy_timeout(%d)", busyTimeout.Milliseconds())
	if immutable {
		dsn += "&immutable=1"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, now: time.Now, readOnly: true}
	if err := s.checkReadable(context.Background()); err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// checkReadable refuses a database this store cannot read as it is.
func (s *Store) checkReadable(ctx context.Context) error {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return errors.New("not a clipfold database (it has no schema_migrations table)")
	}
	var version int
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&version); err != nil {
		return fmt.Errorf("reading schema_migrations: %w", err)
	}
	switch {
	case version > len(migrations):
		return fmt.Errorf("schema version %d was written by a newer clipfold (this one knows versions up to %d): read it with that version",
			version, len(migrations))
	case version < MinReadVersion:
		return fmt.Errorf("schema version %d is older than a read-only open reads (%d to %d): open the database writable once "+
			"(any writing command, e.g. 'clipfold compact', by a user who can write it), which upgrades it, then read it",
			version, MinReadVersion, len(migrations))
	}
	return nil
}

// needsShm tells the failure of a mode=ro open of a WAL database whose
// -shm file cannot be created: SQLITE_READONLY_DIRECTORY, or
// SQLITE_CANTOPEN.
func needsShm(err error) bool {
	var e *sqlite3.Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Code() == sqlitelib.SQLITE_READONLY_DIRECTORY || e.Code()&0xff == sqlitelib.SQLITE_CANTOPEN
}

// IsReadOnly tells an error of Open (or of a write) that SQLite gave
// because the database file, or its directory, cannot be written by this
// process: OpenReadOnly can read it.
func IsReadOnly(err error) bool {
	var e *sqlite3.Error
	return errors.As(err, &e) && e.Code()&0xff == sqlitelib.SQLITE_READONLY
}

// ReadOnly says whether the store was opened by OpenReadOnly
// (store.ReadOnlyStore).
func (s *Store) ReadOnly() bool { return s.readOnly }

// refuseWrite is the error of a write through a read-only store.
func (s *Store) refuseWrite(what string) error {
	if s.readOnly {
		return fmt.Errorf("sqlite: %s: %w", what, store.ErrReadOnly)
	}
	return nil
}
