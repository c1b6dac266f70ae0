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

// datedMsgs builds messages from role/content pairs (as exMsgs), the k-th
// created at start + k·step.
func datedMsgs(start time.Time, step time.Duration, pairs ...string) []Message {
	msgs := exMsgs(pairs...)
	for i := range msgs {
		msgs[i].CreatedAt = start.Add(time.Duration(i) * step)
		msgs[i].HasCreatedAt = true
	}
	return msgs
}

var may8 = time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)

// casualSession is one session of a casual two-person chat: greetings,
// small talk and content-free questions around facts both sides share.
func casualSession(n int) []string {
	s := strconv.Itoa(n)
	return []string{
		"user", "Hey Mel! Good to see you! How have you been?",
		"assistant", "Hey Caroline! I'm good, thanks. What about you?",
		"user", "I went to the pottery class in Denver with Jon " + s + " days ago.",
		"assistant", "Wow, that's awesome!",
		"assistant", "My son Liam started violin lessons at Westside Music on Tuesday " + s + ".",
		"user", "That sounds great. How's the new job going?",
		"assistant", "Really well, I was promoted to head librarian at the Aurora branch in week " + s + ".",
		"user", "Congrats! I'm planning a trip to Lisbon in October " + s + " with my sister Ana.",
		"assistant", "Thanks so much! Have fun!",
		"user", "Thanks! Talk soon!",
	}
}

func TestExtractiveSummarizeMessagesDated(t *testing.T) {
	msgs := datedMsgs(may8, 26*time.Hour,
		"user", "We adopted a beagle called Max.",
		"assistant", "I ran my first half marathon in Boston.",
		"user", "Thanks!")
	out := ExtractiveSummarizeMessages("", msgs, 1024, 20000)
	assert.Equal(t, "[2023-05-08] User: We adopted a beagle called Max.\n"+
		"[2023-05-09] Assistant: I ran my first half marathon in Boston.", out)

	t.Run("chronological whatever the chunk order", func(t *testing.T) {
		// Chunks come in importance order; the summary reads in time order.
		rev := []Message{msgs[1], msgs[0], msgs[2]}
		assert.Equal(t, out, ExtractiveSummarizeMessages("", rev, 1024, 20000))
	})
	t.Run("UTC day", func(t *testing.T) {
		late := datedMsgs(time.Date(2023, 5, 8, 23, 30, 0, 0, time.FixedZone("x", -5*3600)), 0,
			"user", "The flight to Osaka leaves at 9:40 from gate B12.")
		assert.Equal(t, "[2023-05-09] User: The flight to Osaka leaves at 9:40 from gate B12.",
			ExtractiveSummarizeMessages("", late, 1024, 20000))
	})
	t.Run("undated messages get no date", func(t *testing.T) {
		assert.Equal(t, "User: We adopted a beagle called Max.",
			ExtractiveSummarizeMessages("", exMsgs("user", "We adopted a beagle called Max."), 1024, 20000))
	})
	t.Run("tool calls and results", func(t *testing.T) {
		got := ExtractiveSummarizeMessages("", datedMsgs(may8, time.Minute,
			"call:lookup_order", `{"order":"ORD-5523109"}`,
			"tool", `{"status":"delivered","carrier":"DHL"}`), 1024, 20000)
		assert.Equal(t, "[2023-05-08] Tool lookup_order(ORD-5523109): status: delivered; carrier: DHL", got,
			"a result with its call, its JSON as facts")
		got = ExtractiveSummarizeMessages("", datedMsgs(may8, time.Minute,
			"call:lookup_order", `{"order":"ORD-5523109"}`), 1024, 20000)
		assert.Equal(t, "[2023-05-08] Tool call: lookup_order(ORD-5523109)", got, "a call without its result")
	})
	t.Run("max_message_chars clamps each message first", func(t *testing.T) {
		long := "The invoice INV-" + strings.Repeat("9", 10) + " is wrong. " + strings.Repeat("padding words here ", 400) + "END-TOKEN-77 closes it."
		got := ExtractiveSummarizeMessages("", datedMsgs(may8, 0, "user", long), 1024, 200)
		assert.Contains(t, got, "characters omitted", "the message was middle-truncated to 200 code points first")
		assert.Contains(t, got, "INV-9999999999")
		got = ExtractiveSummarizeMessages("", datedMsgs(may8, 0, "user", long), 1024, 0)
		assert.NotContains(t, got, "characters omitted")
	})
}

// Greetings, thanks, acknowledgements and content-free questions are
// dropped even with room to spare; informative sentences are kept.
func TestExtractiveFillerDropped(t *testing.T) {
	dropped := []string{
		"Hey Mel! Good to see you!",
		"How have you been?",
		"What about you?",
		"Hey Caroline! I'm good, thanks.",
		"Wow, that's awesome!",
		"Thanks so much! Have fun!",
		"Thanks! Talk soon!",
		"That sounds great.",
		"How's the new job going?",
		"ok sounds good, thanks!",
		"You're welcome!",
		"Cool!",
		"Same here, really glad to hear it.",
		"Do you like it?",
		"I love it!",
	}
	kept := []string{
		"I went to the pottery class in Denver with Jon 3 days ago.",
		"My son Liam started violin lessons at Westside Music on Tuesday.",
		"I love painting sunsets.",
		"Let's meet on Friday.",
		"We decided to move to Portland.",
		"The dishwasher is broken again.",
		"Did you finish the lighthouse painting for the gallery?",
	}
	for _, d := range dropped {
		var ex extractor
		f, _, _ := ex.scan(d)
		assert.True(t, f.isFiller(), "should be filler: %q (%+v)", d, f)
	}
	for _, k := range kept {
		var ex extractor
		f, _, _ := ex.scan(k)
		assert.False(t, f.isFiller(), "should be kept: %q (%+v)", k, f)
	}
	var pairs []string
	for i, d := range dropped {
		pairs = append(pairs, []string{"user", "assistant"}[i%2], d)
	}
	for i, k := range kept {
		pairs = append(pairs, []string{"assistant", "user"}[i%2], k)
	}
	out := ExtractiveSummarizeMessages("", datedMsgs(may8, time.Hour, pairs...), 4096, 20000)
	for _, d := range dropped {
		assert.NotContains(t, out, d)
	}
	assert.Contains(t, out, "pottery class in Denver")
	assert.Contains(t, out, "violin lessons")
}

// What each side says counts the same: a casual chat in which both share
// facts gets a summary with about as many lines of each (a user bonus once
// made summaries 3:1 user).
func TestExtractiveRoleBalance(t *testing.T) {
	user, asst := 0, 0
	prev := ""
	for s := 0; s < 20; s++ {
		msgs := datedMsgs(may8.AddDate(0, 0, 7*s), time.Minute, casualSession(s)...)
		out := ExtractiveSummarizeMessages(prev, msgs, 120, 20000)
		require.LessOrEqual(t, EstimateTokens(out), 120)
		for _, l := range strings.Split(out, "\n") {
			_, label, _, _, _ := summaryLine(l)
			switch label {
			case "User":
				user++
			case "Assistant":
				asst++
			}
		}
		prev = out
	}
	t.Logf("user:assistant lines %d:%d", user, asst)
	require.Positive(t, user)
	require.Positive(t, asst)
	ratio := float64(user) / float64(asst)
	assert.InDelta(t, 1.0, ratio, 0.35, "user:assistant %d:%d", user, asst)

	t.Run("the same sentence scores the same from either side", func(t *testing.T) {
		for _, text := range []string{"I was promoted to head librarian at the Aurora branch.", "Thanks!"} {
			a := ExtractiveSummarizeMessages("", datedMsgs(may8, 0, "user", text), 1024, 0)
			b := ExtractiveSummarizeMessages("", datedMsgs(may8, 0, "assistant", text), 1024, 0)
			assert.Equal(t, strings.Replace(a, "User:", "Assistant:", 1), b)
		}
	})
}

func TestExtractiveSummarizeMessagesBudget(t *testing.T) {
	long := exLongConversation()
	for _, mt := range []int{-1, 0, 1, 2, 3, 5, 8, 13, 20, 50, 100, 256, 1024, 4096} {
		for _, prev := range []string{"", "[2026-02-27] User: We decided to use PostgreSQL 16."} {
			msgs := datedMsgs(may8, time.Minute, long...)
			out := ExtractiveSummarizeMessages(prev, msgs, mt, 20000)
			limit := mt
			if limit <= 0 {
				limit = 1024
			}
			require.NotEmpty(t, out, "max %d", mt)
			assert.LessOrEqual(t, EstimateTokens(out), limit, "max %d", mt)
			assert.True(t, utf8.ValidString(out))
			assert.Equal(t, out, ExtractiveSummarizeMessages(prev, datedMsgs(may8, time.Minute, long...), mt, 20000), "deterministic")
		}
	}
	t.Run("never empty while there is text", func(t *testing.T) {
		for _, pairs := range [][]string{{"user", "Thanks!"}, {"user", "ok"}, {"tool", strings.Repeat("x", 5000)}} {
			for _, mt := range []int{1, 4, 100} {
				out := ExtractiveSummarizeMessages("", datedMsgs(may8, 0, pairs...), mt, 20000)
				require.NotEmpty(t, out)
				assert.LessOrEqual(t, EstimateTokens(out), mt)
			}
		}
		// Even when the previous summary already says everything.
		out := ExtractiveSummarizeMessages("User: We adopted a beagle called Max.", datedMsgs(may8, 0, "user", "We adopted a beagle called Max."), 100, 0)
		assert.Equal(t, "[2023-05-08] User: We adopted a beagle called Max.", out)
	})
	t.Run("nothing in, nothing out", func(t *testing.T) {
		assert.Equal(t, "", ExtractiveSummarizeMessages("", nil, 100, 0))
	})
	t.Run("a message without a word is still said", func(t *testing.T) {
		assert.Equal(t, "[2023-05-08] User: ...", ExtractiveSummarizeMessages("", datedMsgs(may8, 0, "user", " ... "), 100, 0))
	})
}

func TestExtractiveSummarizeMessagesInvalidUTF8(t *testing.T) {
	msgs := datedMsgs(may8, time.Minute,
		"user", "The file \xff\xfe config.yaml is broken \xc3 here.",
		"tool", "\x80\x81\x82 ERROR 500",
		"assistant", "\xed\xa0\x80 surrogate and 日本語 \xf4\x90\x80\x80 done in build 42.")
	for _, mt := range []int{1, 10, 50, 1024} {
		out := ExtractiveSummarizeMessages("prev \xff summary", msgs, mt, 20000)
		assert.True(t, utf8.ValidString(out), out)
		assert.LessOrEqual(t, EstimateTokens(out), mt)
		require.NotEmpty(t, out)
	}
	out := ExtractiveSummarizeMessages("", msgs, 1024, 20000)
	assert.Contains(t, out, "config.yaml")
	out = ExtractiveResummarize([]string{"[2023-05-08] User: bad \xff byte in ticket T-1.", "\xc3"}, 100)
	assert.True(t, utf8.ValidString(out))
	assert.Contains(t, out, "T-1")
}

// A re-summarization keeps the dates and labels it was given, in date
// order, and keeps a sentence several batches hold once.
func TestExtractiveResummarizeKeepsDates(t *testing.T) {
	batches := []string{
		"[2023-05-20] User: We agreed on a $40,000 budget for Q3.\n[2023-05-08] Assistant: Hello there, sounds good.",
		"[2023-05-09] Tool: FAILED: migration 0042_add_index.sql timed out after 300s.\n[2023-05-20] User: We agreed on a $40,000 budget for Q3.",
		"The customer Maria Lopez asked for a refund of order 5512-884.",
	}
	out := ExtractiveResummarize(batches, 1024)
	assert.Equal(t, "The customer Maria Lopez asked for a refund of order 5512-884.\n"+
		"[2023-05-09] Tool: FAILED: migration 0042_add_index.sql timed out after 300s.\n"+
		"[2023-05-20] User: We agreed on a $40,000 budget for Q3.", out)

	t.Run("budget", func(t *testing.T) {
		var many []string
		for i := 0; i < 40; i++ {
			d := may8.AddDate(0, 0, i).Format("2006-01-02")
			many = append(many, "["+d+"] User: Fact number "+strconv.Itoa(i)+" is that order ORD-"+strconv.Itoa(1000+i)+" shipped to Berlin.")
		}
		for _, mt := range []int{1, 10, 60, 200, 1024} {
			out := ExtractiveResummarize(many, mt)
			require.NotEmpty(t, out)
			assert.LessOrEqual(t, EstimateTokens(out), mt)
			for _, l := range strings.Split(out, "\n") {
				if mt >= 10 {
					assert.True(t, isDatePrefix(l), "%q keeps its date", l)
				}
			}
		}
		// With room, every distinct line survives: batches are summaries
		// already, and the oldest facts must not halve at every fold.
		few := many[:30:30]
		all := ExtractiveResummarize(append(few, few...), 100000)
		assert.Equal(t, strings.Join(few, "\n"), all)
		// The room is extractiveFoldMax code points whatever max_tokens
		// allows: a fold of 40 such lines keeps the best that fit.
		all = ExtractiveResummarize(many, 100000)
		assert.LessOrEqual(t, runeCount(all), extractiveFoldMax)
		assert.Greater(t, runeCount(all), extractiveFoldMax-200)
	})
	t.Run("the undated request path keeps dates too", func(t *testing.T) {
		req := BuildResummarizationRequest("", batches[:2], "m", 1024)
		got := ExtractiveSummary(&req)
		assert.Contains(t, got, "[2023-05-20] User: We agreed on a $40,000 budget for Q3.")
		assert.Equal(t, 1, strings.Count(got, "$40,000"))
	})
}

// The extractiveSummary export's path (a ModelRequest, no dates) uses the
// same algorithm: the same sentences, no date prefix.
func TestExtractiveSummarySameAlgorithmUndated(t *testing.T) {
	pairs := casualSession(3)
	dated := ExtractiveSummarizeMessages("", datedMsgs(may8, time.Minute, pairs...), 200, 20000)
	undated := ExtractiveSummary(exRequest("", 200, pairs...))
	require.NotEmpty(t, undated)
	assert.NotContains(t, undated, "[2023-")
	for _, l := range strings.Split(undated, "\n") {
		assert.Contains(t, dated, l)
	}
}

// The extractive entry points on any text: valid UTF-8 out, within
// max_tokens, no panic, and never empty while there is anything to
// summarize: any message at all (one without a letter or a digit, or
// without text, is said too), or any non-blank line to re-summarize.
// Each message pair is repeated 1 to 20 times: a chunk of the same
// wordless reply is what importance-ordered chunking makes of a long
// conversation.
func FuzzExtractive(f *testing.F) {
	f.Add("Hey! How have you been?", "We adopted a beagle called Max on 2023-05-08.", "[2023-05-08] User: We adopted a beagle.", 50, uint8(0))
	f.Add("", "\xff\xfe [2023-05-08] Tool call: f({})", "Summary batch:\n[9999-99-99] x", 1, uint8(1))
	f.Add("Thanks!", "ok", "[Context Summary — 2 messages]\n[Batch 1 — depth 0, a to b]\nUser: hi", 3, uint8(2))
	f.Add(strings.Repeat("日本語。", 100), strings.Repeat("a. ", 500), "User: "+strings.Repeat("| ", 50), 7, uint8(3))
	f.Add("👍", "👍", "", 1024, uint8(19))
	f.Add(" ... ", "", "## Decisions", 2, uint8(4))
	f.Add(DefaultDirective, "\t", "[2023-05-08]", 9, uint8(0))
	f.Add(`{"order_id":"4471","items":[{"sku":"A-1"},{"sku":null}],"e":{}}`, `{"order_id":"4471"}`, "Tool get_order(4471): status: ok", 300, uint8(33))
	f.Add(`[[[{"a":[1,{"b":"`, `{"cmd":"x): y"}`, "Tool f(x) : y): z (×3)", 40, uint8(65))
	f.Add("{\"ts\":1}\n{\"ts\":2}\n[03-Mar-2025] x", "{}", "[Tool result of f()]: ", 2, uint8(97))
	f.Fuzz(func(t *testing.T, a, b, prev string, maxTokens int, n uint8) {
		maxTokens = maxTokens%5000 + 1
		if maxTokens <= 0 {
			maxTokens += 5000
		}
		var pairs []string
		for range 1 + int(n%20) {
			if n&32 != 0 {
				// a tool call (arguments b) and its result (output a)
				pairs = append(pairs, "call:f", b, "tool", a)
				continue
			}
			pairs = append(pairs, "user", a, "assistant", b)
		}
		msgs := datedMsgs(may8, time.Hour, pairs...)
		check := func(what, out string, text bool) {
			if !utf8.ValidString(out) {
				t.Fatalf("%s: invalid UTF-8: %q", what, out)
			}
			if EstimateTokens(out) > maxTokens {
				t.Fatalf("%s: %d tokens > %d: %q", what, EstimateTokens(out), maxTokens, out)
			}
			if text && strings.TrimSpace(out) == "" {
				t.Fatalf("%s: empty summary of %q %q %q", what, a, b, prev)
			}
		}
		blank := func(s string) bool { return strings.TrimSpace(s) == "" }
		check("messages", ExtractiveSummarizeMessages(prev, msgs, maxTokens, 1000), true)
		check("resummarize", ExtractiveResummarize([]string{a, prev, b}, maxTokens), !blank(a) || !blank(prev) || !blank(b))
		user := ModelMessage{Role: RoleUser, Content: a}
		check("request", ExtractiveSummary(&ModelRequest{MaxTokens: maxTokens, Messages: []ModelMessage{
			{Role: RoleSystem, Content: PreviousSummaryPrefix + prev}, user,
			{Role: RoleSystem, Content: SummaryBatchPrefix + b}}}), !isDirective(&user) || !blank(prev) || !blank(b))
		req := BuildSummarizationRequest("", prev, msgs, "m", maxTokens, 1000)
		check("rendered request", ExtractiveSummary(&req), true)
	})
}

// Tool output that repeats one shape — the same text but for numbers,
// times and ids — collapses into its first line, which says how many
// lines it stands for and until when; a re-summarization adds the counts
// up. Said by people, a near-duplicate is kept as said.
func TestExtractiveCollapsesRepeatedToolOutput(t *testing.T) {
	var pairs []string
	for d := 0; d < 6; d++ {
		day := may8.AddDate(0, 0, 7*d)
		pairs = append(pairs, "call:run_shell", `{"host":"web-01","command":"tail -n `+strconv.Itoa(40+d)+` /var/log/php/error.log"}`,
			"tool", "["+day.Format("02-Jan-2006")+" 0"+strconv.Itoa(d)+":45:21 UTC] PHP Notice: Only variables should be passed by reference in /var/www/shop/src/Legacy/Helpers.php on line 214")
	}
	pairs = append(pairs, "user", "By the way, DNS is managed by my cousin Farah Haddad, she has the Cloudflare login.")
	msgs := datedMsgs(may8, 7*24*time.Hour, pairs...)
	out := ExtractiveSummarizeMessages("", msgs, 1024, 20000)
	first, last := dayOf(msgs[1].CreatedAt), dayOf(msgs[11].CreatedAt)
	assert.Equal(t, 1, strings.Count(out, "PHP Notice"), out)
	assert.Contains(t, out, "["+first+"] Tool run_shell(host=web-01, command=tail -n 40 /var/log/php/er…): [08-May-2023 00:45:21 UTC] PHP Notice: "+
		"Only variables should be passed by reference in /var/www/shop/src/Legacy/Helpers.php on line 214 (×6, to "+last+")",
		"the output of calls that differ only in numbers, with the first call")
	assert.Contains(t, out, "Farah Haddad")

	t.Run("a re-summarization adds the counts up", func(t *testing.T) {
		later := "[2023-08-03] Tool run_shell(host=web-01, command=tail -n 150 /var/log/php/e…): [03-Aug-2023 11:02:09 UTC] PHP Notice: " +
			"Only variables should be passed by reference in /var/www/shop/src/Legacy/Helpers.php on line 215 (×3, to 2023-08-20)"
		got := ExtractiveResummarize([]string{out, later}, 1024)
		assert.Equal(t, 1, strings.Count(got, "PHP Notice"), got)
		assert.Contains(t, got, "on line 214 (×9, to 2023-08-20)")
		assert.Contains(t, got, "Farah Haddad")
		again := ExtractiveResummarize([]string{got}, 1024)
		assert.Equal(t, got, again, "folding a fold changes nothing")
	})
	t.Run("speech is kept as said", func(t *testing.T) {
		got := ExtractiveSummarizeMessages("", datedMsgs(may8, 24*time.Hour,
			"user", "The budget for the cluster is $4,000 per month.",
			"user", "The budget for the cluster is $5,000 per month."), 1024, 20000)
		assert.Contains(t, got, "$4,000")
		assert.Contains(t, got, "$5,000")
		assert.NotContains(t, got, "×")
	})
	t.Run("the mark stays with its sentence", func(t *testing.T) {
		var got []string
		forEachSentence("Disk full. (×3, to 2023-05-09) | Next one. Done.", func(s string) { got = append(got, s) })
		assert.Equal(t, []string{"Disk full. (×3, to 2023-05-09)", "Next one.", "Done."}, got)
		for in, want := range map[string][3]string{
			"Disk full. (×3, to 2023-05-09)": {"Disk full.", "3", "2023-05-09"},
			"Disk full (×12)":                {"Disk full", "12", ""},
			"Disk full (×1)":                 {"Disk full (×1)", "0", ""},
			"Disk full (×3, to May 9)":       {"Disk full (×3, to May 9)", "0", ""},
			"Disk full (×x)":                 {"Disk full (×x)", "0", ""},
			"Disk full (×)":                  {"Disk full (×)", "0", ""},
		} {
			s, n, last := cutRepeatMark(in)
			assert.Equal(t, want, [3]string{s, strconv.Itoa(int(n)), last}, in)
		}
	})
}

// What a sentence carries counts by how rare it is in what is being
// summarized: the paths, acronyms and words of a log that fills every
// source say less than a fact said once, and prose that says what a
// tool result shows is kept over the raw output.
func TestExtractiveInformationOverBoilerplate(t *testing.T) {
	var batches []string
	for d := 0; d < 12; d++ {
		day := may8.AddDate(0, 0, d).Format("2006-01-02")
		batches = append(batches, "["+day+"] Tool: SELECT p.id, p.name, p.price FROM products p JOIN categories c ON c.id = p.category_id WHERE c.slug = 'cat-"+
			strings.Repeat("x", d+1)+"' ORDER BY p.sort LIMIT 48;")
	}
	batches = append(batches,
		"[2023-05-09] Assistant: db-01 is a Hetzner AX52 in their Falkenstein data centre, running Debian 12 with MariaDB 10.11.",
		"[2023-05-10] User: By the way, DNS is managed by my cousin Farah Haddad, she has the Cloudflare login.")
	out := ExtractiveResummarize(batches, 120)
	assert.LessOrEqual(t, EstimateTokens(out), 120)
	assert.Contains(t, out, "Falkenstein")
	assert.Contains(t, out, "Farah Haddad")

	t.Run("prose over the output it restates", func(t *testing.T) {
		msgs := datedMsgs(may8, time.Minute,
			"user", "When does the backup run?",
			"call:run_shell", `{"host":"db-01","command":"crontab -l"}`,
			"tool", "# m h dom mon dow command\n30 2 * * * /usr/local/bin/backup.sh >> /var/log/backup.log 2>&1",
			"assistant", "The backup job runs every night at 02:30 via /usr/local/bin/backup.sh, logging to /var/log/backup.log.")
		out := ExtractiveSummarizeMessages("", msgs, 40, 20000)
		assert.Contains(t, out, "Assistant: The backup job runs every night at 02:30")
		assert.NotContains(t, out, "Tool: ")
	})
}

// A re-summarization covers its whole time span: the best sentence of
// every day first (best days first), then the best of the rest, so a busy
// day full of strong lines cannot push a quiet day out of the fold.
func TestExtractiveResummarizeCoversEveryDay(t *testing.T) {
	busy := []string{
		"[2023-05-08] User: We decided to move billing-api to PostgreSQL 16 on db-7.example.com before the 2023-06-01 deadline.",
		"[2023-05-08] Assistant: Decision recorded: Kafka on Amazon MSK, topic orders.v1 keyed by tenant, chosen over RabbitMQ for replay.",
		"[2023-05-08] User: The hard budget cap is $18,000/month for infrastructure, with $60,000 once for contractors (INV-2231).",
		"[2023-05-08] Assistant: Constraint recorded: EU data stays in eu-central-1, never replicated to us-east-1 (GDPR, ticket SEC-118).",
		"[2023-05-08] User: We agreed that Marco Rossi owns the backend and Aiko Tanaka the mobile SDK until release v2.4.0 ships.",
	}
	quiet := []string{
		"[2023-05-20] Assistant: Maya adopted a grey tabby cat called Pickle from the shelter on the hill, three years old and very shy.",
		"[2023-06-02] User: The new flat is in Stockbridge, top floor with a tiny kitchen and an enormous window over the water of Leith.",
	}
	out := ExtractiveResummarize([]string{strings.Join(busy, "\n"), strings.Join(quiet, "\n")}, 100)
	assert.LessOrEqual(t, EstimateTokens(out), 100)
	assert.Contains(t, out, "Pickle")
	assert.Contains(t, out, "Stockbridge")
	assert.Contains(t, out, "[2023-05-08] User: We decided", "the busy day keeps its best")
}
