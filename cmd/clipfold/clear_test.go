package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// clear_tool_results and clear_exclude_tools through the command, as
// --set flags: the older tool results are cleared (read_file's kept
// whole), which alone fits the window, so nothing is summarized; the
// placeholders name the recall ids, and `recall` gives each original back.
func TestCompactClearsToolResults(t *testing.T) {
	file := conversationFile(t, "debugging-session")
	dir := t.TempDir()
	r := ok(t, dir, "compact", file, "--json", "--quiet", "--db", "clear.db", "-o", "out.jsonl",
		"--set", "clear_tool_results=3", "--set", "clear_exclude_tools=read_file,edit_file")
	res := gjson.Parse(r.stdout)
	require.False(t, res.Get("failed").Bool(), clip(r.stdout))
	require.Positive(t, res.Get("tool_results_cleared").Int())
	require.Zero(t, res.Get("messages_compressed").Int(), "clearing alone fits the default window")
	require.Zero(t, res.Get("llm_calls").Int())
	lines := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(dir, "out.jsonl"))), "\n")
	cleared := 0
	for _, l := range lines {
		content := gjson.Get(l, "content").String()
		if !strings.HasPrefix(content, "[tool result cleared: ") {
			continue
		}
		cleared++
		require.False(t, strings.HasPrefix(content, "[tool result cleared: read_file "), "clear_exclude_tools are never cleared: %s", content)
		id := gjson.Get(l, "id").String()
		require.Contains(t, content, `in recall storage as "`+id+`"`)
		orig := ok(t, dir, "recall", id, "--db", "clear.db")
		require.NotContains(t, orig.stdout, "[tool result cleared", "recall gives the original back")
		require.Equal(t, gjson.Get(l, "tool_call_id").String(), gjson.Get(orig.stdout, "tool_call_id").String(), orig.stdout)
	}
	require.EqualValues(t, res.Get("tool_results_cleared").Int(), cleared)
}

// Every key's value goes to the plug-in as the kind the key takes, as
// core.ParseValue reads it: a string key given on the command line is a
// string, not a number (token_estimator was sent as 0 and refused).
func TestSetSendsEachKeyAsItsKind(t *testing.T) {
	file := conversationFile(t, "debugging-session")
	dir := t.TempDir()
	chars4 := ok(t, dir, "compact", file, "--json", "--quiet", "--dry-run", "--db", "a.db", "--set", "token_estimator=chars4")
	conservative := ok(t, dir, "compact", file, "--json", "--quiet", "--dry-run", "--db", "b.db", "--set", "token_estimator=conservative")
	before4 := gjson.Get(chars4.stdout, "tokens_estimate_before").Int()
	beforeC := gjson.Get(conservative.stdout, "tokens_estimate_before").Int()
	require.Positive(t, before4)
	require.Greater(t, beforeC, before4, "the conservative count is above ⌈chars/4⌉ on this conversation")
	r := runCLI(t, dir, nil, "compact", file, "--quiet", "--dry-run", "--db", "c.db", "--set", "token_estimator=words")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, `token_estimator`)
}
