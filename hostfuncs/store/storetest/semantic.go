package storetest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/embeddings/embeddingstest"
	"github.com/clipfold/clipfold/hostfuncs/store"
)

// The semantic tests run every store against a real HTTP embeddings
// server (embeddingstest, OpenAI's wire format) whose vectors put synonyms
// together: "car", "sedan" and "automobile" are one axis, "fix",
// "repair" and "overhaul" another.

// warnings collects what a search reports through SearchOptions.Warn.
type warnings struct {
	mu   sync.Mutex
	errs []error
}

func (w *warnings) add(err error) {
	w.mu.Lock()
	w.errs = append(w.errs, err)
	w.mu.Unlock()
}

func (w *warnings) list() []error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]error(nil), w.errs...)
}

func vectorIndex(t *testing.T, s store.Store) store.VectorIndex {
	t.Helper()
	vi, ok := s.(store.VectorIndex)
	require.True(t, ok, "%T must implement store.VectorIndex", s)
	return vi
}

// paraphraseArchive recalls, into conv, a message and a batch answering
// "When will my car be fixed?" without any of its words, and unrelated
// turns.
func paraphraseArchive(t *testing.T, s store.Store, conv string) (answer, batchSummary string) {
	t.Helper()
	answer = "The sedan is at the workshop for repairs."
	batchSummary = "Dana's automobile went to the garage for an overhaul."
	msgs := []store.Message{
		msg(conv, conv+"-p1", "user", "We booked a table for the birthday party on the terrace.", 0),
		msg(conv, conv+"-p2", "assistant", answer, 1),
		msg(conv, conv+"-p3", "user", "The quarterly report is due next month.", 2),
		msg(conv, conv+"-p4", "assistant", "Remember the peanut allergy when ordering.", 3),
	}
	recallAs(t, s, conv, "op-"+conv, msgs, nil,
		batchWrite(conv, "op-"+conv, batchSummary, base, base.Add(3*time.Minute), conv+"-p2"))
	return answer, batchSummary
}

const paraphraseQuestion = "When will my car be fixed?"

// testSemanticParaphrase: a question sharing no word with its answer finds
// it only when embeddings are on; each hit carries what a lexical hit
// carries.
func testSemanticParaphrase(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	srv := embeddingstest.NewServer(t)
	answer, summary := paraphraseArchive(t, s, "c1")

	hits, err := s.Search(ctx, paraphraseQuestion, store.SearchOptions{})
	require.NoError(t, err)
	assert.NotContains(t, hitIDs(hits), "c1-p2", "offline, no shared word, no hit")
	for _, h := range hits {
		assert.NotEqual(t, store.HitBatch, h.Kind)
	}

	var w warnings
	hits, err = s.Search(ctx, paraphraseQuestion, store.SearchOptions{Embedder: srv.Embedder(t, "synonyms-v1"), Warn: w.add, Limit: 3})
	require.NoError(t, err)
	assert.Empty(t, w.list())
	require.Len(t, hits, 2, "the answer and its batch; nothing unrelated is similar at all: %v", hitIDs(hits))
	assert.Equal(t, "c1-p2", hits[0].ID, "the closer paraphrase first")
	m, b := hits[0], hits[1]
	assert.Equal(t, store.HitMessage, m.Kind)
	assert.Equal(t, "c1", m.ConversationID)
	assert.Equal(t, "assistant", m.Role)
	assert.Equal(t, answer, m.Text)
	assert.Equal(t, answer, m.Snippet, "no query word to show: the text's beginning")
	assert.True(t, base.Add(time.Minute).Equal(m.Start) && m.Start.Equal(m.End))
	assert.Equal(t, "op-c1", m.OperationID)
	assert.Equal(t, 0, m.LexicalRank)
	assert.Equal(t, 1, m.VectorRank)
	assert.Greater(t, m.Similarity, b.Similarity)
	assert.InDelta(t, 1.0/(store.RRFK+1), m.Score, 1e-12, "reciprocal rank fusion, k = 60")

	assert.Equal(t, store.HitBatch, b.Kind)
	assert.Equal(t, summary, b.Text)
	require.NotNil(t, b.Batch)
	assert.Equal(t, []string{"c1-p2"}, b.Batch.SourceMessageIDs)
	assert.True(t, base.Equal(b.Start) && base.Add(3*time.Minute).Equal(b.End))
	assert.Equal(t, 2, b.VectorRank)
	assert.InDelta(t, 1.0/(store.RRFK+2), b.Score, 1e-12)
	r, err := store.Read(ctx, s, "", b.ID)
	require.NoError(t, err, "a vector hit reads back by id")
	assert.Equal(t, store.HitBatch, r.Kind)

	// A question sharing words with a turn and meaning with another gets both.
	hits, err = s.Search(ctx, "birthday car repair", store.SearchOptions{Embedder: srv.Embedder(t, "synonyms-v1")})
	require.NoError(t, err)
	assert.Subset(t, hitIDs(hits), []string{"c1-p1", "c1-p2", b.ID})
}

// testSemanticFusionOrder: fused scores are the sum of 1/(60 + rank) over
// the two rankings, the list is in score order, ties go to the more
// recent, and the same search gives the same list every time.
func testSemanticFusionOrder(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	srv := embeddingstest.NewServer(t)
	e := srv.Embedder(t, "synonyms-v1")
	paraphraseArchive(t, s, "c1")
	recallAs(t, s, "c1", "op2", []store.Message{
		msg("c1", "f1", "user", "The car needs a repair before the trip.", 10),
		msg("c1", "f2", "user", "Postgres crashed during the release.", 11),
		msg("c1", "f3", "user", "Car wash on Monday.", 12),
	}, nil)
	opts := store.SearchOptions{Embedder: e, Limit: 10}
	first, err := s.Search(ctx, "car repair", opts)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(first), 4)
	assert.Equal(t, "f1", first[0].ID, "first lexically, second by meaning: first fused")
	assert.Equal(t, 1, first[0].LexicalRank)
	assert.Equal(t, 2, first[0].VectorRank)
	assert.Contains(t, hitIDs(first), "c1-p2", "\"sedan … repairs\" first by meaning")
	for i, h := range first {
		want := 0.0
		if h.LexicalRank > 0 {
			want += 1 / float64(store.RRFK+h.LexicalRank)
		}
		if h.VectorRank > 0 {
			want += 1 / float64(store.RRFK+h.VectorRank)
		}
		assert.InDelta(t, want, h.Score, 1e-12, "hit %d %s", i, h.ID)
		assert.True(t, h.LexicalRank > 0 || h.VectorRank > 0)
		if i > 0 {
			prev := first[i-1]
			assert.True(t, prev.Score > h.Score || (prev.Score == h.Score && !prev.End.Before(h.End)),
				"hit %d (%s) out of order after %s", i, h.ID, prev.ID)
		}
	}
	assert.NotContains(t, hitIDs(first), "f2", "neither a shared word nor a shared meaning")
	for i := 0; i < 3; i++ {
		again, err := s.Search(ctx, "car repair", opts)
		require.NoError(t, err)
		require.Equal(t, hitIDs(first), hitIDs(again))
		for j := range again {
			assert.Equal(t, first[j].Score, again[j].Score)
		}
	}

	// Identical texts tie in both rankings: the more recent first; the
	// older of two identical messages is folded into the newer one (as
	// the lexical search folds it), the batches are two places.
	text := "the narwhal plan"
	recallAs(t, s, "c2", "op3", []store.Message{msg("c2", "old", "user", text, 0), msg("c2", "new", "user", text, 30)}, nil,
		batchWrite("c2", "op3", text, base, base.Add(10*time.Minute), "old"),
		batchWrite("c2", "op3", text, base.Add(40*time.Minute), base.Add(50*time.Minute), "new"))
	hits, err := s.Search(ctx, "narwhal", store.SearchOptions{Embedder: e, ConversationID: "c2"})
	require.NoError(t, err)
	require.Len(t, hits, 3)
	want := []time.Time{base.Add(50 * time.Minute), base.Add(30 * time.Minute), base.Add(10 * time.Minute)}
	for i, h := range hits {
		assert.True(t, want[i].Equal(h.End), "hit %d (%s %s) ends %v, want %v", i, h.Kind, h.ID, h.End, want[i])
		assert.Equal(t, hits[0].Score, h.Score)
		assert.Equal(t, 1, h.LexicalRank)
		assert.Equal(t, 1, h.VectorRank)
	}
}

// testSemanticProviderFailure: a failing embeddings server loses nothing
// and fails nothing: embedding after a commit reports the error and
// changes nothing, search answers the lexical ranking with a warning, and
// once the server is back the archive becomes searchable by meaning.
func testSemanticProviderFailure(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	srv := embeddingstest.NewServer(t)
	e := srv.Embedder(t, "synonyms-v1")
	srv.Fail(-1, 500, "")
	paraphraseArchive(t, s, "c1")
	before := dump(t, s)
	_, err := store.EmbedMissing(ctx, s, e, "c1")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "HTTP 500")
	assert.Contains(t, err.Error(), "openai")
	assert.Equal(t, before, dump(t, s), "a failed embedding writes nothing")
	for _, id := range []string{"c1-p1", "c1-p2", "c1-p3", "c1-p4"} {
		_, err := s.Recall(ctx, "c1", id)
		assert.NoError(t, err, "message %s is in recall storage", id)
	}

	for _, q := range []string{"birthday report", paraphraseQuestion} {
		lexical, err := s.Search(ctx, q, store.SearchOptions{})
		require.NoError(t, err)
		var w warnings
		hits, err := s.Search(ctx, q, store.SearchOptions{Embedder: e, Warn: w.add})
		require.NoError(t, err, "a failing provider never fails a search")
		assert.Equal(t, lexical, hits, "query %q: exactly the lexical ranking", q)
		require.Len(t, w.list(), 1)
		assert.Contains(t, w.list()[0].Error(), "lexical ranking only")
		assert.Contains(t, w.list()[0].Error(), "HTTP 500")
	}

	// The query embeds, the backfill fails: ranked by the vectors stored so
	// far (none), with a warning.
	srv.Heal()
	srv.FailIf(func(texts []string) bool { return len(texts) > 1 }, 503)
	var w warnings
	hits, err := s.Search(ctx, "birthday", store.SearchOptions{Embedder: e, Warn: w.add})
	require.NoError(t, err)
	assert.Equal(t, []string{"c1-p1"}, hitIDs(hits))
	require.Len(t, w.list(), 1)
	assert.Contains(t, w.list()[0].Error(), "not embedded yet")

	srv.Heal()
	w = warnings{}
	hits, err = s.Search(ctx, paraphraseQuestion, store.SearchOptions{Embedder: e, Warn: w.add})
	require.NoError(t, err)
	assert.Empty(t, w.list())
	require.NotEmpty(t, hits)
	assert.Equal(t, "c1-p2", hits[0].ID, "healed: found by meaning")
}

// testSemanticLazyBackfill: an archive compacted without embeddings is
// embedded by the first search with an embedder, once; later documents
// are embedded by EmbedMissing after their commit, or by the next search.
func testSemanticLazyBackfill(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	srv := embeddingstest.NewServer(t)
	e := srv.Embedder(t, "synonyms-v1")
	paraphraseArchive(t, s, "c1")
	assert.Empty(t, srv.Requests(), "committing never calls the provider")

	hits, err := s.Search(ctx, paraphraseQuestion, store.SearchOptions{Embedder: e})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "c1-p2", hits[0].ID)
	texts := srv.Texts()
	assert.Equal(t, paraphraseQuestion, texts[0], "the query first")
	assert.Len(t, texts, 1+5, "then the 4 messages and the batch")
	assert.Contains(t, texts, "Dana's automobile went to the garage for an overhaul.", "a batch is embedded without its metadata line")

	srv.Reset()
	_, err = s.Search(ctx, paraphraseQuestion, store.SearchOptions{Embedder: e})
	require.NoError(t, err)
	assert.Equal(t, [][]string{{paraphraseQuestion}}, srv.Requests(), "embedded once: the next search embeds the query only")

	srv.Reset()
	recallAs(t, s, "c1", "op2", []store.Message{msg("c1", "n1", "user", "The vet saw the puppy today.", 20)}, nil)
	n, err := store.EmbedMissing(ctx, s, e, "c1")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, [][]string{{"The vet saw the puppy today."}}, srv.Requests(), "after a commit, only what it archived")
	n, err = store.EmbedMissing(ctx, s, e, "c1")
	require.NoError(t, err)
	assert.Zero(t, n)
	hits, err = s.Search(ctx, "how is my dog", store.SearchOptions{Embedder: e})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "n1", hits[0].ID)
}

// testSemanticOtherModelIgnored: vectors are per model: another model's
// (or another dimension's) vectors are neither ranked nor counted as
// present.
func testSemanticOtherModelIgnored(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	vi := vectorIndex(t, s)
	srv := embeddingstest.NewServer(t)
	paraphraseArchive(t, s, "c1")
	eA := srv.Embedder(t, "model-a")
	n, err := store.EmbedMissing(ctx, s, eA, "")
	require.NoError(t, err)
	assert.Equal(t, 5, n)

	// Poison model A: the unrelated report turn gets exactly model B's
	// vector of the question.
	q := embeddingstest.Vector("model-b", paraphraseQuestion, embeddingstest.DefaultDims)
	stored, err := vi.PutVectors(ctx, "model-a", []store.DocVector{{DocRef: store.DocRef{Kind: store.HitMessage, ConversationID: "c1", ID: "c1-p3"}, Vector: q}})
	require.NoError(t, err)
	assert.Equal(t, 1, stored)
	// A model-b vector of another length for the birthday turn: not
	// comparable, so not present.
	_, err = vi.PutVectors(ctx, "model-b", []store.DocVector{{DocRef: store.DocRef{Kind: store.HitMessage, ConversationID: "c1", ID: "c1-p1"}, Vector: q[:8]}})
	require.NoError(t, err)

	srv.Reset()
	hits, err := s.Search(ctx, paraphraseQuestion, store.SearchOptions{Embedder: srv.Embedder(t, "model-b")})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "c1-p2", hits[0].ID, "model A's vectors play no part")
	assert.NotContains(t, hitIDs(hits), "c1-p3")
	assert.Len(t, srv.Texts(), 1+5, "model B embeds everything itself, the 8-dimension vector included")

	near, err := vi.NearestVectors(ctx, "c1", "model-a", q, 10)
	require.NoError(t, err)
	require.NotEmpty(t, near)
	assert.Equal(t, "c1-p3", near[0].ID, "model A still has its own vectors")
	assert.InDelta(t, 1.0, near[0].Similarity, 1e-5)
}

// testSemanticConversationFilter: a search of one conversation ranks and
// embeds that conversation's documents only.
func testSemanticConversationFilter(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	vi := vectorIndex(t, s)
	srv := embeddingstest.NewServer(t)
	e := srv.Embedder(t, "synonyms-v1")
	paraphraseArchive(t, s, "c1")
	paraphraseArchive(t, s, "c2")
	hits, err := s.Search(ctx, paraphraseQuestion, store.SearchOptions{Embedder: e, ConversationID: "c2"})
	require.NoError(t, err)
	require.Len(t, hits, 2)
	for _, h := range hits {
		assert.Equal(t, "c2", h.ConversationID)
	}
	assert.Equal(t, "c2-p2", hits[0].ID)
	assert.Len(t, srv.Texts(), 1+5, "c2's documents only")
	missing, err := vi.MissingVectors(ctx, "c1", e.Model(), 0, 100)
	require.NoError(t, err)
	assert.Len(t, missing, 5, "c1 is not embedded by a search of c2")
	missing, err = vi.MissingVectors(ctx, "c2", e.Model(), 0, 100)
	require.NoError(t, err)
	assert.Empty(t, missing)

	hits, err = s.Search(ctx, paraphraseQuestion, store.SearchOptions{Embedder: e})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"c1-p2", "c2-p2"}, hitIDs(hits)[:2], "no filter: both conversations")
}

// testSemanticVectorsFollowDocuments: superseded clip-archives are never
// embedded; a block deleted by a compaction takes its vectors along.
func testSemanticVectorsFollowDocuments(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	vi := vectorIndex(t, s)
	srv := embeddingstest.NewServer(t)
	e := srv.Embedder(t, "synonyms-v1")
	seed(t, s, "c1", 4)
	archive := func(id string) core.InsertMessage {
		ca := clipArchive("c1", id)
		ca.Content = "[Context Summary — 2 messages compressed across 1 compaction cycle(s)]\n\n[Batch 1 — depth 0]\nThe automobile was repaired."
		return ca
	}
	w1 := batchWrite("c1", "op1", "The automobile was repaired.", base, base, "c1-m1")
	require.NoError(t, s.Commit(ctx, &core.Commit{ConversationID: "c1", OperationID: "op1", RemoveMessageIDs: []string{"c1-m1"},
		Insert: archive("ca1"), ArchiveWrites: []core.ArchiveWrite{w1}}))
	_, err := store.EmbedMissing(ctx, s, e, "c1")
	require.NoError(t, err)
	blocks, err := s.ListBlocks(ctx, "archival", core.BatchLabelPrefix("c1"))
	require.NoError(t, err)
	require.Len(t, blocks, 1)
	old := blocks[0].ID
	// A re-summarization: the old batch is deleted, the clip-archive superseded.
	require.NoError(t, s.Commit(ctx, &core.Commit{ConversationID: "c1", OperationID: "op2", RemoveMessageIDs: []string{"ca1", "c1-m2"},
		Insert: archive("ca2"), ArchiveDeletes: []string{old},
		ArchiveWrites: []core.ArchiveWrite{batchWrite("c1", "op2", "The car was fixed, then sold.", base, base.Add(time.Minute), "c1-m1", "c1-m2")}}))
	_, err = store.EmbedMissing(ctx, s, e, "c1")
	require.NoError(t, err)
	for _, text := range srv.Texts() {
		assert.False(t, strings.HasPrefix(text, "[Context Summary"), "a clip-archive is never embedded: %q", text)
	}
	near, err := vi.NearestVectors(ctx, "c1", e.Model(), embeddingstest.Vector(e.Model(), "automobile repaired", embeddingstest.DefaultDims), 10)
	require.NoError(t, err)
	var ids []string
	for _, n := range near {
		ids = append(ids, n.ID)
	}
	assert.NotContains(t, ids, old, "the deleted block's vector went with it")
	assert.NotContains(t, ids, "ca1")
	require.NotEmpty(t, ids)
	hits, err := s.Search(ctx, "Context Summary compaction automobile", store.SearchOptions{Embedder: e})
	require.NoError(t, err)
	for _, h := range hits {
		assert.NotContains(t, []string{"ca1", "ca2", old}, h.ID)
	}
	// Vectors for documents that do not exist are not stored.
	n, err := vi.PutVectors(ctx, e.Model(), []store.DocVector{{DocRef: store.DocRef{Kind: store.HitBatch, ConversationID: "c1", ID: old}, Vector: []float32{1, 0}},
		{DocRef: store.DocRef{Kind: store.HitMessage, ConversationID: "c1", ID: "nobody"}, Vector: []float32{1, 0}}})
	require.NoError(t, err)
	assert.Zero(t, n)
}

// testSemanticHostileQueries: with an embedder too, no query is an error.
func testSemanticHostileQueries(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	srv := embeddingstest.NewServer(t)
	e := srv.Embedder(t, "synonyms-v1")
	paraphraseArchive(t, s, "c1")
	for _, q := range HostileQueries {
		var w warnings
		hits, err := s.Search(ctx, q, store.SearchOptions{Embedder: e, Warn: w.add})
		require.NoError(t, err, "query %.80q", q)
		assert.Empty(t, w.list(), "query %.80q", q)
		for _, h := range hits {
			assert.NotEmpty(t, h.ID, "query %.80q", q)
		}
	}
	assert.NotContains(t, srv.Texts(), "", "nothing empty is sent")
}
