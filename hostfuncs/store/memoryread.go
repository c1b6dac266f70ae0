package store

import "github.com/clipfold/clipfold/core"

// ReadHits are hits as memory_read shows them (core.BuildMemoryRead, the
// buildMemoryRead export): kind, id, role, time range, score, text,
// whether in context, a batch's source message ids.
func ReadHits(hits []Hit) []core.ReadHit {
	out := make([]core.ReadHit, len(hits))
	for i := range hits {
		h := &hits[i]
		r := core.ReadHit{Kind: string(h.Kind), ID: h.ID, Role: h.Role, Score: h.Score, Text: h.Text, InContext: h.InContext}
		r.Start, r.End = FormatTime(h.Start), FormatTime(h.End)
		if h.Batch != nil {
			r.Sources = h.Batch.SourceMessageIDs
		}
		out[i] = r
	}
	return out
}
