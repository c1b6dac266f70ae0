package main

import (
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// deadAddr is a local address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// requireRedacted checks that out holds none of the secrets and shows
// where they were masked.
func requireRedacted(t *testing.T, out string, what string) {
	t.Helper()
	for _, secret := range []string{"hunter2", "sk-query-secret"} {
		require.NotContains(t, out, secret, "%s:\n%s", what, out)
	}
	require.Contains(t, out, "xxxxx", "%s:\n%s", what, out)
}

// A password or a key in the embeddings or LLM base URL is never printed:
// not in warnings, log lines, errors, nor --json's report.
func TestSecretsInURLsAreNotPrinted(t *testing.T) {
	dir := t.TempDir()
	conv := carConversation(t, dir)
	env := []string{"OPENAI_API_KEY=sk-env"}
	embURL := "http://clipfold:hunter2@" + deadAddr(t) + "/v1?api_key=sk-query-secret"
	emb := []string{"--embeddings-provider", "openai", "--embeddings-model", "m", "--embeddings-base-url", embURL}

	// compact: the embeddings failure is a warning and report.embeddings.error.
	r := runCLI(t, dir, env, append([]string{"compact", conv, "--keep-recent", "4", "--json", "--quiet"}, emb...)...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "not all embedded yet")
	requireRedacted(t, r.stderr, "compact's warning")
	e := gjson.Get(r.stdout, "report.embeddings.error").String()
	require.NotEmpty(t, e, r.stdout)
	requireRedacted(t, e, "report.embeddings.error")

	// search: the fallback to lexical search warns.
	r = runCLI(t, dir, env, append([]string{"search", "groceries", "--json"}, emb...)...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "lexical ranking only")
	requireRedacted(t, r.stderr, "search's warning")

	// run: the log line and the report.
	dir2 := t.TempDir()
	conv2 := carConversation(t, dir2)
	r = runCLI(t, dir2, env, append([]string{"run", conv2, "--model-max-tokens", "300", "--json"}, emb...)...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "embeddings failed")
	requireRedacted(t, r.stderr, "run's log")
	requireRedacted(t, gjson.Get(r.stdout, "embeddings.error").String(), "run's report")

	// A base URL that is refused is named, masked.
	r = runCLI(t, dir, env, "search", "x", "--embeddings-provider", "ollama", "--embeddings-model", "m",
		"--embeddings-base-url", "ftp://clipfold:hunter2@h/?key=sk-query-secret")
	require.Equal(t, 2, r.code, r.stderr)
	requireRedacted(t, r.stderr, "usage error")
	r = runCLI(t, dir, env, "compact", conv, "--provider", "ollama", "--base-url", "ftp://clipfold:hunter2@h/?key=sk-query-secret")
	require.Equal(t, 2, r.code, r.stderr)
	requireRedacted(t, r.stderr, "usage error")

	// The LLM: an unreachable server with credentials in its URL.
	r = runCLI(t, dir, env, "compact", abs(t, filepath.Join(cliData, "openai.json")), "--provider", "openai",
		"--base-url", "http://clipfold:hunter2@"+deadAddr(t)+"/v1", "--model", "m",
		"--set", "backoff_base_ms=1", "--set", "compaction_max_retries=0")
	require.Equal(t, 1, r.code, r.stderr)
	assert.Contains(t, r.stderr, "cannot reach")
	requireRedacted(t, r.stderr, "LLM failure")
	assert.False(t, strings.Contains(r.stdout, "hunter2"))
}
