package postgres

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/clipfold/clipfold/hostfuncs/store"
)

var _ store.VectorIndex = (*Store)(nil)

// missingSQL lists the searchable documents without a vector of a model:
// what the lexical search indexes (a recalled message's fts is NULL for a
// superseded clip-archive), never an empty text. $1: conversation id or
// ”; $2: model; $3: dims (0: any); $4: limit.
var missingSQL = `SELECT 'message', r.id, r.conversation_id, COALESCE(r.search_text, r.content)
FROM recall r
WHERE r.fts IS NOT NULL AND COALESCE(r.search_text, r.content) <> '' AND ($1 = '' OR r.conversation_id = $1)
	AND NOT EXISTS (SELECT 1 FROM embeddings e
		WHERE e.kind = 'message' AND e.conversation_id = r.conversation_id AND e.ref_id = r.id AND e.model = $2
			AND ($3 = 0 OR e.dims = $3))
UNION ALL
SELECT 'batch', b.id, COALESCE(b.conversation_id, ''), ` + blockBody + `
FROM blocks b
WHERE ` + blockBody + ` <> '' AND ($1 = '' OR b.conversation_id = $1)
	AND NOT EXISTS (SELECT 1 FROM embeddings e
		WHERE e.kind = 'batch' AND e.conversation_id = COALESCE(b.conversation_id, '') AND e.ref_id = b.id AND e.model = $2
			AND ($3 = 0 OR e.dims = $3))
LIMIT $4`

// tokenSQL fingerprints a scope: the count and the greatest position of
// its recalled messages, of its blocks, and of its vectors of a model.
// Positions come from identity columns, which never repeat, so a
// fingerprint changes whenever a document or vector of the scope is
// added or removed (and a vector is removed when its document's text
// changes). $1: conversation id; $2: model.
const tokenSQL = `SELECT concat_ws('/',
	(SELECT count(*) FROM recall WHERE conversation_id = $1), (SELECT coalesce(max(pos), 0) FROM recall WHERE conversation_id = $1),
	(SELECT count(*) FROM blocks WHERE conversation_id = $1), (SELECT coalesce(max(pos), 0) FROM blocks WHERE conversation_id = $1),
	(SELECT count(*) FROM embeddings WHERE model = $2 AND conversation_id = $1),
	(SELECT coalesce(max(seq), 0) FROM embeddings WHERE model = $2 AND conversation_id = $1))`

// token returns the scope's fingerprint (tokenSQL), for the vector cache;
// ok is false when it cannot be read.
func (s *Store) token(ctx context.Context, conversationID, model string) (string, bool) {
	q := tokenSQL
	args := []any{conversationID, model}
	if conversationID == "" {
		q = strings.NewReplacer(" AND conversation_id = $1", "", " WHERE conversation_id = $1", "").Replace(q)
		q = strings.ReplaceAll(q, "$2", "$1")
		args = args[1:]
	}
	tok, err := collect(ctx, s, pgx.RowTo[string], q, args...)
	if err != nil || len(tok) != 1 {
		return "", false
	}
	return tok[0], true
}

// MissingVectors implements store.VectorIndex. While the scope's
// fingerprint is the one at which it last found every document embedded,
// it answers from the vector cache. With pgvector, a vector without its
// pgvector copy (stored before the column existed, or while it failed)
// counts as missing.
func (s *Store) MissingVectors(ctx context.Context, conversationID, model string, dims, limit int) ([]store.Doc, error) {
	scope := store.VectorScope{ConversationID: conversationID, Model: model, Dims: dims}
	tok, cacheable := s.token(ctx, conversationID, model)
	return s.cache.Missing(scope, tok, cacheable, func() ([]store.Doc, error) {
		return s.missingVectors(ctx, conversationID, model, dims, limit)
	})
}

func (s *Store) missingVectors(ctx context.Context, conversationID, model string, dims, limit int) ([]store.Doc, error) {
	q := missingSQL
	if _, on := s.pgv.use(); on {
		q = strings.ReplaceAll(q, "AND ($3 = 0 OR e.dims = $3))", "AND ($3 = 0 OR e.dims = $3) AND e.embedding IS NOT NULL)")
	}
	return collect(ctx, s, func(r pgx.CollectableRow) (store.Doc, error) {
		var d store.Doc
		var kind string
		err := r.Scan(&kind, &d.ID, &d.ConversationID, &d.Text)
		d.Kind = store.HitKind(kind)
		return d, err
	}, q, conversationID, model, dims, limit)
}

// PutVectors implements store.VectorIndex, in one transaction of its own
// (never inside a commit's).
func (s *Store) PutVectors(ctx context.Context, model string, vs []store.DocVector) (int, error) {
	if len(vs) == 0 {
		return 0, nil
	}
	if ext, on := s.pgv.use(); on {
		n, err := s.putVectors(ctx, model, vs, ext)
		if err == nil {
			return n, nil
		}
		if ctx.Err() != nil {
			return 0, err
		}
		s.pgv.fail(err) // the bytea alone, from now on
	}
	return s.putVectors(ctx, model, vs, "")
}

// analyzeEvery is how many stored vectors make the store refresh the
// planner's statistics of embeddings: right after a first backfill the
// table looks empty to the planner, which then checks each document's
// vector by scanning the whole table (seconds at 10,000 documents).
// Autovacuum refreshes them too, but not before the next search.
const analyzeEvery = 1000

// putVectors stores the vectors, and their pgvector copies when ext (the
// extension's schema) is set.
func (s *Store) putVectors(ctx context.Context, model string, vs []store.DocVector, ext string) (int, error) {
	col, val, set := "", "", ""
	if ext != "" {
		col, val, set = ", embedding", ", $8::real[]::"+ext+".vector", ", embedding = EXCLUDED.embedding"
	}
	sql := `INSERT INTO embeddings (kind, ref_id, conversation_id, model, dims, vector, created_at` + col + `)
SELECT $1, $2, $3, $4, $5, $6, $7` + val + `
WHERE ($1 = 'message' AND EXISTS (SELECT 1 FROM recall WHERE conversation_id = $3 AND id = $2))
	OR ($1 = 'batch' AND EXISTS (SELECT 1 FROM blocks WHERE id = $2 AND COALESCE(conversation_id, '') = $3))
ON CONFLICT (kind, conversation_id, ref_id, model) DO UPDATE SET
	dims = EXCLUDED.dims, vector = EXCLUDED.vector, created_at = EXCLUDED.created_at` + set
	at := store.VectorTime()
	n := 0
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		n = 0
		var b pgx.Batch
		for _, v := range vs {
			enc := store.EncodeVector(v.Vector)
			args := []any{string(v.Kind), v.ID, v.ConversationID, model, len(v.Vector), enc, at}
			if ext != "" {
				unit, _ := store.DecodeVector(enc)
				args = append(args, unit)
			}
			b.Queue(sql, args...)
		}
		br := tx.SendBatch(ctx, &b)
		for _, v := range vs {
			tag, err := br.Exec()
			if err != nil {
				_ = br.Close()
				return fmt.Errorf("%s %q: %w", v.Kind, v.ID, err)
			}
			n += int(tag.RowsAffected())
		}
		return br.Close()
	})
	if err != nil {
		return 0, fmt.Errorf("put vectors: %w", err)
	}
	if s.putsSinceStat.Add(int64(n)) >= analyzeEvery {
		s.putsSinceStat.Store(0)
		_ = s.Exec(ctx, `ANALYZE embeddings`) // statistics only: a failure changes nothing
	}
	return n, nil
}

// NearestVectors implements store.VectorIndex: with pgvector, by the
// server (<=>, cosine distance); otherwise, or when that fails, by brute
// force over the conversation's vectors of the model (store.Ranker).
func (s *Store) NearestVectors(ctx context.Context, conversationID, model string, q []float32, k int) ([]store.Neighbor, error) {
	if ext, on := s.pgv.use(); on {
		near, err := s.nearestPgvector(ctx, conversationID, model, q, k, ext)
		if err == nil {
			return near, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		s.pgv.fail(err)
	}
	scope := store.VectorScope{ConversationID: conversationID, Model: model, Dims: len(q)}
	tok, cacheable := s.token(ctx, conversationID, model)
	return s.cache.Nearest(scope, tok, cacheable, q, k, func() ([]store.DocRef, []float32, error) {
		return s.scanVectors(ctx, conversationID, model, len(q))
	})
}

// scanVectors reads the scope's vectors of model and dims, one after the
// other in one slice.
func (s *Store) scanVectors(ctx context.Context, conversationID, model string, dims int) ([]store.DocRef, []float32, error) {
	var refs []store.DocRef
	var flat []float32
	err := s.pool.with(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, `SELECT kind, conversation_id, ref_id, vector FROM embeddings
WHERE model = $1 AND dims = $2 AND ($3 = '' OR conversation_id = $3)`, model, dims, conversationID)
		if err != nil {
			return err
		}
		defer rows.Close()
		var kind, conv, id string
		var blob []byte
		for rows.Next() {
			if err := rows.Scan(&kind, &conv, &id, &blob); err != nil {
				return err
			}
			v, err := store.DecodeVector(blob)
			if err != nil || len(v) != dims {
				continue // not a vector of these dimensions: ignored, as the ranking would
			}
			refs = append(refs, store.DocRef{Kind: store.HitKind(kind), ConversationID: conv, ID: id})
			flat = append(flat, v...)
		}
		return rows.Err()
	})
	return refs, flat, err
}

// HitsByRef implements store.VectorIndex: messages by conversation and
// id (parallel arrays), blocks by id.
func (s *Store) HitsByRef(ctx context.Context, refs []store.DocRef) ([]store.Hit, error) {
	var msgConvs, msgIDs, blockIDs []string
	for _, r := range refs {
		if r.Kind == store.HitBatch {
			blockIDs = append(blockIDs, r.ID)
		} else {
			msgConvs = append(msgConvs, r.ConversationID)
			msgIDs = append(msgIDs, r.ID)
		}
	}
	return collect(ctx, s, func(r pgx.CollectableRow) (store.Hit, error) {
		var h store.Hit
		var kind, created string
		if err := r.Scan(&kind, &h.ID, &h.ConversationID, &h.Role, &h.Label, &created, &h.OperationID, &h.Text); err != nil {
			return store.Hit{}, err
		}
		err := store.FinishHit(&h, kind, created)
		return h, err
	}, `SELECT 'message', r.id, r.conversation_id, r.role, '', r.created_at, r.operation_id, COALESCE(r.search_text, r.content)
FROM unnest($1::text[], $2::text[]) AS k(conversation_id, id) JOIN recall r ON r.conversation_id = k.conversation_id AND r.id = k.id
UNION ALL
SELECT 'batch', b.id, COALESCE(b.conversation_id, ''), '', b.label, b.created_at, COALESCE(b.operation_id, ''), b.content
FROM blocks b WHERE b.id = ANY($3)`, msgConvs, msgIDs, blockIDs)
}

// pgvector is the state of the pgvector column: the extension's schema
// (quoted as needed) when migration 3 added the column, and the error
// that made the store stop using it. The bytea is always written, so the
// store can fall back at any time.
type pgvector struct {
	mu     sync.Mutex
	schema string
	err    error
}

func (p *pgvector) use() (schema string, on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.schema, p.schema != "" && p.err == nil
}

func (p *pgvector) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
	}
}

// detectPgvector looks for the column migration 3 adds when the server
// offers pgvector.
func (s *Store) detectPgvector(ctx context.Context) error {
	schemas, err := collect(ctx, s, pgx.RowTo[string], `SELECT e.extnamespace::regnamespace::text FROM pg_extension e
WHERE e.extname = 'vector' AND EXISTS (SELECT 1 FROM information_schema.columns
	WHERE table_schema = current_schema() AND table_name = 'embeddings' AND column_name = 'embedding')`)
	if err != nil {
		return fmt.Errorf("looking for pgvector: %w", err)
	}
	if len(schemas) == 1 {
		s.pgv.mu.Lock()
		s.pgv.schema = schemas[0]
		s.pgv.mu.Unlock()
	}
	return nil
}

// VectorBackend says how the store ranks vectors: "pgvector" (the
// server, <=>), or "bytea" (the store, in Go) with the reason.
func (s *Store) VectorBackend() string {
	s.pgv.mu.Lock()
	defer s.pgv.mu.Unlock()
	switch {
	case s.pgv.schema == "":
		return "bytea (the server has no pgvector column: extension not available or not creatable when the schema was made)"
	case s.pgv.err != nil:
		return "bytea (pgvector failed: " + s.pgv.err.Error() + ")"
	}
	return "pgvector"
}

// nearestPgvector ranks by the server's cosine distance over the pgvector
// column (ext: the extension's schema); the order of equal similarities
// is the store.Ranker's, as in the brute-force path.
func (s *Store) nearestPgvector(ctx context.Context, conversationID, model string, q []float32, k int, ext string) ([]store.Neighbor, error) {
	unit, _ := store.DecodeVector(store.EncodeVector(q))
	r := store.NewRanker(q, k)
	err := s.pool.with(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, `SELECT kind, conversation_id, ref_id, 1 - (embedding OPERATOR(`+ext+`.<=>) $1::real[]::`+ext+`.vector)
FROM embeddings
WHERE model = $2 AND dims = $3 AND ($4 = '' OR conversation_id = $4) AND embedding IS NOT NULL
ORDER BY embedding OPERATOR(`+ext+`.<=>) $1::real[]::`+ext+`.vector
LIMIT $5`, unit, model, len(q), conversationID, 2*k+16)
		if err != nil {
			return err
		}
		defer rows.Close()
		var kind, conv, id string
		var sim float64
		for rows.Next() {
			if err := rows.Scan(&kind, &conv, &id, &sim); err != nil {
				return err
			}
			r.AddSimilarity(store.DocRef{Kind: store.HitKind(kind), ConversationID: conv, ID: id}, sim)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("pgvector: %w", err)
	}
	return r.Result(), nil
}
