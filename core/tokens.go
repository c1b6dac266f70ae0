package core

import "unicode/utf8"

// EstimateTokens is the seeds' token estimate of a text, ⌈code points /
// 4⌉: token_estimator "chars4". It is what the extractive summarizer
// sizes its summaries by and what a summarizer's usage is reported in; a
// count that must not be below a real tokenizer's (the context window)
// is TextTokens, MessageTokens or HistoryTokens.
func EstimateTokens(text string) int {
	return ceilDiv4(runeCount(text))
}

func ceilDiv4(n int) int { return (n + 3) / 4 }

// Values of the token_estimator key.
const (
	EstimatorConservative = "conservative"
	EstimatorChars4       = "chars4"
)

// Per-message framing of the conservative estimate
// (docs/spec.md#counting-tokens-and-the-window): what a provider's chat format
// adds around a message (role, separators), around each tool call (its id, the
// name and the arguments' wrapper) and around each tool result (the id of the
// call it answers). OpenAI documents 3 tokens a message and 1 for a name;
// these are rounded up.
const (
	messageFramingTokens    = 4
	toolCallFramingTokens   = 8
	toolResultFramingTokens = 4
)

// TextTokens is the estimate of a text alone, under c's token_estimator:
// the conservative estimate (ConservativeTokens) or chars4.
func TextTokens(text string, c *Config) int {
	if c.TokenEstimator == EstimatorChars4 {
		return EstimateTokens(text)
	}
	return ConservativeTokens(text)
}

// MessageTokens is what one message counts under c: its text and tool
// outputs, each tool call's name and arguments, image_tokens per image,
// document, file or audio part, and the per-message framing. Under
// chars4 it is the seeds' ⌈code points / 4⌉ of what MessageRunes counts
// (placeholders as text, no framing). HistoryTokens is the sum of
// MessageTokens under the conservative estimator, so a history's count is
// the sum of its messages' counts.
func MessageTokens(m *Message, c *Config) int {
	if c.TokenEstimator == EstimatorChars4 {
		return ceilDiv4(MessageRunes(m))
	}
	n := int64(ConservativeTokens(m.Content)) + messageFramingTokens + int64(m.Media)*int64(c.ImageTokens)
	if m.ToolCallID != "" && !m.HasResults {
		n += toolResultFramingTokens
	}
	for i := range m.ToolCalls {
		tc := &m.ToolCalls[i]
		if tc.Result {
			n += toolResultFramingTokens // its output is in Content
			continue
		}
		n += int64(ConservativeTokens(tc.Name)) + int64(ConservativeTokens(tc.Arguments)) + toolCallFramingTokens
	}
	return int(min(n, MaxCount))
}

// MaxCount is where token counts stop: far over any context window, and
// low enough that a few of them add up without overflow where int has 32
// bits (TinyGo's wasm). Sums of counts use AddCounts.
const MaxCount = 1 << 28

// AddCounts is a + b, at most MaxCount (a, b ≥ 0).
func AddCounts(a, b int) int { return min(a+b, MaxCount) }

// HistoryTokens is what msgs count under c, without overhead_tokens:
// the sum of MessageTokens, or under chars4 the seeds' one ceiling over
// everything the messages count, concatenated.
func HistoryTokens(msgs []Message, c *Config) int {
	if c.TokenEstimator == EstimatorChars4 {
		n := 0
		for i := range msgs {
			n += MessageRunes(&msgs[i])
		}
		return ceilDiv4(n)
	}
	n := 0
	for i := range msgs {
		n = AddCounts(n, MessageTokens(&msgs[i], c))
	}
	return n
}

// keptTokens is what a compacted history counts, without the overhead:
// the clip-archive (content) and the messages of hist at keep.
func keptTokens(hist []Message, keep []int, content string, c *Config) int {
	if c.TokenEstimator == EstimatorChars4 {
		n := runeCount(content)
		for _, k := range keep {
			n += MessageRunes(&hist[k])
		}
		return ceilDiv4(n)
	}
	n := AddCounts(ConservativeTokens(content), messageFramingTokens)
	for _, k := range keep {
		n = AddCounts(n, MessageTokens(&hist[k], c))
	}
	return n
}

// Usage is what the provider reported for the last request (input "usage",
// docs/spec.md#counting-tokens-and-the-window): InputTokens for a
// request that held the first Messages messages of the history, with the
// system prompt and the tools. Set says it was given.
type Usage struct {
	InputTokens int
	Messages    int
	Set         bool
}

// ContextTokens is what the history counts in the model's context: with
// usage, the provider's count for the messages it saw plus the estimate
// of the rest (no overhead_tokens on top: the provider's count holds
// it); otherwise the estimate of every message plus overhead_tokens. The
// caller has checked usage against the history (usage.Messages ≤
// len(msgs)).
func ContextTokens(msgs []Message, c *Config, u *Usage) int {
	if u != nil && u.Set {
		return AddCounts(min(u.InputTokens, MaxCount), HistoryTokens(msgs[min(u.Messages, len(msgs)):], c))
	}
	return AddCounts(min(c.OverheadTokens, MaxCount), HistoryTokens(msgs, c))
}

// Overhead is what a history's count adds to its messages' estimate:
// overhead_tokens, or with usage what the provider counted beyond the
// estimate of the messages it saw, when that is more (the estimate is
// conservative, so that difference can be below the system prompt's
// real cost, and overhead_tokens, when the host sets it, is the better
// bound then). Counts of a changed history (after a compaction) add it.
func Overhead(msgs []Message, c *Config, u *Usage) int {
	if u == nil || !u.Set {
		return min(c.OverheadTokens, MaxCount)
	}
	return min(max(c.OverheadTokens, u.InputTokens-HistoryTokens(msgs[:min(u.Messages, len(msgs))], c)), MaxCount)
}

// ShouldCompact reports whether the history's count (ContextTokens) is
// over context_budget × model_max_tokens (seed AC1.1), with both numbers.
func ShouldCompact(msgs []Message, c *Config, u *Usage) (due bool, tokens, limit int) {
	tokens = ContextTokens(msgs, c, u)
	limit = int(c.ContextBudget * float64(c.ModelMaxTokens))
	return tokens > limit, tokens, limit
}

// The conservative estimator.
//
// ConservativeTokens reads the text once, byte by byte, and counts
// events: a word of ASCII letters, each letter, a lower-to-upper case
// change inside a word, each group of up to three digits, each character
// of a run that mixes letters and digits (hashes, base64, ids), each
// punctuation mark (less when it repeats the one before), each run of
// blanks and of line breaks, and per code point of each non-Latin script
// it knows (with a word event for the alphabetic ones). Each event has a
// cost in thousandths of a token (tokenCost); the estimate is the sum,
// rounded up. Code points of a script it does not know cost one token a
// UTF-8 byte: no byte-level BPE tokenizer can use more.
//
// The costs were fitted on testdata/tokens (real text of sixteen kinds)
// against the o200k_base and cl100k_base counts, so that every message's
// estimate is at least the larger of the two, then rounded up; the test
// in tools/window holds them to the bounds of
// docs/spec.md#counting-tokens-and-the-window (RATIONALE.md, "The
// conservative token estimator").
func ConservativeTokens(s string) int {
	var ev tokenEvents
	ev.count(s)
	return ev.tokens()
}

// Token events (indices into tokenEvents and tokenCost).
const (
	evWord      = iota // a run of letters (ASCII, Latin with diacritics)
	evLetter           // each ASCII letter of such a run
	evCase             // a lower-to-upper change inside a word (camelCase)
	evLong             // each letter of a word past its eighth
	evLatinWord        // a word with a non-ASCII Latin letter
	evDigits           // each group of up to 3 digits of a run of digits
	evMixed            // each character of a run mixing letters and digits
	evPunct            // an ASCII punctuation mark
	evPunctRep         // one that repeats the byte before it ("----", "==")
	evSpaceNum         // a space before a number (a token of its own)
	evBlanks           // a run of two or more spaces or tabs
	evBreaks           // a run of line breaks
	evControl          // another control character
	evLatinX           // a non-ASCII Latin letter or combining mark
	evCyrillic         // a Cyrillic code point
	evCyrWord          // a word of Cyrillic letters
	evGreek            // a Greek code point
	evGreekWord        // a word of Greek letters
	evHebrew           // a Hebrew code point
	evArabic           // an Arabic code point
	evSemWord          // a word of Hebrew or Arabic letters
	evIndic            // a Devanagari code point
	evIndicWord        // a word of Devanagari
	evThai             // a Thai code point
	evHan              // a CJK ideograph
	evKana             // a kana
	evHangul           // a Hangul syllable or jamo
	evCJKPunct         // CJK and full-width punctuation
	evEmoji            // a pictograph, symbol or regional indicator
	evEmojiMod         // a joiner, variation selector, skin tone or tag
	evSymbol           // other punctuation and symbols (general punctuation, arrows, box drawing, …)
	evByte             // each UTF-8 byte of a code point of another script
	numEvents
)

// tokenCost is each event's cost in thousandths of a token.
var tokenCost = [numEvents]int64{
	evWord:      880,
	evLetter:    100,
	evCase:      1000,
	evLong:      220,
	evLatinWord: 2500,
	evDigits:    1400,
	evMixed:     620,
	evPunct:     570,
	evPunctRep:  100,
	evSpaceNum:  1200,
	evBlanks:    1390,
	evBreaks:    790,
	evControl:   1000,
	evLatinX:    1500,
	evCyrillic:  490,
	evCyrWord:   760,
	evGreek:     870,
	evGreekWord: 3470,
	evHebrew:    1380,
	evArabic:    960,
	evSemWord:   0,
	evIndic:     1210,
	evIndicWord: 570,
	evThai:      1210,
	evHan:       1550,
	evKana:      1020,
	evHangul:    1840,
	evCJKPunct:  1000,
	evEmoji:     3330,
	evEmojiMod:  3340,
	evSymbol:    1000,
	evByte:      1000,
}

// tokenEvents counts the events of a text.
type tokenEvents [numEvents]int64

func (ev *tokenEvents) tokens() int {
	var milli int64
	for k := range ev {
		milli += ev[k] * tokenCost[k]
	}
	return int((milli + 999) / 1000)
}

// Byte classes of ASCII.
const (
	tbLower = iota
	tbUpper
	tbDigit
	tbPunct
	tbSpace // space, tab
	tbBreak // \n, \r
	tbControl
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range t {
		switch {
		case c >= 'a' && c <= 'z':
			t[c] = tbLower
		case c >= 'A' && c <= 'Z':
			t[c] = tbUpper
		case c >= '0' && c <= '9':
			t[c] = tbDigit
		case c == ' ' || c == '\t':
			t[c] = tbSpace
		case c == '\n' || c == '\r':
			t[c] = tbBreak
		case c < 0x20 || c == 0x7f:
			t[c] = tbControl
		default:
			t[c] = tbPunct
		}
	}
	return t
}()

// Script classes of non-ASCII code points (scriptOf).
const (
	scOther    = iota // not known: evByte per UTF-8 byte
	scLatin           // a letter that continues an ASCII word
	scCyrillic        //
	scGreek           //
	scHebrew          //
	scArabic          //
	scIndic           //
	scThai            //
	scHan             //
	scKana            //
	scHangul          //
	scCJKPunct        //
	scEmoji           //
	scEmojiMod        //
	scSymbol          //
)

// bmpScript is the script class of each 16 code points of the Basic
// Multilingual Plane: one table lookup a code point.
var bmpScript = func() (t [0x10000 >> 4]uint8) {
	set := func(lo, hi rune, sc uint8) {
		for b := lo >> 4; b <= hi>>4; b++ {
			t[b] = sc
		}
	}
	set(0x0080, 0x00BF, scSymbol) // Latin-1 punctuation and signs (NBSP, ©, «, °)
	set(0x00C0, 0x02AF, scLatin)  // Latin-1 letters, Latin Extended-A/B, IPA
	set(0x02B0, 0x02FF, scSymbol) // spacing modifiers
	set(0x0300, 0x036F, scLatin)  // combining diacritics
	set(0x0370, 0x03FF, scGreek)
	set(0x0400, 0x052F, scCyrillic)
	set(0x0590, 0x05FF, scHebrew)
	set(0x0600, 0x06FF, scArabic)
	set(0x0750, 0x077F, scArabic)
	set(0x08A0, 0x08FF, scArabic)
	set(0x0900, 0x097F, scIndic)
	set(0x0E00, 0x0E7F, scThai)
	set(0x1100, 0x11FF, scHangul)
	set(0x1C80, 0x1C8F, scCyrillic)
	set(0x1E00, 0x1EFF, scLatin) // Latin Extended Additional (Vietnamese)
	set(0x1F00, 0x1FFF, scGreek)
	set(0x2000, 0x2BFF, scSymbol) // punctuation, arrows, math, box drawing, technical
	set(0x2190, 0x21FF, scSymbol)
	set(0x2600, 0x27BF, scEmoji) // miscellaneous symbols, dingbats
	set(0x2B00, 0x2BFF, scEmoji)
	set(0x2E80, 0x2FDF, scHan) // radicals
	set(0x3000, 0x303F, scCJKPunct)
	set(0x3040, 0x30FF, scKana)
	set(0x3130, 0x318F, scHangul)
	set(0x31F0, 0x31FF, scKana)
	set(0x3200, 0x33FF, scCJKPunct) // enclosed CJK, compatibility
	set(0x3400, 0x4DBF, scHan)
	set(0x4E00, 0x9FFF, scHan)
	set(0xA960, 0xA97F, scHangul)
	set(0xAC00, 0xD7FF, scHangul)
	set(0xF900, 0xFAFF, scHan)
	set(0xFE00, 0xFE0F, scEmojiMod) // variation selectors
	set(0xFE30, 0xFE4F, scCJKPunct)
	set(0xFF00, 0xFFEF, scCJKPunct) // full-width forms
	return t
}()

// scriptEvent is the event of a code point of each script (scLatin's
// and scOther's are counted apart); scriptWordEvent the event of a word
// of the alphabetic ones (0: none).
var (
	scriptEvent = [...]uint8{scCyrillic: evCyrillic, scGreek: evGreek, scHebrew: evHebrew, scArabic: evArabic,
		scIndic: evIndic, scThai: evThai, scHan: evHan, scKana: evKana, scHangul: evHangul, scCJKPunct: evCJKPunct,
		scEmoji: evEmoji, scEmojiMod: evEmojiMod, scSymbol: evSymbol}
	scriptWordEvent = [len(scriptEvent)]uint8{scCyrillic: evCyrWord, scGreek: evGreekWord, scHebrew: evSemWord,
		scArabic: evSemWord, scIndic: evIndicWord}
)

// scriptOf is the script class of a non-ASCII code point.
func scriptOf(r rune) uint8 {
	if r < 0x10000 {
		switch r {
		case 0x200D, 0x20E3: // zero-width joiner, combining keycap
			return scEmojiMod
		}
		return bmpScript[r>>4]
	}
	switch {
	case r >= 0x1F3FB && r <= 0x1F3FF: // skin tones
		return scEmojiMod
	case r >= 0x1F000 && r <= 0x1FAFF:
		return scEmoji
	case r >= 0x20000 && r <= 0x3FFFF:
		return scHan
	case r >= 0xE0000 && r <= 0xE007F: // tags (subdivision flags)
		return scEmojiMod
	}
	return scOther
}

// ConservativeEvents is what ConservativeTokens counts in s, one count
// per event (ConservativeEventNames names them), for the calibration
// tool (tools/window).
func ConservativeEvents(s string) []int64 {
	var ev tokenEvents
	ev.count(s)
	return ev[:]
}

// ConservativeEventNames name the counts of ConservativeEvents.
var ConservativeEventNames = [numEvents]string{"word", "letter", "case", "long", "latin_word", "digits", "mixed", "punct", "punct_rep", "space_num",
	"blanks", "breaks", "control", "latin_x", "cyrillic", "cyr_word", "greek", "greek_word", "hebrew", "arabic",
	"sem_word", "indic", "indic_word", "thai", "han", "kana", "hangul", "cjk_punct", "emoji", "emoji_mod", "symbol", "byte"}

// count reads s once, a run at a time. A word is a run of letters and
// digits (ASCII, and Latin letters with diacritics); what it costs is
// decided at its end: letters only (a word), digits only (groups of
// three), or mixed (per character). A non-Latin alphabetic word is a run
// of one script's code points. The ASCII runs (words, blanks, line
// breaks, punctuation) are counted in locals, the rest in ev.
func (ev *tokenEvents) count(s string) {
	var (
		words, letters, long, cases, latinWords int64
		digitGroups, mixed, spaceNum            int64
		punct, punctRep, blanks, breaks, latinX int64
		wordScript                              uint8 // the script of the non-Latin word going on (0: none)
		spaced                                  bool  // the run before was of blanks
	)
	n := len(s)
	for i := 0; i < n; {
		c := s[i]
		var r rune
		w := 1
		if c >= utf8.RuneSelf {
			r, w = utf8.DecodeRuneInString(s[i:])
			sc := uint8(scOther)
			if r != utf8.RuneError || w > 1 {
				sc = scriptOf(r)
			}
			if sc != scLatin {
				i += w
				spaced = false
				if sc == scOther {
					ev[evByte] += int64(w)
				} else {
					ev[scriptEvent[sc]]++
					if we := scriptWordEvent[sc]; we != 0 && sc != wordScript {
						ev[we]++
					}
				}
				wordScript = sc
				continue
			}
			// a Latin letter with a diacritic starts a word: read on below
		}
		cl := uint8(tbLower)
		if c < utf8.RuneSelf {
			cl = asciiClass[c]
		}
		switch cl {
		case tbLower, tbUpper, tbDigit:
			// A word: letters (ASCII or Latin), digits.
			if cl == tbDigit && spaced {
				spaceNum++
			}
		word:
			var l, d, x int64
			lower, ascii := false, false
			for i < n {
				j := i
				for i < n && s[i]-'a' < 26 { // the common case: a run of lower case
					i++
				}
				if i > j {
					l += int64(i - j)
					lower, ascii = true, true
				}
				if i == n {
					break
				}
				c = s[i]
				if c-'A' < 26 {
					if lower {
						cases++
					}
					l++
					lower, ascii = false, true
					i++
					continue
				}
				if c-'0' < 10 {
					d++
					lower, ascii = false, true
					i++
					continue
				}
				if c < utf8.RuneSelf {
					break
				}
				r, w = utf8.DecodeRuneInString(s[i:])
				if (r == utf8.RuneError && w == 1) || scriptOf(r) != scLatin {
					break
				}
				l++
				x++
				lower = true
				i += w
			}
			latinX += x
			switch {
			case d == 0:
				words++
				letters += l
				if l > 8 {
					long += l - 8
				}
				if x > 0 {
					latinWords++
				}
			case l == 0:
				digitGroups += (d + 2) / 3
			default:
				mixed += l + d
			}
			if ascii {
				wordScript = 0
			}
			spaced = false
			if i+1 < n && s[i] == ' ' && s[i+1]-'a' < 26 {
				// One space and a lower-case word, the commonest next
				// run: read it at once.
				i++
				wordScript = 0
				goto word
			}
			continue
		case tbPunct:
			prev := byte(0)
			for i < n && s[i] < utf8.RuneSelf && asciiClass[s[i]] == tbPunct {
				if s[i] == prev {
					punctRep++
				} else {
					punct++
				}
				prev = s[i]
				i++
			}
			spaced = false
		case tbSpace:
			j := i
			for i < n && (s[i] == ' ' || s[i] == '\t') {
				i++
			}
			if i-j >= 2 {
				blanks++
			}
			spaced = true
		case tbBreak:
			for i < n && (s[i] == '\n' || s[i] == '\r') {
				i++
			}
			breaks++
			spaced = false
		default:
			ev[evControl]++
			i++
			spaced = false
		}
		wordScript = 0
	}
	ev[evWord] += words
	ev[evLetter] += letters
	ev[evLong] += long
	ev[evCase] += cases
	ev[evLatinWord] += latinWords
	ev[evDigits] += digitGroups
	ev[evMixed] += mixed
	ev[evSpaceNum] += spaceNum
	ev[evPunct] += punct
	ev[evPunctRep] += punctRep
	ev[evBlanks] += blanks
	ev[evBreaks] += breaks
	ev[evLatinX] += latinX
}
