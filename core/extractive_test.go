package core

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exMsgs builds messages from role/content pairs; a role "call:NAME"
// makes an assistant message with one tool call whose arguments are the
// content, and "tool" a tool result answering the previous call.
func exMsgs(pairs ...string) []Message {
	var out []Message
	lastCall := ""
	for i := 0; i+1 < len(pairs); i += 2 {
		id := "m" + strconv.Itoa(i/2+1)
		role, content := pairs[i], pairs[i+1]
		if name, ok := strings.CutPrefix(role, "call:"); ok {
			lastCall = "call_" + id
			out = append(out, Message{ID: id, Role: RoleAssistant, HasToolCalls: true,
				ToolCalls: []ToolCall{{ID: lastCall, Name: name, Arguments: content}}})
			continue
		}
		r, ok := ParseRole(role)
		if !ok {
			panic("bad role " + role)
		}
		m := Message{ID: id, Role: r, Content: content}
		if r == RoleTool {
			m.ToolCallID = lastCall
		}
		out = append(out, m)
	}
	return out
}

func exRequest(prev string, maxTokens int, pairs ...string) *ModelRequest {
	req := BuildSummarizationRequest("", prev, exMsgs(pairs...), "extractive", maxTokens, 20000)
	return &req
}

// exLongConversation is a 40-message session with tool dumps, filler,
// decisions, errors and non-ASCII text, big enough that every budget
// below a few thousand tokens has to choose.
func exLongConversation() []string {
	var p []string
	for i := 0; i < 4; i++ {
		n := strconv.Itoa(i)
		p = append(p,
			"user", "Hi there! Thanks for jumping in, round "+n+".",
			"assistant", "Sure, happy to help. Let me look at the service logs first.",
			"call:bash", `{"cmd":"journalctl -u api --since '10 min ago' | tail -n 200"}`,
			"tool", strings.Repeat("2026-02-28T10:00:0"+n+"Z INFO request served in 12ms path=/v1/orders status=200\n", 40)+
				"2026-02-28T10:00:09Z ERROR pq: connection refused on port 5432 (attempt "+n+")\n",
			"assistant", "The API cannot reach the database: connection refused on port 5432. The pool in internal/db/pool.go retries only 3 times?",
			"user", "We decided to keep PostgreSQL 16 and must not change the schema before the March 15 deadline. Budget is $4,000/month.",
			"assistant", "Understood. I will raise max_retries to 10 in config/app.toml and add exponential backoff.",
			"user", "ok sounds good, thanks!",
			"user", "Überprüfe bitte auch die Größe des Caches — 512 MiB ist das Maximum. 日本語のログも確認してください。",
			"assistant", "Fixed: the backoff now starts at 100ms and caps at 5s; tests in ./internal/db pass (42 passed, 0 failed).",
		)
	}
	return p
}

func TestExtractiveSummaryBudget(t *testing.T) {
	long := exLongConversation()
	prev := "User: We decided to use PostgreSQL 16. Tool: ERROR E1234 on host db-1.\nAssistant: Ticket OPS-4411 tracks the outage."
	for _, mt := range []int{-5, 0, 1, 2, 3, 4, 5, 7, 8, 10, 13, 16, 20, 32, 50, 64, 100, 128, 200, 256, 500, 1024, 2048, 4096, 100000} {
		for _, withPrev := range []bool{false, true} {
			name := "max=" + strconv.Itoa(mt)
			if withPrev {
				name += "/prev"
			}
			t.Run(name, func(t *testing.T) {
				p := ""
				if withPrev {
					p = prev
				}
				req := exRequest(p, mt, long...)
				out := ExtractiveSummary(req)
				limit := mt
				if limit <= 0 {
					limit = 1024
				}
				require.NotEmpty(t, out)
				assert.LessOrEqual(t, EstimateTokens(out), limit)
				assert.True(t, utf8.ValidString(out))
				assert.NotContains(t, out, "Summarize the conversation above")
			})
		}
	}
}

func TestExtractiveSummaryEmptyInput(t *testing.T) {
	tests := []struct {
		name string
		req  *ModelRequest
	}{
		{"nil", nil},
		{"no messages", &ModelRequest{MaxTokens: 100}},
		{"only directive", exRequest("", 100)},
		{"resummarization of nothing", func() *ModelRequest { r := BuildResummarizationRequest("", nil, "", 100); return &r }()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, "", ExtractiveSummary(tc.req))
		})
	}
}

func TestExtractiveSummaryNonEmptyWhenAnyText(t *testing.T) {
	tests := []struct {
		name  string
		pairs []string
		max   int
	}{
		{"only filler", []string{"user", "thanks!", "assistant", "ok, sounds good"}, 100},
		{"one word", []string{"user", "ok"}, 1},
		{"huge sentence tiny budget", []string{"tool", strings.Repeat("x", 10000)}, 1},
		{"label does not fit", []string{"user", "PostgreSQL"}, 2},
		{"non-ASCII tiny budget", []string{"user", "日本語のテキストです"}, 1},
		{"only blanks and punctuation", []string{"user", "   \n\t ", "assistant", "--- *** ..."}, 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := ExtractiveSummary(exRequest("", tc.max, tc.pairs...))
			require.NotEmpty(t, out)
			assert.LessOrEqual(t, EstimateTokens(out), tc.max)
			assert.True(t, utf8.ValidString(out))
		})
	}
}

func TestExtractiveSummaryDeterministic(t *testing.T) {
	long := exLongConversation()
	for _, mt := range []int{20, 100, 300, 1024} {
		first := ExtractiveSummary(exRequest("Earlier: the cache was moved to Redis 7.2.", mt, long...))
		for i := 0; i < 5; i++ {
			assert.Equal(t, first, ExtractiveSummary(exRequest("Earlier: the cache was moved to Redis 7.2.", mt, long...)))
		}
	}
}

func TestExtractiveSummaryPrefersInformativeSentences(t *testing.T) {
	tests := []struct {
		name    string
		pairs   []string
		max     int
		keep    []string
		dropped []string
	}{
		{
			name: "decision and error over filler",
			pairs: []string{
				"user", "Hello! Hope you are having a good day.",
				"assistant", "Hi! Sure, let me have a look.",
				"user", "We decided to use PostgreSQL 16 for the new service.",
				"assistant", "Okay.",
				"tool", "ERROR: connection refused on port 5432",
				"user", "thanks, sounds good!",
				"assistant", "Let me think about that for a moment.",
				"user", "That is nice to hear, really nice.",
			},
			max:     30,
			keep:    []string{"We decided to use PostgreSQL 16", "ERROR: connection refused on port 5432"},
			dropped: []string{"thanks, sounds good!", "Hello!", "Okay.", "nice to hear"},
		},
		{
			name: "constraints, questions and identifiers",
			pairs: []string{
				"user", "Good morning everyone, thanks for coming.",
				"user", "The release must ship before the deadline on 2026-04-01.",
				"assistant", "That went well, I think it was a nice meeting.",
				"user", "Can we move the cron job in scripts/nightly_backup.sh to 02:00?",
				"assistant", "Great, great, love it.",
				"user", "Ticket ABC-123 tracks the HTTP 503 from https://api.example.com/v2/orders.",
				"assistant", "Cool, awesome, perfect, thank you so much!",
			},
			max:     60,
			keep:    []string{"must ship before the deadline on 2026-04-01", "scripts/nightly_backup.sh", "ABC-123", "HTTP 503"},
			dropped: []string{"Good morning", "Great, great", "Cool, awesome", "nice meeting"},
		},
		{
			name: "errors in a tool dump beat its noise",
			pairs: []string{
				"call:run_tests", `{"pkg":"./..."}`,
				"tool", strings.Repeat("ok   github.com/acme/shop/cart 0.12s\n", 30) +
					"--- FAIL: TestCheckout (0.03s)\n    checkout_test.go:88: expected total 1999, got 2099\n" +
					strings.Repeat("ok   github.com/acme/shop/user 0.08s\n", 30),
				"user", "thanks",
			},
			max:     40,
			keep:    []string{"FAIL: TestCheckout"},
			dropped: []string{"thanks"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := ExtractiveSummary(exRequest("", tc.max, tc.pairs...))
			assert.LessOrEqual(t, EstimateTokens(out), tc.max)
			for _, k := range tc.keep {
				assert.Contains(t, out, k)
			}
			for _, d := range tc.dropped {
				assert.NotContains(t, out, d)
			}
		})
	}
}

func TestExtractiveSummaryFillerDroppedEvenWithRoom(t *testing.T) {
	out := ExtractiveSummary(exRequest("", 1024,
		"user", "Thanks a lot, sounds good!",
		"assistant", "The nightly job failed with exit code 137 (OOM).",
		"user", "ok",
		"assistant", "You're welcome!"))
	assert.Equal(t, "Assistant: The nightly job failed with exit code 137 (OOM).", out)
}

func TestExtractiveSummaryOrderAttributionDedup(t *testing.T) {
	out := ExtractiveSummary(exRequest("", 1024,
		"user", "The deploy to eu-west-1 failed at 10:42.",
		"call:read_file", `{"path":"deploy/terraform/main.tf"}`,
		"tool", "resource \"aws_instance\" \"api\" { instance_type = \"t3.small\" }",
		"assistant", "The instance type t3.small is too small; we will switch to t3.large.",
		"user", "The deploy to eu-west-1 failed at 10:42.",
		"user", "the deploy to EU-WEST-1   failed at 10:42!",
	))
	lines := strings.Split(out, "\n")
	require.Len(t, lines, 3, out)
	assert.Equal(t, "User: The deploy to eu-west-1 failed at 10:42.", lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "Tool read_file(deploy/terraform/main.tf): resource"), "a result says its call: %s", lines[1])
	assert.Equal(t, "Assistant: The instance type t3.small is too small; we will switch to t3.large.", lines[2])
	assert.Equal(t, 1, strings.Count(strings.ToLower(out), "failed at 10:42"))
}

func TestExtractiveSummaryCutsHugeSentences(t *testing.T) {
	dump := `{"items":[` + strings.Repeat(`{"sku":"A-1","qty":1},`, 2000) + `{"sku":"Z-9","qty":2}]}`
	out := ExtractiveSummary(exRequest("", 1024, "tool", dump, "user", "Why did order 88231 fail?"))
	assert.Contains(t, out, "Why did order 88231 fail?")
	assert.Contains(t, out, "…")
	for _, line := range strings.Split(out, "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(line), extractiveSentenceMax+16)
	}
}

func TestExtractiveSummaryCompressesLongInput(t *testing.T) {
	long := exLongConversation()
	req := exRequest("", 100000, long...)
	in := 0
	for _, m := range req.Messages[:len(req.Messages)-1] {
		in += utf8.RuneCountInString(m.Content)
	}
	out := ExtractiveSummary(req)
	assert.Less(t, utf8.RuneCountInString(out), in/2+1)
}

// A previous summary guides the choice but is never re-emitted: each
// summary summarizes its own messages (when every fold repeated the one
// before it, ten archives held 1,138 lines, 734 unique).
func TestExtractiveSummaryNeverReEmitsPreviousSummary(t *testing.T) {
	prev := "User: We decided to use PostgreSQL 16 as the primary store.\n" +
		"Tool: ERROR E4012: payment gateway timeout on order #A-99812.\n" +
		"User: The refund of $129.99 must be issued before Friday."
	var pairs []string
	for i := 0; i < 30; i++ {
		n := strconv.Itoa(i)
		pairs = append(pairs,
			"user", "Step "+n+": the worker in services/worker_"+n+".go failed with exit code 1"+n+".",
			"assistant", "We will retry job JOB-"+n+"00 after fixing the config in conf/"+n+".yaml.")
	}
	out := ExtractiveSummary(exRequest(prev, 150, pairs...))
	assert.LessOrEqual(t, EstimateTokens(out), 150)
	for _, fact := range []string{"PostgreSQL 16", "E4012", "#A-99812", "$129.99"} {
		assert.NotContains(t, out, fact)
	}
	assert.Contains(t, out, "JOB-")

	t.Run("a sentence the previous summary holds is not picked again", func(t *testing.T) {
		out := ExtractiveSummary(exRequest("User: The deploy to eu-west-1 failed at 10:42.", 1024,
			"user", "The deploy to eu-west-1 failed at 10:42.",
			"assistant", "The instance type t3.small is too small; we will switch to t3.large."))
		assert.Equal(t, "Assistant: The instance type t3.small is too small; we will switch to t3.large.", out)
	})

	t.Run("each fold summarizes its own messages", func(t *testing.T) {
		// Ten folds as compress makes them: each chunk folds in the
		// summary before it. Every line of a fold comes from that fold's
		// messages, so no line is carried forward.
		summary := ""
		var all []string
		for round := 0; round < 10; round++ {
			n := strconv.Itoa(round)
			chunk := []string{
				"user", "ok, next one please.",
				"assistant", "Sure, let me look at the next module.",
				"call:read_file", `{"path":"billing/invoice_` + n + `.py"}`,
				"tool", "def total_" + n + "(lines):\n    return sum(l.amount for l in lines)\n",
				"assistant", "Ported billing/invoice_" + n + ".py to Go; the rounding differs by one cent in test case " + n + ".",
				"user", "Account ACC-77881" + n + " stays on the Enterprise plan, round " + n + ".",
				"assistant", "I will write the table tests for invoice_" + n + " next.",
				"user", "Sounds good!",
			}
			req := exRequest(summary, 150, chunk...)
			var parts []string
			for _, m := range req.Messages {
				if m.Role != RoleSystem {
					parts = append(parts, m.Content)
				}
			}
			own := strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
			summary = ExtractiveSummary(req)
			require.LessOrEqual(t, EstimateTokens(summary), 150)
			require.NotEmpty(t, summary)
			for _, l := range strings.Split(summary, "\n") {
				_, _, _, text, _ := summaryLine(l)
				for _, piece := range strings.Split(text, " | ") {
					assert.Contains(t, own, piece, "round %d: %q is not from this round", round, l)
				}
				all = append(all, l)
			}
		}
		seen := map[string]bool{}
		for _, l := range all {
			assert.False(t, seen[l], "line re-emitted: %q", l)
			seen[l] = true
		}
		assert.Contains(t, strings.Join(all, "\n"), "invoice_9.py")
	})
}

func TestExtractiveSummaryResummarization(t *testing.T) {
	batches := []string{
		"User: We agreed on a $40,000 budget for Q3.\nAssistant: hello there, sounds good.",
		"Tool: FAILED: migration 0042_add_index.sql timed out after 300s.",
		"The customer Maria Lopez asked for a refund of order 5512-884.",
	}
	req := BuildResummarizationRequest("", batches, "m", 60)
	out := ExtractiveSummary(&req)
	assert.LessOrEqual(t, EstimateTokens(out), 60)
	assert.Contains(t, out, "$40,000 budget")
	assert.Contains(t, out, "0042_add_index.sql")
	assert.Contains(t, out, "5512-884")
	assert.NotContains(t, out, "Summary batch")
}

func TestExtractiveSummaryClipArchiveAsPreviousSummary(t *testing.T) {
	archive := BuildClipArchive([]Batch{
		{Content: "User: The API key rotation is due on 2026-05-01.", Depth: 0},
		{Content: "Assistant: We will use Redis 7 for sessions.", Depth: 1},
	}, 2, 2, 40)
	out := ExtractiveSummary(exRequest(archive, 200, "user", "Where is the runbook for failover?",
		"assistant", "We will use Redis 7 for sessions."))
	assert.Equal(t, "User: Where is the runbook for failover?", out, "the archive guides, it is not summarized again")

	t.Run("only a previous summary: it is summarized", func(t *testing.T) {
		req := ModelRequest{MaxTokens: 200, Messages: []ModelMessage{
			{Role: RoleSystem, Content: PreviousSummaryPrefix + archive}, {Role: RoleUser, Content: DefaultDirective}}}
		out := ExtractiveSummary(&req)
		require.NotEmpty(t, out)
		for _, l := range strings.Split(out, "\n") {
			assert.Contains(t, archive, l)
		}
		assert.NotContains(t, out, "[Context Summary")
		assert.NotContains(t, out, "[Batch")
	})
}

func TestExtractiveSummaryNeverEchoesDirective(t *testing.T) {
	req := exRequest("", 4096, exLongConversation()...)
	out := ExtractiveSummary(req)
	for _, frag := range []string{"PRESERVE:", "CONDENSE:", "PRIORITIZE:", "REMOVE:", "flowing narrative", "Summarize the conversation above"} {
		assert.NotContains(t, out, frag)
	}
	assert.NotContains(t, out, DefaultSystemPrompt)
}

func TestExtractiveSummaryNonASCII(t *testing.T) {
	tests := []struct {
		name  string
		pairs []string
		max   int
		keep  []string
	}{
		{"german", []string{"user", "Wir haben entschieden: Die Datenbank bleibt PostgreSQL 16. Danke!"}, 100, []string{"PostgreSQL 16"}},
		{"japanese stops", []string{"user", "データベースはPostgreSQLに決定しました。ありがとう！エラーコードはE1234です。"}, 100, []string{"E1234"}},
		{"emoji", []string{"user", "🚀 Deploy v2.3.1 failed 💥 on node-7.", "assistant", "👍"}, 100, []string{"v2.3.1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := ExtractiveSummary(exRequest("", tc.max, tc.pairs...))
			assert.True(t, utf8.ValidString(out))
			assert.LessOrEqual(t, EstimateTokens(out), tc.max)
			for _, k := range tc.keep {
				assert.Contains(t, out, k)
			}
		})
	}
	t.Run("cut by code points", func(t *testing.T) {
		s := strings.Repeat("日本語のログ", 200) // one 1,200-code-point sentence
		for _, mt := range []int{1, 2, 5, 10, 40} {
			out := ExtractiveSummary(exRequest("", mt, "tool", s))
			require.NotEmpty(t, out)
			assert.True(t, utf8.ValidString(out))
			assert.LessOrEqual(t, EstimateTokens(out), mt)
		}
	})
}

func TestExtractiveSummaryInvalidUTF8(t *testing.T) {
	out := ExtractiveSummary(exRequest("", 50,
		"user", "The file \xff\xfe config.yaml is broken \xc3 here.",
		"tool", "\x80\x81\x82 ERROR 500"))
	assert.True(t, utf8.ValidString(out))
	assert.Contains(t, out, "config.yaml")
	assert.LessOrEqual(t, EstimateTokens(out), 50)
}

func TestForEachSentence(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"One. Two! Three? Four", []string{"One.", "Two!", "Three?", "Four"}},
		{"Use v1.2.3 of main.go, e.g. the fix. Done.", []string{"Use v1.2.3 of main.go, e.g. the fix.", "Done."}},
		{"Ask J. Smith (cf. doc). Then go.", []string{"Ask J. Smith (cf. doc).", "Then go."}},
		{"He said \"stop.\" Then left.", []string{"He said \"stop.\"", "Then left."}},
		{"--- ... !!!", nil},
		{"決定しました。次へ", []string{"決定しました。", "次へ"}},
	}
	for _, tc := range tests {
		var got []string
		forEachSentence(tc.in, func(s string) { got = append(got, s) })
		assert.Equal(t, tc.want, got, tc.in)
	}
}

// BenchmarkExtractiveSummaryChunk summarizes one default-size chunk (20
// messages, a mix of prose, tool calls and tool output, ~16 KB) folded
// into a previous summary, as compress does with fallback: extractive.
func BenchmarkExtractiveSummaryChunk(b *testing.B) {
	long := exLongConversation()[:40] // 20 messages
	prev := ExtractiveSummary(exRequest("", 1024, exLongConversation()...))
	req := exRequest(prev, 1024, long...)
	size := 0
	for _, m := range req.Messages {
		size += len(m.Content)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = ExtractiveSummary(req)
	}
}
