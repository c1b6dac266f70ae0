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
	"sync/atomic"
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
	pgv  pgvector // the pgvector column, when migration 3 could add it

	cache         store.VectorCache
	putsSinceStat atomic.Int64 // vectors stored since the last ANALYZE embeddings
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
	return openAt(ctx, cfg, len(migrations))
}

// openAt opens the database and applies the migrations up to version
// (tests make old databases with it).
func openAt(ctx context.Context, cfg *pgx.ConnConfig, version int) (*Store, error) {
	s := &Store{pool: newConnPool(cfg, DefaultMaxConns), now: time.Now}
	if _, err := s.migrateTo(ctx, version); err != nil {
		s.pool.close()
		return nil, fmt.Errorf("postgres: open %s: %w", redact(cfg), err)
	}
	if err := s.detectPgvector(ctx); err != nil {
		s.pool.close()
		return nil, fmt.Errorf("postgres: open %s: %w", redact(cfg), err)
	}
	return s, nil
}

// redact names the server without the password, for error messages.
func redact(c *pgx.ConnConfig) string {
	return fmt.Sprintf("%s@%s:%d/%s", c.User, c.Host, c.Port, c.Database)
}

// SetNow sets the store's clock (time.Now by default), for tests and
// tools that need the times a commit writes to be known.
func (s *Store) SetNow(now func() time.Time) { s.now = now }

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
	return s.migrateTo(ctx, len(migrations))
}

func (s *Store) migrateTo(ctx context.Context, version int) (int, error) {
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
			if applied[m.version] || m.version > version {
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
	_, err := s.appendMessages(ctx, conversationID, msgs, false)
	return err
}

// AppendNew implements store.Store.
func (s *Store) AppendNew(ctx context.Context, conversationID string, msgs []store.Message) ([]store.Message, error) {
	return s.appendMessages(ctx, conversationID, msgs, true)
}

// appendMessages appends msgs after the conversation's active history in
// one transaction under the conversation's lock. The ids the conversation
// holds already are an error, or with skipHeld left out; it returns what
// it appended.
func (s *Store) appendMessages(ctx context.Context, conversationID string, msgs []store.Message, skipHeld bool) ([]store.Message, error) {
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
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockConversation(ctx, tx, conversationID); err != nil {
			return err
		}
		dups, err := queryStrings(ctx, tx, `SELECT id FROM messages WHERE conversation_id = $2 AND id = ANY($1)
UNION SELECT id FROM recall WHERE conversation_id = $2 AND id = ANY($1) ORDER BY 1`, ids, conversationID)
		if err != nil {
			return fmt.Errorf("checking ids: %w", err)
		}
		if msgs, err = store.WithoutHeld(conversationID, msgs, dups, skipHeld); err != nil || len(msgs) == 0 {
			return err
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
				m.ID, conversationID, seq+int64(i), m.Role, pgText(m.Content), store.FormatTime(m.CreatedAt), string(m.Raw))
		}
		br := tx.SendBatch(ctx, &b)
		for i := range msgs {
			if _, err := br.Exec(); err != nil {
				_ = br.Close()
				if isUniqueViolation(err) {
					return &store.DuplicateIDError{ConversationID: conversationID, IDs: []string{msgs[i].ID}}
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
		return nil, fmt.Errorf("append to %q: %w", conversationID, err)
	}
	return msgs, nil
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

// Commit implements store.Store (docs/spec.md#compaction_commit): the
// plan of core.PlanCommit, applied in one transaction (SCHEMA.md, "The
// commit"). Everything is checked, under the conversation lock and row
// locks, before anything is written, so a conflicting commit changes
// nothing — not even an identity sequence.
func (s *Store) Commit(ctx context.Context, c *core.Commit) error {
	p, err := core.PlanCommit(c, s.now())
	if err != nil {
		return store.CommitError(c, err)
	}
	conv, now, op := p.ConversationID, p.Now, p.OperationID
	searchIDs := make([]string, len(p.SearchText))
	searchTexts := make([]string, len(p.SearchText))
	for i, st := range p.SearchText {
		// PostgreSQL text holds no NUL and only valid UTF-8; this is index
		// text, not the message (whose content must already be storable).
		searchIDs[i], searchTexts[i] = st.MessageID, pgText(st.Text)
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockConversation(ctx, tx, conv); err != nil {
			return err
		}
		if err := checkPlan(ctx, tx, &p); err != nil {
			return err
		}
		if in := p.Insert; in != nil {
			// Before every message of the history, the removed ones too.
			if _, err := tx.Exec(ctx, `INSERT INTO messages (id, conversation_id, seq, role, content, created_at, raw)
SELECT $1, $2, COALESCE(MIN(seq) - 1, 0), $3, $4, $5, $6 FROM messages WHERE conversation_id = $2`,
				in.ID, conv, in.Role, pgText(in.Content), in.CreatedAt, string(in.Raw)); err != nil {
				return fmt.Errorf("inserting message %q: %w", in.ID, err)
			}
		}
		if len(p.MoveIDs) > 0 {
			// A replacement that kept its id leaving the active history:
			// its original is in recall already and stays.
			if _, err := tx.Exec(ctx, `INSERT INTO recall (id, conversation_id, seq, role, content, created_at, raw, removed_at, operation_id, search_text)
SELECT m.id, m.conversation_id, m.seq, m.role, m.content, m.created_at, m.raw, $3, $4, st.text FROM messages m
LEFT JOIN unnest($5::text[], $6::text[]) AS st(id, text) ON st.id = m.id
WHERE m.conversation_id = $1 AND m.id = ANY($2) ORDER BY m.seq
ON CONFLICT (conversation_id, id) DO NOTHING`, conv, p.MoveIDs, now, op, searchIDs, searchTexts); err != nil {
				return fmt.Errorf("moving removed messages to recall: %w", err)
			}
		}
		if len(p.RemoveIDs) > 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM messages WHERE conversation_id = $1 AND id = ANY($2)`, conv, p.RemoveIDs); err != nil {
				return fmt.Errorf("removing messages: %w", err)
			}
		}
		for _, r := range p.Replace {
			// Not indexed: its original, in recall, is the hit.
			if _, err := tx.Exec(ctx, `UPDATE messages SET id = $3, role = $4, content = $5, raw = $6, search_text = '' WHERE conversation_id = $1 AND id = $2`,
				conv, r.ID, r.NewID, r.Role, pgText(r.Content), string(r.Raw)); err != nil {
				return fmt.Errorf("replacing message %q: %w", r.ID, err)
			}
		}
		for _, w := range p.RecallWrites {
			if _, err := tx.Exec(ctx, `INSERT INTO recall (id, conversation_id, seq, role, content, created_at, raw, removed_at, operation_id, search_text)
VALUES ($1, $2, (SELECT COALESCE(MAX(seq), 0) + 1 FROM recall WHERE conversation_id = $2), $3, $4, $5, $6, $7, $8, $9)
ON CONFLICT (conversation_id, id) DO NOTHING`, w.ID, conv, w.Role, pgText(w.Content), w.CreatedAt, string(w.Raw),
				now, op, pgText(w.SearchText)); err != nil {
				return fmt.Errorf("recall_writes: writing message %q: %w", w.ID, err)
			}
		}
		if len(p.DeleteIDs) > 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM blocks WHERE id = ANY($1)`, p.DeleteIDs); err != nil {
				return fmt.Errorf("deleting archive blocks: %w", err)
			}
		}
		for i, w := range p.ArchiveWrites {
			id, err := store.NewID("blk_")
			if err != nil {
				return fmt.Errorf("archive_writes[%d]: %w", i, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO blocks (id, tier, label, content, created_at, conversation_id, reason, operation_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, id, w.Tier, w.Label, pgText(w.Content), now, conv, w.Reason, op); err != nil {
				return fmt.Errorf("archive_writes[%d] (%q): %w", i, w.Label, err)
			}
		}
		return nil
	})
	var dup *store.DuplicateIDError
	if err == nil || errors.Is(err, core.ErrConflict) || errors.As(err, &dup) {
		return err
	}
	return fmt.Errorf("commit %q to %q: %w", op, conv, err)
}

// checkPlan runs the plan's checks in order, locking the rows to remove,
// replace or delete (FOR UPDATE, in id order): the first that fails is
// the commit's error (store.CheckFailed).
func checkPlan(ctx context.Context, tx pgx.Tx, p *core.CommitPlan) error {
	for _, ch := range p.Checks {
		var found []string
		var err error
		switch ch.Must {
		case core.CheckActive:
			found, err = queryStrings(ctx, tx, `SELECT id FROM messages WHERE conversation_id = $1 AND id = ANY($2) ORDER BY id FOR UPDATE`,
				p.ConversationID, ch.IDs)
		case core.CheckBlock:
			found, err = queryStrings(ctx, tx, `SELECT id FROM blocks WHERE id = ANY($1) ORDER BY id FOR UPDATE`, ch.IDs)
		default:
			found, err = queryStrings(ctx, tx, `SELECT id FROM messages WHERE conversation_id = $1 AND id = ANY($2)
UNION SELECT id FROM recall WHERE conversation_id = $1 AND id = ANY($2)`, p.ConversationID, ch.IDs)
		}
		if err != nil {
			return fmt.Errorf("checking %s: %w", ch.Field, err)
		}
		failed := store.Minus(ch.IDs, found)
		if ch.Must == core.CheckNew {
			failed = store.Minus(ch.IDs, failed) // the ids held
		}
		if len(failed) > 0 {
			return store.CheckFailed(p, ch.Field, ch.Must, failed)
		}
	}
	return nil
}

// pgText makes text PostgreSQL can hold: no NUL (a space instead, so the
// words on both sides of it stay apart and are indexed), valid UTF-8. For
// the text a message is indexed and shown by, and a block's; a message's
// raw JSON holds it exactly (a NUL in it is escaped).
func pgText(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", " ")
}

// Recall implements store.Store.
func (s *Store) Recall(ctx context.Context, conversationID, messageID string) (store.Message, error) {
	if conversationID == "" {
		holders, err := collect(ctx, s, pgx.RowTo[string], `SELECT conversation_id FROM recall WHERE id = $1 ORDER BY conversation_id LIMIT $2`,
			messageID, store.MaxListedConversations+1)
		if err != nil {
			return store.Message{}, fmt.Errorf("recall message %q: %w", messageID, err)
		}
		if conversationID, err = store.ResolveConversation(messageID, holders); err != nil {
			return store.Message{}, err
		}
	}
	ms, err := collect(ctx, s, scanMessage, `SELECT id, conversation_id, role, content, created_at, raw FROM recall
WHERE conversation_id = $1 AND id = $2`, conversationID, messageID)
	if err != nil {
		return store.Message{}, fmt.Errorf("recall message %q of conversation %q: %w", messageID, conversationID, err)
	}
	if len(ms) == 0 {
		return store.Message{}, store.NotRecalled(conversationID, messageID)
	}
	return ms[0], nil
}

// Block implements store.Store.
func (s *Store) Block(ctx context.Context, blockID string) (store.StoredBlock, error) {
	bs, err := collect(ctx, s, func(r pgx.CollectableRow) (store.StoredBlock, error) {
		var b store.StoredBlock
		var created string
		if err := r.Scan(&b.ID, &b.Tier, &b.Label, &b.Content, &b.ConversationID, &b.Reason, &b.OperationID, &created); err != nil {
			return b, err
		}
		var err error
		b.CreatedAt, err = store.ParseTime(created)
		return b, err
	}, `SELECT id, tier, label, content, COALESCE(conversation_id, ''), reason, COALESCE(operation_id, ''), created_at
FROM blocks WHERE id = $1`, blockID)
	if err != nil {
		return store.StoredBlock{}, fmt.Errorf("block %q: %w", blockID, err)
	}
	if len(bs) == 0 {
		return store.StoredBlock{}, fmt.Errorf("block %q: %w", blockID, store.ErrNotFound)
	}
	b := bs[0]
	b.Batch, b.Malformed = store.ParseBatch(b.Content)
	return b, nil
}

// headlineOptions makes ts_headline mark matches like SQLite's snippet.
const headlineOptions = `StartSel=[, StopSel=], MaxWords=24, MinWords=8, MaxFragments=2, FragmentDelimiter=" … "`

// rankNormalization is ts_rank_cd's length normalization: 1 divides a
// document's rank by 1 + the logarithm of its length, so a long batch
// summary does not win by size alone and a one-line message does not win
// by brevity alone (2, rank / length, made every short message outrank
// the batch that explains it). ts_rank_cd uses no corpus statistics, so
// the ranks of messages and batches are comparable in one list.
const rankNormalization = 1

// contextWeight is what a match in a message's context counts against a
// match in its own words (SQLite: bm25(search_fts, 1.0, 0.5)).
const contextWeight = 0.5

// searchSQL ranks active and recalled messages and archived blocks in one
// ordered query: ts_rank_cd over the any-term tsquery (a message's
// context counts half its own words, migration 3), ties to the more
// recent (an active message before a recalled one written at the same
// instant); headlines are made for the returned rows only. As in SQLite's
// queries/search.sql, a message whose own words repeat a better hit's of
// the same conversation, and a message found only through its context
// right next to a better hit, are folded into that hit, among the
// $3 + $3/2 + 8 best candidates; active and recalled messages are
// neighbours by seq alike. An active message whose id the conversation's
// recall holds is not a candidate: the recalled original is.
var searchSQL = `WITH q AS (SELECT to_tsquery('clipfold_english', $1) AS q),
candidates AS (
	` + messageCandidates("recall", "r.pos", "r.operation_id", "false", "") + `
	UNION ALL
	` + messageCandidates("messages", "NULL::bigint", "''", "true",
	"AND NOT EXISTS (SELECT 1 FROM recall x WHERE x.conversation_id = r.conversation_id AND x.id = r.id)") + `
	UNION ALL
	SELECT 'batch', b.pos, b.id, COALESCE(b.conversation_id, ''), '', b.label, b.created_at, COALESCE(b.operation_id, ''),
		b.content, ` + blockBody + `,
		ts_rank_cd(b.fts, q.q, ` + fmt.Sprint(rankNormalization) + `), 1, b.at, NULL, NULL, false
	FROM blocks b, q WHERE b.fts @@ q.q AND ($2 = '' OR b.conversation_id = $2)
	ORDER BY score DESC, at DESC, pos DESC, kind, seq DESC
	LIMIT $3 + $3 / 2 + 8
), ranked AS (
	SELECT *, ROW_NUMBER() OVER (ORDER BY score DESC, at DESC, pos DESC, kind, seq DESC) AS n FROM candidates
), marked AS (
	SELECT *, ROW_NUMBER() OVER (PARTITION BY kind, conversation_id, words ORDER BY n) AS copy,
		LAG(n) OVER w AS pn, LAG(seq) OVER w AS ps, LEAD(n) OVER w AS nn, LEAD(seq) OVER w AS ns
	FROM ranked WINDOW w AS (PARTITION BY kind, conversation_id ORDER BY seq)
), top AS (
	SELECT * FROM marked
	WHERE kind = 'batch' OR (copy = 1 AND (own > 0
		OR NOT COALESCE(ps = seq - 1 AND pn < n, false) AND NOT COALESCE(ns = seq + 1 AND nn < n, false)))
	ORDER BY n
	LIMIT $3
)
SELECT kind, id, conversation_id, role, label, created_at, operation_id, text, score::float8,
	ts_headline('clipfold_english', body, q.q, $4), in_context
FROM top, q
ORDER BY n`

// messageCandidates is the candidates of one message table of searchSQL
// (recall, or messages: the active history), aliased r: pos is the
// tie-breaking position, operationID the removing compaction, inContext
// whether it is active, and extra a further condition.
func messageCandidates(table, pos, operationID, inContext, extra string) string {
	rank := func(col string) string {
		return `ts_rank_cd(r.` + col + `, q.q, ` + fmt.Sprint(rankNormalization) + `)`
	}
	return `SELECT 'message' AS kind, ` + pos + ` AS pos, r.id, r.conversation_id, r.role, '' AS label, r.created_at, ` + operationID + ` AS operation_id,
		COALESCE(r.search_text, r.content) AS text, COALESCE(r.search_text, r.content) AS body,
		` + rank("fts") + ` + ` + fmt.Sprint(contextWeight) + ` * ` + rank("fts_context") + ` AS score,
		` + rank("fts") + ` AS own, r.created_at AS at, r.seq, ` + ownWords + ` AS words, ` + inContext + ` AS in_context
	FROM ` + table + ` r, q WHERE (r.fts @@ q.q OR r.fts_context @@ q.q) AND ($2 = '' OR r.conversation_id = $2) ` + extra
}

// Search implements store.Store: ts_rank_cd over active and recalled
// messages and archived blocks in one ranked list, fused with a vector
// ranking when opts.Embedder is set (store.HybridSearch, vectors.go).
// opts.InContext is inserted into messages in a transaction rolled back
// after the search, so it is ranked in the same query and nothing stays.
func (s *Store) Search(ctx context.Context, query string, opts store.SearchOptions) ([]store.Hit, error) {
	if len(opts.InContext) > 0 {
		if err := store.CheckInContext(&opts); err != nil {
			return nil, err
		}
	}
	return store.HybridSearch(ctx, s, query, opts, func(ctx context.Context, q core.SearchQuery, conv string, limit int) ([]store.Hit, error) {
		var hits []store.Hit
		err := s.pool.with(ctx, func(c *pgx.Conn) error {
			if len(opts.InContext) == 0 {
				var err error
				hits, err = searchLexical(ctx, c, q.TSQuery, conv, limit)
				return err
			}
			tx, err := c.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
			if err != nil {
				return fmt.Errorf("begin: %w", err)
			}
			defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
			if err := insertInContext(ctx, tx, conv, opts.InContext); err != nil {
				return fmt.Errorf("indexing the in-context messages: %w", err)
			}
			hits, err = searchLexical(ctx, tx, q.TSQuery, conv, limit)
			return err
		})
		return hits, err
	})
}

// insertInContext adds a caller's messages to the active history of the
// transaction (rolled back by the caller), after every position the
// conversation has; a message its recall or active history holds is left
// out (as SQLite's queries/search_in_context.sql does).
func insertInContext(ctx context.Context, tx pgx.Tx, conv string, msgs []store.Message) error {
	n := len(msgs)
	ids, roles, contents, created, texts := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]*string, n)
	for i := range msgs {
		m := &msgs[i]
		ids[i], roles[i], contents[i], created[i] = m.ID, m.Role, pgText(m.Content), store.FormatTime(m.CreatedAt)
		if m.SearchText != "" {
			t := pgText(m.SearchText)
			texts[i] = &t
		}
	}
	_, err := tx.Exec(ctx, `INSERT INTO messages (id, conversation_id, seq, role, content, created_at, raw, search_text)
SELECT j.id, $1, base.s + j.o, j.role, j.content, j.created_at, '', j.search_text
FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS j(id, role, content, created_at, search_text, o),
	(SELECT GREATEST(COALESCE((SELECT MAX(seq) FROM messages WHERE conversation_id = $1), 0),
		COALESCE((SELECT MAX(seq) FROM recall WHERE conversation_id = $1), 0)) AS s) base
WHERE NOT EXISTS (SELECT 1 FROM recall r WHERE r.conversation_id = $1 AND r.id = j.id)
ORDER BY j.o
ON CONFLICT DO NOTHING`, conv, ids, roles, contents, created, texts)
	return err
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func searchLexical(ctx context.Context, c querier, tsquery, conversationID string, limit int) ([]store.Hit, error) {
	rows, err := c.Query(ctx, searchSQL, tsquery, conversationID, limit, headlineOptions)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Hit, error) {
		var h store.Hit
		var kind, created string
		if err := r.Scan(&kind, &h.ID, &h.ConversationID, &h.Role, &h.Label, &created, &h.OperationID, &h.Text, &h.Score, &h.Snippet,
			&h.InContext); err != nil {
			return store.Hit{}, err
		}
		err := store.FinishHit(&h, kind, created)
		return h, err
	})
}

// IndexActive implements store.Store: one UPDATE of the messages whose
// search text changes (the generated tsvector columns follow).
func (s *Store) IndexActive(ctx context.Context, conversationID string, texts map[string]string) error {
	if len(texts) == 0 {
		return nil
	}
	ids, vals := make([]string, 0, len(texts)), make([]string, 0, len(texts))
	for id, t := range texts {
		ids, vals = append(ids, id), append(vals, pgText(t))
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE messages m SET search_text = j.text
FROM unnest($2::text[], $3::text[]) AS j(id, text)
WHERE m.conversation_id = $1 AND m.id = j.id AND (m.search_text IS NULL OR m.search_text <> '')
	AND m.search_text IS DISTINCT FROM j.text`, conversationID, ids, vals)
		return err
	})
	if err != nil {
		return fmt.Errorf("index the active history of %q: %w", conversationID, err)
	}
	return nil
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
