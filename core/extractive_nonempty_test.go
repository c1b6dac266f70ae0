package core

import (
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A chunk made only of messages without a letter or a digit ("👍", "...",
// an empty message) still has a summary: importance-ordered chunking puts
// the least informative messages together, and an empty summary fails the
// whole compaction (invalid_summary).
func TestExtractiveNeverEmptyForMessagesWithoutWords(t *testing.T) {
	repeat := func(role, content string, n int) []string {
		var p []string
		for range n {
			p = append(p, role, content)
		}
		return p
	}
	tests := []struct {
		name  string
		pairs []string
		want  string // a line of the summary
	}{
		{"twenty thumbs-up", repeat("user", "👍", 20), "[2023-05-08] User: 👍"},
		{"emoji and punctuation", []string{"user", "🎉🎉", "assistant", "...", "user", "?!"}, "[2023-05-08] User: 🎉🎉"},
		{"several lines", []string{"assistant", "\n  - 🙂\n\n🙃  \n"}, "[2023-05-08] Assistant: 🙂"},
		{"empty messages", repeat("assistant", "", 3), "[2023-05-08] Assistant: (no text)"},
		{"blank messages", repeat("user", " \n\t ", 3), "[2023-05-08] User: (no text)"},
		{"a tool call without a word", []string{"call:", "{}"}, "[2023-05-08] Tool call: ()"},
		{"a tool result without a word", []string{"call:f", "{}", "tool", "[]"}, "[2023-05-08] Tool call: f()"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msgs := datedMsgs(may8, time.Minute, tc.pairs...)
			for _, maxTokens := range []int{1, 3, 1024} {
				out := ExtractiveSummarizeMessages("", msgs, maxTokens, 20000)
				require.NotEmpty(t, strings.TrimSpace(out), "max_tokens %d", maxTokens)
				assert.LessOrEqual(t, EstimateTokens(out), maxTokens)
				assert.True(t, utf8.ValidString(out))
				if maxTokens == 1024 {
					assert.Equal(t, tc.want, out)
				}
			}
			// The same messages as a summarization request (no dates).
			req := BuildSummarizationRequest("", "", msgs, "m", 1024, 20000)
			assert.Equal(t, tc.want[len("[2023-05-08] "):], ExtractiveSummary(&req))
		})
	}
	t.Run("said with words elsewhere, the words win", func(t *testing.T) {
		msgs := datedMsgs(may8, time.Minute, "user", "👍", "assistant", "", "user", "The deploy of checkout-api v2.14.1 is done.", "user", "...")
		assert.Equal(t, "[2023-05-08] User: The deploy of checkout-api v2.14.1 is done.", ExtractiveSummarizeMessages("", msgs, 1024, 20000))
	})
	t.Run("a previous summary is no reason to say nothing", func(t *testing.T) {
		prev := "[2023-05-08] User: 👍"
		out := ExtractiveSummarizeMessages(prev, datedMsgs(may8, time.Minute, repeat("user", "👍", 4)...), 1024, 20000)
		assert.Equal(t, "[2023-05-08] User: 👍", out)
	})
	t.Run("re-summarized", func(t *testing.T) {
		lines := []string{"[2023-05-08] User: 👍", "[2023-05-09] Assistant: (no text)"}
		out := ExtractiveResummarize(lines, 1024)
		assert.Contains(t, lines, out, "only filler: the best line of it")
		assert.Equal(t, "[2023-05-08] User: 👍", ExtractiveResummarize(lines[:1], 1024))
		out = ExtractiveResummarize([]string{"[2023-05-08] User: 👍", "[2023-05-09] User: We meet on Friday at 10:00."}, 1024)
		assert.Equal(t, "[2023-05-09] User: We meet on Friday at 10:00.", out)
		out = ExtractiveResummarize([]string{"## Decisions\n[Batch 1 — depth 0, a to b]"}, 1024)
		assert.Equal(t, "## Decisions", out, "only structural lines: they are all there is")
	})
}

// The bundled debugging session three times over, with fresh ids (2,652
// messages), compacts offline at every chunk size: its 24 thumbs-up
// replies end up in one chunk of their own.
func TestExtractiveCompactsTheTripledDebuggingSession(t *testing.T) {
	once := loadConversation(t, "../testdata/conversations/debugging-session.json")
	var hist []Message
	for r := range 3 {
		for _, m := range once {
			m.ID = "r" + strconv.Itoa(r) + "-" + m.ID
			if m.ToolCallID != "" {
				m.ToolCallID = "r" + strconv.Itoa(r) + "-" + m.ToolCallID
			}
			m.ToolCalls = append([]ToolCall(nil), m.ToolCalls...)
			for i := range m.ToolCalls {
				m.ToolCalls[i].ID = "r" + strconv.Itoa(r) + "-" + m.ToolCalls[i].ID
			}
			hist = append(hist, m)
		}
	}
	require.Len(t, hist, 2652)
	for _, size := range []int{1, 5, 20, 100, 2652} {
		t.Run("chunk_size="+strconv.Itoa(size), func(t *testing.T) {
			c := DefaultConfig()
			c.Summarizer, c.ChunkSize = SummarizerExtractive, size
			r := newRig()
			res := r.compress(t, "conv", append([]Message(nil), hist...), c)
			require.False(t, res.Failed, "%s: %s", res.FailureCode, res.FailureMessage)
			assert.Equal(t, len(Split(hist, &c).ToCompress), res.MessagesCompressed)
			assert.Greater(t, res.MessagesCompressed, 2600)
			assert.Less(t, res.TokensAfter, res.TokensBefore)
			require.Len(t, r.mem.commits, 1)
		})
	}
}

// BenchmarkExtractiveSummarizeMessages summarizes the bundled debugging
// session (884 messages) as a compaction does: chunks of 20, each folded
// into the summary of the one before.
func BenchmarkExtractiveSummarizeMessages(b *testing.B) {
	var t testing.T
	msgs := loadConversation(&t, "../testdata/conversations/debugging-session.json")
	size := 0
	for i := range msgs {
		size += len(msgs[i].Content)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		prev := ""
		for i := 0; i < len(msgs); i += 20 {
			prev = ExtractiveSummarizeMessages(prev, msgs[i:min(i+20, len(msgs))], 1024, 20000)
		}
	}
}
