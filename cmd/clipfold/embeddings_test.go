package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/clipfold/clipfold/hostfuncs/embeddings/embeddingstest"
)

// carConversation writes a conversation whose early turn says where the
// car is, in words a later question will not use.
func carConversation(t *testing.T, dir string) string {
	t.Helper()
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	var msgs []map[string]any
	for i := 0; i < 24; i++ {
		role, text := "user", fmt.Sprintf("Turn %d: anything else about the weekly groceries list?", i)
		if i%2 == 1 {
			role, text = "assistant", fmt.Sprintf("Noted for turn %d: eggs, bread and tea.", i)
		}
		if i == 3 {
			text = "The sedan is at the workshop for repairs until Thursday."
		}
		msgs = append(msgs, map[string]any{"id": fmt.Sprintf("car-%02d", i), "conversation_id": "errands", "role": role,
			"content": text, "created_at": start.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)})
	}
	b, err := json.Marshal(msgs)
	require.NoError(t, err)
	p := filepath.Join(dir, "errands.json")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

const carQuestion = "When will my car be fixed?"

// TestEmbeddings: compact embeds what it archived; search with an
// embeddings provider finds a paraphrase by meaning; a config file's
// [embeddings] section works as the flags do; a failing provider is a
// warning, never a failure.
func TestEmbeddings(t *testing.T) {
	srv := embeddingstest.NewServer(t)
	dir := t.TempDir()
	conv := carConversation(t, dir)
	embFlags := []string{"--embeddings-provider", "openai", "--embeddings-model", "synonyms-v1", "--embeddings-base-url", srv.URL}

	r := ok(t, dir, append([]string{"compact", conv, "--keep-recent", "4", "--json", "--quiet"}, embFlags...)...)
	require.Empty(t, r.stderr)
	emb := gjson.Get(r.stdout, "report.embeddings")
	require.True(t, emb.Exists(), r.stdout)
	assert.Equal(t, "openai", emb.Get("provider").String())
	assert.Equal(t, "synonyms-v1", emb.Get("model").String())
	compressed := gjson.Get(r.stdout, "messages_compressed").Int()
	require.Positive(t, compressed)
	assert.Equal(t, compressed+gjson.Get(r.stdout, "batches_created").Int(), emb.Get("embedded").Int(), "every archived message and batch")
	assert.False(t, emb.Get("error").Exists())

	// By words alone the question finds nothing about the car.
	r = ok(t, dir, "search", carQuestion, "--json")
	for _, h := range gjson.Get(r.stdout, "hits").Array() {
		assert.NotEqual(t, "car-03", h.Get("id").String())
	}
	// By meaning it does.
	srv.Reset()
	r = ok(t, dir, append([]string{"search", carQuestion, "--json", "--limit", "3"}, embFlags...)...)
	require.Empty(t, r.stderr)
	hits := gjson.Get(r.stdout, "hits").Array()
	require.NotEmpty(t, hits, r.stdout)
	var found bool
	for _, h := range hits[:min(2, len(hits))] {
		found = found || h.Get("id").String() == "car-03" || strings.Contains(h.Get("batch.source_message_ids").Raw, "car-03")
	}
	assert.True(t, found, "the car turn or its batch first: %s", r.stdout)
	assert.Positive(t, hits[0].Get("vector_rank").Int())
	assert.Positive(t, hits[0].Get("similarity").Float())
	assert.Equal(t, [][]string{{carQuestion}}, srv.Requests(), "already embedded by compact: only the query")
	r = ok(t, dir, append([]string{"search", carQuestion, "--limit", "3"}, embFlags...)...)
	assert.Contains(t, r.stdout, "meaning #1, similarity")

	// The same from a config file's [embeddings] section.
	cfg := filepath.Join(dir, "config.toml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf("[embeddings]\nprovider = \"openai\"\nmodel = \"synonyms-v1\"\nbase_url = %q\n", srv.URL)), 0o644))
	r = ok(t, dir, "search", carQuestion, "--json", "--limit", "3", "--config", cfg)
	require.Empty(t, r.stderr, "no [summarization] warning for a file with [embeddings] only")
	assert.Equal(t, gjson.Get(r.stdout, "hits.0.id").String(), hits[0].Get("id").String())

	// A failing provider: search answers by words and warns; compact
	// succeeds and warns; nothing is lost.
	srv.Fail(-1, 503, `{"error":{"message":"The engine is currently overloaded","type":"server_error"}}`)
	lexical := ok(t, dir, "search", "groceries eggs", "--json")
	r = ok(t, dir, append([]string{"search", "groceries eggs", "--json"}, embFlags...)...)
	assert.Contains(t, r.stderr, "lexical ranking only")
	assert.Contains(t, r.stderr, "HTTP 503")
	assert.Equal(t, gjson.Get(lexical.stdout, "hits.#.id").Raw, gjson.Get(r.stdout, "hits.#.id").Raw)

	dir2 := t.TempDir()
	conv2 := carConversation(t, dir2)
	r = ok(t, dir2, append([]string{"compact", conv2, "--keep-recent", "4", "--json", "--quiet"}, embFlags...)...)
	assert.Contains(t, r.stderr, "not all embedded yet")
	assert.False(t, gjson.Get(r.stdout, "failed").Bool())
	assert.Contains(t, gjson.Get(r.stdout, "report.embeddings.error").String(), "HTTP 503")
	r = ok(t, dir2, "recall", "car-03")
	assert.Contains(t, r.stdout, "The sedan is at the workshop")
	// Healed, the first search embeds what compact could not.
	srv.Heal()
	srv.Reset()
	r = ok(t, dir2, append([]string{"search", carQuestion, "--json", "--limit", "3"}, embFlags...)...)
	require.Empty(t, r.stderr)
	assert.Greater(t, len(srv.Texts()), 1, "the archive was embedded by the search")
	assert.Positive(t, gjson.Get(r.stdout, "hits.0.vector_rank").Int())
}

func TestEmbeddingsRun(t *testing.T) {
	srv := embeddingstest.NewServer(t)
	dir := t.TempDir()
	conv := carConversation(t, dir)
	r := ok(t, dir, "run", conv, "--model-max-tokens", "300", "--json", "--quiet", "--embeddings-provider", "ollama",
		"--embeddings-model", "synonyms-v1", "--embeddings-base-url", srv.URL)
	require.Positive(t, gjson.Get(r.stdout, "compactions").Int(), r.stdout)
	assert.Positive(t, gjson.Get(r.stdout, "embeddings.embedded").Int(), r.stdout)
	assert.Equal(t, "ollama", gjson.Get(r.stdout, "embeddings.provider").String())
	assert.False(t, gjson.Get(r.stdout, "embeddings.error").Exists())
}

func TestEmbeddingsErrors(t *testing.T) {
	dir := t.TempDir()
	conv := carConversation(t, dir)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--embeddings-provider", "cohere", "--embeddings-model", "m"}, `unknown embeddings provider "cohere": valid providers are openai, ollama`},
		{[]string{"--embeddings-provider", "ollama"}, "embeddings provider ollama needs a model: --embeddings-model"},
		{[]string{"--embeddings-model", "m"}, "no provider: add --embeddings-provider"},
		{[]string{"--embeddings-provider", "ollama", "--embeddings-model", "m", "--embeddings-base-url", "localhost:11434"}, `--embeddings-base-url "localhost:11434": must be an http:// or https:// URL`},
	}
	for _, tc := range cases {
		for _, cmd := range [][]string{{"compact", conv}, {"search", "car"}} {
			r := runCLI(t, dir, nil, append(cmd, tc.args...)...)
			require.Equal(t, 2, r.code, "%v %v: %s", cmd, tc.args, r.stderr)
			assert.Contains(t, r.stderr, tc.want)
		}
	}
	r := runCLI(t, dir, nil, "compact", conv, "--embeddings-provider", "openai", "--embeddings-model", "text-embedding-3-small")
	require.Equal(t, 1, r.code, r.stderr)
	assert.Contains(t, r.stderr, "embeddings provider openai needs an API key: set the environment variable OPENAI_API_KEY")
	require.NoFileExists(t, filepath.Join(dir, "clipfold.db"), "refused before the archive is touched")

	bad := filepath.Join(dir, "bad.toml")
	require.NoError(t, os.WriteFile(bad, []byte("[embeddings]\nprovider = \"ollama\"\nmodel = 3\n"), 0o644))
	r = runCLI(t, dir, nil, "compact", conv, "--config", bad)
	require.Equal(t, 2, r.code, r.stderr)
	assert.Contains(t, r.stderr, "[embeddings] model: must be a string")
	require.NoError(t, os.WriteFile(bad, []byte("[embeddings]\nprovider = \"ollama\"\nmodel = \"m\"\ndimensions = 3\n"), 0o644))
	r = runCLI(t, dir, nil, "compact", conv, "--config", bad, "--dry-run", "--quiet")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, `unknown key "[embeddings] dimensions" ignored`)
}
