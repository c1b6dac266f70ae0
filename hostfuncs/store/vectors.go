package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/embeddings"
)

// Embedder turns texts into vectors (package hostfuncs/embeddings has the
// OpenAI-compatible and Ollama providers).
type Embedder = embeddings.Embedder

// RRFK is the k of reciprocal rank fusion: a hit's fused score is the sum,
// over the rankings that have it, of 1 / (RRFK + rank), rank 1 the best.
// 60 is the value of Cormack, Clarke and Büttcher (SIGIR 2009), which
// most hybrid search engines use: large enough that the first few ranks
// of one list do not drown the other list, small enough that rank still
// matters.
const RRFK = 60

// FusionDepth is how many hits of each ranking a fused search reads (at
// least; more when the limit is larger): a hit ranked below it in one list
// still counts through the other.
const FusionDepth = 30

// BackfillBatch is how many documents one round of embedding reads and
// stores.
const BackfillBatch = 256

// DocRef names a searchable document: a recalled message (HitMessage,
// its conversation and recall id: a message id is unique within its
// conversation only) or an archival block (HitBatch, the block's
// conversation, "" for none, and its id).
type DocRef struct {
	Kind           HitKind
	ConversationID string
	ID             string
}

// refOf is the DocRef of a hit.
func refOf(h *Hit) DocRef { return DocRef{h.Kind, h.ConversationID, h.ID} }

// Doc is a searchable document and the text search indexes for it: a
// message's search_text (else its content), a block's summary without
// its metadata line.
type Doc struct {
	DocRef
	Text string
}

// DocVector is a document's embedding.
type DocVector struct {
	DocRef
	Vector []float32
}

// Neighbor is a document of the vector ranking with its cosine
// similarity to the query.
type Neighbor struct {
	DocRef
	Similarity float64
}

// VectorIndex is implemented by stores that keep embedding vectors beside
// the archive (both Go stores). Search fuses its ranking with the lexical
// one when SearchOptions.Embedder is set; EmbedMissing fills it.
type VectorIndex interface {
	// MissingVectors returns up to limit searchable documents (never a
	// superseded clip-archive, never an empty text) of the conversation
	// ("" for all) that have no vector of model with dims dimensions
	// (dims 0: of any dimension).
	MissingVectors(ctx context.Context, conversationID, model string, dims, limit int) ([]Doc, error)
	// PutVectors stores the vectors of model, replacing a document's
	// vector of the same model; a vector of a document that no longer
	// exists is dropped. It returns how many it stored.
	PutVectors(ctx context.Context, model string, vs []DocVector) (int, error)
	// NearestVectors ranks the conversation's documents ("" for all) that
	// have a vector of model with len(q) dimensions by cosine similarity
	// to q, best first, at most k, similarity > 0 only.
	NearestVectors(ctx context.Context, conversationID, model string, q []float32, k int) ([]Neighbor, error)
	// HitsByRef reads documents as hits (no score or snippet); a missing
	// document is left out.
	HitsByRef(ctx context.Context, refs []DocRef) ([]Hit, error)
}

// EmbedMissing embeds every searchable document of the conversation (""
// for all) that has no vector of e's model yet, and returns how many it
// stored. A host calls it after a compaction committed, outside the
// commit's transaction: its failure loses nothing (the documents are
// stored; a later call, or a search, embeds them). Stores that keep no
// vectors return an error.
func EmbedMissing(ctx context.Context, st Store, e Embedder, conversationID string) (int, error) {
	vi, ok := st.(VectorIndex)
	if !ok {
		return 0, fmt.Errorf("embeddings: the store %T keeps no vectors", st)
	}
	if e == nil {
		return 0, errors.New("embeddings: no embedder")
	}
	return embedMissing(ctx, vi, e, conversationID, 0)
}

func embedMissing(ctx context.Context, vi VectorIndex, e Embedder, conversationID string, dims int) (int, error) {
	model := e.Model()
	total := 0
	stored := map[DocRef]bool{}
	for {
		docs, err := vi.MissingVectors(ctx, conversationID, model, dims, BackfillBatch)
		if err != nil {
			return total, fmt.Errorf("embeddings: listing documents without a vector: %w", err)
		}
		if len(docs) == 0 {
			return total, nil
		}
		for _, d := range docs {
			if stored[d.DocRef] {
				// Stored, yet still listed: looping would never end.
				return total, fmt.Errorf("embeddings: %s %q still has no vector of %q after one was stored", d.Kind, d.ID, model)
			}
			stored[d.DocRef] = true
		}
		texts := make([]string, len(docs))
		for i, d := range docs {
			texts[i] = d.Text
		}
		vecs, err := e.Embed(ctx, texts)
		if err != nil {
			return total, err
		}
		if len(vecs) != len(docs) {
			return total, fmt.Errorf("embeddings: %d vectors for %d texts", len(vecs), len(docs))
		}
		vs := make([]DocVector, len(docs))
		for i, d := range docs {
			if dims > 0 && len(vecs[i]) != dims {
				return total, fmt.Errorf("embeddings: model %q gave %d dimensions for a document, %d for the query", model, len(vecs[i]), dims)
			}
			vs[i] = DocVector{DocRef: d.DocRef, Vector: vecs[i]}
		}
		n, err := vi.PutVectors(ctx, model, vs)
		if err != nil {
			return total, fmt.Errorf("embeddings: storing vectors: %w", err)
		}
		total += n
		if n == 0 {
			return total, nil // every document vanished meanwhile; do not loop
		}
	}
}

// LexicalFunc is a backend's lexical ranking of an analysed query: best
// first, at most limit, of the conversation ("" for all).
type LexicalFunc func(ctx context.Context, q core.SearchQuery, conversationID string, limit int) ([]Hit, error)

// HybridSearch is Search for a backend: the query analysed by
// core.AnalyzeSearchQuery ("" : no hits), ranked by lexical; when
// opts.Embedder is set, also by vector similarity, the two rankings fused
// by reciprocal rank fusion (RRFK). Before ranking by vectors it embeds
// the documents in the search's scope that have none for the embedder's
// model (a database compacted without embeddings becomes searchable by
// meaning at its first such search). When the embedder fails, the search
// answers the lexical ranking alone and reports why to opts.Warn.
func HybridSearch(ctx context.Context, vi VectorIndex, query string, opts SearchOptions, lexical LexicalFunc) ([]Hit, error) {
	q, err := core.AnalyzeSearchQuery(query, "")
	if err != nil {
		return nil, fmt.Errorf("search %q: %w", query, err)
	}
	if q.FTS5 == "" {
		return nil, nil // nothing to search for
	}
	limit := ClampLimit(opts.Limit)
	if opts.Embedder == nil {
		hits, err := lexical(ctx, q, opts.ConversationID, limit)
		if err != nil {
			return nil, fmt.Errorf("search %q: %w", query, err)
		}
		return hits, nil
	}
	// The vector ranking first: when it cannot be had, the answer is
	// exactly the offline one.
	depth := min(MaxSearchLimit, max(limit, FusionDepth))
	near, err := vectorRanking(ctx, vi, query, opts, depth)
	if err != nil {
		if opts.Warn != nil {
			opts.Warn(fmt.Errorf("semantic search unavailable, lexical ranking only: %w", err))
		}
		hits, err := lexical(ctx, q, opts.ConversationID, limit)
		if err != nil {
			return nil, fmt.Errorf("search %q: %w", query, err)
		}
		return hits, nil
	}
	lex, err := lexical(ctx, q, opts.ConversationID, depth)
	if err != nil {
		return nil, fmt.Errorf("search %q: %w", query, err)
	}
	hits, err := fuse(ctx, vi, lex, near)
	if err != nil {
		return nil, fmt.Errorf("search %q: %w", query, err)
	}
	return hits[:min(limit, len(hits))], nil
}

// vectorRanking embeds the query, embeds what is missing in the search's
// scope, and ranks by similarity. A failed backfill is reported to
// opts.Warn and the ranking uses the vectors there are.
func vectorRanking(ctx context.Context, vi VectorIndex, query string, opts SearchOptions, depth int) ([]Neighbor, error) {
	e := opts.Embedder
	text := strings.TrimSpace(strings.ToValidUTF8(query, " "))
	vs, err := e.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	if len(vs) != 1 || len(vs[0]) == 0 {
		return nil, fmt.Errorf("embeddings: %d vectors for one query", len(vs))
	}
	qv := vs[0]
	if ro, ok := vi.(ReadOnlyStore); ok && ro.ReadOnly() {
		// Nothing can be stored: rank what is, and say what is left out.
		missing, err := vi.MissingVectors(ctx, opts.ConversationID, e.Model(), len(qv), 1)
		if err == nil && len(missing) > 0 && opts.Warn != nil {
			opts.Warn(fmt.Errorf("semantic search over the vectors stored so far: the archive is open read-only, "+
				"so documents without a vector of %q are found by their words only", e.Model()))
		}
	} else if _, err := embedMissing(ctx, vi, e, opts.ConversationID, len(qv)); err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		if opts.Warn != nil {
			opts.Warn(fmt.Errorf("semantic search over the vectors stored so far (some of the archive is not embedded yet): %w", err))
		}
	}
	near, err := vi.NearestVectors(ctx, opts.ConversationID, e.Model(), qv, depth)
	if err != nil {
		return nil, fmt.Errorf("embeddings: ranking by similarity: %w", err)
	}
	return near, nil
}

// competitionRanks gives each position its rank, equal scores sharing the
// best rank of their run (1, 2, 2, 4): two documents a ranking cannot
// tell apart contribute alike, and fusion sends the tie to the more
// recent.
func competitionRanks(n int, score func(i int) float64) []int {
	ranks := make([]int, n)
	for i := range ranks {
		if i > 0 && sameScore(score(i), score(i-1)) {
			ranks[i] = ranks[i-1]
		} else {
			ranks[i] = i + 1
		}
	}
	return ranks
}

// sameScore tells scores apart only beyond rounding: the same text scores
// the same, whatever order the engine summed its terms in.
func sameScore(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// fuse merges the lexical hits and the vector neighbors by reciprocal
// rank fusion. Score becomes the fused score; LexicalRank, VectorRank and
// Similarity say where it came from. Ties go to the more recent (End),
// then to the batch, then to the greater id (and conversation): a
// deterministic order.
func fuse(ctx context.Context, vi VectorIndex, lex []Hit, near []Neighbor) ([]Hit, error) {
	byRef := make(map[DocRef]*Hit, len(lex)+len(near))
	order := make([]*Hit, 0, len(lex)+len(near))
	lexRanks := competitionRanks(len(lex), func(i int) float64 { return lex[i].Score })
	for i := range lex {
		h := lex[i]
		h.LexicalRank = lexRanks[i]
		h.Score = 1 / float64(RRFK+lexRanks[i])
		byRef[refOf(&h)] = &h
		order = append(order, &h)
	}
	var missing []DocRef
	for _, n := range near {
		if byRef[n.DocRef] == nil {
			missing = append(missing, n.DocRef)
		}
	}
	if len(missing) > 0 {
		more, err := vi.HitsByRef(ctx, missing)
		if err != nil {
			return nil, fmt.Errorf("reading hits: %w", err)
		}
		for i := range more {
			h := more[i]
			h.Snippet = LeadSnippet(h.Text)
			byRef[refOf(&h)] = &h
			order = append(order, &h)
		}
	}
	vecRanks := competitionRanks(len(near), func(i int) float64 { return near[i].Similarity })
	for i, n := range near {
		h := byRef[n.DocRef]
		if h == nil {
			continue // a vector whose document is gone
		}
		h.VectorRank = vecRanks[i]
		h.Similarity = n.Similarity
		h.Score += 1 / float64(RRFK+vecRanks[i])
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if d := a.Score - b.Score; math.Abs(d) > 1e-12 {
			return d > 0
		}
		if !a.End.Equal(b.End) {
			return a.End.After(b.End)
		}
		if a.Kind != b.Kind {
			return a.Kind == HitBatch
		}
		if a.ID != b.ID {
			return a.ID > b.ID
		}
		return a.ConversationID > b.ConversationID
	})
	// A message whose own words repeat a better message hit's of the same
	// conversation is folded into it, as the lexical search folds it
	// (queries/search.sql): the vector ranking must not bring back a copy
	// the lexical one left out.
	type words struct{ conv, own string }
	seen := make(map[words]bool, len(order))
	out := make([]Hit, 0, len(order))
	for _, h := range order {
		if h.Kind == HitMessage {
			own, _, _ := strings.Cut(h.Text, core.SearchContextSep)
			k := words{h.ConversationID, own}
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		out = append(out, *h)
	}
	return out, nil
}

// snippetWords is how many words LeadSnippet keeps.
const snippetWords = 32

// LeadSnippet is the snippet of a hit only the vector ranking found: no
// word of the query is in it to show in context, so it is the text's
// beginning, cut at snippetWords words with "…".
func LeadSnippet(text string) string {
	words := strings.Fields(text)
	if len(words) <= snippetWords {
		return strings.Join(words, " ")
	}
	return strings.Join(words[:snippetWords], " ") + " …"
}

// EncodeVector is how a vector is stored: its float32 values,
// little-endian, scaled to unit length so a cosine similarity is a dot
// product (a zero vector stays zero and is never similar to anything).
func EncodeVector(v []float32) []byte {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	scale := 1.0
	if n > 0 {
		scale = 1 / math.Sqrt(n)
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(float64(x)*scale)))
	}
	return b
}

// DecodeVector reads a stored vector.
func DecodeVector(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("a stored vector of %d bytes is not float32 values", len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// Ranker ranks stored vectors against a query by brute force: the cosine
// similarity of every vector, the best k kept. Both Go stores use it; at
// one conversation's archive size (thousands of documents) a scan is a
// few milliseconds and needs no index.
type Ranker struct {
	q     []float32 // the query at unit length
	k     int
	best  []Neighbor
	full  bool    // best held k after a trim: floor is the k-th similarity
	floor float64 // a similarity below it cannot be among the k best
}

// NewRanker ranks against q, keeping k.
func NewRanker(q []float32, k int) *Ranker {
	b := EncodeVector(q)
	unit, _ := DecodeVector(b)
	return &Ranker{q: unit, k: k}
}

// Add scores one stored vector (EncodeVector's bytes). A vector of another
// length is ignored.
func (r *Ranker) Add(ref DocRef, stored []byte) {
	if len(stored) != 4*len(r.q) {
		return
	}
	var dot float32
	for i, x := range r.q {
		dot += x * math.Float32frombits(binary.LittleEndian.Uint32(stored[4*i:]))
	}
	r.add(ref, dot)
}

// AddDecoded scores one stored vector already decoded (DecodeVector). A
// vector of another length is ignored.
func (r *Ranker) AddDecoded(ref DocRef, v []float32) {
	if len(v) != len(r.q) {
		return
	}
	r.add(ref, dot(r.q, v))
}

// dot is the dot product of two vectors of one length, in four running
// sums (about twice as fast as one: the additions do not wait on each
// other).
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		aa, bb := a[i:i+4:i+4], b[i:i+4:i+4]
		s0 += aa[0] * bb[0]
		s1 += aa[1] * bb[1]
		s2 += aa[2] * bb[2]
		s3 += aa[3] * bb[3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// AddSimilarity ranks a document whose similarity was computed elsewhere
// (by the database).
func (r *Ranker) AddSimilarity(ref DocRef, sim float64) {
	r.addSim(ref, sim)
}

func (r *Ranker) add(ref DocRef, dot float32) { r.addSim(ref, float64(dot)) }

func (r *Ranker) addSim(ref DocRef, sim float64) {
	if r.k <= 0 || !(sim > 0) || (r.full && sim < r.floor) {
		return // below the k best so far: it cannot make the result
	}
	r.best = append(r.best, Neighbor{DocRef: ref, Similarity: sim})
	if len(r.best) >= 2*r.k+64 {
		r.trim()
	}
}

func (r *Ranker) trim() {
	sort.Slice(r.best, func(i, j int) bool {
		a, b := r.best[i], r.best[j]
		if a.Similarity != b.Similarity {
			return a.Similarity > b.Similarity
		}
		if a.Kind != b.Kind {
			return a.Kind == HitBatch
		}
		if a.ID != b.ID {
			return a.ID > b.ID
		}
		return a.ConversationID > b.ConversationID
	})
	if r.k > 0 && len(r.best) >= r.k {
		r.best = r.best[:r.k]
		r.full, r.floor = true, r.best[r.k-1].Similarity
	}
}

// Result returns the best k, best first.
func (r *Ranker) Result() []Neighbor {
	r.trim()
	return r.best
}

// now is the time vectors are stamped with; a variable for tests.
var now = time.Now

// VectorTime is the created_at of a stored vector.
func VectorTime() string { return core.FormatTime(now()) }
