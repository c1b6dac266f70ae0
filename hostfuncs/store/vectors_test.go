package store_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/hostfuncs/embeddings/embeddingstest"
	"github.com/clipfold/clipfold/hostfuncs/store"
)

func TestEncodeVector(t *testing.T) {
	b := store.EncodeVector([]float32{3, 4})
	assert.Equal(t, []byte{0x9a, 0x99, 0x19, 0x3f, 0xcd, 0xcc, 0x4c, 0x3f}, b, "little-endian float32 at unit length: 0.6, 0.8")
	v, err := store.DecodeVector(b)
	require.NoError(t, err)
	assert.InDeltaSlice(t, []float32{0.6, 0.8}, v, 1e-7)
	zero, err := store.DecodeVector(store.EncodeVector([]float32{0, 0, 0}))
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 0, 0}, zero, "a zero vector stays zero")
	_, err = store.DecodeVector([]byte{1, 2, 3})
	assert.ErrorContains(t, err, "3 bytes")
}

func TestRanker(t *testing.T) {
	r := store.NewRanker([]float32{1, 0}, 3)
	add := func(id string, v ...float32) {
		r.Add(store.DocRef{Kind: store.HitMessage, ID: id}, store.EncodeVector(v))
	}
	add("same", 2, 0)
	add("close", 1, 0.2)
	add("far", 0.1, 1)
	add("orthogonal", 0, 1)
	add("opposite", -1, 0)
	add("wrong-dims", 1, 0, 0)
	add("tie-a", 1, 0.2)
	r.AddDecoded(store.DocRef{Kind: store.HitBatch, ID: "tie-b"}, []float32{float32(1 / math.Sqrt(1.04)), float32(0.2 / math.Sqrt(1.04))})
	got := r.Result()
	var ids []string
	for _, n := range got {
		ids = append(ids, n.ID)
	}
	assert.Equal(t, []string{"same", "tie-b", "tie-a"}, ids, "best first, k kept; equal similarity: the batch, then the greater id")
	assert.InDelta(t, 1.0, got[0].Similarity, 1e-6)

	// Many vectors: the best k survive the trimming.
	r = store.NewRanker([]float32{1, 0}, 5)
	for i := 0; i < 1000; i++ {
		r.Add(store.DocRef{Kind: store.HitMessage, ID: fmt.Sprintf("m%04d", i)}, store.EncodeVector([]float32{float32(i), 1000}))
	}
	ids = nil
	for _, n := range r.Result() {
		ids = append(ids, n.ID)
	}
	assert.Equal(t, []string{"m0999", "m0998", "m0997", "m0996", "m0995"}, ids)
}

func TestRankerZero(t *testing.T) {
	r := store.NewRanker([]float32{1}, 0)
	r.AddDecoded(store.DocRef{Kind: store.HitMessage, ID: "a"}, []float32{1})
	assert.Empty(t, r.Result())
}

func TestLeadSnippet(t *testing.T) {
	assert.Equal(t, "a short text", store.LeadSnippet(" a  short\ntext "))
	long := strings.Repeat("word ", 40)
	s := store.LeadSnippet(long)
	assert.True(t, strings.HasSuffix(s, " …"))
	assert.Len(t, strings.Fields(s), 33)
}

// notVectors is a store.Store that keeps no vectors.
type notVectors struct{ store.Store }

func TestEmbedMissingRefuses(t *testing.T) {
	srv := embeddingstest.NewServer(t)
	_, err := store.EmbedMissing(context.Background(), notVectors{}, srv.Embedder(t, "m"), "")
	assert.ErrorContains(t, err, "keeps no vectors")
	assert.Empty(t, srv.Requests())
}
