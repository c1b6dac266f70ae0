package sqlite

import (
	"context"
	"database/sql"
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

// maxCachedScopes bounds the cache: the least recently used scope goes.
const maxCachedScopes = 4

type vecKey struct {
	conv, model string
	dims        int
}

type changeToken struct{ gen, dataVersion int64 }

type vecEntry struct {
	token    changeToken
	complete bool // every searchable document of the scope had a vector at token
	loaded   bool // refs and vecs are the scope's vectors at token
	refs     []store.DocRef
	vecs     []float32 // len(refs) vectors of dims values, one after the other
	used     uint64
}

type vectorCache struct {
	mu      sync.Mutex
	entries map[vecKey]*vecEntry
	clock   uint64

	watchMu sync.Mutex
	watch   *sql.Conn // file databases: the connection PRAGMA data_version is read on
}

// wrote records a write by this store.
func (s *Store) wrote() { atomic.AddInt64(&s.gen, 1) }

// token returns the current change token; ok is false when it cannot be
// read (then nothing is cached).
func (s *Store) token(ctx context.Context) (changeToken, bool) {
	t := changeToken{gen: atomic.LoadInt64(&s.gen)}
	if s.memory {
		return t, true
	}
	c := &s.cache
	c.watchMu.Lock()
	defer c.watchMu.Unlock()
	if c.watch == nil {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return t, false
		}
		c.watch = conn
	}
	if err := c.watch.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&t.dataVersion); err != nil {
		_ = c.watch.Close()
		c.watch = nil
		return t, false
	}
	return t, true
}

func (c *vectorCache) close() {
	c.watchMu.Lock()
	defer c.watchMu.Unlock()
	if c.watch != nil {
		_ = c.watch.Close()
		c.watch = nil
	}
}

// entry returns the scope's entry when it was made at token, else nil.
func (c *vectorCache) entry(k vecKey, t changeToken) *vecEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[k]
	if e == nil || e.token != t {
		return nil
	}
	c.clock++
	e.used = c.clock
	return e
}

// update sets the scope's entry at token t (a fresh one when the token
// changed) through fn.
func (c *vectorCache) update(k vecKey, t changeToken, fn func(e *vecEntry)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[vecKey]*vecEntry{}
	}
	e := c.entries[k]
	if e == nil || e.token != t {
		e = &vecEntry{token: t}
		c.entries[k] = e
	}
	c.clock++
	e.used = c.clock
	fn(e)
	for len(c.entries) > maxCachedScopes {
		var oldest vecKey
		var min uint64
		first := true
		for key, v := range c.entries {
			if first || v.used < min {
				oldest, min, first = key, v.used, false
			}
		}
		delete(c.entries, oldest)
	}
}

// ForgetVectors empties the vector cache (after writing through DB()).
func (s *Store) ForgetVectors() {
	s.cache.mu.Lock()
	s.cache.entries = nil
	s.cache.mu.Unlock()
	s.wrote()
}
