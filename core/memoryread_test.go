package core

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// toolOutput is a long JSON tool output with one fact in its middle.
func toolOutput(n int, fact string) string {
	var b strings.Builder
	b.WriteString(`{"orders":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		if i == n/2 {
			b.WriteString(fact)
			continue
		}
		fmt.Fprintf(&b, `{"id":%d,"status":"delivered","items":[{"sku":"SKU-%05d","qty":%d}],"note":"nothing unusual here"}`, 1000+i, i*7, i%5+1)
	}
	b.WriteString("]}")
	return b.String()
}

// checkRead holds what every answer must: within the budget, every hit
// accounted for once and in rank order (whole, then the passage, then
// left out).
func checkRead(t *testing.T, hits []ReadHit, budget int, c *Config, r MemoryRead) {
	t.Helper()
	require.LessOrEqual(t, TextTokens(r.Text, c), budget, "the answer fits the budget:\n%s", r.Text)
	assert.Equal(t, TextTokens(r.Text, c), r.Tokens)
	var got []string
	got = append(got, r.Whole...)
	if r.Passage != "" {
		got = append(got, r.Passage)
	}
	got = append(got, r.LeftOut...)
	if len(hits) == 0 {
		assert.Empty(t, got)
		return
	}
	assert.Equal(t, idsOf(hits), got, "every hit once, in rank order")
}

func TestBuildMemoryReadFitsTheBudget(t *testing.T) {
	c := DefaultConfig()
	fact := `{"id":4471,"status":"lost in transit","carrier":"Pelican Post","tracking":"PP-88213"}`
	hits := []ReadHit{
		{Kind: "message", ID: "m1", Role: "tool", End: "2026-02-28T10:00:00.000Z", Score: 3.2,
			Text: `{"id":4471,"status":"lost in transit"}` + SearchContextSep + `get_order {"order":4471}`},
		{Kind: "batch", ID: "blk_1", Start: "2026-02-28T09:00:00.000Z", End: "2026-02-28T09:30:00.000Z", Score: 2.5,
			Text: "The user asked about order 4471; it was lost in transit.", Sources: []string{"m0", "m1"}},
		{Kind: "message", ID: "m7", Role: "tool", Score: 2.0, Text: toolOutput(200, fact)},
		{Kind: "message", ID: "m8", Role: "assistant", Score: 1.0, Text: "Order 4471 was lost; I opened a claim.", InContext: true},
		{Kind: "message", ID: "m9", Role: "user", Score: 0.5, Text: "Thanks, what about order 4472?"},
	}
	r, err := BuildMemoryRead("what happened to order 4471 with Pelican Post?", hits, 1000, &c)
	require.NoError(t, err)
	checkRead(t, hits, 1000, &c, r)
	assert.Equal(t, []string{"m1", "blk_1"}, r.Whole)
	assert.Equal(t, "m7", r.Passage, "the long tool output is cut to its best passage")
	assert.Equal(t, []string{"m8", "m9"}, r.LeftOut)
	assert.Greater(t, TextTokens(hits[2].Text, &c), 1000, "the output alone is over the budget")
	assert.Contains(t, r.Text, "Pelican Post", "the passage holds the query's words")
	assert.Contains(t, r.Text, "[3] message m7 · tool · score 2 · a passage")
	assert.Contains(t, r.Text, "summarizes m0, m1")
	assert.NotContains(t, r.Text, "get_order", "a message's context lines are not shown")
	assert.Contains(t, r.Text, "Left out (over the 1000-token budget): message m8 (in your context), message m9.")
	assert.Contains(t, r.Text, `Read one whole: memory_read id="…".`)
	assert.Greater(t, r.Tokens, 700, "the budget is used: %d", r.Tokens)

	// Everything fits: no note, nothing cut.
	r, err = BuildMemoryRead("order 4471", hits[:2], 1000, &c)
	require.NoError(t, err)
	checkRead(t, hits[:2], 1000, &c, r)
	assert.Equal(t, []string{"m1", "blk_1"}, r.Whole)
	assert.NotContains(t, r.Text, "Left out")

	// The first hit alone is over the budget: its passage.
	r, err = BuildMemoryRead("tracking PP-88213", hits[2:3], 150, &c)
	require.NoError(t, err)
	checkRead(t, hits[2:3], 150, &c, r)
	assert.Equal(t, "m7", r.Passage)
	assert.Contains(t, r.Text, "PP-88213")
	assert.True(t, strings.Contains(r.Text, "…"), r.Text)

	// In context: an excerpt, and nothing to read by id.
	long := hits[3]
	long.Text = toolOutput(100, fact)
	r, err = BuildMemoryRead("pelican", []ReadHit{long}, 200, &c)
	require.NoError(t, err)
	assert.Contains(t, r.Text, "in your context · score 1 · an excerpt")
	assert.Contains(t, r.Text, "Pelican Post")
	assert.NotContains(t, r.Text, "memory_read id=")

	// Nothing found.
	r, err = BuildMemoryRead("zeppelin", nil, 0, &c)
	require.NoError(t, err)
	assert.Equal(t, `Nothing matches "zeppelin".`, r.Text)

	// A budget too small to say anything useful is refused, naming it.
	_, err = BuildMemoryRead("x", hits, 99, &c)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "max_tokens")
}

// TestMemoryReadInContextExcerpt: a long hit the agent has in its context
// is shown as a short excerpt about the query, so the budget goes to the
// archived hits after it, which then fit whole.
func TestMemoryReadInContextExcerpt(t *testing.T) {
	c := DefaultConfig()
	fact := `{"id":4471,"carrier":"Pelican Post"}`
	hits := []ReadHit{
		{Kind: "message", ID: "live", Role: "tool", InContext: true, Score: 3, Text: toolOutput(100, fact)},
		{Kind: "message", ID: "old", Role: "tool", Score: 2, Text: "Order 4471 was first shipped with Pelican Post on 2 March."},
	}
	r, err := BuildMemoryRead("order 4471 Pelican Post", hits, 300, &c)
	require.NoError(t, err)
	checkRead(t, hits, 300, &c, r)
	assert.Equal(t, []string{"live", "old"}, r.Whole)
	assert.Contains(t, r.Text, "in your context · score 3 · an excerpt\n…")
	assert.Contains(t, r.Text, "Pelican Post")
	assert.Contains(t, r.Text, "first shipped")
	ex := strings.SplitN(strings.SplitN(r.Text, "\n", 2)[1], "\n\n", 2)[0]
	assert.LessOrEqual(t, TextTokens(ex, &c), inContextTokens)
}

// TestMemoryReadPassageWeighsRareWords: a query word every row of a tool
// output says ("row") does not pull the passage away from the row the
// rare words (the id, the carrier) are in, however small the budget.
func TestMemoryReadPassageWeighsRareWords(t *testing.T) {
	c := DefaultConfig()
	var b strings.Builder
	for i := 0; i < 900; i++ {
		fmt.Fprintf(&b, `{"row":%d,"v":"filler"},`, i)
	}
	b.WriteString(`{"row":4471,"v":"Pelican Post"},`)
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&b, `{"row":%d,"v":"filler"},`, 1000+i)
	}
	hits := []ReadHit{{Kind: "message", ID: "t1", Text: b.String()}}
	for _, budget := range []int{150, 200, 400} {
		r, err := BuildMemoryRead("row 4471 Pelican", hits, budget, &c)
		require.NoError(t, err)
		checkRead(t, hits, budget, &c, r)
		assert.Contains(t, r.Text, `{"row":4471,"v":"Pelican Post"}`, "budget %d: %s", budget, r.Text)
	}
}

func TestBuildMemoryReadCountsWithTheConfiguredEstimator(t *testing.T) {
	chars4 := DefaultConfig()
	chars4.TokenEstimator = EstimatorChars4
	cons := DefaultConfig()
	text := strings.Repeat("数据库迁移失败，订单服务回滚。", 120)
	hits := []ReadHit{{Kind: "message", ID: "m1", Text: text}, {Kind: "message", ID: "m2", Text: "订单"}}
	for _, c := range []*Config{&chars4, &cons} {
		r, err := BuildMemoryRead("订单", hits, 300, c)
		require.NoError(t, err)
		checkRead(t, hits, 300, c, r)
	}
	// Chinese counts more under the conservative estimator: less of it fits.
	a, _ := BuildMemoryRead("订单", hits, 300, &chars4)
	b, _ := BuildMemoryRead("订单", hits, 300, &cons)
	assert.Greater(t, len(a.Text), len(b.Text))
}

func TestBuildMemoryReadProperty(t *testing.T) {
	c := DefaultConfig()
	rng := rand.New(rand.NewSource(7))
	words := []string{"order", "4471", "pelican", "lost", "déjà", "数据", "\x00", "{", "}", "\"id\":", "path/to/file.go", "\n", "  ", "😀", "…"}
	for it := 0; it < 300; it++ {
		var hits []ReadHit
		for i := rng.Intn(7); i > 0; i-- {
			var b strings.Builder
			for j := rng.Intn(600); j > 0; j-- {
				b.WriteString(words[rng.Intn(len(words))])
				b.WriteByte(" ,."[rng.Intn(3)])
			}
			h := ReadHit{Kind: []string{"message", "batch"}[rng.Intn(2)], ID: fmt.Sprintf("id%d", len(hits)), Text: b.String(),
				InContext: rng.Intn(3) == 0, Score: rng.Float64()}
			if rng.Intn(4) == 0 {
				h.Sources = []string{strings.Repeat("x", rng.Intn(300))}
			}
			hits = append(hits, h)
		}
		budget := MinMemoryReadTokens + rng.Intn(1500)
		r, err := BuildMemoryRead("order pelican 数据", hits, budget, &c)
		require.NoError(t, err)
		checkRead(t, hits, budget, &c, r)
	}
}

func FuzzBuildMemoryRead(f *testing.F) {
	f.Add("order 4471", toolOutput(50, `{"id":4471}`), "short", 120)
	f.Add("", "", "", 100)
	f.Add("数据", strings.Repeat("数据库", 500), "\x00\xff", 300)
	f.Fuzz(func(t *testing.T, query, a, b string, budget int) {
		if budget < MinMemoryReadTokens || budget > 1<<20 {
			return
		}
		c := DefaultConfig()
		hits := []ReadHit{{Kind: "message", ID: "a", Text: a}, {Kind: "batch", ID: "b", Text: b}, {Kind: "message", ID: a, Text: b + a}}
		r, err := BuildMemoryRead(query, hits, budget, &c)
		if err != nil {
			t.Fatal(err)
		}
		if TextTokens(r.Text, &c) > budget {
			t.Fatalf("%d tokens over a budget of %d", TextTokens(r.Text, &c), budget)
		}
	})
}

func TestTokenizeOffsets(t *testing.T) {
	s := "Héllo, wörld! 数据 re\u0301sumé"
	var got []string
	for _, w := range tokenize(s) {
		got = append(got, s[w.start:w.end])
	}
	assert.Equal(t, []string{"Héllo", "wörld", "数据", "re\u0301sumé"}, got)
}
