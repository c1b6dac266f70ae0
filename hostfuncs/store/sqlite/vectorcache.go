package sqlite

import (
	"context"
	"database/sql"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/clipfold/clipfold/hostfuncs/store"
)

// The vector cache keeps, per (conversation, model, dims), the decoded
// vectors of the last scan and whether the last check found every
// document embedded, with the database's change token at that time.
// While the token is unchanged a search with embeddings reads neither
// the vectors (31 MB for 10,000 messages at 768 dimensions) nor the
// documents again; any commit to the file — by this store, another
// store, or another process such as the Python host — changes the token.
//
// The token is this store's own write count plus, for a file, SQLite's
// PRAGMA data_version read on a connection kept for that alone (it
// changes whenever another connection commits). A private in-memory
// database has no other writer, so its write count is the whole token.
// Writes through DB() are not seen: reset the cache with ForgetVectors.

// vectorCache is the store's cache and the connection its token is read on.
type vectorCache struct {
	store.VectorCache

	watchMu sync.Mutex
	watch   *sql.Conn // file databases: the connection PRAGMA data_version is read on
}

// wrote records a write by this store.
func (s *Store) wrote() { atomic.AddInt64(&s.gen, 1) }

// token returns the current change token; ok is false when it cannot be
// read (then nothing is cached).
func (s *Store) token(ctx context.Context) (string, bool) {
	gen := atomic.LoadInt64(&s.gen)
	if s.memory {
		return strconv.FormatInt(gen, 10), true
	}
	var dataVersion int64
	c := &s.cache
	c.watchMu.Lock()
	defer c.watchMu.Unlock()
	if c.watch == nil {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return "", false
		}
		c.watch = conn
	}
	if err := c.watch.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&dataVersion); err != nil {
		_ = c.watch.Close()
		c.watch = nil
		return "", false
	}
	return strconv.FormatInt(gen, 10) + "/" + strconv.FormatInt(dataVersion, 10), true
}

func (c *vectorCache) close() {
	c.watchMu.Lock()
	defer c.watchMu.Unlock()
	if c.watch != nil {
		_ = c.watch.Close()
		c.watch = nil
	}
}

// ForgetVectors empties the vector cache (after writing through DB()).
func (s *Store) ForgetVectors() {
	s.cache.Reset()
	s.wrote()
}
