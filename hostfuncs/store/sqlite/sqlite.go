// Package sqlite is clipfold's embedded store: SQLite through
// modernc.org/sqlite (pure Go, no cgo), in a file or in memory.
//
// Concurrency: every transaction begins IMMEDIATE (it takes the write lock
// up front) and connections wait up to busyTimeout for it, so racing
// commits are serialized by SQLite itself and each loser sees the winner's
// result — a missing id, hence core.ErrConflict — instead of a
// SQLITE_BUSY failure half-way. The same holds across processes sharing
// one file (for instance the Python host).
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/clipfold/clipfold/api"
	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/store"

	sqlite3 "modernc.org/sqlite"
	sqlitelib "modernc.org/sqlite/lib"
)

// busyTimeout is how long a connection waits for another writer. Commits
// are short; this is generous so eight racing goroutines (or processes)
// all get their turn instead of failing with SQLITE_BUSY.
const busyTimeout = 30 * time.Second

// MemoryPath is the path that opens a private in-memory database.
const MemoryPath = ":memory:"

// Store is the SQLite implementation of store.Store.
type Store struct {
	db     *sql.DB
	now    func() time.Time
	memory bool
	// readOnly: opened by OpenReadOnly; every write is refused.
	readOnly bool
	gen      int64 // writes by this store (atomic), for the vector cache
	cache    vectorCache
}

var (
	_ store.Store         = (*Store)(nil)
	_ store.Dumper        = (*Store)(nil)
	_ store.Migrator      = (*Store)(nil)
	_ store.ReadOnlyStore = (*Store)(nil)
)

// Open opens (creating when needed) the database at path, a file or
// MemoryPath, and applies pending migrations.
//
// A file is put in WAL mode so readers never block the writer. An
// in-memory database lives in one connection (SQLite gives each connection
// its own :memory: database), so the pool is capped at one: every caller
// sees the same data and writers queue in the pool instead of in SQLite.
func Open(path string) (*Store, error) {
	return openAt(path, len(migrations))
}

// openAt opens path and applies the migrations up to version (tests
// make old databases with it).
func openAt(path string, version int) (*Store, error) {
	if path == "" {
		return nil, errors.New("sqlite: open: empty path (use a file path or \":memory:\")")
	}
	params := []string{
		"_txlock=immediate",
		fmt.Sprintf("_pragma=busy_timeout(%d)", busyTimeout.Milliseconds()),
		"_pragma=foreign_keys(1)",
	}
	memory := path == MemoryPath
	if !memory {
		if strings.ContainsAny(path, "?#") {
			return nil, fmt.Errorf("sqlite: open %q: the path may not contain '?' or '#'", path)
		}
		params = append(params, "_pragma=synchronous(NORMAL)")
	}
	db, err := sql.Open("sqlite", path+"?"+strings.Join(params, "&"))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %q: %w", path, err)
	}
	if memory {
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		db.SetConnMaxLifetime(0)
		db.SetConnMaxIdleTime(0)
	}
	s := &Store{db: db, now: time.Now, memory: memory}
	if !memory {
		if err := enterWAL(context.Background(), db, busyTimeout); err != nil {
			_ = db.Close()
			return nil, fmt.Errorf("sqlite: open %q: %w", path, err)
		}
	}
	if _, err := s.migrateTo(context.Background(), version); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("sqlite: open %q: %w", path, err)
	}
	return s, nil
}

// enterWAL puts the file in WAL mode, which the file keeps: every
// connection opened on it afterwards is in WAL mode too. Leaving a
// rollback journal (the Node host's mode) takes the exclusive lock, and
// SQLite answers SQLITE_BUSY at once, without its busy handler, when
// another connection holds the write lock while this one reads (two
// readers that both want to write would deadlock otherwise). So the
// switch is retried, the read lock released in between, until wait has
// passed. A file already in WAL mode answers at once.
func enterWAL(ctx context.Context, db *sql.DB, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	pause := 2 * time.Millisecond
	for {
		var mode string
		err := db.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode)
		if err == nil || !isBusy(err) || time.Now().Add(pause).After(deadline) {
			if err != nil {
				return fmt.Errorf("entering WAL mode: %w", err)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("entering WAL mode: %w", ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// SetNow sets the store's clock (time.Now by default), for tests and
// tools that need the times a commit writes to be known.
func (s *Store) SetNow(now func() time.Time) { s.now = now }

// DB exposes the underlying handle, for tools and tests that need SQL.
func (s *Store) DB() *sql.DB { return s.db }

// Close closes the database.
func (s *Store) Close() error {
	s.cache.close()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("sqlite: close: %w", err)
	}
	return nil
}

// Migrate applies the migrations not yet recorded in schema_migrations and
// returns how many it applied; on an up-to-date database it changes
// nothing. It runs in one IMMEDIATE transaction, so two processes opening
// a new file at once cannot both apply the same step.
func (s *Store) Migrate(ctx context.Context) (int, error) {
	if err := s.refuseWrite("migrate"); err != nil {
		return 0, err
	}
	return s.migrateTo(ctx, len(migrations))
}

func (s *Store) migrateTo(ctx context.Context, version int) (int, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("migrate: begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    INTEGER PRIMARY KEY,
	name       TEXT NOT NULL,
	applied_at TEXT NOT NULL
)`); err != nil {
		return 0, fmt.Errorf("migrate: creating schema_migrations: %w", err)
	}
	applied := map[int]bool{}
	rows, err := tx.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return 0, fmt.Errorf("migrate: reading schema_migrations: %w", err)
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return 0, fmt.Errorf("migrate: reading schema_migrations: %w", err)
		}
		applied[v] = true
	}
	if err := rows.Close(); err != nil {
		return 0, fmt.Errorf("migrate: reading schema_migrations: %w", err)
	}
	n := 0
	for _, m := range migrations {
		if applied[m.version] || m.version > version {
			continue
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return 0, fmt.Errorf("migrate: applying version %d (%s): %w", m.version, m.name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
			m.version, m.name, core.FormatTime(s.now())); err != nil {
			return 0, fmt.Errorf("migrate: recording version %d: %w", m.version, err)
		}
		n++
	}
	if n == 0 {
		return 0, nil // nothing written; the deferred rollback ends the transaction
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("migrate: commit: %w", err)
	}
	s.wrote()
	return n, nil
}

// jsonArray encodes ids for `IN (SELECT value FROM json_each(?))`: one
// parameter however many ids, so no SQLite variable limit applies.
func jsonArray(ids []string) (string, error) {
	b, err := json.Marshal(ids)
	if err != nil {
		return "", fmt.Errorf("encoding ids: %w", err)
	}
	return string(b), nil
}

// AppendMessages implements store.Store.
func (s *Store) AppendMessages(ctx context.Context, conversationID string, msgs []store.Message) error {
	_, err := s.appendMessages(ctx, conversationID, msgs, false)
	return err
}

// AppendNew implements store.Store.
func (s *Store) AppendNew(ctx context.Context, conversationID string, msgs []store.Message) ([]store.Message, error) {
	return s.appendMessages(ctx, conversationID, msgs, true)
}

// appendMessages appends msgs after the conversation's active history in
// one IMMEDIATE transaction. The ids the conversation holds already are
// an error, or with skipHeld left out; it returns what it appended.
func (s *Store) appendMessages(ctx context.Context, conversationID string, msgs []store.Message, skipHeld bool) ([]store.Message, error) {
	if err := s.refuseWrite(fmt.Sprintf("append to %q", conversationID)); err != nil {
		return nil, err
	}
	msgs, err := store.PrepareAppend(conversationID, msgs)
	if err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		return nil, nil
	}
	ids := make([]string, len(msgs))
	for i := range msgs {
		ids[i] = msgs[i].ID
	}
	idsJSON, err := jsonArray(ids)
	if err != nil {
		return nil, fmt.Errorf("append to %q: %w", conversationID, err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("append to %q: begin: %w", conversationID, err)
	}
	defer func() { _ = tx.Rollback() }()
	held, err := queryStrings(ctx, tx, heldIDsSQL, idsJSON, conversationID)
	if err != nil {
		return nil, fmt.Errorf("append to %q: checking ids: %w", conversationID, err)
	}
	if msgs, err = store.WithoutHeld(conversationID, msgs, held, skipHeld); err != nil {
		return nil, fmt.Errorf("append to %q: %w", conversationID, err)
	}
	if len(msgs) == 0 {
		return nil, nil
	}
	stmt, err := tx.PrepareContext(ctx, appendMessageSQL)
	if err != nil {
		return nil, fmt.Errorf("append to %q: %w", conversationID, err)
	}
	defer stmt.Close()
	for i := range msgs {
		m := &msgs[i]
		if _, err := stmt.ExecContext(ctx, m.ID, conversationID, m.Role, m.Content, store.FormatTime(m.CreatedAt), string(m.Raw)); err != nil {
			return nil, fmt.Errorf("append to %q: inserting message %q: %w", conversationID, m.ID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("append to %q: commit: %w", conversationID, err)
	}
	s.wrote()
	return msgs, nil
}

// IndexActive implements store.Store (queries/index_active.sql).
func (s *Store) IndexActive(ctx context.Context, conversationID string, texts map[string]string) error {
	if len(texts) == 0 {
		return nil
	}
	if err := s.refuseWrite(fmt.Sprintf("index the active history of %q", conversationID)); err != nil {
		return err
	}
	b, err := json.Marshal(texts)
	if err != nil {
		return fmt.Errorf("index the active history of %q: %w", conversationID, err)
	}
	if _, err := s.db.ExecContext(ctx, indexActiveSQL, conversationID, string(b)); err != nil {
		return fmt.Errorf("index the active history of %q: %w", conversationID, err)
	}
	s.wrote()
	return nil
}

// ActiveMessages implements store.Store.
func (s *Store) ActiveMessages(ctx context.Context, conversationID string) ([]store.Message, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, conversation_id, role, content, created_at, raw
FROM messages WHERE conversation_id = ? ORDER BY seq`, conversationID)
	if err != nil {
		return nil, fmt.Errorf("active messages of %q: %w", conversationID, err)
	}
	defer rows.Close()
	var out []store.Message
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, fmt.Errorf("active messages of %q: %w", conversationID, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("active messages of %q: %w", conversationID, err)
	}
	return out, nil
}

type scanner interface{ Scan(dest ...any) error }

func scanMessage(r scanner) (store.Message, error) {
	var m store.Message
	var created, raw string
	if err := r.Scan(&m.ID, &m.ConversationID, &m.Role, &m.Content, &created, &raw); err != nil {
		return store.Message{}, err
	}
	t, err := store.ParseTime(created)
	if err != nil {
		return store.Message{}, fmt.Errorf("message %q: %w", m.ID, err)
	}
	m.CreatedAt = t
	m.Raw = json.RawMessage(raw)
	return m, nil
}

// ListBlocks implements store.Store. The prefix is compared with substr,
// never LIKE, so '%' and '_' in a conversation id are plain characters;
// `label >= prefix` lets the (tier, label) index skip what sorts before.
func (s *Store) ListBlocks(ctx context.Context, tier, labelPrefix string) ([]core.Block, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, label, content FROM blocks
WHERE tier = ?1 AND label >= ?2 AND substr(label, 1, length(?2)) = ?2 ORDER BY pos`, tier, labelPrefix)
	if err != nil {
		return nil, fmt.Errorf("list blocks %q/%q: %w", tier, labelPrefix, err)
	}
	defer rows.Close()
	var out []core.Block
	for rows.Next() {
		var b core.Block
		if err := rows.Scan(&b.ID, &b.Label, &b.Content); err != nil {
			return nil, fmt.Errorf("list blocks %q/%q: %w", tier, labelPrefix, err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list blocks %q/%q: %w", tier, labelPrefix, err)
	}
	return out, nil
}

// Commit implements store.Store (docs/spec.md#compaction_commit): the
// plan of core.PlanCommit, applied with the shared queries in one
// IMMEDIATE transaction (SCHEMA.md, "The commit"). The checks run before
// anything is written, inside the transaction, so a loser of a race
// changes nothing and reports core.ErrConflict.
func (s *Store) Commit(ctx context.Context, c *core.Commit) error {
	if err := s.refuseWrite("commit"); err != nil {
		return err
	}
	p, err := core.PlanCommit(c, s.now())
	if err != nil {
		return store.CommitError(c, err)
	}
	a, err := commitArgs(&p)
	if err != nil {
		return store.CommitError(c, err)
	}
	fail := func(what string, err error) error {
		return fmt.Errorf("commit %q to %q: %s: %w", p.OperationID, p.ConversationID, what, err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fail("begin", err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := check(ctx, tx, &p, a.checks); err != nil {
		return err
	}
	conv, now, op := p.ConversationID, p.Now, p.OperationID
	exec := func(what, query string, args ...any) error {
		if _, err := tx.ExecContext(ctx, query, args...); err != nil {
			return fail(what, err)
		}
		return nil
	}
	if p.Insert != nil {
		if err := exec("inserting the clip-archive", insertClipArchiveSQL, a.insert...); err != nil {
			return err
		}
	}
	if len(p.MoveIDs) > 0 {
		if err := exec("moving removed messages to recall", moveToRecallSQL, conv, a.moveIDs, now, op, a.searchText); err != nil {
			return err
		}
	}
	if len(p.RemoveIDs) > 0 {
		if err := exec("removing messages", removeMessagesSQL, conv, a.removeIDs); err != nil {
			return err
		}
	}
	for _, r := range p.Replace {
		if err := exec(fmt.Sprintf("replacing message %q", r.ID), replaceMessageSQL, conv, r.ID, r.NewID, r.Role, r.Content, string(r.Raw)); err != nil {
			return err
		}
	}
	for _, w := range p.RecallWrites {
		if err := exec(fmt.Sprintf("recall_writes: writing message %q", w.ID), writeRecallSQL,
			w.ID, conv, w.Role, w.Content, w.CreatedAt, string(w.Raw), now, op, w.SearchText); err != nil {
			return err
		}
	}
	if len(p.DeleteIDs) > 0 {
		if err := exec("deleting archive blocks", deleteBlocksSQL, a.deleteIDs); err != nil {
			return err
		}
	}
	for i, w := range p.ArchiveWrites {
		if err := exec(fmt.Sprintf("archive_writes[%d] (%q)", i, w.Label), writeBlockSQL, w.Tier, w.Label, w.Content, now, conv, w.Reason, op); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		if isBusy(err) {
			return fail("commit (database busy)", err)
		}
		return fail("commit", err)
	}
	s.wrote()
	return nil
}

// planArgs are a plan's JSON parameters of the shared queries.
type planArgs struct {
	checks, moveIDs, removeIDs, deleteIDs, searchText string
	insert                                            []any
}

func commitArgs(p *core.CommitPlan) (planArgs, error) {
	var a planArgs
	var err error
	for _, f := range []struct {
		to  *string
		ids []string
	}{{&a.moveIDs, p.MoveIDs}, {&a.removeIDs, p.RemoveIDs}, {&a.deleteIDs, p.DeleteIDs}} {
		if *f.to, err = jsonArray(f.ids); err != nil {
			return a, err
		}
	}
	a.checks = string(api.AppendCommitChecks(nil, p.Checks))
	a.searchText = string(api.AppendSearchTexts(nil, p.SearchText))
	if in := p.Insert; in != nil {
		a.insert = []any{in.ID, p.ConversationID, in.Role, in.Content, in.CreatedAt, string(in.Raw)}
	}
	return a, nil
}

// check runs the plan's checks (queries/commit_check.sql): the first that
// fails is the commit's error.
func check(ctx context.Context, tx *sql.Tx, p *core.CommitPlan, checks string) error {
	if len(p.Checks) == 0 {
		return nil
	}
	rows, err := tx.QueryContext(ctx, commitCheckSQL, p.ConversationID, checks)
	if err != nil {
		return fmt.Errorf("commit %q to %q: checking ids: %w", p.OperationID, p.ConversationID, err)
	}
	defer rows.Close()
	var field, must string
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&field, &must, &id); err != nil {
			return err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("commit %q to %q: checking ids: %w", p.OperationID, p.ConversationID, err)
	}
	if len(ids) == 0 {
		return nil
	}
	return store.CheckFailed(p, field, must, ids)
}

func isBusy(err error) bool {
	var e *sqlite3.Error
	return errors.As(err, &e) && (e.Code()&0xff == sqlitelib.SQLITE_BUSY || e.Code()&0xff == sqlitelib.SQLITE_LOCKED)
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func queryStrings(ctx context.Context, q querier, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// recallHoldersSQL lists the conversations whose recall storage holds a
// message id (index recall_by_id): ?1 the id, ?2 the most rows.
const recallHoldersSQL = `SELECT conversation_id FROM recall WHERE id = ?1 ORDER BY conversation_id LIMIT ?2`

// Recall implements store.Store.
func (s *Store) Recall(ctx context.Context, conversationID, messageID string) (store.Message, error) {
	if conversationID == "" {
		holders, err := queryStrings(ctx, s.db, recallHoldersSQL, messageID, store.MaxListedConversations+1)
		if err != nil {
			return store.Message{}, fmt.Errorf("recall message %q: %w", messageID, err)
		}
		if conversationID, err = store.ResolveConversation(messageID, holders); err != nil {
			return store.Message{}, err
		}
	}
	row := s.db.QueryRowContext(ctx, `SELECT id, conversation_id, role, content, created_at, raw FROM recall
WHERE conversation_id = ?1 AND id = ?2`, conversationID, messageID)
	m, err := scanMessage(row)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Message{}, store.NotRecalled(conversationID, messageID)
	}
	if err != nil {
		return store.Message{}, fmt.Errorf("recall message %q of conversation %q: %w", messageID, conversationID, err)
	}
	return m, nil
}

// Block implements store.Store.
func (s *Store) Block(ctx context.Context, blockID string) (store.StoredBlock, error) {
	var b store.StoredBlock
	var created string
	err := s.db.QueryRowContext(ctx, `SELECT id, tier, label, content, COALESCE(conversation_id, ''), reason,
	COALESCE(operation_id, ''), created_at FROM blocks WHERE id = ?`, blockID).Scan(
		&b.ID, &b.Tier, &b.Label, &b.Content, &b.ConversationID, &b.Reason, &b.OperationID, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return store.StoredBlock{}, fmt.Errorf("block %q: %w", blockID, store.ErrNotFound)
	}
	if err != nil {
		return store.StoredBlock{}, fmt.Errorf("block %q: %w", blockID, err)
	}
	if b.CreatedAt, err = store.ParseTime(created); err != nil {
		return store.StoredBlock{}, fmt.Errorf("block %q: %w", blockID, err)
	}
	b.Batch, b.Malformed = store.ParseBatch(b.Content)
	return b, nil
}

// Search implements store.Store: bm25 over one FTS5 index of active and
// recalled messages and archived blocks (queries/search.sql), fused with
// a vector ranking when opts.Embedder is set (store.HybridSearch,
// vectors.go). opts.InContext is indexed in a transaction rolled back
// after the search (queries/search_in_context.sql), so it needs a
// writable store.
func (s *Store) Search(ctx context.Context, query string, opts store.SearchOptions) ([]store.Hit, error) {
	var inContext string
	if len(opts.InContext) > 0 {
		var err error
		if inContext, err = store.InContextJSON(&opts); err != nil {
			return nil, err
		}
		if err := s.refuseWrite("search with in-context messages (they are indexed for the search)"); err != nil {
			return nil, err
		}
	}
	return store.HybridSearch(ctx, s, query, opts, func(ctx context.Context, q core.SearchQuery, conv string, limit int) ([]store.Hit, error) {
		if inContext == "" {
			return searchLexical(ctx, s.db, q.FTS5, conv, limit)
		}
		return s.searchInContext(ctx, q.FTS5, conv, limit, inContext)
	})
}

// searchInContext indexes a caller's messages, searches, and rolls back:
// nothing of them stays.
func (s *Store) searchInContext(ctx context.Context, match, conversationID string, limit int, inContext string) ([]store.Hit, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, searchInContextSQL, conversationID, inContext); err != nil {
		return nil, fmt.Errorf("indexing the in-context messages: %w", err)
	}
	return searchLexical(ctx, tx, match, conversationID, limit)
}

func searchLexical(ctx context.Context, q querier, match, conversationID string, limit int) ([]store.Hit, error) {
	rows, err := q.QueryContext(ctx, searchSQL, match, conversationID, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Hit
	for rows.Next() {
		var h store.Hit
		var kind, created string
		if err := rows.Scan(&kind, &h.ID, &h.ConversationID, &h.Role, &h.Label, &created, &h.OperationID, &h.Text, &h.Score, &h.Snippet,
			&h.InContext); err != nil {
			return nil, err
		}
		if err := store.FinishHit(&h, kind, created); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// Dump prints every table of the database — including the schema and the
// full-text indexes' own tables — as sorted lines, so two dumps are equal
// exactly when the stored data is.
func (s *Store) Dump(ctx context.Context) (string, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return "", fmt.Errorf("dump: %w", err)
	}
	defer conn.Close()
	var b strings.Builder
	type obj struct{ typ, name, sql string }
	var objs []obj
	rows, err := conn.QueryContext(ctx, `SELECT type, name, COALESCE(sql, '') FROM sqlite_master ORDER BY type, name`)
	if err != nil {
		return "", fmt.Errorf("dump: listing tables: %w", err)
	}
	for rows.Next() {
		var o obj
		if err := rows.Scan(&o.typ, &o.name, &o.sql); err != nil {
			rows.Close()
			return "", fmt.Errorf("dump: listing tables: %w", err)
		}
		objs = append(objs, o)
	}
	if err := rows.Close(); err != nil {
		return "", fmt.Errorf("dump: listing tables: %w", err)
	}
	for _, o := range objs {
		fmt.Fprintf(&b, "%s %s: %s\n", o.typ, o.name, o.sql)
		if o.typ != "table" {
			continue
		}
		lines, err := dumpTable(ctx, conn, o.name)
		if err != nil {
			return "", fmt.Errorf("dump: table %s: %w", o.name, err)
		}
		for _, l := range lines {
			b.WriteString("  ")
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String(), nil
}

func dumpTable(ctx context.Context, conn *sql.Conn, name string) ([]string, error) {
	rows, err := conn.QueryContext(ctx, `SELECT * FROM "`+strings.ReplaceAll(name, `"`, `""`)+`"`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var lines []string
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		parts := make([]string, len(cols))
		for i, v := range vals {
			switch v := v.(type) {
			case []byte:
				parts[i] = fmt.Sprintf("%s=x'%x'", cols[i], v)
			default:
				parts[i] = fmt.Sprintf("%s=%#v", cols[i], v)
			}
		}
		lines = append(lines, strings.Join(parts, " "))
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	sort.Strings(lines)
	return lines, nil
}
