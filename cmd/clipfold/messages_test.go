package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// What a newcomer reads: the messages of the command's rough edges.

// An unknown flag is called one, with the way to the command's help.
func TestUnknownFlag(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"compact", "-frobnicate", "x.json"},
		{"search", "q", "--frobnicate=1"},
	} {
		r := runCLI(t, dir, nil, args...)
		require.Equal(t, 2, r.code, r.stderr)
		require.Contains(t, r.stderr, "clipfold "+args[0]+": unknown flag -frobnicate\n", args)
		require.Contains(t, r.stderr, "Run 'clipfold "+args[0]+" --help' for usage.", args)
	}
	// Other flag errors keep the flag package's words.
	r := runCLI(t, dir, nil, "compact", "x.json", "--db")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "clipfold compact: flag needs an argument: -db\n")
	require.NotContains(t, r.stderr, "unknown flag")
}

// show prints the role the history holds: an Anthropic history's
// clip-archive is a user turn, shown as one, marked as the clip-archive.
func TestShowRoleAsStored(t *testing.T) {
	dir := t.TempDir()
	ok(t, dir, "compact", abs(t, filepath.Join(cliData, "anthropic.jsonl")), "--quiet")
	text := ok(t, dir, "show", "anthropic").stdout
	require.Regexp(t, `(?m)^#1 user clip_[0-9a-f]+  \S+  \(clip-archive\)$`, text)
	require.NotContains(t, text, "#1 system")
	require.Regexp(t, `(?m)^#2 assistant `, text)
	// A history in clipfold's own shape: its clip-archive is a system
	// message when a user turn follows; here the kept messages start with
	// the (pinned) system prompt and an assistant turn, so it is a user
	// turn, shown as one.
	ok(t, dir, "compact", abs(t, filepath.Join(cliData, "openai.json")), "--quiet")
	show := ok(t, dir, "show", "openai").stdout
	require.Regexp(t, `(?m)^#1 user clip_[0-9a-f]+  \S+  \(clip-archive\)$`, show)
	require.Regexp(t, `(?m)^#2 system `, show)
	require.Regexp(t, `(?m)^#3 assistant `, show)
}

// On a small archive the hits holding only a word most documents hold
// score near zero: they print as the numbers they are, never 0.000.
func TestSearchScoresOnASmallArchive(t *testing.T) {
	dir := t.TempDir()
	ok(t, dir, "compact", abs(t, filepath.Join(cliData, "anthropic.jsonl")), "--quiet")
	out := ok(t, dir, "search", "tracking number", "--limit", "20").stdout
	scores := regexp.MustCompile(`(?m)^\d+\. (?:message|batch) \S+  score (\S+)$`).FindAllStringSubmatch(out, -1)
	require.Greater(t, len(scores), 3, out)
	prev, tiny := 0.0, false
	for i, m := range scores {
		s, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err, m[0])
		require.Greater(t, s, 0.0, "a hit printed with score %s:\n%s", m[1], out)
		if i > 0 {
			require.LessOrEqual(t, s, prev, "scores out of order:\n%s", out)
		}
		prev = s
		tiny = tiny || s < 0.0005
	}
	require.True(t, tiny, "no hit scored below 0.0005, so this archive no longer shows what was printed as 0.000:\n%s", out)
}

// A dry run with nothing to compact says the file's new messages were not
// stored, and nothing is.
func TestDryRunSaysNothingWasStored(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "short.json")
	require.NoError(t, os.WriteFile(file, []byte(`[{"role":"user","content":"Hello there"},{"role":"assistant","content":"Hi! How can I help?"}]`), 0o644))
	r := ok(t, dir, "compact", file, "--dry-run")
	require.Contains(t, r.stdout, "Dry run: the 2 new message(s) from the file were not stored; without --dry-run they would be stored in clipfold.db.")
	require.NotContains(t, r.stdout, "were stored in")
	require.NoFileExists(t, filepath.Join(dir, "clipfold.db"))
	r = ok(t, dir, "compact", file)
	require.Contains(t, r.stdout, "2 new message(s) from the file were stored in clipfold.db.")
}

// The hint after a failed compaction follows the code of the model call's
// failure, not words of its message: a server error that mentions
// authentication is not a key problem, and a refused key is.
func TestFailureHintFollowsTheLLMErrorCode(t *testing.T) {
	for _, tc := range []struct {
		name, body, want, not string
		status                int
	}{
		{"server error", `{"error":{"message":"the authentication backend is restarting","type":"server_error"}}`,
			"Is the LLM server running, and is --base-url (base_url) right?", "Check the API key", http.StatusInternalServerError},
		{"refused key", `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`,
			"Check the API key (ANTHROPIC_API_KEY / OPENAI_API_KEY, or --api-key-env).", "Is the LLM server running", http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				fmt.Fprint(w, tc.body)
			}))
			defer srv.Close()
			r := runCLI(t, t.TempDir(), []string{"MY_LLM_KEY=sk-test"}, "compact", abs(t, filepath.Join(cliData, "openai.json")),
				"--provider", "openai-compat", "--base-url", srv.URL, "--api-key-env", "MY_LLM_KEY", "--model", "m",
				"--set", "backoff_base_ms=1", "--set", "compaction_max_retries=0", "--quiet")
			require.Equal(t, 1, r.code, r.stderr)
			require.Contains(t, r.stderr, "compaction failed (llm_failed)")
			require.Contains(t, r.stderr, tc.want)
			require.NotContains(t, r.stderr, tc.not)
		})
	}
}

// A PostgreSQL server that cannot be reached, and one that refuses the
// database the URL names, are told apart.
func TestPostgresErrors(t *testing.T) {
	dir := t.TempDir()
	openai := abs(t, filepath.Join(cliData, "openai.json"))
	r := runCLI(t, dir, nil, "compact", openai, "--postgres", "postgres://clipfold:secret@127.0.0.1:1/clipfold?connect_timeout=5")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "cannot reach PostgreSQL at postgres://clipfold:xxxxx@127.0.0.1:1/clipfold")
	require.NotContains(t, r.stderr, "secret")
	r = runCLI(t, dir, nil, "compact", openai, "--postgres", "postgres://host:notaport/db")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "invalid port (expected postgres://user@host:port/database, with :password after the user when the server needs one)")

	raw := os.Getenv("CLIPFOLD_TEST_POSTGRES_URL")
	if raw == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but CLIPFOLD_TEST_POSTGRES_URL is unset: run `eval \"$(scripts/start-postgres.sh)\"`")
		}
		t.Skip("CLIPFOLD_TEST_POSTGRES_URL not set (scripts/start-postgres.sh starts a server)")
	}
	u, err := url.Parse(raw)
	require.NoError(t, err)
	u.Path = "/clipfold_no_such_database"
	r = runCLI(t, dir, nil, "compact", openai, "--postgres", u.String())
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "refused the connection")
	require.Contains(t, r.stderr, "clipfold_no_such_database")
	require.Contains(t, r.stderr, "are the user, password and database in the URL right?")
	require.NotContains(t, r.stderr, "cannot reach")
}
