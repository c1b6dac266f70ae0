package clipfold_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold"
	"github.com/clipfold/clipfold/hostfuncs/embeddings"
	"github.com/clipfold/clipfold/hostfuncs/embeddings/embeddingstest"
	"github.com/clipfold/clipfold/hostfuncs/store"
)

// With an Embedder, what a compaction archived is embedded after it
// commits, and a paraphrased question (no word in common with the
// archived fact) finds it.
func TestCompressAndSearchWithEmbedder(t *testing.T) {
	ctx := context.Background()
	srv := embeddingstest.NewServer(t)
	c, err := clipfold.Open(ctx, clipfold.Options{Config: map[string]any{"keep_recent": 6}, Embedder: srv.Embedder(t, "synonyms-v1")})
	require.NoError(t, err)
	defer c.Close()
	res, err := c.Compress(ctx, "trip", exampleHistory(), nil)
	require.NoError(t, err)
	require.False(t, res.Failed)
	require.Positive(t, res.MessagesCompressed)
	assert.Empty(t, res.Warnings)
	embedded := len(srv.Texts())
	assert.GreaterOrEqual(t, embedded, res.MessagesCompressed, "the archived messages (and batches) were embedded after the commit")

	question := "Which automobile did we reserve?"
	lexical, err := c.Store().Search(ctx, question, store.SearchOptions{ConversationID: "trip", Limit: 3})
	require.NoError(t, err)
	assert.NotContains(t, ids(lexical), "m02", "no word in common")
	hits, err := c.Search(ctx, question, store.SearchOptions{ConversationID: "trip", Limit: 3})
	require.NoError(t, err)
	requireFact(t, hits)
	assert.Len(t, srv.Texts(), embedded+1, "the search embedded the query only")
}

// requireFact checks that the rental-car turn (m02), or a batch
// summarizing it, comes first, and the turn itself in the top 2.
func requireFact(t *testing.T, hits []store.Hit) {
	t.Helper()
	require.NotEmpty(t, hits)
	top := hits[0]
	if top.ID != "m02" {
		require.NotNil(t, top.Batch, "first hit %s: %v", top.ID, ids(hits))
		assert.Contains(t, top.Batch.SourceMessageIDs, "m02")
	}
	assert.Contains(t, ids(hits)[:min(2, len(hits))], "m02")
	assert.Positive(t, hits[0].VectorRank)
}

// A failing embeddings provider never fails a compaction nor loses a
// message: the result carries a warning, search answers lexically and
// logs why, and once the provider is back the archive is embedded by the
// next search.
func TestEmbedderFailureNeverFailsCompaction(t *testing.T) {
	ctx := context.Background()
	srv := embeddingstest.NewServer(t)
	srv.Fail(-1, 503, `{"error":{"message":"The engine is currently overloaded, please try again later","type":"server_error"}}`)
	var logs bytes.Buffer
	st, err := clipfold.Open(ctx, clipfold.Options{Config: map[string]any{"keep_recent": 6}, Embedder: srv.Embedder(t, "synonyms-v1"),
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	defer st.Close()
	history := exampleHistory()
	res, err := st.Compress(ctx, "trip", history, nil)
	require.NoError(t, err)
	require.False(t, res.Failed, "%s: %s", res.FailureCode, res.FailureMessage)
	require.Positive(t, res.MessagesCompressed)
	require.NotEmpty(t, res.Warnings)
	assert.Contains(t, strings.Join(res.Warnings, "\n"), "not embedded yet")
	assert.Contains(t, strings.Join(res.Warnings, "\n"), "HTTP 503")

	// Nothing lost: every message is active or in recall storage, exact.
	active, err := st.Store().ActiveMessages(ctx, "trip")
	require.NoError(t, err)
	live := map[string]bool{}
	for _, m := range active {
		live[m.ID] = true
	}
	for _, raw := range history {
		var m struct{ ID string }
		require.NoError(t, json.Unmarshal(raw, &m))
		if live[m.ID] {
			continue
		}
		r, err := st.Store().Recall(ctx, "trip", m.ID)
		require.NoError(t, err, "message %s is neither active nor in recall", m.ID)
		assert.JSONEq(t, string(raw), string(r.Raw))
	}

	lexical, err := st.Store().Search(ctx, "rental car pickup", store.SearchOptions{ConversationID: "trip"})
	require.NoError(t, err)
	logs.Reset()
	hits, err := st.Search(ctx, "rental car pickup", store.SearchOptions{ConversationID: "trip"})
	require.NoError(t, err)
	assert.Equal(t, ids(lexical), ids(hits), "degraded to the lexical ranking")
	assert.Contains(t, logs.String(), "lexical ranking only")

	srv.Heal()
	logs.Reset()
	hits, err = st.Search(ctx, "Which automobile did we reserve?", store.SearchOptions{ConversationID: "trip", Limit: 3})
	require.NoError(t, err)
	requireFact(t, hits) // healed: embedded lazily, found by meaning
	assert.Empty(t, logs.String())
}

func ids(hits []store.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

// An embeddings server that never answers delays nothing but the
// embedding itself (bounded by the embedder's timeout): the compaction is
// committed and reported, with a warning.
func TestEmbedderHangNeverFailsCompaction(t *testing.T) {
	ctx := context.Background()
	block := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-block }))
	defer hang.Close()
	defer close(block)
	e, err := embeddings.NewOpenAI(embeddings.Config{BaseURL: hang.URL, Model: "m", Timeout: 200 * time.Millisecond, MaxRetries: -1})
	require.NoError(t, err)
	c, err := clipfold.Open(ctx, clipfold.Options{Config: map[string]any{"keep_recent": 6}, Embedder: e})
	require.NoError(t, err)
	defer c.Close()
	res, err := c.Compress(ctx, "trip", exampleHistory(), nil)
	require.NoError(t, err)
	require.False(t, res.Failed)
	require.Positive(t, res.MessagesCompressed)
	assert.Contains(t, strings.Join(res.Warnings, "\n"), "timeout")
	active, err := c.Store().ActiveMessages(ctx, "trip")
	require.NoError(t, err)
	assert.Len(t, active, len(res.History), "committed")
}

// The plug-in's warnings reach Options.Logger (the Extism Go SDK drops
// log lines unless its level is set; the Compactor sets it).
func TestLoggerHearsPluginWarnings(t *testing.T) {
	ctx := context.Background()
	var logs bytes.Buffer
	st, err := clipfold.Open(ctx, clipfold.Options{Config: map[string]any{"keep_recent": 6, "no_such_key": 1},
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	defer st.Close()
	res, err := st.Compress(ctx, "trip", exampleHistory(), nil)
	require.NoError(t, err)
	require.False(t, res.Failed, "%s: %s", res.FailureCode, res.FailureMessage)
	assert.Contains(t, strings.Join(res.Warnings, "\n"), "no_such_key")
	assert.Contains(t, logs.String(), "no_such_key")
	assert.Contains(t, logs.String(), "level=WARN")
}
