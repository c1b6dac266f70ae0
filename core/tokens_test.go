package core

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

// milli is what ConservativeTokens gives for events, before rounding.
func milli(ev map[int]int64) int {
	var m int64
	for k, n := range ev {
		m += n * tokenCost[k]
	}
	return int((m + 999) / 1000)
}

func TestConservativeEvents(t *testing.T) {
	for _, tc := range []struct {
		text string
		ev   map[int]int64
	}{
		{"", nil},
		{"hello world", map[int]int64{evWord: 2, evLetter: 10}},
		{"internationalization", map[int]int64{evWord: 1, evLetter: 20, evLong: 12}},
		{"camelCaseName", map[int]int64{evWord: 1, evLetter: 13, evCase: 2, evLong: 5}},
		{"1234567", map[int]int64{evDigits: 3}},
		{"order 42", map[int]int64{evWord: 1, evLetter: 5, evSpaceNum: 1, evDigits: 1}},
		{"9f86d081", map[int]int64{evMixed: 8}},
		{"a  b\t\tc", map[int]int64{evWord: 3, evLetter: 3, evBlanks: 2}},
		{"a\n\n\nb", map[int]int64{evWord: 2, evLetter: 2, evBreaks: 1}},
		{"{\"a\":1}", map[int]int64{evPunct: 5, evWord: 1, evLetter: 1, evDigits: 1}},
		{"----", map[int]int64{evPunct: 1, evPunctRep: 3}},
		{"a\x01b", map[int]int64{evWord: 2, evLetter: 2, evControl: 1}},
		{"Größe", map[int]int64{evWord: 1, evLetter: 5, evLatinX: 2, evLatinWord: 1}},
		{"Привет мир", map[int]int64{evCyrillic: 9, evCyrWord: 2}},
		{"我们", map[int]int64{evHan: 2}},
		{"👩‍💻", map[int]int64{evEmoji: 2, evEmojiMod: 1}},
		{"ქართ", map[int]int64{evByte: 12}}, // a script with no costs of its own: a token a byte
		{"a\xffb", map[int]int64{evWord: 2, evLetter: 2, evByte: 1}},
	} {
		var want tokenEvents
		for k, n := range tc.ev {
			want[k] = n
		}
		var got tokenEvents
		got.count(tc.text)
		assert.Equal(t, want, got, "%q", tc.text)
		assert.Equal(t, milli(tc.ev), ConservativeTokens(tc.text), "%q", tc.text)
	}
}

// FuzzConservativeTokens: any text, valid UTF-8 or not, gets an estimate
// between 0 and 3 tokens a byte, the same as the sum of its events.
func FuzzConservativeTokens(f *testing.F) {
	for _, s := range []string{"", "hello", "é1", " 1", "a\xff", "👍🏽👍", "Ünïcödé ÄÖ 123 ab1 --", "\t\t\n\r\x00", "日本語テキスト🙂"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := ConservativeTokens(s)
		if n < 0 || n > 3*len(s)+1 {
			t.Fatalf("%q: %d tokens for %d bytes", s, n, len(s))
		}
		var ev tokenEvents
		ev.count(s)
		if ev.tokens() != n {
			t.Fatalf("%q: %d tokens, events say %d", s, n, ev.tokens())
		}
	})
}

func TestMessageTokens(t *testing.T) {
	c := DefaultConfig()
	text := Message{Role: RoleUser, Content: "where is my order?"}
	assert.Equal(t, ConservativeTokens(text.Content)+messageFramingTokens, MessageTokens(&text, &c))
	img := Message{Role: RoleUser, Content: "look\n[image]", Media: 2}
	assert.Equal(t, ConservativeTokens(img.Content)+messageFramingTokens+2*1600, MessageTokens(&img, &c))
	call := Message{Role: RoleAssistant, HasToolCalls: true, ToolCalls: []ToolCall{{ID: "c1", Name: "lookup", Arguments: `{"id":7}`}}}
	assert.Equal(t, messageFramingTokens+ConservativeTokens("lookup")+ConservativeTokens(`{"id":7}`)+toolCallFramingTokens,
		MessageTokens(&call, &c))
	result := Message{Role: RoleTool, ToolCallID: "c1", Content: "shipped"}
	assert.Equal(t, ConservativeTokens("shipped")+messageFramingTokens+toolResultFramingTokens, MessageTokens(&result, &c))
	parts := Message{Role: RoleTool, HasResults: true, Content: "shipped", ToolCalls: []ToolCall{{ID: "c1", Arguments: "shipped", Result: true}}}
	assert.Equal(t, ConservativeTokens("shipped")+messageFramingTokens+toolResultFramingTokens, MessageTokens(&parts, &c))

	// A history counts the sum of its messages.
	hist := []Message{text, img, call, result}
	sum := 0
	for i := range hist {
		sum += MessageTokens(&hist[i], &c)
	}
	assert.Equal(t, sum, HistoryTokens(hist, &c))

	// chars4: the seeds' one ceiling over everything, images as their text.
	c.TokenEstimator = EstimatorChars4
	runes := 0
	for i := range hist {
		runes += MessageRunes(&hist[i])
	}
	assert.Equal(t, (runes+3)/4, HistoryTokens(hist, &c))
	assert.Equal(t, EstimateTokens("look\n[image]"), MessageTokens(&img, &c))
}

func TestContextTokensAndOverhead(t *testing.T) {
	c := DefaultConfig()
	c.OverheadTokens = 700
	hist := []Message{{Role: RoleUser, Content: "a question"}, {Role: RoleAssistant, Content: "an answer"}, {Role: RoleUser, Content: "more"}}
	est := HistoryTokens(hist, &c)
	assert.Equal(t, est+700, ContextTokens(hist, &c, nil))
	assert.Equal(t, 700, Overhead(hist, &c, nil))

	u := &Usage{InputTokens: 5000, Messages: 2, Set: true}
	assert.Equal(t, 5000+HistoryTokens(hist[2:], &c), ContextTokens(hist, &c, u), "no overhead on top of usage")
	assert.Equal(t, 5000-HistoryTokens(hist[:2], &c), Overhead(hist, &c, u), "what the provider counted beyond the messages")
	low := &Usage{InputTokens: 3, Messages: 2, Set: true}
	assert.Equal(t, 700, Overhead(hist, &c, low), "overhead_tokens when the provider's count leaves less")

	due, tokens, limit := ShouldCompact(hist, &Config{ContextBudget: 0.5, ModelMaxTokens: 10000, TokenEstimator: EstimatorConservative},
		&Usage{InputTokens: 5001, Messages: 3, Set: true})
	assert.True(t, due)
	assert.Equal(t, 5001, tokens)
	assert.Equal(t, 5000, limit)
}

// TestChineseIsNotCharsOverFour: a Chinese conversation counts far more
// than ⌈code points / 4⌉ (cl100k_base counts about 1.1 tokens a
// character; tools/window checks the real counts).
func TestChineseIsNotCharsOverFour(t *testing.T) {
	zh := strings.Repeat("我们明天在会议室讨论项目的预算问题，请准时参加。", 10)
	assert.GreaterOrEqual(t, ConservativeTokens(zh), 14*utf8.RuneCountInString(zh)/10)
	assert.Less(t, EstimateTokens(zh), utf8.RuneCountInString(zh)/3)
}

// TestCountsSaturate: image_tokens, overhead_tokens and usage at their
// largest never wrap a count around, where int has 32 bits too (make
// check-32bit runs this under GOARCH=386).
func TestCountsSaturate(t *testing.T) {
	c := DefaultConfig()
	c.ImageTokens, c.OverheadTokens = MaxInt, MaxInt
	hist := make([]Message, 20)
	for i := range hist {
		hist[i] = Message{Role: RoleUser, Content: "[image]", Media: 255}
	}
	assert.Equal(t, MaxCount, MessageTokens(&hist[0], &c))
	assert.Equal(t, MaxCount, HistoryTokens(hist, &c))
	assert.Equal(t, MaxCount, ContextTokens(hist, &c, nil))
	assert.Equal(t, MaxCount, ContextTokens(hist, &c, &Usage{InputTokens: MaxInt, Messages: 3, Set: true}))
	assert.Equal(t, MaxCount, Overhead(hist, &c, &Usage{InputTokens: MaxInt, Messages: 0, Set: true}))
	due, tokens, _ := ShouldCompact(hist, &c, nil)
	assert.True(t, due)
	assert.Equal(t, MaxCount, tokens)

	// A target compaction of such a history budgets without wrapping.
	big := plainHistory(30)
	for i := 0; i < len(big); i += 3 {
		big[i].Media = 255
	}
	tc := targetConfig(5000)
	tc.ImageTokens, tc.OverheadTokens = MaxInt, MaxInt
	res := newRig().compress(t, "c", big, tc)
	assert.GreaterOrEqual(t, res.TokensBefore, 0)
	assert.GreaterOrEqual(t, res.TokensAfter, 0)
	assert.LessOrEqual(t, res.TokensAfter, MaxCount)
}
