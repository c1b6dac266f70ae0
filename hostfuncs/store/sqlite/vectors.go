package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/clipfold/clipfold/hostfuncs/store"
)

var _ store.VectorIndex = (*Store)(nil)

// MissingVectors implements store.VectorIndex (queries/embeddings_missing.sql).
// While nothing changed since it last found every document embedded, it
// answers from the vector cache (vectorcache.go) without a query.
func (s *Store) MissingVectors(ctx context.Context, conversationID, model string, dims, limit int) ([]store.Doc, error) {
	scope := store.VectorScope{ConversationID: conversationID, Model: model, Dims: dims}
	tok, cacheable := s.token(ctx)
	return s.cache.Missing(scope, tok, cacheable, func() ([]store.Doc, error) {
		return s.missingVectors(ctx, conversationID, model, dims, limit)
	})
}

func (s *Store) missingVectors(ctx context.Context, conversationID, model string, dims, limit int) ([]store.Doc, error) {
	rows, err := s.db.QueryContext(ctx, embeddingsMissingSQL, conversationID, model, dims, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Doc
	for rows.Next() {
		var d store.Doc
		var kind string
		if err := rows.Scan(&kind, &d.ID, &d.ConversationID, &d.Text); err != nil {
			return nil, err
		}
		d.Kind = store.HitKind(kind)
		out = append(out, d)
	}
	return out, rows.Err()
}

// PutVectors implements store.VectorIndex (queries/embeddings_put.sql), in
// one transaction of its own: never inside a commit's.
func (s *Store) PutVectors(ctx context.Context, model string, vs []store.DocVector) (int, error) {
	if err := s.refuseWrite("put vectors"); err != nil {
		return 0, err
	}
	if len(vs) == 0 {
		return 0, nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("put vectors: begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	stmt, err := tx.PrepareContext(ctx, embeddingsPutSQL)
	if err != nil {
		return 0, fmt.Errorf("put vectors: %w", err)
	}
	defer stmt.Close()
	at := store.VectorTime()
	n := 0
	for _, v := range vs {
		res, err := stmt.ExecContext(ctx, string(v.Kind), v.ID, v.ConversationID, model, len(v.Vector), store.EncodeVector(v.Vector), at)
		if err != nil {
			return 0, fmt.Errorf("put vectors: %s %q: %w", v.Kind, v.ID, err)
		}
		if k, err := res.RowsAffected(); err == nil && k > 0 {
			n++
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("put vectors: commit: %w", err)
	}
	s.wrote()
	return n, nil
}

// NearestVectors implements store.VectorIndex by brute force over the
// conversation's vectors of the model (store.Ranker), read from the
// vector cache while nothing changed since the last scan.
func (s *Store) NearestVectors(ctx context.Context, conversationID, model string, q []float32, k int) ([]store.Neighbor, error) {
	scope := store.VectorScope{ConversationID: conversationID, Model: model, Dims: len(q)}
	tok, cacheable := s.token(ctx)
	return s.cache.Nearest(scope, tok, cacheable, q, k, func() ([]store.DocRef, []float32, error) {
		return s.scanVectors(ctx, conversationID, model, len(q))
	})
}

// scanVectors reads the scope's vectors of model and dims: their refs, and
// the vectors one after the other in one slice (contiguous memory is
// faster to scan than a slice per vector).
func (s *Store) scanVectors(ctx context.Context, conversationID, model string, dims int) ([]store.DocRef, []float32, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT kind, conversation_id, ref_id, vector FROM embeddings
WHERE model = ?1 AND dims = ?2 AND (?3 = '' OR conversation_id = ?3)`, model, dims, conversationID)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var refs []store.DocRef
	var vecs []float32
	var kind, conv, id string
	var blob []byte
	for rows.Next() {
		if err := rows.Scan(&kind, &conv, &id, &blob); err != nil {
			return nil, nil, err
		}
		v, err := store.DecodeVector(blob)
		if err != nil || len(v) != dims {
			continue // not a vector of these dimensions: ignored, as the ranking would
		}
		refs = append(refs, store.DocRef{Kind: store.HitKind(kind), ConversationID: conv, ID: id})
		vecs = append(vecs, v...)
	}
	return refs, vecs, rows.Err()
}

// HitsByRef implements store.VectorIndex (queries/search_by_ref.sql:
// messages as [conversation, id] pairs).
func (s *Store) HitsByRef(ctx context.Context, refs []store.DocRef) ([]store.Hit, error) {
	msgs := [][2]string{}
	var blockIDs []string
	for _, r := range refs {
		if r.Kind == store.HitBatch {
			blockIDs = append(blockIDs, r.ID)
		} else {
			msgs = append(msgs, [2]string{r.ConversationID, r.ID})
		}
	}
	mj, err := json.Marshal(msgs)
	if err != nil {
		return nil, fmt.Errorf("encoding message refs: %w", err)
	}
	bj, err := jsonArray(blockIDs)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, searchByRefSQL, string(mj), bj)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Hit
	for rows.Next() {
		var h store.Hit
		var kind, created string
		if err := rows.Scan(&kind, &h.ID, &h.ConversationID, &h.Role, &h.Label, &created, &h.OperationID, &h.Text); err != nil {
			return nil, err
		}
		if err := store.FinishHit(&h, kind, created); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}
