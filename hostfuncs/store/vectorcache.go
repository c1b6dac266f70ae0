package store

import "sync"

// VectorScope is what a vector ranking or a check for missing vectors
// covers: a conversation ("" for all), a model, a dimension (0: any).
type VectorScope struct {
	ConversationID, Model string
	Dims                  int
}

// VectorCache keeps, per scope, the decoded vectors of the last scan and
// whether the last check found every document embedded, each valid only
// while the store's change token is what it was when they were read. A
// store computes the token (anything that changes whenever documents or
// vectors of the scope may have); while it holds, a search with
// embeddings reads neither the vectors nor the documents again. At most
// MaxCachedScopes scopes are kept, the least recently used going first.
// The zero value is ready; it is safe for concurrent use.
type VectorCache struct {
	mu      sync.Mutex
	entries map[VectorScope]*cacheEntry
	clock   uint64
}

// MaxCachedScopes bounds a VectorCache.
const MaxCachedScopes = 4

type cacheEntry struct {
	token    string
	complete bool // every searchable document of the scope had a vector at token
	loaded   bool // refs and flat are the scope's vectors at token
	refs     []DocRef
	flat     []float32 // len(refs) vectors of Dims values, one after the other
	used     uint64
}

// Complete tells whether the scope was found fully embedded at token.
func (c *VectorCache) Complete(s VectorScope, token string) bool {
	e := c.entry(s, token)
	return e != nil && e.complete
}

// SetComplete records that the scope was fully embedded at token.
func (c *VectorCache) SetComplete(s VectorScope, token string) {
	c.update(s, token, func(e *cacheEntry) { e.complete = true })
}

// Vectors returns the scope's vectors read at token, if cached.
func (c *VectorCache) Vectors(s VectorScope, token string) (refs []DocRef, flat []float32, ok bool) {
	e := c.entry(s, token)
	if e == nil || !e.loaded {
		return nil, nil, false
	}
	return e.refs, e.flat, true
}

// SetVectors caches the scope's vectors read at token (flat: the vectors
// one after the other, s.Dims values each; contiguous memory is faster to
// scan than a slice per vector).
func (c *VectorCache) SetVectors(s VectorScope, token string, refs []DocRef, flat []float32) {
	c.update(s, token, func(e *cacheEntry) { e.refs, e.flat, e.loaded = refs, flat, true })
}

// Missing is a check for the scope's documents without a vector, through
// the cache: none while the scope was found fully embedded at token, else
// find's answer, recorded as complete when it finds none. With cacheable
// false (the store has no token) the cache is not used.
func (c *VectorCache) Missing(s VectorScope, token string, cacheable bool, find func() ([]Doc, error)) ([]Doc, error) {
	if cacheable && c.Complete(s, token) {
		return nil, nil
	}
	docs, err := find()
	if err == nil && len(docs) == 0 && cacheable {
		c.SetComplete(s, token)
	}
	return docs, err
}

// Nearest ranks the scope's vectors against q, keeping the best k: those
// cached at token, else scan's, cached when cacheable (the store has a
// token).
func (c *VectorCache) Nearest(s VectorScope, token string, cacheable bool, q []float32, k int, scan func() ([]DocRef, []float32, error)) ([]Neighbor, error) {
	refs, flat, ok := c.Vectors(s, token)
	if !cacheable || !ok {
		var err error
		if refs, flat, err = scan(); err != nil {
			return nil, err
		}
		if cacheable {
			c.SetVectors(s, token, refs, flat)
		}
	}
	return RankFlat(q, k, refs, flat), nil
}

// Reset empties the cache.
func (c *VectorCache) Reset() {
	c.mu.Lock()
	c.entries = nil
	c.mu.Unlock()
}

func (c *VectorCache) entry(s VectorScope, token string) *cacheEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[s]
	if e == nil || e.token != token {
		return nil
	}
	c.clock++
	e.used = c.clock
	return e
}

func (c *VectorCache) update(s VectorScope, token string, fn func(e *cacheEntry)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[VectorScope]*cacheEntry{}
	}
	e := c.entries[s]
	if e == nil || e.token != token {
		e = &cacheEntry{token: token}
		c.entries[s] = e
	}
	c.clock++
	e.used = c.clock
	fn(e)
	for len(c.entries) > MaxCachedScopes {
		var oldest VectorScope
		var least uint64
		first := true
		for key, v := range c.entries {
			if first || v.used < least {
				oldest, least, first = key, v.used, false
			}
		}
		delete(c.entries, oldest)
	}
}

// RankFlat ranks vectors laid one after the other in flat (len(q) values
// each, refs[i] the i-th) against q, keeping the best k.
func RankFlat(q []float32, k int, refs []DocRef, flat []float32) []Neighbor {
	r := NewRanker(q, k)
	d := len(q)
	if len(flat) != d*len(refs) {
		return nil
	}
	for i := range refs {
		r.AddDecoded(refs[i], flat[i*d:(i+1)*d:(i+1)*d])
	}
	return r.Result()
}
