package clipfold_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/clipfold/clipfold"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateOffline = flag.Bool("update-offline", false, "rewrite testdata/offline/debugging-session-60.json from the plug-in under test")

// offlineCase is testdata/offline/debugging-session-60.json: what every
// host compresses offline (the first messages of a conversation file,
// with a config) and the batches it must write, line for line. The Go,
// Python and Node tests read the same file.
type offlineCase struct {
	Conversation string         `json:"conversation"`
	Messages     int            `json:"messages"`
	Config       map[string]any `json:"config"`
	Batches      []string       `json:"batches"`
}

// datedLine is a line of an offline summary: its message's UTC day, then
// who said it.
var datedLine = regexp.MustCompile(`^\[\d{4}-\d{2}-\d{2}\] (User|Assistant|System|Tool call|Tool)[ :]`)

// Offline, the Go library summarizes like the command and the Python and
// Node packages: inside the plug-in, every line dated from its message
// ("[2026-03-03] User: …"), batches "extractive", no LLM call. It used to
// send the extractive client an undated summarization request, its lines
// in the chunk's importance order.
func TestOfflineSummariesAreTheSameInEveryHost(t *testing.T) {
	path := filepath.Join("testdata", "offline", "debugging-session-60.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var tc offlineCase
	require.NoError(t, json.Unmarshal(data, &tc))
	conv, err := os.ReadFile(filepath.Join("testdata", tc.Conversation))
	require.NoError(t, err)
	var all []json.RawMessage
	require.NoError(t, json.Unmarshal(conv, &all))
	history := all[:tc.Messages]

	c := openBuilt(t, nil) // no LLM: offline
	res, err := c.Compress(context.Background(), "conv-checkout-inc-4471", history, &clipfold.CompressOptions{Config: tc.Config})
	require.NoError(t, err)
	require.False(t, res.Failed, "%s: %s", res.FailureCode, res.FailureMessage)
	require.Equal(t, 0, res.LLMCalls)
	var got []string
	for _, b := range res.Batches {
		assert.Equal(t, "extractive", b.Method)
		got = append(got, b.Content)
		for _, l := range strings.Split(b.Content, "\n") {
			assert.Regexp(t, datedLine, l)
		}
	}
	if *updateOffline {
		tc.Batches = got
		out, err := json.MarshalIndent(tc, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, append(out, '\n'), 0o644))
		return
	}
	assert.Equal(t, tc.Batches, got, "if the summarizer changed on purpose: go test . -run TestOfflineSummariesAreTheSameInEveryHost -update-offline")

	t.Run("summarizer llm still asks the LLM", func(t *testing.T) {
		c := openBuilt(t, map[string]any{"summarizer": "llm"})
		res, err := c.Compress(context.Background(), "conv-checkout-inc-4471", history, &clipfold.CompressOptions{Config: tc.Config})
		require.NoError(t, err)
		require.False(t, res.Failed, "%s: %s", res.FailureCode, res.FailureMessage)
		assert.Positive(t, res.LLMCalls, "the extractive client answers llm_complete")
		assert.Equal(t, "llm", res.Batches[0].Method)
	})
}

// The clip-archive of a long agent run, compacted offline turn by turn:
// short (the extractive summarizer writes at most 400 code points a chunk
// and 2,880 a fold, so four batches shown come to about 1,100 tokens of
// ⌈characters/4⌉ at any window: it used to grow with the window, to
// about 2,000 at 16,000), no line twice, each batch's lines in time
// order, every tool result said with its call.
func TestOfflineArchiveOfALongAgentRun(t *testing.T) {
	ctx := context.Background()
	conv, err := os.ReadFile(filepath.Join("testdata", "conversations", "debugging-session.json"))
	require.NoError(t, err)
	var all []json.RawMessage
	require.NoError(t, json.Unmarshal(conv, &all))
	var roles []struct {
		Role string `json:"role"`
	}
	require.NoError(t, json.Unmarshal(conv, &roles))
	c := openBuilt(t, map[string]any{"model_max_tokens": 16000})
	var view []json.RawMessage
	var archive string
	compactions := 0
	for i := 0; i < len(all); {
		// A turn: a user message and what follows it.
		j := i + 1
		for j < len(all) && roles[j].Role != "user" {
			j++
		}
		view = append(view, all[i:j]...)
		i = j
		res, err := c.Compress(ctx, "conv-checkout-inc-4471", view, &clipfold.CompressOptions{OnlyIfDue: true})
		require.NoError(t, err)
		require.False(t, res.Failed, "%s: %s", res.FailureCode, res.FailureMessage)
		if res.MessagesCompressed > 0 {
			compactions++
			view = res.History
			require.NotNil(t, res.ClipArchive)
			archive = *res.ClipArchive
		}
	}
	require.GreaterOrEqual(t, compactions, 3)
	t.Logf("%d compactions; the archive: %d code points\n%s", compactions, len([]rune(archive)), archive)
	assert.LessOrEqual(t, (len([]rune(archive))+3)/4, 1200, "tokens (characters/4)")

	seen := map[string]bool{}
	day := ""
	tools := 0
	for _, l := range strings.Split(archive, "\n") {
		if strings.HasPrefix(l, "[Batch ") {
			day = ""
			continue
		}
		if !datedLine.MatchString(l) {
			continue
		}
		assert.GreaterOrEqual(t, l[1:11], day, "lines in time order: %s", l)
		day = l[1:11]
		text := l[13:]
		assert.False(t, seen[text], "said twice: %s", text)
		seen[text] = true
		if strings.HasPrefix(text, "Tool") {
			tools++
			assert.False(t, strings.HasPrefix(text, "Tool: "), "a result says its call: %s", text)
		}
	}
	assert.Positive(t, tools, "what the agent learned from its tools is in the archive")
}
