package main

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/clipfold/clipfold"
	"github.com/clipfold/clipfold/hostfuncs/store/sqlite"
	"github.com/clipfold/clipfold/internal/fakellm"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// summarizer serves an OpenAI-compatible fake summarizer and returns the
// flags that point the command at it.
func summarizer(t *testing.T, srv *fakellm.Server) []string {
	t.Helper()
	h := httptest.NewServer(srv)
	t.Cleanup(h.Close)
	return []string{"--provider", "openai-compat", "--base-url", h.URL, "--model", "m", "--api-key-env", "FAKE_KEY"}
}

// With a model summarizing, compact sizes chunks to what one request
// holds (max_chunk_tokens "auto"): the bundled 884-message session in one
// summarization call of a 1.0 s summarizer, not 44 calls one after the
// other. --chunk-size brings the old chunks back.
func TestCompactChunksToTheSummarizersInput(t *testing.T) {
	dir := t.TempDir()
	session, err := filepath.Abs(filepath.Join("..", "..", "testdata", "conversations", "debugging-session.json"))
	require.NoError(t, err)
	srv := &fakellm.Server{Latency: time.Second}
	args := append([]string{"compact", session, "--json", "--quiet", "--db", filepath.Join(dir, "a.db")}, summarizer(t, srv)...)
	start := time.Now()
	r := runCLI(t, dir, []string{"FAKE_KEY=k"}, args...)
	took := time.Since(start)
	require.Equal(t, 0, r.code, r.stderr)
	res := gjson.Parse(r.stdout)
	require.False(t, res.Get("failed").Bool(), r.stdout)
	require.Equal(t, int64(878), res.Get("messages_compressed").Int())
	require.Equal(t, int64(1), res.Get("llm_calls").Int())
	require.Equal(t, 1, srv.Calls())
	require.Less(t, took, 5*time.Second, "the session compacted within 5 s")

	byCount := &fakellm.Server{}
	args = append([]string{"compact", session, "--json", "--quiet", "--chunk-size", "20", "--db", filepath.Join(dir, "b.db")}, summarizer(t, byCount)...)
	r = runCLI(t, dir, []string{"FAKE_KEY=k"}, args...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Greater(t, gjson.Get(r.stdout, "llm_calls").Int(), int64(40))
}

// run --ahead: compactions start in the background over prepare_at of
// the limit and are applied by a later model call; no model call is sent
// over the limit and nothing is lost.
func TestRunAhead(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "loop.json")
	require.NoError(t, os.WriteFile(file, toolLoopBody(40, nil), 0o644))
	srv := &fakellm.Server{Latency: 20 * time.Millisecond}
	args := append([]string{"run", file, "--model-max-tokens", "3000", "--ahead", "--json", "--quiet"}, summarizer(t, srv)...)
	r := runCLI(t, dir, []string{"FAKE_KEY=k"}, args...)
	require.Equal(t, 0, r.code, r.stderr)
	rep := gjson.Parse(r.stdout)
	ahead := rep.Get("ahead")
	require.True(t, ahead.Exists(), r.stdout)
	require.Greater(t, ahead.Get("started").Int(), int64(0), r.stdout)
	require.Equal(t, rep.Get("compactions").Int(), ahead.Get("applied").Int()+ahead.Get("at_limit").Int(), r.stdout)
	require.GreaterOrEqual(t, rep.Get("compactions").Int(), int64(3), r.stdout)
	require.Zero(t, rep.Get("compactions_failed").Int(), r.stdout)
	require.Zero(t, rep.Get("calls_over_limit").Int(), r.stdout)
	require.Equal(t, rep.Get("model_calls").Int(), ahead.Get("wait_ms.n").Int())
	// Every summarizer call is counted, but one a compaction still under
	// way at the end had not answered yet.
	require.InDelta(t, srv.Calls(), rep.Get("llm_calls").Int(), 1)

	// Every message of the file is active or in recall storage.
	st, err := sqlite.Open(filepath.Join(dir, "clipfold.db"))
	require.NoError(t, err)
	defer st.Close()
	conv := rep.Get("conversation_id").String()
	ctx := context.Background()
	active, err := st.ActiveMessages(ctx, conv)
	require.NoError(t, err)
	require.Equal(t, int64(len(active)), rep.Get("final_messages").Int())
	isActive := map[string]bool{}
	for _, m := range active {
		isActive[m.ID] = true
	}
	decoded, err := clipfold.DecodeHistory(conv, rawMessages(t, file))
	require.NoError(t, err)
	for _, m := range decoded {
		if !isActive[m.ID] {
			_, err := st.Recall(ctx, conv, m.ID)
			require.NoError(t, err, "message %s is neither active nor in recall", m.ID)
		}
	}
}
