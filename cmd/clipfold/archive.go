package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/clipfold/clipfold"
	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/hostfuncs/store/sqlite"
	"github.com/clipfold/clipfold/internal/redact"
	sqlite3 "modernc.org/sqlite"
	sqlitelib "modernc.org/sqlite/lib"
)

// defaultDB is the SQLite file used when neither --db nor --postgres is
// given (and $CLIPFOLD_DB is unset).
const defaultDB = "clipfold.db"

// storeFlags are the flags choosing the archive.
type storeFlags struct {
	db       string
	postgres string
}

func (sf *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&sf.db, "db", "", "SQLite database `file` (default ./clipfold.db, or $CLIPFOLD_DB)")
	fs.StringVar(&sf.postgres, "postgres", "", "use the PostgreSQL database at this `URL` instead of SQLite (or $CLIPFOLD_POSTGRES)")
}

// archive is an open store and how to name it to a person.
type archive struct {
	st      store.Store
	kind    string // "sqlite" or "postgres"
	where   string // the file, or the URL without its password
	flagArg string // the flags that select it again, for hints ("" for the default)
}

func (a *archive) describe() string {
	if a.kind == "postgres" {
		return "PostgreSQL " + a.where
	}
	return "SQLite " + a.where
}

func (a *archive) Close() error { return a.st.Close() }

// open opens the archive. openExisting (search, show, recall) refuses to
// create a new, empty database and opens SQLite read-only: it never
// migrates or writes, so an archive the user cannot write is read as it
// is. openEmbed (search with embeddings) opens it writable, to store the
// vectors it computes, and read-only when the user cannot write it.
// openDry uses a throwaway in-memory one when there is none.
func (sf *storeFlags) open(e *env, mode openMode) (*archive, error) {
	pg := sf.postgres
	if pg == "" && sf.db == "" {
		pg = e.getenv("CLIPFOLD_POSTGRES")
	}
	if pg != "" {
		if sf.db != "" {
			return nil, usagef("--db and --postgres both given: choose one archive")
		}
		st, err := openPostgres(e.ctx, pg)
		if err != nil {
			return nil, err
		}
		return &archive{st: st, kind: "postgres", where: redact.URL(pg), flagArg: "--postgres '" + redact.URL(pg) + "'"}, nil
	}
	path := sf.db
	flagArg := ""
	if path == "" {
		path = e.getenv("CLIPFOLD_DB")
	}
	if path == "" {
		path = defaultDB
	} else if sf.db != "" {
		flagArg = "--db " + shellQuote(path)
	}
	open := path
	if path != sqlite.MemoryPath {
		info, err := os.Stat(path)
		switch {
		case err == nil && info.IsDir():
			return nil, usagef("--db %s is a directory; give a database file", path)
		case err == nil && mode == openExisting:
			// Reading waits for no writer (WAL), takes no write lock.
			return openReadOnly(path, flagArg)
		case err == nil:
			if err := probeLock(e, path); err != nil {
				return nil, err
			}
		case errors.Is(err, os.ErrNotExist) && (mode == openExisting || mode == openEmbed):
			return nil, failf("no archive at %s yet: run 'clipfold compact FILE%s' first (or point --db at your database)", path, prefixSpace(flagArg))
		case errors.Is(err, os.ErrNotExist) && mode == openDry:
			open = sqlite.MemoryPath
		}
	}
	st, err := sqlite.Open(open)
	if err != nil {
		if isBusy(err) {
			return nil, lockedError(path, err)
		}
		if mode == openEmbed && sqlite.IsReadOnly(err) {
			// An archive this user cannot write: searched as it is.
			return openReadOnly(path, flagArg)
		}
		return nil, failf("opening the SQLite database %s: %v", path, err)
	}
	return &archive{st: st, kind: "sqlite", where: path, flagArg: flagArg}, nil
}

// openReadOnly opens the SQLite archive at path for reading only.
func openReadOnly(path, flagArg string) (*archive, error) {
	st, err := sqlite.OpenReadOnly(path)
	if err != nil {
		if isBusy(err) {
			return nil, lockedError(path, err)
		}
		return nil, failf("opening the SQLite database %s for reading: %v", path, err)
	}
	return &archive{st: st, kind: "sqlite", where: path, flagArg: flagArg}, nil
}

func prefixSpace(s string) string {
	if s == "" {
		return ""
	}
	return " " + s
}

// probeLock fails fast, with advice, when another process holds the
// database's write lock: the store itself would wait up to 30 s for it.
// $CLIPFOLD_LOCK_TIMEOUT (a Go duration, default 5s) is how long to wait.
func probeLock(e *env, path string) error {
	wait := 5 * time.Second
	if s := e.getenv("CLIPFOLD_LOCK_TIMEOUT"); s != "" {
		if d, err := time.ParseDuration(s); err == nil && d >= 0 {
			wait = d
		}
	}
	db, err := sql.Open("sqlite", fmt.Sprintf("%s?_pragma=busy_timeout(%d)", path, wait.Milliseconds()))
	if err != nil {
		return nil // the real open reports it
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(e.ctx, wait+5*time.Second)
	defer cancel()
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		if isBusy(err) {
			return lockedError(path, fmt.Errorf("no write lock after %v ($CLIPFOLD_LOCK_TIMEOUT): %w", wait, err))
		}
		return nil
	}
	_, _ = conn.ExecContext(ctx, "ROLLBACK")
	return nil
}

// isBusy tells an SQLite error saying another connection holds the lock
// (SQLITE_BUSY, SQLITE_LOCKED, any extended code of them).
func isBusy(err error) bool {
	var e *sqlite3.Error
	return errors.As(err, &e) && (e.Code()&0xff == sqlitelib.SQLITE_BUSY || e.Code()&0xff == sqlitelib.SQLITE_LOCKED)
}

// lockedError says what to do about a locked database, and what SQLite said.
func lockedError(path string, cause error) error {
	return failf("the database %s is locked: another clipfold (or another program) may be running on it; "+
		"wait for it to finish, or use another --db (%v)", path, cause)
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// appendNew appends the messages of c that the conversation holds nowhere
// yet (neither active nor in recall storage: messages compacted earlier
// are not appended again, so compact and run can be repeated on a growing
// file) after its active history, and returns them. A dry run only tells
// which they are.
func appendNew(ctx context.Context, st store.Store, c *conversation, dryRun bool) ([]convMessage, error) {
	if !dryRun {
		return appendFresh(ctx, st, c.conversationID, c.msgs)
	}
	active, err := st.ActiveMessages(ctx, c.conversationID)
	if err != nil {
		return nil, fmt.Errorf("reading conversation %q: %w", c.conversationID, err)
	}
	stored := make(map[string]bool, len(active))
	for _, m := range active {
		stored[m.ID] = true
	}
	var fresh []convMessage
	for _, m := range c.msgs {
		if stored[m.ID] {
			continue
		}
		_, err := st.Recall(ctx, c.conversationID, m.ID)
		switch {
		case err == nil:
			continue // compacted earlier
		case !errors.Is(err, store.ErrNotFound):
			return nil, err
		}
		fresh = append(fresh, m)
	}
	return fresh, nil
}

// appendFresh appends the messages of msgs the conversation holds nowhere
// yet, in one store transaction (store.AppendNew: another process storing
// the same messages at the same time stores none of them twice), indexes
// them for search (clipfold.IndexActive), and returns them. Ids are unique within a conversation only: another
// conversation's message of the same id is another message.
func appendFresh(ctx context.Context, st store.Store, conv string, msgs []convMessage) ([]convMessage, error) {
	sm := make([]store.Message, len(msgs))
	for i, m := range msgs {
		sm[i] = store.Message{ID: m.ID, ConversationID: conv, Role: m.Role, Content: m.Content, CreatedAt: m.Created, Raw: m.Raw}
	}
	added, err := st.AppendNew(ctx, conv, sm)
	if err != nil {
		return nil, fmt.Errorf("storing the messages: %w", err)
	}
	// Searchable while active as the plug-in renders them (tool calls by
	// name and arguments, a result with its call), as after compaction.
	if err := clipfold.IndexActive(ctx, st, conv, len(added)); err != nil {
		return nil, fmt.Errorf("indexing the stored messages for search: %w", err)
	}
	ids := make(map[string]bool, len(added))
	for _, m := range added {
		ids[m.ID] = true
	}
	fresh := make([]convMessage, 0, len(added))
	for _, m := range msgs {
		if ids[m.ID] {
			fresh = append(fresh, m)
		}
	}
	return fresh, nil
}
