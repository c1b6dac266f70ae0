package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/internal/wasmhost"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/cli")

// bin is the clipfold binary TestMain builds once.
var bin string

// wasmUnderTest is the plug-in file every run of bin loads (through
// $CLIPFOLD_WASM): the build the suite is testing, $CLIPFOLD_WASM made
// absolute (make test points it at build/clipfold.wasm, then at
// build/clipfold-tinygo.wasm). Empty when that is unset: then bin runs
// the plug-in embedded in it, the committed build, so that go test needs
// nothing built. wasmBytes is that plug-in's module (wasmhost.DefaultWasm).
var (
	wasmUnderTest string
	wasmBytes     []byte
)

const (
	repoRoot  = "../.."
	cliData   = repoRoot + "/testdata/cli"
	convsData = repoRoot + "/testdata/conversations"
)

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "clipfold-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		var p string
		wasmBytes, p, err = wasmhost.DefaultWasm()
		if err == nil && p != "" {
			wasmUnderTest, err = filepath.Abs(p)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "clipfold CLI tests:", err)
			return 1
		}
		bin = filepath.Join(dir, "clipfold")
		cmd := exec.Command("go", "build", "-o", bin, ".")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "clipfold CLI tests: building the binary:", err)
			return 1
		}
		return m.Run()
	}()
	os.Exit(code)
}

// result is one run of the binary.
type result struct {
	stdout, stderr string
	code           int
}

// runCLI runs the binary in dir with extra environment variables
// ("K=V"); stdin is empty.
func runCLI(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = cleanEnv(env)
	return execCLI(t, cmd)
}

// execCLI runs cmd (a clipfold binary) with empty stdin.
func execCLI(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Stdin = strings.NewReader("")
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running clipfold %v: %v", cmd.Args[1:], err)
	}
	return result{out.String(), errb.String(), code}
}

// clip shortens long output in failure messages.
func clip(s string) string {
	if len(s) > 3000 {
		return s[:1500] + "\n[…]\n" + s[len(s)-1500:]
	}
	return s
}

func cleanEnv(extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "CLIPFOLD_DB", "CLIPFOLD_POSTGRES", "CLIPFOLD_WASM", "CLIPFOLD_LOCK_TIMEOUT",
			"ANTHROPIC_API_KEY", "OPENAI_API_KEY":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "CLIPFOLD_WASM="+wasmUnderTest)
	return append(env, extra...)
}

// ok runs clipfold and requires exit 0.
func ok(t *testing.T, dir string, args ...string) result {
	t.Helper()
	r := runCLI(t, dir, nil, args...)
	require.Equal(t, 0, r.code, "clipfold %v\nstdout:\n%s\nstderr:\n%s", args, clip(r.stdout), r.stderr)
	return r
}

func abs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	require.NoError(t, err)
	return a
}

// conversationFile returns a bundled conversation. They are committed
// under testdata/conversations: a missing one fails the test.
func conversationFile(t *testing.T, name string) string {
	t.Helper()
	p := abs(t, filepath.Join(convsData, name+".json"))
	_, err := os.Stat(p)
	require.NoError(t, err, "bundled conversation %s is missing from testdata/conversations", name)
	return p
}

var (
	opRe       = regexp.MustCompile(`op_[0-9a-z]+`)
	durationRe = regexp.MustCompile(`"(total_ms|llm_ms|store_ms|plugin_ms|llm_time_ms)":\d+`)
)

// normalize removes what changes from run to run: operation ids (and the
// clip-archive ids made from them), durations and the temporary directory.
func normalize(s, tmp string) string {
	s = strings.ReplaceAll(s, tmp, "$TMP")
	s = opRe.ReplaceAllString(s, "op_ID")
	s = durationRe.ReplaceAllString(s, `"$1":0`)
	return s
}

// golden compares got with testdata/cli/name (rewritten with -update).
// JSON is compared indented, so diffs are readable.
func golden(t *testing.T, name, got string) {
	t.Helper()
	var buf bytes.Buffer
	if json.Valid([]byte(got)) {
		require.NoError(t, json.Indent(&buf, []byte(got), "", "  "))
		buf.WriteByte('\n')
		got = buf.String()
	}
	path := filepath.Join(cliData, name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run: go test ./cmd/clipfold -run %s -update", t.Name())
	if string(want) != got {
		t.Fatalf("golden %s differs at %s\nIf the change is intended, run: go test ./cmd/clipfold -run '%s' -update",
			name, firstDiff(string(want), got), t.Name())
	}
}

// firstDiff describes the first differing line of two texts.
func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n  want: %s\n  got:  %s", i+1, clip(w), clip(g))
		}
	}
	return "(no line differs)"
}

func TestHelp(t *testing.T) {
	dir := t.TempDir()
	r := runCLI(t, dir, nil)
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "Usage: clipfold <command>")
	r = ok(t, dir, "--help")
	for _, c := range commands {
		require.Contains(t, r.stdout, c.name)
		h := ok(t, dir, c.name, "--help")
		require.Contains(t, h.stdout, "Usage: clipfold "+c.name)
		require.Contains(t, h.stdout, "Examples:")
		require.Contains(t, h.stdout, "clipfold "+c.name+" ")
		require.Equal(t, h.stdout, ok(t, dir, "help", c.name).stdout)
	}
	r = runCLI(t, dir, nil, "frobnicate")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, `unknown command "frobnicate"`)
	r = runCLI(t, dir, nil, "compact", "--no-such-flag", "x.json")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "no-such-flag")
	require.Contains(t, r.stderr, "clipfold compact --help")
	r = runCLI(t, dir, nil, "compact")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "missing argument")
}

func TestVersion(t *testing.T) {
	embedded := []string{"CLIPFOLD_WASM="} // the binary's own copy
	r := runCLI(t, t.TempDir(), embedded, "version")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^clipfold 0\.1\.0 `, r.stdout)
	require.Regexp(t, `(?m)^plug-in  \d+\.\d+\.\d+, ABI 1 \(embedded in the binary\)`, r.stdout)
	r = runCLI(t, t.TempDir(), embedded, "version", "--json")
	j := gjson.Parse(r.stdout)
	require.Equal(t, "embedded", j.Get("plugin_source").String())
	require.Equal(t, int64(1), j.Get("plugin.abi").Int())
	// $CLIPFOLD_WASM and --wasm load another file.
	j = gjson.Parse(ok(t, t.TempDir(), "version", "--json").stdout)
	if wasmUnderTest == "" {
		require.Equal(t, "embedded", j.Get("plugin_source").String(), "no $CLIPFOLD_WASM: the binary's own copy")
	} else {
		require.Equal(t, wasmUnderTest, j.Get("plugin_source").String())
	}
	wasm := abs(t, filepath.Join(repoRoot, "embed", "clipfold.wasm"))
	j = gjson.Parse(ok(t, t.TempDir(), "version", "--json", "--wasm", wasm).stdout)
	require.Equal(t, wasm, j.Get("plugin_source").String())
	r = runCLI(t, t.TempDir(), nil, "version", "--wasm", "/nonexistent/x.wasm")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "/nonexistent/x.wasm does not exist")
}

// TestCompactGolden pins the --json output of compact (progress off) on
// the OpenAI and Anthropic fixtures.
func TestCompactGolden(t *testing.T) {
	for _, tc := range []struct{ name, file string }{
		{"compact-openai.golden.json", "openai.json"},
		{"compact-anthropic.golden.json", "anthropic.jsonl"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			dir := t.TempDir()
			// The fixtures carry no created_at: messages are dated at the
			// compaction's now, fixed here so the batches' times are stable.
			r := runCLI(t, dir, []string{"CLIPFOLD_NOW=2026-01-01T00:00:00Z"}, "compact", abs(t, filepath.Join(cliData, tc.file)), "--json", "--quiet")
			require.Equal(t, 0, r.code, r.stderr)
			require.Empty(t, r.stderr)
			golden(t, tc.name, normalize(r.stdout, dir))
		})
	}
}

// TestSearchInContextAndBudget: after a compaction, a message kept in the
// active history is a search hit marked in context (its tool call found
// by name and arguments), and --max-tokens prints memory_read's answer
// within the budget, counted as the window is.
func TestSearchInContextAndBudget(t *testing.T) {
	dir := t.TempDir()
	ok(t, dir, "compact", conversationFile(t, "debugging-session"))
	hist := gjson.Parse(ok(t, dir, "show", "conv-checkout-inc-4471", "--json").stdout).Array()
	require.Greater(t, len(hist), 3)
	var call gjson.Result
	for _, m := range hist[1:] {
		if tc := m.Get("tool_calls.0.function"); tc.Exists() {
			call = tc
			break
		}
	}
	require.True(t, call.Exists(), "a tool call kept in the active history")
	q := call.Get("name").String() + " " + call.Get("arguments").String()
	js := gjson.Parse(ok(t, dir, "search", q, "--conversation", "conv-checkout-inc-4471", "--json").stdout).Get("hits").Array()
	require.NotEmpty(t, js)
	found := false
	for _, h := range js {
		found = found || h.Get("in_context").Bool() && strings.Contains(h.Get("text").String(), call.Get("name").String())
	}
	require.True(t, found, "the kept call is found, in context: %s", q)
	text := ok(t, dir, "search", q, "--conversation", "conv-checkout-inc-4471").stdout
	require.Contains(t, text, " · in context")
	require.Contains(t, text, "Hits in context are in the active history: clipfold show CONVERSATION_ID")

	c := core.DefaultConfig()
	for _, n := range []string{"150", "300", "1000"} {
		out := ok(t, dir, "search", "checkout error rollback deploy", "--max-tokens", n, "--limit", "50").stdout
		budget, _ := strconv.Atoi(n)
		require.LessOrEqual(t, core.TextTokens(strings.TrimSuffix(out, "\n"), &c), budget, out)
		require.Contains(t, out, "[1] ")
		require.Contains(t, out, "Left out (over the "+n+"-token budget)")
	}
	r := gjson.Parse(ok(t, dir, "search", "checkout error rollback deploy", "--max-tokens", "300", "--json").stdout)
	require.LessOrEqual(t, r.Get("tokens").Int(), int64(300))
	require.Equal(t, int64(300), r.Get("max_tokens").Int())
	require.True(t, r.Get("whole").IsArray() && r.Get("left_out").IsArray(), r.Raw)
	bad := runCLI(t, dir, nil, "search", "checkout", "--max-tokens", "50")
	require.Equal(t, 2, bad.code)
	require.Contains(t, bad.stderr, "--max-tokens: must be at least 150")
}

// TestRoundTrip: compact a bundled conversation, then show, search (a
// planted early fact) and recall the original message.
func TestRoundTrip(t *testing.T) {
	file := conversationFile(t, "support-chat")
	dir := t.TempDir()
	r := ok(t, dir, "compact", file)
	require.Contains(t, r.stdout, "Compacted conv-support-cust-208841 with extractive")
	require.Contains(t, r.stdout, "archive    SQLite clipfold.db")
	require.Contains(t, r.stdout, "clipfold search QUERY --conversation conv-support-cust-208841")
	require.FileExists(t, filepath.Join(dir, "clipfold.db"))

	show := ok(t, dir, "show", "conv-support-cust-208841", "--json")
	hist := gjson.Parse(show.stdout).Array()
	require.NotEmpty(t, hist)
	role := archiveRole(rawsOf(hist[1:]))
	require.Equal(t, role, hist[0].Get("role").String())
	require.True(t, strings.HasPrefix(hist[0].Get("content").String(), "[Context Summary — "), hist[0].Raw)
	text := ok(t, dir, "show", "conv-support-cust-208841").stdout
	require.Contains(t, text, "#1 "+role+" clip_")
	require.Contains(t, text, "[Context Summary — ")

	// Every planted fact's query is searched; those found must lead back,
	// through recall, to an original message holding the fact's literals.
	var facts []struct {
		Query       string   `json:"query"`
		MustContain []string `json:"must_contain"`
		MessageIDs  []string `json:"message_ids"`
	}
	b, err := os.ReadFile(strings.TrimSuffix(file, ".json") + ".facts.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &facts))
	found, inContext := 0, 0
	active := map[string]string{}
	for _, m := range gjson.Parse(ok(t, dir, "show", "conv-support-cust-208841", "--json").stdout).Array() {
		active[m.Get("id").String()] = m.Get("content").String()
	}
	content := func(id string) string {
		if c, ok := active[id]; ok {
			return c
		}
		return gjson.Get(ok(t, dir, "recall", id).stdout, "content").String()
	}
	for _, f := range facts {
		hits := gjson.Parse(ok(t, dir, "search", f.Query, "--conversation", "conv-support-cust-208841", "--json").stdout).Get("hits").Array()
		for _, h := range hits {
			ids := []string{h.Get("id").String()}
			if h.Get("kind").String() == "batch" {
				require.NotEmpty(t, h.Get("label").String())
				require.NotEmpty(t, h.Get("batch.start_time").String())
				ids = nil
				for _, id := range h.Get("batch.source_message_ids").Array() {
					ids = append(ids, id.String())
				}
			}
			id := intersect(ids, f.MessageIDs)
			if id == "" {
				continue
			}
			if h.Get("in_context").Bool() {
				// Still in the active history: not in recall, shown by show.
				require.Contains(t, active, id, "an in-context hit is in the active history")
				inContext++
			} else {
				rec := ok(t, dir, "recall", id).stdout
				require.True(t, json.Valid([]byte(rec)), rec)
				require.Equal(t, id, gjson.Get(rec, "id").String())
			}
			joined := ""
			for _, mid := range f.MessageIDs {
				joined += content(mid) + "\n"
			}
			for _, lit := range f.MustContain {
				require.Contains(t, joined, lit)
			}
			found++
			break
		}
	}
	require.GreaterOrEqual(t, found, 3, "at least 3 of %d planted facts must be found by search and recalled", len(facts))
	t.Logf("%d of %d facts found, %d of them still in context", found, len(facts), inContext)

	// The human search output names each hit's kind, id, time and score,
	// and a batch's sources (for the first fact whose words a batch
	// summary kept).
	s := ""
	for _, f := range facts {
		if s = ok(t, dir, "search", f.Query).stdout; strings.Contains(s, "batch blk_") {
			break
		}
	}
	require.Regexp(t, `(?m)^\d+\. batch blk_[0-9a-f]{24}  score \d+(\.\d+)?(e-\d+)?$`, s)
	require.Regexp(t, `(?m)^\d+\. message sup-\d{4}  score \d+(\.\d+)?(e-\d+)?$`, s)
	require.Contains(t, s, "sources: ")
	require.Regexp(t, `\d{4}-\d\d-\d\dT[0-9:.]+Z → \d{4}-[0-9T:.-]+Z · depth \d+ · \d+ message\(s\) · (llm|extractive) · conversation conv-support-cust-208841`, s)
	require.Contains(t, s, "Print one in full: clipfold recall ID")

	// A batch id from search is read back in full by recall.
	js := gjson.Parse(ok(t, dir, "search", "refund", "--json", "--limit", "100").stdout).Get("hits").Array()
	var batchID string
	for _, h := range js {
		require.NotEmpty(t, h.Get("text").String(), "--json carries each hit's full text")
		require.Greater(t, h.Get("score").Float(), 0.0)
		if h.Get("kind").String() == "batch" && batchID == "" {
			batchID = h.Get("id").String()
			require.Equal(t, h.Get("batch.start_time").String(), h.Get("start_time").String())
			require.Equal(t, h.Get("batch.end_time").String(), h.Get("end_time").String())
		}
	}
	require.NotEmpty(t, batchID, "a batch among the hits for refund")
	rb := ok(t, dir, "recall", batchID).stdout
	require.Regexp(t, `^batch `+batchID+`  compaction-batch-conv-support-cust-208841-`, rb)
	require.Contains(t, rb, "sources: sup-")
	require.Regexp(t, ` · depth \d+ · \d+ message\(s\) · (llm|extractive) · conversation conv-support-cust-208841\narchived `, rb)
	rj := gjson.Parse(ok(t, dir, "recall", batchID, "--json").stdout)
	require.Equal(t, "batch", rj.Get("kind").String())
	require.Equal(t, batchID, rj.Get("id").String())
	require.NotEmpty(t, rj.Get("batch.source_message_ids").Array())
	require.True(t, strings.HasSuffix(strings.TrimSpace(rb), strings.TrimSpace(rj.Get("content").String())),
		"the text form ends with the full summary")

	// A true miss still says so.
	miss := ok(t, dir, "search", "xylophone quasar").stdout
	require.Contains(t, miss, `No match for "xylophone quasar"`)

	// recall prints the exact original bytes.
	orig := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, file)), "\n") {
		line = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(line), "["), "]")
		line = strings.TrimSuffix(line, ",")
		if id := gjson.Get(line, "id").String(); id != "" {
			orig[id] = line
		}
	}
	require.Equal(t, orig["sup-0002"], strings.TrimSpace(ok(t, dir, "recall", "sup-0002").stdout))

	// A second compact of the same file adds nothing and finds nothing new
	// to compact beyond the stored history.
	r = ok(t, dir, "compact", file, "--json", "--quiet")
	require.Equal(t, int64(0), gjson.Get(r.stdout, "report.messages_appended").Int())
}

func intersect(a, b []string) string {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return x
			}
		}
	}
	return ""
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

// TestRepeatedCompaction feeds a growing conversation to compact again
// and again: each run continues from the stored history, and with small
// clip settings re-summarization raises the depth.
func TestRepeatedCompaction(t *testing.T) {
	file := conversationFile(t, "planning-discussion")
	var msgs []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(readFile(t, file)), &msgs))
	dir := t.TempDir()
	part := filepath.Join(dir, "part.jsonl")
	prevAfter := 0
	depth := int64(0)
	for round, n := 1, 60; n <= len(msgs) && depth < 1; round, n = round+1, n+50 {
		var b bytes.Buffer
		for _, m := range msgs[:n] {
			b.Write(m)
			b.WriteByte('\n')
		}
		require.NoError(t, os.WriteFile(part, b.Bytes(), 0o644))
		r := ok(t, dir, "compact", part, "--json", "--quiet", "--chunk-size", "40", "--keep-recent", "4",
			"--set", "clip_first=1", "--set", "clip_last=1", "-o", "out.jsonl")
		rep := gjson.Get(r.stdout, "report")
		require.False(t, gjson.Get(r.stdout, "failed").Bool(), clip(r.stdout))
		if round > 1 {
			require.Equal(t, 50, int(rep.Get("messages_appended").Int()), "round %d", round)
			require.Equal(t, prevAfter+50, int(rep.Get("messages_before").Int()), "round %d continues from the stored history", round)
		}
		prevAfter = int(rep.Get("messages_after").Int())
		depth = rep.Get("archive_depth").Int()
		// -o writes JSONL: one message per line, the clip-archive first.
		lines := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(dir, "out.jsonl"))), "\n")
		require.Len(t, lines, prevAfter)
		require.Equal(t, archiveRole(lines[1:]), gjson.Get(lines[0], "role").String())
	}
	require.GreaterOrEqual(t, depth, int64(1), "re-summarization never happened")
}

func TestRunTurns(t *testing.T) {
	file := conversationFile(t, "debugging-session")
	dir := t.TempDir()
	r := ok(t, dir, "run", file, "--model-max-tokens", "20000", "--json", "--quiet")
	golden(t, "run-debugging-session.golden.json", normalize(r.stdout, dir))
	rep := gjson.Parse(r.stdout)
	require.GreaterOrEqual(t, rep.Get("compactions").Int(), int64(2), r.stdout)
	require.GreaterOrEqual(t, rep.Get("depth_reached").Int(), int64(1), r.stdout)
	require.Equal(t, rep.Get("turns_in_file").Int(), rep.Get("turns").Int())
	require.Equal(t, int64(16000), rep.Get("limit").Int())
	require.Greater(t, rep.Get("peak_tokens").Int(), rep.Get("limit").Int())
	require.Less(t, rep.Get("final_tokens").Int(), rep.Get("peak_tokens").Int())
	// Offline: the plug-in summarizes itself, no LLM call.
	require.Equal(t, int64(0), rep.Get("llm_calls").Int())
	require.Equal(t, int64(0), rep.Get("compactions_failed").Int())
	// Compactions go to the target: 0.8 of the limit by default.
	require.Equal(t, int64(12800), rep.Get("target_tokens").Int())

	// --turns caps the replay; the human report says what happened.
	dir = t.TempDir()
	r = ok(t, dir, "run", file, "--turns", "5", "--quiet")
	require.Contains(t, r.stdout, "Replayed 5 of ")
	require.Contains(t, r.stdout, "compactions  0")
}

// run --target-share: each compaction compacts to share × limit, keeping
// the newest messages that fit; 0 compacts to keep_recent; an explicit
// target_tokens wins. A 4,000-token limit works without no_gain.
func TestRunTargetShare(t *testing.T) {
	file := conversationFile(t, "debugging-session")
	run := func(args ...string) gjson.Result {
		dir := t.TempDir()
		r := ok(t, dir, append([]string{"run", file, "--json", "--quiet"}, args...)...)
		rep := gjson.Parse(r.stdout)
		require.Equal(t, int64(0), rep.Get("compactions_failed").Int(), r.stdout)
		// What the store holds: the clip-archive and the kept messages.
		show := ok(t, dir, "show", rep.Get("conversation_id").String(), "--json")
		require.Equal(t, rep.Get("final_messages").Int(), gjson.Get(show.stdout, "#").Int())
		return rep
	}
	def := run("--model-max-tokens", "5000")
	require.Equal(t, int64(4000), def.Get("limit").Int())
	require.Equal(t, int64(3200), def.Get("target_tokens").Int())
	require.Greater(t, def.Get("compactions").Int(), int64(5))
	require.Empty(t, def.Get("failure_codes").Map(), "no no_gain at a 4,000-token budget")

	half := run("--model-max-tokens", "5000", "--target-share", "0.5")
	require.Equal(t, int64(2000), half.Get("target_tokens").Int())
	require.Empty(t, half.Get("failure_codes").Map())
	require.Greater(t, def.Get("compactions").Int(), half.Get("compactions").Int(), "a higher target is due more often")

	more := run("--model-max-tokens", "5000", "--target-share", "0.3")
	require.Equal(t, int64(1200), more.Get("target_tokens").Int())
	require.Empty(t, more.Get("failure_codes").Map())

	floor := run("--model-max-tokens", "20000", "--target-share", "0")
	require.Equal(t, int64(0), floor.Get("target_tokens").Int())
	target := run("--model-max-tokens", "20000")
	require.Equal(t, int64(12800), target.Get("target_tokens").Int())
	// To the target, each compaction leaves most of the limit (the
	// newest messages verbatim) instead of the archive and keep_recent:
	// more compacted messages stay in the context, so it is due more often.
	require.Greater(t, target.Get("compactions").Int(), floor.Get("compactions").Int())

	explicit := run("--model-max-tokens", "20000", "--target-tokens", "5000")
	require.Equal(t, int64(5000), explicit.Get("target_tokens").Int())

	// The human report names the target.
	dir := t.TempDir()
	r := ok(t, dir, "run", file, "--model-max-tokens", "5000", "--turns", "20", "--quiet")
	require.Contains(t, r.stdout, "compacted to ~3,200")
}

func TestFormats(t *testing.T) {
	dir := t.TempDir()
	// Anthropic JSONL in, nothing compacted (keep everything), JSONL out:
	// the messages come back as they went in, in their shape (no
	// conversion), one per line.
	anthropic := abs(t, filepath.Join(cliData, "anthropic.jsonl"))
	in := strings.Split(strings.TrimSpace(readFile(t, anthropic)), "\n")
	r := ok(t, dir, "compact", anthropic, "--keep-recent", "1000", "-o", "all.jsonl", "--quiet")
	require.Contains(t, r.stdout, "Nothing to compact")
	lines := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(dir, "all.jsonl"))), "\n")
	require.Len(t, lines, len(in))
	for i, l := range lines {
		require.JSONEq(t, in[i], l, "line %d", i+1)
	}
	require.Equal(t, "tool_use", gjson.Get(lines[1], "content.1.type").String())
	require.Equal(t, "tool_result", gjson.Get(lines[2], "content.0.type").String())

	// Compacted, the history stays Anthropic: the clip-archive is a first
	// user turn (the Messages API has no system role), and a tool result
	// never loses its tool_use.
	dir = t.TempDir()
	r = ok(t, dir, "compact", anthropic, "--keep-recent", "5", "-o", "out.jsonl", "--quiet")
	lines = strings.Split(strings.TrimSpace(readFile(t, filepath.Join(dir, "out.jsonl"))), "\n")
	first := gjson.Parse(lines[0])
	require.Equal(t, "user", first.Get("role").String())
	require.True(t, strings.HasPrefix(first.Get("content").String(), "[Context Summary — "), lines[0])
	require.False(t, first.Get("id").Exists(), "nothing added: %s", lines[0])
	require.Equal(t, "tool_use", gjson.Get(lines[1], "content.#(type==\"tool_use\").type").String(),
		"keep_recent 5 would keep a tool_result without its tool_use: the boundary moved back to the call")
	for _, l := range lines[1:] {
		found := false
		for _, x := range in {
			if gjson.Parse(x).Raw != "" && jsonEqual(x, l) {
				found = true
				break
			}
		}
		require.True(t, found, "not an input message: %s", l)
	}
	// The output is a valid input: compact it again into a new archive.
	r = ok(t, t.TempDir(), "compact", filepath.Join(dir, "out.jsonl"), "--keep-recent", "1000", "--json", "--quiet")
	require.False(t, gjson.Get(r.stdout, "failed").Bool(), r.stdout)

	// OpenAI JSON array in, JSON array out; null content, tool_calls and
	// tool_call_id kept; nothing added.
	dir = t.TempDir()
	r = ok(t, dir, "compact", abs(t, filepath.Join(cliData, "openai.json")), "--keep-recent", "1000", "-o", "all.json", "--quiet")
	arr := gjson.Parse(readFile(t, filepath.Join(dir, "all.json"))).Array()
	require.Len(t, arr, 51)
	require.False(t, arr[2].Get("id").Exists())
	require.False(t, arr[2].Get("created_at").Exists())
	require.Equal(t, "call_001", arr[2].Get("tool_calls.0.id").String())
	require.Equal(t, "call_001", arr[3].Get("tool_call_id").String())

	// -o - writes the history on stdout and the report on stderr.
	dir = t.TempDir()
	r = ok(t, dir, "compact", abs(t, filepath.Join(cliData, "openai.json")), "-o", "-", "--quiet")
	require.True(t, json.Valid([]byte(r.stdout)), clip(r.stdout))
	require.Contains(t, r.stderr, "Compacted openai")
	out := gjson.Parse(r.stdout).Array()
	head := `{"role":"` + archiveRole(rawsOf(out[1:])) + `","content":`
	require.Equal(t, head, r.stdout[4:4+len(head)], "a plain Chat clip-archive")

	// A single request body {"system", "messages"} is a conversation too.
	body := `{"model":"claude","system":"Be brief.","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"hello"}]}]}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "req.json"), []byte(body), 0o644))
	r = ok(t, dir, "compact", "req.json", "-o", "req-out.json", "--quiet")
	arr = gjson.Parse(readFile(t, filepath.Join(dir, "req-out.json"))).Array()
	require.Len(t, arr, 3)
	require.Equal(t, "system", arr[0].Get("role").String())
	require.Equal(t, "Be brief.", arr[0].Get("content").String())
	require.False(t, arr[0].Get("id").Exists())

	// Other shapes are read as they are: OpenAI Responses items.
	var items []string
	for i := 0; i < 6; i++ {
		long := strings.Repeat(fmt.Sprintf("Forecast for day %d in Paris: cloudy, light rain in the evening, 14 degrees. ", i), 4)
		items = append(items, fmt.Sprintf(`{"role":"user","content":"What is the weather on day %d? Should I take an umbrella?"}`, i),
			fmt.Sprintf(`{"type":"function_call","call_id":"c%d","name":"weather","arguments":"{\"day\":%d}"}`, i, i),
			fmt.Sprintf(`{"type":"function_call_output","call_id":"c%d","output":%q}`, i, long),
			fmt.Sprintf(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Day %d: take an umbrella for the evening."}]}`, i))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "items.json"), []byte("["+strings.Join(items, ",")+"]"), 0o644))
	r = ok(t, dir, "compact", "items.json", "--keep-recent", "2", "-o", "items-out.json", "--quiet")
	arr = gjson.Parse(readFile(t, filepath.Join(dir, "items-out.json"))).Array()
	require.Len(t, arr, 4, "keep_recent 2 falls on a function_call_output: its call is kept too")
	require.Equal(t, "message", arr[0].Get("type").String())
	require.Equal(t, "user", arr[0].Get("role").String(), "the kept items start with a function_call: the clip-archive is a user message")
	require.JSONEq(t, items[len(items)-3], arr[1].Raw)
}

// jsonEqual compares two JSON texts as values.
func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	cfg := abs(t, filepath.Join(cliData, "config.toml"))
	r := ok(t, dir, "compact", abs(t, filepath.Join(cliData, "openai.json")), "--config", cfg, "--json", "--quiet")
	require.Empty(t, r.stderr)
	rep := gjson.Get(r.stdout, "report")
	require.Equal(t, "extractive", rep.Get("provider").String())
	require.Equal(t, "claude-3-5-haiku-latest", rep.Get("model").String())
	// keep_recent = 6 from the file: the clip-archive, the system message
	// (pinned) and the 6 recent ones plus the tool call whose result is
	// among them (a call and its results are one unit) remain.
	require.Equal(t, int64(9), rep.Get("messages_after").Int(), rep.Raw)
	// chunk_size = 15 from the file: three batches. The extractive
	// provider summarizes inside the plug-in (summarizer "extractive"):
	// no LLM call, batches marked extractive.
	require.Equal(t, int64(3), gjson.Get(r.stdout, "batches_created").Int())
	require.Equal(t, int64(0), rep.Get("expected_llm_calls").Int())
	require.Equal(t, int64(0), rep.Get("llm_calls").Int())
	for _, b := range gjson.Get(r.stdout, "batches").Array() {
		require.Equal(t, "extractive", b.Get("method").String())
	}

	// Flags override the file.
	dir = t.TempDir()
	r = ok(t, dir, "compact", abs(t, filepath.Join(cliData, "openai.json")), "--config", cfg, "--keep-recent", "3", "--chunk-size", "50", "--json", "--quiet")
	rep = gjson.Get(r.stdout, "report")
	require.Equal(t, int64(5), rep.Get("messages_after").Int(), rep.Raw)
	require.Equal(t, int64(1), gjson.Get(r.stdout, "batches_created").Int())

	// --summarizer llm sends the chunks to the provider (here the
	// extractive one, answering llm_complete): three calls, "llm" batches.
	dir = t.TempDir()
	r = ok(t, dir, "compact", abs(t, filepath.Join(cliData, "openai.json")), "--config", cfg, "--summarizer", "llm", "--json", "--quiet")
	rep = gjson.Get(r.stdout, "report")
	require.Equal(t, int64(3), rep.Get("expected_llm_calls").Int())
	require.Equal(t, int64(3), rep.Get("llm_calls").Int())
	for _, b := range gjson.Get(r.stdout, "batches").Array() {
		require.Equal(t, "llm", b.Get("method").String())
	}

	// Unknown keys warn and are ignored; other sections are not ours.
	dir = t.TempDir()
	bad := filepath.Join(dir, "unknown.toml")
	require.NoError(t, os.WriteFile(bad, []byte("[agent]\nname = \"x\"\n\n[summarization]\nchunk_size = 10\nchunck_size = 12\n"), 0o644))
	r = ok(t, dir, "compact", abs(t, filepath.Join(cliData, "openai.json")), "--config", bad, "--dry-run", "--quiet")
	require.Contains(t, r.stderr, `warning: `+bad+`: unknown key "[summarization] chunck_size" ignored`)
	require.Contains(t, r.stdout, "Dry run (nothing stored)")
	require.NoFileExists(t, filepath.Join(dir, "clipfold.db"), "--dry-run must not create the database")

	// Invalid values fail naming the key and the allowed range.
	inv := filepath.Join(dir, "invalid.toml")
	require.NoError(t, os.WriteFile(inv, []byte("[summarization]\nrecency_decay = 1.5\n"), 0o644))
	r = runCLI(t, dir, nil, "compact", abs(t, filepath.Join(cliData, "openai.json")), "--config", inv)
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "[summarization] recency_decay: must be a number in [0, 1], got 1.5")

	require.NoError(t, os.WriteFile(inv, []byte("[summarization]\nchunk_size = \"big\"\n"), 0o644))
	r = runCLI(t, dir, nil, "compact", abs(t, filepath.Join(cliData, "openai.json")), "--config", inv)
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "[summarization] chunk_size: must be an integer ≥ 1, got a string")

	require.NoError(t, os.WriteFile(inv, []byte("[summarization]\nchunk_size = = 3\n"), 0o644))
	r = runCLI(t, dir, nil, "compact", abs(t, filepath.Join(cliData, "openai.json")), "--config", inv)
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, inv+":2:")
	require.Contains(t, r.stderr, "invalid TOML")
}

// TestErrors: every error a person can run into, with its exit code and
// a message saying what to do.
func TestErrors(t *testing.T) {
	openai := abs(t, filepath.Join(cliData, "openai.json"))
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	cases := []struct {
		name string
		env  []string
		args []string
		code int
		want []string
	}{
		{"missing file", nil, []string{"compact", "nope.json"}, 1, []string{"conversation file nope.json does not exist"}},
		{"bad JSON", nil, []string{"compact", write("bad.json", "[\n  {\"role\": \"user\", \"content\": \"hi\"},\n  {\"role\": \"user\" \"content\": \"x\"}\n]\n")}, 1,
			[]string{"bad.json:3:19: invalid JSON: invalid character '\"' after object key:value pair"}},
		{"truncated JSON", nil, []string{"compact", write("trunc.json", "[\n  {\"role\": \"user\", \"content\": \"hi\"}\n")}, 1,
			[]string{"trunc.json:2:", "the file ends before the JSON does"}},
		{"bad JSONL line", nil, []string{"compact", write("bad.jsonl", "{\"role\":\"user\",\"content\":\"a\"}\n\n{\"role\":\"user\",\"content\":}\n")}, 1,
			[]string{"bad.jsonl:3:26: invalid JSON"}},
		{"not a conversation", nil, []string{"compact", write("num.json", "42\n")}, 1, []string{"num.json:1:1: expected a JSON array of messages or JSON Lines"}},
		{"bad role", nil, []string{"compact", write("role.json", `[{"role":"robot","content":"x"}]`)}, 1, []string{`role.json: message 1: role: must be one of user, assistant, system, tool, got "robot"`}},
		{"mixed shapes", nil, []string{"compact", write("mixed.jsonl", "{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}\n{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"c\",\"content\":\"x\"}]}\n")}, 1,
			[]string{`mixed.jsonl:2: is an Anthropic message, but message 1 is an OpenAI Chat message or a LangChain message: one message shape per call`}},
		{"bad CLIPFOLD_NOW", []string{"CLIPFOLD_NOW=yesterday"}, []string{"compact", openai}, 2, []string{`CLIPFOLD_NOW: must be an RFC 3339 time`}},
		{"unknown provider", nil, []string{"compact", openai, "--provider", "gemini"}, 2,
			[]string{`unknown provider "gemini": valid providers are anthropic, openai, openai-compat, ollama, extractive`}},
		{"missing API key", nil, []string{"compact", openai, "--provider", "anthropic", "--model", "claude-3-5-haiku-latest"}, 1,
			[]string{"provider anthropic needs an API key: set the environment variable ANTHROPIC_API_KEY"}},
		{"missing API key, own variable", nil, []string{"compact", openai, "--provider", "openai", "--api-key-env", "MY_LLM_KEY"}, 1,
			[]string{"set the environment variable MY_LLM_KEY"}},
		{"bad base URL", nil, []string{"compact", openai, "--provider", "ollama", "--base-url", "localhost:11434"}, 2,
			[]string{"--base-url \"localhost:11434\": must be an http:// or https:// URL"}},
		{"invalid flag value", nil, []string{"compact", openai, "--chunk-size", "0"}, 2,
			[]string{"--chunk-size: must be an integer ≥ 1, got 0"}},
		{"invalid fallback", nil, []string{"compact", openai, "--fallback", "maybe"}, 2,
			[]string{`--fallback: must be "none" or "extractive", got "maybe"`}},
		{"invalid summarizer", nil, []string{"compact", openai, "--summarizer", "maybe"}, 2,
			[]string{`--summarizer: must be "llm" or "extractive", got "maybe"`}},
		{"invalid target share", nil, []string{"run", openai, "--target-share", "1.5"}, 2,
			[]string{`--target-share: must be a number in [0, 1], got 1.5`}},
		{"unknown --set key", nil, []string{"compact", openai, "--set", "chunks=3"}, 2, []string{`--set chunks: unknown configuration key "chunks"`}},
		{"json and -o -", nil, []string{"compact", openai, "--json", "-o", "-"}, 2, []string{"--json and -o - both write to stdout"}},
		{"conversation mismatch", nil, []string{"compact", write("native.json", `[{"id":"n1","conversation_id":"c1","role":"user","content":"x","created_at":"2026-01-01T00:00:00Z"}]`), "--conversation", "c2"}, 1,
			[]string{`belong to conversation "c1", not "c2"`}},
		{"show without archive", nil, []string{"show", "c1", "--db", "none.db"}, 1, []string{"no archive at none.db yet"}},
		{"search without archive", nil, []string{"search", "x"}, 1, []string{"no archive at clipfold.db yet"}},
		{"empty query", nil, []string{"search", "--", "--"}, 2, []string{"has no word to search for"}},
		{"missing config", nil, []string{"compact", openai, "--config", "nope.toml"}, 2, []string{"--config: nope.toml does not exist"}},
		{"bad --wasm", nil, []string{"compact", openai, "--wasm", "nope.wasm"}, 1, []string{"--wasm: plug-in nope.wasm does not exist"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, dir, tc.env, tc.args...)
			require.Equal(t, tc.code, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			for _, w := range tc.want {
				require.Contains(t, r.stderr, w)
			}
		})
	}
}

func TestUnreachableLLM(t *testing.T) {
	dir := t.TempDir()
	r := runCLI(t, dir, nil, "compact", abs(t, filepath.Join(cliData, "openai.json")),
		"--provider", "openai", "--base-url", "http://127.0.0.1:1", "--model", "gpt-4o-mini",
		"--set", "backoff_base_ms=1", "--set", "compaction_max_retries=2")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "compaction failed (llm_failed)")
	require.Contains(t, r.stderr, "cannot reach http://127.0.0.1:1/v1/chat/completions")
	require.Contains(t, r.stderr, "Is the LLM server running, and is --base-url (base_url) right?")
	require.Contains(t, r.stderr, "Nothing was changed: the stored history is untouched (51 messages")
	require.Contains(t, r.stderr, "3 LLM call(s), 2 retries")
	require.Empty(t, r.stdout)
	// The history is stored (and was not compacted).
	require.Len(t, gjson.Parse(ok(t, dir, "show", "openai", "--json").stdout).Array(), 51)

	// --json still prints the failed result, with the report.
	r = runCLI(t, dir, nil, "compact", abs(t, filepath.Join(cliData, "openai.json")), "--json", "--quiet",
		"--provider", "openai-compat", "--base-url", "http://127.0.0.1:1/v1", "--set", "backoff_base_ms=1", "--set", "compaction_max_retries=0")
	require.Equal(t, 1, r.code)
	require.Equal(t, "llm_failed", gjson.Get(r.stdout, "failure_code").String(), clip(r.stdout))
	require.Equal(t, int64(1), gjson.Get(r.stdout, "report.llm_calls").Int())
}

func TestDatabaseLocked(t *testing.T) {
	dir := t.TempDir()
	openai := abs(t, filepath.Join(cliData, "openai.json"))
	ok(t, dir, "compact", openai, "--dry-run", "--quiet") // no db yet: in memory
	require.NoFileExists(t, filepath.Join(dir, "clipfold.db"))
	ok(t, dir, "compact", openai, "--quiet")
	unlock := lockDB(t, filepath.Join(dir, "clipfold.db"))
	r := runCLI(t, dir, []string{"CLIPFOLD_LOCK_TIMEOUT=200ms"}, "compact", openai)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "the database clipfold.db is locked: another clipfold (or another program) may be running on it")
	unlock()
	ok(t, dir, "compact", openai, "--quiet")
}

func TestPostgres(t *testing.T) {
	url := os.Getenv("CLIPFOLD_TEST_POSTGRES_URL")
	if url == "" {
		// As the store and harness suites: never silently untested in CI.
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but CLIPFOLD_TEST_POSTGRES_URL is unset: run `eval \"$(scripts/start-postgres.sh)\"`")
		}
		t.Skip("CLIPFOLD_TEST_POSTGRES_URL not set (scripts/start-postgres.sh starts a server)")
	}
	dir := t.TempDir()
	conv := fmt.Sprintf("cli-pg-%d", os.Getpid())
	openai := abs(t, filepath.Join(cliData, "openai.json"))
	r := ok(t, dir, "compact", openai, "--postgres", url, "--conversation", conv, "--json", "--quiet")
	require.Equal(t, "postgres", gjson.Get(r.stdout, "report.archive.backend").String())
	require.Greater(t, gjson.Get(r.stdout, "messages_compressed").Int(), int64(0))
	hits := gjson.Parse(ok(t, dir, "search", "OPS-101", "--postgres", url, "--conversation", conv, "--json").stdout).Get("hits").Array()
	require.NotEmpty(t, hits)
	// A recalled message, by the id derived for it (the file has none):
	// the first message hit recall storage holds (a hit may be a message
	// still in the context, which it does not).
	var msgID string
	for _, h := range hits {
		if h.Get("kind").String() == "message" && runCLI(t, dir, nil, "recall", h.Get("id").String(), "--postgres", url).code == 0 {
			msgID = h.Get("id").String()
			break
		}
	}
	if msgID == "" {
		msgID = hits[0].Get("batch.source_message_ids.0").String()
	}
	require.Regexp(t, `^d_[0-9a-f]{24}$`, msgID)
	require.Contains(t, ok(t, dir, "recall", msgID, "--postgres", url).stdout, `"role":`)
	require.NoFileExists(t, filepath.Join(dir, "clipfold.db"))
}

// lockDB holds the write lock of a SQLite file, as another clipfold in
// the middle of a commit would, until the returned function is called.
func lockDB(t *testing.T, path string) func() {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	conn, err := db.Conn(context.Background())
	require.NoError(t, err)
	_, err = conn.ExecContext(context.Background(), "BEGIN IMMEDIATE")
	require.NoError(t, err)
	done := false
	unlock := func() {
		if done {
			return
		}
		done = true
		_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		_ = conn.Close()
		_ = db.Close()
	}
	t.Cleanup(unlock)
	return unlock
}
