package core

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A tool result is said with its call, and JSON output as facts: its ids,
// numbers with their keys, paths and error names, not the raw text.
func TestExtractiveToolResultsWithTheirCalls(t *testing.T) {
	t.Run("a bare value says which call it answers", func(t *testing.T) {
		out := ExtractiveSummarizeMessages("", datedMsgs(may8, time.Minute,
			"user", "What do the two tickets cost together?",
			"call:calculate", `{"expression":"2 * 11776.5"}`,
			"tool", "23553.0"), 1024, 20000)
		assert.Contains(t, out, "[2023-05-08] Tool calculate(2 * 11776.5): 23553.0", out)
		assert.NotContains(t, out, "Tool: 23553.0")
		assert.NotContains(t, out, "Tool call:", "the call is said with its result, not again")
	})
	t.Run("JSON facts: ids, numbers with their keys, paths, error names", func(t *testing.T) {
		order := `{"order_id": "4471", "status": "failed", "error": "ErrInsufficientStock",
			"file": "orders/repository.go", "line": 57, "total": 23553.0, "customer": {"name": "Mia Li", "tier": "gold"},
			"items": [{"sku": "A-1", "qty": 2}, {"sku": "B-7", "qty": 1}], "note": null}`
		out := ExtractiveSummarizeMessages("", datedMsgs(may8, time.Minute,
			"call:get_order", `{"order_id":"4471"}`,
			"tool", order), 1024, 20000)
		line := strings.Split(out, "\n")[0]
		assert.True(t, strings.HasPrefix(line, "[2023-05-08] Tool get_order(4471): "), out)
		for _, fact := range []string{"status: failed", "error: ErrInsufficientStock", "file: orders/repository.go",
			"line: 57", "total: 23553.0", "sku: A-1, B-7"} {
			assert.Contains(t, line, fact)
		}
		assert.NotContains(t, out, "order_id: 4471", "what the call shows is not said again")
		assert.NotContains(t, out, `"`, "values unquoted")
		assert.NotContains(t, out, "null")
	})
	t.Run("every member of a document, each object its own sentence", func(t *testing.T) {
		var facts []string
		jsonFacts(`{"reservation_id": "8JX2QK", "status": "confirmed", "flights": [{"flight_number": "HAT136", "date": "2024-05-20"},
			{"flight_number": "HAT039", "date": "2024-05-20"}], "payment_methods": {"credit_card_4421486": {"brand": "visa", "last_four": "7447", "id": "credit_card_4421486"}},
			"reservations": ["NO6JO3", "AIXC49"], "name": {"first_name": "Mia", "last_name": "Li"}}`, []string{"8JX2QK"}, -1,
			func(f string) { facts = append(facts, f) })
		assert.Equal(t, []string{
			"status: confirmed; flight_number: HAT136, HAT039; payment_methods: credit_card_4421486; brand: visa; last_four: 7447; reservations: NO6JO3, AIXC49; first_name: Mia",
			"status: confirmed",
			"flight_number: HAT136; date: 2024-05-20",
			"flight_number: HAT039; date: 2024-05-20",
			"payment_methods: credit_card_4421486 (brand: visa, last_four: 7447, id: credit_card_4421486)",
			"reservations: NO6JO3, AIXC49; name (first_name: Mia, last_name: Li)",
		}, facts, "the headline first: ids, numbers, then words")
	})
	t.Run("JSON lines among text", func(t *testing.T) {
		log := "fetched 2 lines\n" +
			`{"ts":"2026-03-03T14:06:22.197Z","level":"error","msg":"create order failed","err":"pq: sorry, too many clients already"}` + "\n" +
			`{"ts":"2026-03-03T14:06:23.001Z","level":"error","msg":"create order failed","err":"context deadline exceeded"}`
		out := ExtractiveSummarizeMessages("", datedMsgs(may8, time.Minute,
			"call:bash", `{"cmd":"kubectl logs deploy/checkout-api"}`, "tool", log), 1024, 20000)
		assert.Contains(t, out, "Tool bash(kubectl logs deploy/checkout-api): ")
		assert.Contains(t, out, "err: pq: sorry, too many clients already")
		assert.Contains(t, out, "err: context deadline exceeded")
	})
	t.Run("a result that says nothing: its call is said", func(t *testing.T) {
		out := ExtractiveSummarizeMessages("", datedMsgs(may8, time.Minute,
			"call:think", `{"thought":"Yara has travel insurance, so the change fee is waived."}`, "tool", ""), 1024, 20000)
		assert.Equal(t, "[2023-05-08] Tool call: think(Yara has travel insurance, so the change fee is waived.)", out)
	})
	t.Run("a call without its result is said alone, after the text beside it", func(t *testing.T) {
		msgs := datedMsgs(may8, time.Minute, "assistant", "Checking the refund now.")
		msgs[0].ToolCalls = []ToolCall{{ID: "c1", Name: "issue_refund", Arguments: `{"order":"ORD-5523109","amount":49.9}`}}
		msgs[0].HasToolCalls = true
		out := ExtractiveSummarizeMessages("", msgs, 1024, 20000)
		assert.Equal(t, "[2023-05-08] Assistant: Checking the refund now.\n"+
			"[2023-05-08] Tool call: issue_refund(order=ORD-5523109, amount=49.9)", out)
	})
	t.Run("results carried in a message (Anthropic, AI SDK) answer their calls by id", func(t *testing.T) {
		msgs := datedMsgs(may8, time.Minute, "assistant", "", "user", "")
		msgs[0].ToolCalls = []ToolCall{{ID: "toolu_1", Name: "lookup_order", Arguments: `{"order_id":"A-5000"}`},
			{ID: "toolu_2", Name: "track", Arguments: `{"n":2}`}}
		msgs[0].HasToolCalls = true
		msgs[1].Role = RoleTool
		msgs[1].ToolCalls = []ToolCall{{ID: "toolu_2", Result: true, Arguments: "in transit at Leipzig hub, parcel 00340434161094042557"},
			{ID: "toolu_1", Result: true, Arguments: "order A-5000: label created Monday, carrier DHL"}}
		msgs[1].HasResults = true
		msgs[1].Content = msgs[1].ToolCalls[0].Arguments + "\n" + msgs[1].ToolCalls[1].Arguments
		out := ExtractiveSummarizeMessages("", msgs, 1024, 20000)
		assert.Contains(t, out, "Tool track(2): in transit at Leipzig hub")
		assert.Contains(t, out, "Tool lookup_order(A-5000): order A-5000: label created Monday, carrier DHL")
	})
}

// A line of tool output stands for others ("(×N)") only when they are
// the same but for numbers and times and come from the same call (the
// same tool, arguments that differ only in numbers): the records of 44
// reservations are 44 facts, never one sentence "(×44)".
func TestExtractiveRepeatCountsAreRight(t *testing.T) {
	var pairs []string
	for i := 0; i < 44; i++ {
		id := "R" + strconv.Itoa(1000+i) + "X"
		pairs = append(pairs, "call:get_reservation_details", `{"reservation_id":"`+id+`"}`,
			"tool", `{"reservation_id": "`+id+`", "status": "confirmed", "cabin": "economy", "flight_number": "HAT`+strconv.Itoa(100+i)+`"}`)
	}
	msgs := datedMsgs(may8, time.Minute, pairs...)
	out := ExtractiveSummarizeMessages("", msgs, 100000, 0)
	assert.NotContains(t, out, "×", "44 reservations, 44 facts")
	assert.Contains(t, out, "Tool get_reservation_details(R1043X): status: confirmed; cabin: economy; flight_number: HAT143")
	assert.Equal(t, strings.Count(out, "\n")+1, strings.Count(out, "Tool get_reservation_details(R10"), "one line a reservation: %s", out)
	fold := ExtractiveResummarize(strings.Split(ExtractiveSummarizeMessages("", msgs[:40], 100000, 0)+"\n"+out, "\n"), 100000)
	assert.NotContains(t, fold, "×", "nor in a fold")

	t.Run("the same call repeated, output the same but for numbers", func(t *testing.T) {
		var pairs []string
		for i := 0; i < 3; i++ {
			pairs = append(pairs, "call:http_get", `{"url":"https://status.example/api/health"}`,
				"tool", "HTTP 200 OK in "+strconv.Itoa(40+i)+" ms")
		}
		msgs := datedMsgs(may8, 24*time.Hour, pairs...)
		out := ExtractiveSummarizeMessages("", msgs, 1024, 20000)
		assert.Equal(t, "[2023-05-09] Tool http_get(https://status.example/api/health): HTTP 200 OK in 40 ms (×3, to 2023-05-13)", out)
		// Folded with a batch that has two more, the count adds up; a
		// fold of the fold keeps it.
		later := "[2023-05-20] Tool http_get(https://status.example/api/health): HTTP 200 OK in 51 ms (×2, to 2023-05-21)"
		fold := ExtractiveResummarize([]string{out, later}, 1024)
		assert.Equal(t, "[2023-05-09] Tool http_get(https://status.example/api/health): HTTP 200 OK in 40 ms (×5, to 2023-05-21)", fold)
		assert.Equal(t, fold, ExtractiveResummarize([]string{fold}, 1024))
	})
	t.Run("two tools with the same output are two lines", func(t *testing.T) {
		out := ExtractiveSummarizeMessages("", datedMsgs(may8, time.Minute,
			"call:restart_service", `{"name":"nginx on web-01"}`, "tool", "Service restarted, state active",
			"call:reload_config", `{"name":"haproxy on lb-02"}`, "tool", "Service restarted, state active"), 1024, 20000)
		assert.NotContains(t, out, "×")
		assert.Contains(t, out, "Tool restart_service(nginx on web-01): Service restarted, state active")
	})
}

// No line twice: a sentence several messages say, or several results
// show, is kept once, in the first place it was said.
func TestExtractiveNoRepeatedLine(t *testing.T) {
	var pairs []string
	for i := 0; i < 3; i++ {
		pairs = append(pairs,
			"assistant", "1.5x the peak target, from a separate AWS account.",
			"call:get_user_details", `{"user_id":"mia_li_3668"}`,
			"tool", `{"membership": "gold", "reservations": ["NO6JO3", "AIXC49"]}`,
			"user", "Ticket OPS-"+strconv.Itoa(100+i)+".")
	}
	msgs := datedMsgs(may8, time.Hour, pairs...)
	noRepeat := func(out string) {
		t.Helper()
		seen := map[string]bool{}
		for _, l := range strings.Split(out, "\n") {
			text := l[strings.Index(l, ": ")+2:]
			assert.False(t, seen[text], "said twice: %s\n%s", text, out)
			seen[text] = true
		}
	}
	out := ExtractiveSummarizeMessages("", msgs, 100000, 0)
	noRepeat(out)
	assert.Equal(t, 1, strings.Count(out, "1.5x the peak target"), out)
	assert.Equal(t, 1, strings.Count(out, "NO6JO3"), out)
	assert.Equal(t, 3, strings.Count(out, "Ticket OPS-"), "near-duplicates by people are kept as said")
	// A fold of batches that each said them says them once.
	fold := ExtractiveResummarize([]string{out, ExtractiveSummarizeMessages("", msgs[4:], 100000, 0), out}, 100000)
	noRepeat(fold)
	assert.Equal(t, 1, strings.Count(fold, "NO6JO3"), fold)
}

// A summarization request names each result's call; the extractive
// summary of it reads the pieces of every message: its text, its results
// with their calls, its calls (each once).
func TestSummarizationRequestRendersResultsWithTheirCalls(t *testing.T) {
	msgs := exMsgs(
		"user", "Why do checkouts fail?",
		"call:read_file", `{"path":"orders/repository.go"}`,
		"tool", "func CreateOrder(ctx context.Context) error { // returns ErrInsufficientStock without tx.Rollback()")
	msgs[1].Content = "Reading the repository code."
	long := strings.Repeat("x", ToolHeaderArgsMax+50)
	msgs = append(msgs, Message{ID: "m4", Role: RoleAssistant, Content: "", HasToolCalls: true,
		ToolCalls: []ToolCall{{ID: "call_m4", Name: "write_file", Arguments: "{\"path\":\"a.go\",\n\"body\":\"" + long + "\"}"}}},
		Message{ID: "m5", Role: RoleTool, ToolCallID: "call_m4", Content: "wrote 250 bytes"},
		Message{ID: "m6", Role: RoleTool, ToolCallID: "call_gone", Content: "a result whose call is in another chunk"})
	req := BuildSummarizationRequest("", "", msgs, "m", 1024, 20000)
	got := make([]string, len(req.Messages))
	for i, m := range req.Messages {
		got[i] = m.Role.String() + ": " + m.Content
	}
	args := "{\"path\":\"a.go\", \"body\":\"" + long + "\"}" // the line break a space
	header := "write_file(" + args[:ToolHeaderArgsMax/2] + "[… " + strconv.Itoa(len(args)-ToolHeaderArgsMax) + " characters omitted …]" + args[len(args)-ToolHeaderArgsMax/2:] + ")"
	require.Len(t, got, 7)
	assert.Equal(t, []string{
		"user: Why do checkouts fail?",
		"assistant: Reading the repository code.\n[Tool call]: read_file({\"path\":\"orders/repository.go\"})",
		"user: [Tool result of read_file({\"path\":\"orders/repository.go\"})]: func CreateOrder(ctx context.Context) error { // returns ErrInsufficientStock without tx.Rollback()",
		"assistant: [Tool call]: write_file({\"path\":\"a.go\",\n\"body\":\"" + long + "\"})",
		"user: [Tool result of " + header + "]: wrote 250 bytes",
		"user: [Tool result]: a result whose call is in another chunk",
	}, got[:6])

	out := ExtractiveSummary(&req)
	assert.Contains(t, out, "Assistant: Reading the repository code.")
	assert.Contains(t, out, "Tool read_file(orders/repository.go): func CreateOrder")
	assert.Contains(t, out, "Tool write_file(path=a.go, body=xxxxxxxx")
	assert.Contains(t, out, "Tool: a result whose call is in another chunk")
	assert.NotContains(t, out, "[Tool", "no piece of the rendering is taken for text")
	assert.NotContains(t, out, "Tool call:", "calls whose results the request shows are said with them")

	t.Run("a reused call id answers the nearest call before it", func(t *testing.T) {
		msgs := exMsgs("call:search_direct_flight", `{"date":"2024-05-20"}`, "tool", "no flights",
			"call:search_onestop_flight", `{"date":"2024-05-20"}`, "tool", "HAT136 then HAT039")
		msgs[2].ToolCalls[0].ID, msgs[3].ToolCallID = "call_same", "call_same"
		msgs[0].ToolCalls[0].ID, msgs[1].ToolCallID = "call_same", "call_same"
		req := BuildSummarizationRequest("", "", msgs, "m", 1024, 20000)
		assert.Equal(t, "[Tool result of search_direct_flight({\"date\":\"2024-05-20\"})]: no flights", req.Messages[1].Content)
		assert.Equal(t, "[Tool result of search_onestop_flight({\"date\":\"2024-05-20\"})]: HAT136 then HAT039", req.Messages[3].Content)
	})
}

// The extractive summarizer writes less than max_tokens allows, as an LLM
// does: a chunk's summary at most extractiveChunkMax code points, a fold
// at most extractiveFoldMax, so a clip-archive stays about 1,000 tokens
// at any window.
func TestExtractiveSummaryLengthCaps(t *testing.T) {
	var pairs []string
	for i := 0; i < 40; i++ {
		n := strconv.Itoa(i)
		pairs = append(pairs, "user", "Ticket OPS-"+n+": the Frankfurt cluster pg-"+n+" lost its replica at 10:"+n+" after the upgrade to PostgreSQL 16.",
			"assistant", "Decision "+n+": we fail over pg-"+n+" to the standby in Helsinki and page Priya Raman before the 15:00 deadline.")
	}
	msgs := datedMsgs(may8, time.Hour, pairs...)
	out := ExtractiveSummarizeMessages("", msgs, 100000, 20000)
	assert.LessOrEqual(t, runeCount(out), extractiveChunkMax)
	assert.Greater(t, runeCount(out), extractiveChunkMax/2)
	req := BuildSummarizationRequest("", "", msgs, "m", 100000, 20000)
	assert.LessOrEqual(t, runeCount(ExtractiveSummary(&req)), extractiveChunkMax)
	small := ExtractiveSummarizeMessages("", msgs, 20, 20000)
	assert.LessOrEqual(t, EstimateTokens(small), 20, "max_tokens still bounds it")
}

func TestCompactCall(t *testing.T) {
	for _, tc := range []struct{ name, args, want string }{
		{"get_order", `{"order_id":"4471"}`, "get_order(4471)"},
		{"search", `{"origin":"JFK","destination":"SEA","date":"2024-05-20","direct":true,"max":3}`, "search(origin=JFK, destination=SEA, date=2024-05-20,…)"},
		{"bash", `{"cmd":"grep -rn \"a): b\" ."}`, `bash(grep -rn "a) : b" .)`},
		{"nested", `{"filter":{"tier":"gold"},"ids":[1, 2]}`, `nested(filter={"tier":"gold"}, ids=[1, 2])`},
		{"raw", "not json\n  at all", "raw(not json at all)"},
		{"empty", "{}", "empty()"},
		{"long", `{"body":"` + strings.Repeat("word ", 30) + `"}`, "long(word word word word word word word word word…)"},
	} {
		assert.Equal(t, tc.want, compactCall(tc.name, tc.args, callLabelArgs), tc.name)
	}
	assert.Equal(t, `bash(grep -rn "a): b" .)`, compactCall("bash", `{"cmd":"grep -rn \"a): b\" ."}`, 0), "a call line as said")
	assert.Equal(t, "search(origin=JFK, destination=SEA, date=2024-05-20, direct=true, max=3)",
		compactCall("search", `{"origin":"JFK","destination":"SEA","date":"2024-05-20","direct":true,"max":3}`, 0))
	line := "Tool bash(grep -rn \"a) : b\" .): 3 matches"
	date, label, sp, text, _ := summaryLine("[2023-05-08] " + line)
	assert.Equal(t, [4]string{"2023-05-08", `Tool bash(grep -rn "a) : b" .)`, "3 matches", strconv.Itoa(int(spTool))},
		[4]string{date, label, text, strconv.Itoa(int(sp))})
	assert.Equal(t, callKey("Tool run_shell(tail -n 40 /var/log/php/er…)"), callKey("Tool run_shell(tail -n 150 /var/log/php/e…)"),
		"a cut label keys as its uncut words")
	assert.NotEqual(t, callKey("Tool read_file(a.go)"), callKey("Tool read_file(b.go)"))
	assert.NotEqual(t, callKey("Tool get_order(4471)"), callKey("Tool get_user(4471)"))
	assert.Equal(t, callKey("Tool get_order(4471)"), callKey("Tool get_order(4472)"))
}

// Tool output of any size is read in time linear in it: a 50,000-member
// document (its facts stop at max_message_chars, its headline looks at
// the first 2,000), and 5,000 results answering one reused call id.
func TestExtractiveHugeToolOutput(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"order_id":"4471"`)
	for i := 0; i < 50000; i++ {
		b.WriteString(`,"key_` + strconv.Itoa(i) + `":"v` + strconv.Itoa(i) + `x"`)
	}
	b.WriteString(`}`)
	start := time.Now()
	out := ExtractiveSummarizeMessages("", datedMsgs(may8, time.Minute,
		"call:dump", `{"table":"orders"}`, "tool", b.String()), 1024, 20000)
	assert.Contains(t, out, "Tool dump(orders): order_id: 4471; key_0: v0x")
	var msgs []Message
	for i := 0; i < 5000; i++ {
		msgs = append(msgs, Message{ID: "a" + strconv.Itoa(i), Role: RoleAssistant, HasToolCalls: true,
			ToolCalls: []ToolCall{{ID: "call_1", Name: "poll", Arguments: `{"n":` + strconv.Itoa(i) + `}`}}},
			Message{ID: "t" + strconv.Itoa(i), Role: RoleTool, ToolCallID: "call_1", Content: "pending " + strconv.Itoa(i)})
	}
	req := BuildSummarizationRequest("", "", msgs, "m", 1024, 20000)
	assert.Equal(t, "[Tool result of poll({\"n\":4999})]: pending 4999", req.Messages[len(req.Messages)-2].Content)
	assert.NotEmpty(t, ExtractiveSummary(&req))
	assert.NotEmpty(t, ExtractiveSummarizeMessages("", msgs, 1024, 20000))
	assert.Less(t, time.Since(start), 20*time.Second)
}
