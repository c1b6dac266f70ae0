// Package postgres is clipfold's PostgreSQL store, through pgx v5.
//
// Concurrency: every write transaction first takes a transaction-scoped
// advisory lock on its conversation, then locks the rows it will remove or
// delete (FOR UPDATE, in id order). Writers of one conversation therefore
// run one after another at READ COMMITTED; a loser's checks run after the
// winner committed, see the ids gone and report core.ErrConflict, never a
// serialization failure. Deadlock and serialization errors, which other
// sessions could still provoke, are retried a few times.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/store"
)

// Store is the PostgreSQL implementation of store.Store.
type Store struct {
	pool *connPool
	now  func() time.Time
}

var (
	_ store.Store    = (*Store)(nil)
	_ store.Dumper   = (*Store)(nil)
	_ store.Migrator = (*Store)(nil)
)

// Open connects to the database at url (postgres://user@host:port/db?…
// or the key=value form) and applies pending migrations. The tables live
// in the connection's current schema: add search_path=NAME to the URL to
// use another one. At most DefaultMaxConns connections are opened.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: parsing the URL: %w", err)
	}
	s := &Store{pool: newConnPool(cfg, DefaultMaxConns), now: time.Now}
	if _, err := s.Migrate(ctx); err != nil {
		s.pool.close()
		return nil, fmt.Errorf("postgres: open %s: %w", redact(cfg), err)
	}
	return s, nil
}

// redact names the server without the password, for error messages.
func redact(c *pgx.ConnConfig) string {
	return fmt.Sprintf("%s@%s:%d/%s", c.User, c.Host, c.Port, c.Database)
}

// Exec runs one SQL statement on a pooled connection, for tools and tests
// that need SQL beside the Store API.
func (s *Store) Exec(ctx context.Context, sql string, args ...any) error {
	return s.pool.with(ctx, func(c *pgx.Conn) error {
		_, err := c.Exec(ctx, sql, args...)
		return err
	})
}

// QueryInt runs a query returning one integer, for tools and tests.
func (s *Store) QueryInt(ctx context.Context, sql string, args ...any) (int64, error) {
	var n int64
	err := s.pool.with(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, sql, args...).Scan(&n)
	})
	return n, err
}

// Close closes the store's connections.
func (s *Store) Close() error {
	s.pool.close()
	return nil
}

// Migrate applies the migrations not yet recorded in schema_migrations and
// returns how many it applied. An advisory lock keyed on the schema keeps
// two processes opening a new database at once from racing.
func (s *Store) Migrate(ctx context.Context) (int, error) {
	n := 0
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		n = 0
		var schema *string
		if err := tx.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
			return fmt.Errorf("migrate: reading the current schema: %w", err)
		}
		if schema == nil {
			return errors.New("migrate: no schema selected (does the search_path schema exist?)")
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('clipfold:migrate:' || $1, 0))`, *schema); err != nil {
			return fmt.Errorf("migrate: locking schema %q: %w", *schema, err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    integer PRIMARY KEY,
	name       text NOT NULL,
	applied_at text NOT NULL
)`); err != nil {
			return fmt.Errorf("migrate: creating schema_migrations in %q: %w", *schema, err)
		}
		rows, err := tx.Query(ctx, `SELECT version FROM schema_migrations`)
		if err != nil {
			return fmt.Errorf("migrate: reading schema_migrations: %w", err)
		}
		versions, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil {
			return fmt.Errorf("migrate: reading schema_migrations: %w", err)
		}
		applied := map[int]bool{}
		for _, v := range versions {
			applied[int(v)] = true
		}
		for _, m := range migrations {
			if applied[m.version] {
				continue
			}
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migrate: applying version %d (%s): %w", m.version, m.name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
				m.version, m.name, core.FormatTime(s.now())); err != nil {
				return fmt.Errorf("migrate: recording version %d: %w", m.version, err)
			}
			n++
		}
		return nil
	})
	return n, err
}

// maxAttempts bounds the retries of a transaction that failed with a
// deadlock or serialization error (SQLSTATE 40P01, 40001).
const maxAttempts = 5

// inTx runs fn in a READ COMMITTED transaction and commits it, retrying on
// transient concurrency failures. fn's error rolls back and is returned.
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	var err error
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		err = s.tryTx(ctx, fn)
		if !isRetryable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt*attempt) * 10 * time.Millisecond):
		}
	}
	return err
}

func (s *Store) tryTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return s.pool.with(ctx, func(c *pgx.Conn) error {
		tx, err := c.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
		if err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
		if err := fn(tx); err != nil {
			return err
		}
		if err := tx.Commit(ctx); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		return nil
	})
}

func isRetryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

func isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// lockConversation serializes the writers of one conversation for the rest
// of the transaction (see the package comment).
func lockConversation(ctx context.Context, tx pgx.Tx, conversationID string) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('clipfold:conversation:' || $1, 0))`, conversationID); err != nil {
		return fmt.Errorf("locking conversation: %w", err)
	}
	return nil
}

func queryStrings(ctx context.Context, tx pgx.Tx, sql string, args ...any) ([]string, error) {
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// AppendMessages implements store.Store.
func (s *Store) AppendMessages(ctx context.Context, conversationID string, msgs []store.Message) error {
	msgs, err := store.PrepareAppend(conversationID, msgs)
	if err != nil {
		return err
	}
	if len(msgs) == 0 {
		return nil
	}
	ids := make([]string, len(msgs))
	for i := range msgs {
		ids[i] = msgs[i].ID
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockConversation(ctx, tx, conversationID); err != nil {
			return err
		}
		dups, err := queryStrings(ctx, tx, `SELECT id FROM messages WHERE id = ANY($1) UNION SELECT id FROM recall WHERE id = ANY($1) ORDER BY 1`, ids)
		if err != nil {
			return fmt.Errorf("checking ids: %w", err)
		}
		if len(dups) > 0 {
			return &store.DuplicateIDError{IDs: dups}
		}
		var maxSeq *int64
		if err := tx.QueryRow(ctx, `SELECT MAX(seq) FROM messages WHERE conversation_id = $1`, conversationID).Scan(&maxSeq); err != nil {
			return fmt.Errorf("reading last position: %w", err)
		}
		seq := int64(1)
		if maxSeq != nil {
			seq = *maxSeq + 1
		}
		var b pgx.Batch
		for i := range msgs {
			m := &msgs[i]
			b.Queue(`INSERT INTO messages (id, conversation_id, seq, role, content, created_at, raw) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
				m.ID, conversationID, seq+int64(i), m.Role, m.Content, store.FormatTime(m.CreatedAt), string(m.Raw))
		}
		br := tx.SendBatch(ctx, &b)
		for i := range msgs {
			if _, err := br.Exec(); err != nil {
				_ = br.Close()
				if isUniqueViolation(err) {
					return &store.DuplicateIDError{IDs: []string{msgs[i].ID}}
				}
				return fmt.Errorf("inserting message %q: %w", msgs[i].ID, err)
			}
		}
		if err := br.Close(); err != nil {
			return fmt.Errorf("inserting messages: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("append to %q: %w", conversationID, err)
	}
	return nil
}

// ActiveMessages implements store.Store.
func (s *Store) ActiveMessages(ctx context.Context, conversationID string) ([]store.Message, error) {
	out, err := collect(ctx, s, scanMessage, `SELECT id, conversation_id, role, content, created_at, raw
FROM messages WHERE conversation_id = $1 ORDER BY seq`, conversationID)
	if err != nil {
		return nil, fmt.Errorf("active messages of %q: %w", conversationID, err)
	}
	return out, nil
}

func scanMessage(row pgx.CollectableRow) (store.Message, error) {
	var m store.Message
	var created, raw string
	if err := row.Scan(&m.ID, &m.ConversationID, &m.Role, &m.Content, &created, &raw); err != nil {
		return store.Message{}, err
	}
	t, err := store.ParseTime(created)
	if err != nil {
		return store.Message{}, fmt.Errorf("message %q: %w", m.ID, err)
	}
	m.CreatedAt = t
	m.Raw = []byte(raw)
	return m, nil
}

// ListBlocks implements store.Store. starts_with compares literally, so
// '%' and '_' in a conversation id are plain characters (LIKE would not).
func (s *Store) ListBlocks(ctx context.Context, tier, labelPrefix string) ([]core.Block, error) {
	out, err := collect(ctx, s, func(r pgx.CollectableRow) (core.Block, error) {
		var b core.Block
		err := r.Scan(&b.ID, &b.Label, &b.Content)
		return b, err
	}, `SELECT id, label, content FROM blocks WHERE tier = $1 AND starts_with(label, $2) ORDER BY pos`, tier, labelPrefix)
	if err != nil {
		return nil, fmt.Errorf("list blocks %q/%q: %w", tier, labelPrefix, err)
	}
	return out, nil
}

// Commit implements store.Store (SPEC §5 compaction_commit). Everything is
// checked, under the conversation lock and row locks, before anything is
// written, so a conflicting commit changes nothing — not even an identity
// sequence.
func (s *Store) Commit(ctx context.Context, c *core.Commit) error {
	now := s.now().UTC()
	p, err := store.PrepareCommit(c, now)
	if err != nil {
		return err
	}
	insert, removeIDs, deleteIDs := p.Insert, p.RemoveIDs, p.DeleteIDs
	nowText := core.FormatTime(now)

	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockConversation(ctx, tx, c.ConversationID); err != nil {
			return err
		}
		found, err := queryStrings(ctx, tx, `SELECT id FROM messages WHERE conversation_id = $1 AND id = ANY($2) ORDER BY id FOR UPDATE`,
			c.ConversationID, removeIDs)
		if err != nil {
			return fmt.Errorf("checking remove_message_ids: %w", err)
		}
		if missing := store.Minus(removeIDs, found); len(missing) > 0 {
			return store.ConflictError(c.ConversationID, "remove_message_ids", missing)
		}
		found, err = queryStrings(ctx, tx, `SELECT id FROM blocks WHERE id = ANY($1) ORDER BY id FOR UPDATE`, deleteIDs)
		if err != nil {
			return fmt.Errorf("checking archive_deletes: %w", err)
		}
		if missing := store.Minus(deleteIDs, found); len(missing) > 0 {
			return store.ConflictError(c.ConversationID, "archive_deletes", missing)
		}
		taken, err := queryStrings(ctx, tx, `SELECT id FROM messages WHERE id = $1 UNION SELECT id FROM recall WHERE id = $1`, insert.ID)
		if err != nil {
			return fmt.Errorf("checking insert_message.id: %w", err)
		}
		if len(taken) > 0 {
			return fmt.Errorf("insert_message: %w", &store.DuplicateIDError{IDs: taken})
		}
		// The clip-archive goes before every message that stays; computing
		// the position before the removal keeps it below the removed too.
		var minSeq *int64
		if err := tx.QueryRow(ctx, `SELECT MIN(seq) FROM messages WHERE conversation_id = $1`, c.ConversationID).Scan(&minSeq); err != nil {
			return fmt.Errorf("reading first position: %w", err)
		}
		insertSeq := int64(0)
		if minSeq != nil {
			insertSeq = *minSeq - 1
		}
		if len(removeIDs) > 0 {
			if _, err := tx.Exec(ctx, `INSERT INTO recall (id, conversation_id, seq, role, content, created_at, raw, removed_at, operation_id)
SELECT id, conversation_id, seq, role, content, created_at, raw, $3, $4 FROM messages
WHERE conversation_id = $1 AND id = ANY($2) ORDER BY seq`, c.ConversationID, removeIDs, nowText, c.OperationID); err != nil {
				return fmt.Errorf("moving removed messages to recall: %w", err)
			}
			if _, err := tx.Exec(ctx, `DELETE FROM messages WHERE conversation_id = $1 AND id = ANY($2)`, c.ConversationID, removeIDs); err != nil {
				return fmt.Errorf("removing messages: %w", err)
			}
		}
		if len(deleteIDs) > 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM blocks WHERE id = ANY($1)`, deleteIDs); err != nil {
				return fmt.Errorf("deleting archive blocks: %w", err)
			}
		}
		for i, w := range c.ArchiveWrites {
			tier := w.Tier
			if tier == "" {
				tier = "archival"
			}
			id, err := store.NewID("blk_")
			if err != nil {
				return fmt.Errorf("archive_writes[%d]: %w", i, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO blocks (id, tier, label, content, created_at, conversation_id, reason, operation_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, id, tier, w.Label, w.Content, nowText, c.ConversationID, w.Reason, c.OperationID); err != nil {
				return fmt.Errorf("archive_writes[%d] (%q): %w", i, w.Label, err)
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO messages (id, conversation_id, seq, role, content, created_at, raw) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			insert.ID, insert.ConversationID, insertSeq, insert.Role, insert.Content, store.FormatTime(insert.CreatedAt), string(insert.Raw)); err != nil {
			return fmt.Errorf("inserting message %q: %w", insert.ID, err)
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, core.ErrConflict) {
			return err
		}
		return fmt.Errorf("commit %q to %q: %w", c.OperationID, c.ConversationID, err)
	}
	return nil
}

// Recall implements store.Store.
func (s *Store) Recall(ctx context.Context, messageID string) (store.Message, error) {
	ms, err := collect(ctx, s, scanMessage, `SELECT id, conversation_id, role, content, created_at, raw FROM recall WHERE id = $1`, messageID)
	if err != nil {
		return store.Message{}, fmt.Errorf("recall message %q: %w", messageID, err)
	}
	if len(ms) == 0 {
		return store.Message{}, fmt.Errorf("recall message %q: %w", messageID, store.ErrNotFound)
	}
	return ms[0], nil
}

// headlineOptions makes ts_headline mark matches like SQLite's snippet.
const headlineOptions = `StartSel=[, StopSel=], MaxWords=24, MinWords=8, MaxFragments=2, FragmentDelimiter=" … "`

// Search implements store.Store: ts_rank over blocks (summary weighted
// above label) and recalled messages, merged by rank. The query's words go
// through plainto_tsquery, which reads no operators, so any text is safe.
func (s *Store) Search(ctx context.Context, query string, opts store.SearchOptions) ([]store.Hit, error) {
	words := store.QueryWords(query)
	if len(words) == 0 {
		return nil, nil
	}
	text := strings.Join(words, " ")
	limit := store.ClampLimit(opts.Limit)
	return store.MergeByRank(query, limit,
		func() ([]store.Hit, error) { return s.searchBlocks(ctx, text, opts.ConversationID, limit) },
		func() ([]store.Hit, error) { return s.searchRecall(ctx, text, opts.ConversationID, limit) })
}

func (s *Store) searchBlocks(ctx context.Context, text, conversationID string, limit int) ([]store.Hit, error) {
	return collect(ctx, s, func(r pgx.CollectableRow) (store.Hit, error) {
		h := store.Hit{Kind: store.HitBatch}
		var content, created string
		if err := r.Scan(&h.ID, &h.Label, &h.ConversationID, &content, &created, &h.OperationID, &h.Snippet, &h.Rank); err != nil {
			return store.Hit{}, err
		}
		var err error
		if h.CreatedAt, err = store.ParseTime(created); err != nil {
			return store.Hit{}, fmt.Errorf("block %q: %w", h.ID, err)
		}
		h.Batch = store.ParseBatch(h.ConversationID, h.Label, content)
		return h, nil
	}, `SELECT id, label, COALESCE(conversation_id, ''), content, created_at, COALESCE(operation_id, ''),
	ts_headline('english', `+blockBody+`, q, $4), ts_rank(fts, q)::float8 AS rank
FROM blocks, plainto_tsquery('english', $1) q
WHERE fts @@ q AND ($2 = '' OR conversation_id = $2)
ORDER BY rank DESC, pos LIMIT $3`, text, conversationID, limit, headlineOptions)
}

func (s *Store) searchRecall(ctx context.Context, text, conversationID string, limit int) ([]store.Hit, error) {
	return collect(ctx, s, func(r pgx.CollectableRow) (store.Hit, error) {
		h := store.Hit{Kind: store.HitMessage}
		var created string
		if err := r.Scan(&h.ID, &h.ConversationID, &h.Role, &created, &h.OperationID, &h.Snippet, &h.Rank); err != nil {
			return store.Hit{}, err
		}
		var err error
		if h.CreatedAt, err = store.ParseTime(created); err != nil {
			return store.Hit{}, fmt.Errorf("message %q: %w", h.ID, err)
		}
		return h, nil
	}, `SELECT id, conversation_id, role, created_at, operation_id,
	ts_headline('english', content, q, $4), ts_rank(fts, q)::float8 AS rank
FROM recall, plainto_tsquery('english', $1) q
WHERE fts @@ q AND ($2 = '' OR conversation_id = $2)
ORDER BY rank DESC, pos LIMIT $3`, text, conversationID, limit, headlineOptions)
}

// Dump prints every table and sequence of the current schema as sorted
// lines, in one REPEATABLE READ snapshot, so two dumps are equal exactly
// when the stored data is (a sequence advanced by a rolled-back insert
// would show).
func (s *Store) Dump(ctx context.Context) (string, error) {
	var out string
	err := s.pool.with(ctx, func(c *pgx.Conn) error {
		tx, err := c.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
		if err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
		out, err = dump(ctx, tx)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("dump: %w", err)
	}
	return out, nil
}

func dump(ctx context.Context, tx pgx.Tx) (string, error) {
	tables, err := queryStrings(ctx, tx, `SELECT table_name::text FROM information_schema.tables
WHERE table_schema = current_schema() ORDER BY 1`)
	if err != nil {
		return "", fmt.Errorf("listing tables: %w", err)
	}
	var b strings.Builder
	for _, t := range tables {
		lines, err := queryStrings(ctx, tx, `SELECT t::text FROM `+pgx.Identifier{t}.Sanitize()+` t`)
		if err != nil {
			return "", fmt.Errorf("table %s: %w", t, err)
		}
		sort.Strings(lines)
		fmt.Fprintf(&b, "table %s\n", t)
		for _, l := range lines {
			b.WriteString("  ")
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	seqs, err := queryStrings(ctx, tx, `SELECT sequence_name::text FROM information_schema.sequences
WHERE sequence_schema = current_schema() ORDER BY 1`)
	if err != nil {
		return "", fmt.Errorf("listing sequences: %w", err)
	}
	for _, q := range seqs {
		var last int64
		var called bool
		if err := tx.QueryRow(ctx, `SELECT last_value, is_called FROM `+pgx.Identifier{q}.Sanitize()).Scan(&last, &called); err != nil {
			return "", fmt.Errorf("sequence %s: %w", q, err)
		}
		fmt.Fprintf(&b, "sequence %s last_value=%d is_called=%t\n", q, last, called)
	}
	return b.String(), nil
}

// collect runs a query on a pooled connection and scans every row with fn.
func collect[T any](ctx context.Context, s *Store, fn pgx.RowToFunc[T], sql string, args ...any) ([]T, error) {
	var out []T
	err := s.pool.with(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, fn)
		return err
	})
	return out, err
}
