package postgres

import (
	"context"
	"fmt"

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
		WHERE e.kind = 'message' AND e.ref_id = r.id AND e.model = $2 AND ($3 = 0 OR e.dims = $3))
UNION ALL
SELECT 'batch', b.id, COALESCE(b.conversation_id, ''), ` + blockBody + `
FROM blocks b
WHERE ` + blockBody + ` <> '' AND ($1 = '' OR b.conversation_id = $1)
	AND NOT EXISTS (SELECT 1 FROM embeddings e
		WHERE e.kind = 'batch' AND e.ref_id = b.id AND e.model = $2 AND ($3 = 0 OR e.dims = $3))
LIMIT $4`

// MissingVectors implements store.VectorIndex.
func (s *Store) MissingVectors(ctx context.Context, conversationID, model string, dims, limit int) ([]store.Doc, error) {
	return collect(ctx, s, func(r pgx.CollectableRow) (store.Doc, error) {
		var d store.Doc
		var kind string
		err := r.Scan(&kind, &d.ID, &d.ConversationID, &d.Text)
		d.Kind = store.HitKind(kind)
		return d, err
	}, missingSQL, conversationID, model, dims, limit)
}

// PutVectors implements store.VectorIndex, in one transaction of its own
// (never inside a commit's).
func (s *Store) PutVectors(ctx context.Context, model string, vs []store.DocVector) (int, error) {
	if len(vs) == 0 {
		return 0, nil
	}
	at := store.VectorTime()
	n := 0
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		n = 0
		var b pgx.Batch
		for _, v := range vs {
			b.Queue(`INSERT INTO embeddings (kind, ref_id, conversation_id, model, dims, vector, created_at)
SELECT $1, $2, $3, $4, $5, $6, $7
WHERE ($1 = 'message' AND EXISTS (SELECT 1 FROM recall WHERE id = $2))
	OR ($1 = 'batch' AND EXISTS (SELECT 1 FROM blocks WHERE id = $2))
ON CONFLICT (kind, ref_id, model) DO UPDATE SET conversation_id = EXCLUDED.conversation_id,
	dims = EXCLUDED.dims, vector = EXCLUDED.vector, created_at = EXCLUDED.created_at`,
				string(v.Kind), v.ID, v.ConversationID, model, len(v.Vector), store.EncodeVector(v.Vector), at)
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
	return n, nil
}

// NearestVectors implements store.VectorIndex by brute force over the
// conversation's vectors of the model (store.Ranker).
func (s *Store) NearestVectors(ctx context.Context, conversationID, model string, q []float32, k int) ([]store.Neighbor, error) {
	r := store.NewRanker(q, k)
	err := s.pool.with(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, `SELECT kind, ref_id, vector FROM embeddings
WHERE model = $1 AND dims = $2 AND ($3 = '' OR conversation_id = $3)`, model, len(q), conversationID)
		if err != nil {
			return err
		}
		defer rows.Close()
		var kind, id string
		var vec []byte
		for rows.Next() {
			if err := rows.Scan(&kind, &id, &vec); err != nil {
				return err
			}
			r.Add(store.DocRef{Kind: store.HitKind(kind), ID: id}, vec)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return r.Result(), nil
}

// HitsByRef implements store.VectorIndex.
func (s *Store) HitsByRef(ctx context.Context, refs []store.DocRef) ([]store.Hit, error) {
	var msgIDs, blockIDs []string
	for _, r := range refs {
		if r.Kind == store.HitBatch {
			blockIDs = append(blockIDs, r.ID)
		} else {
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
FROM recall r WHERE r.id = ANY($1)
UNION ALL
SELECT 'batch', b.id, COALESCE(b.conversation_id, ''), '', b.label, b.created_at, COALESCE(b.operation_id, ''), b.content
FROM blocks b WHERE b.id = ANY($2)`, msgIDs, blockIDs)
}
