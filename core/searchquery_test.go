package core_test

// The engines' side of query analysis (FTS5 tokenizing, stemming and
// parsing) is tested against real SQLite in hostfuncs/store/sqlite and
// real PostgreSQL in hostfuncs/store/postgres; these are the rules.

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/clipfold/clipfold/core"
)

func analyze(t *testing.T, q string) core.SearchQuery {
	t.Helper()
	a, err := core.AnalyzeSearchQuery(q, "")
	require.NoError(t, err)
	return a
}

func TestSearchQueryQuestion(t *testing.T) {
	a := analyze(t, "What did Alice decide about the connection pool's size?")
	assert.Equal(t, []string{"alic", "decid", "connect", "pool", "size"}, a.Terms)
	assert.Equal(t, `"alice" OR "decide" OR "connection" OR "pool" OR "size"`, a.FTS5)
	assert.Equal(t, `'alice' | 'decide' | 'connection' | 'pool' | 'size'`, a.TSQuery)
}

func TestSearchQueryPhrases(t *testing.T) {
	a := analyze(t, `"Connection leak" in the “worker pool” "unclosed`)
	assert.Equal(t, `"connection leak" OR "worker pool" OR "unclosed"`, a.FTS5)
	assert.Equal(t, `('connection' <-> 'leak') | ('worker' <-> 'pool') | 'unclosed'`, a.TSQuery)
	assert.Equal(t, []string{"connect", "leak", "worker", "pool", "unclos"}, a.Terms)

	// Stop words stay inside a phrase; a one-word phrase is a word.
	a = analyze(t, `"the end of it" "Deploy"`)
	assert.Equal(t, `"the end of it" OR "deploy"`, a.FTS5)
	assert.Equal(t, `('the' <-> 'end' <-> 'of' <-> 'it') | 'deploy'`, a.TSQuery)
	assert.Equal(t, []string{"the", "end", "of", "it", "deploi"}, a.Terms)
}

func TestSearchQueryStopWordsOnly(t *testing.T) {
	a := analyze(t, "what is it? Who did THAT")
	assert.Equal(t, `"what" OR "is" OR "it" OR "who" OR "did" OR "that"`, a.FTS5, "only stop words: search for them")
	assert.Equal(t, []string{"what", "is", "it", "who", "did", "that"}, a.Terms)
}

func TestSearchQueryFolding(t *testing.T) {
	a := analyze(t, "Café RÉSUMÉ naïve Straße e\u0301cole ＡＢＣ")
	assert.Equal(t, `"cafe" OR "resume" OR "naive" OR "straße" OR "ecole" OR "ａｂｃ"`, a.FTS5)
	assert.Equal(t, `'café' | 'résumé' | 'naïve' | 'straße' | 'e`+"\u0301"+`cole' | 'ａｂｃ'`, a.TSQuery,
		"PostgreSQL's english configuration keeps diacritics: tsquery words keep them too")
	assert.Equal(t, []string{"cafe", "resum", "naiv", "straß", "ecol", "ａｂｃ"}, a.Terms)
}

func TestSearchQuerySeparators(t *testing.T) {
	// unicode61: anything but letters and digits separates words.
	a := analyze(t, `it's e-mail foo_bar a.b step:3 C++ v2 x86_64 ¿qué? deploy*`)
	assert.Equal(t, `"e" OR "mail" OR "foo" OR "bar" OR "b" OR "step" OR "3" OR "c" OR "v2" OR "x86" OR "64" OR "que" OR "deploy"`, a.FTS5)
}

func TestSearchQueryRepeatsAndCase(t *testing.T) {
	a := analyze(t, "Deploy deploy DEPLOY deploys \"deploy\"")
	assert.Equal(t, `"deploy" OR "deploys"`, a.FTS5, "a word is searched once; its inflections are separate words")
	assert.Equal(t, []string{"deploi"}, a.Terms, "but they are one term")
}

func TestSearchQueryEmpty(t *testing.T) {
	for _, q := range []string{"", " ", "?!", `""`, `" "`, "\x00", "\xff\xfe", "😀 ✓ — …", "\u0301"} {
		a := analyze(t, q)
		assert.Equal(t, "", a.FTS5, "%q", q)
		assert.Equal(t, "", a.TSQuery, "%q", q)
		assert.Equal(t, []string{}, a.Terms, "%q", q)
	}
}

func TestSearchQueryLimits(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 500; i++ {
		b.WriteString("word")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + " ")
	}
	a := analyze(t, b.String())
	assert.Len(t, strings.Split(a.FTS5, " OR "), core.MaxQueryTokens)
	assert.LessOrEqual(t, len(a.Terms), core.MaxQueryTokens)

	long := strings.Repeat("a", core.MaxTokenBytes+1)
	a = analyze(t, long+" kept "+strings.Repeat("b", core.MaxTokenBytes))
	assert.Equal(t, `"kept" OR "`+strings.Repeat("b", core.MaxTokenBytes)+`"`, a.FTS5, "an overlong word is dropped")
	a = analyze(t, `"one `+long+` two three"`)
	assert.Equal(t, `"one" OR "two three"`, a.FTS5, "an overlong word splits a phrase")

	a = analyze(t, strings.Repeat("(", 10000)+"x"+strings.Repeat(`"`, 3))
	assert.Equal(t, `"x"`, a.FTS5)
}

func TestSearchQueryLanguage(t *testing.T) {
	_, err := core.AnalyzeSearchQuery("x", "english")
	require.NoError(t, err)
	_, err = core.AnalyzeSearchQuery("x", "klingon")
	require.Error(t, err)
	assert.Equal(t, `invalid_input: language: only "english" is supported, got "klingon"`, err.Error())
}

// The output holds only quoted words: whatever the input, no byte of it
// reaches an engine as syntax.
func FuzzSearchQueryShape(f *testing.F) {
	for _, s := range []string{"", `a "b c" d`, `NOT x AND y OR z NEAR(w)`, "\xff'\"\x00*:^-()", "“x”"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		a, err := core.AnalyzeSearchQuery(q, "")
		require.NoError(t, err)
		require.True(t, utf8.ValidString(a.FTS5) && utf8.ValidString(a.TSQuery))
		if a.FTS5 == "" {
			require.Empty(t, a.TSQuery)
			require.Empty(t, a.Terms)
			return
		}
		items := strings.Split(a.FTS5, " OR ")
		require.LessOrEqual(t, len(items), core.MaxQueryTokens)
		for _, it := range items {
			require.True(t, len(it) >= 3 && it[0] == '"' && it[len(it)-1] == '"', "item %q", it)
			for _, w := range strings.Split(it[1:len(it)-1], " ") {
				require.NotEmpty(t, w)
				require.NotContains(t, w, `"`)
				require.LessOrEqual(t, len(w), core.MaxTokenBytes)
			}
		}
		ts := strings.Split(a.TSQuery, " | ")
		require.Len(t, ts, len(items))
		for _, it := range ts {
			it = strings.TrimSuffix(strings.TrimPrefix(it, "("), ")")
			for _, w := range strings.Split(it, " <-> ") {
				require.True(t, len(w) >= 3 && w[0] == '\'' && w[len(w)-1] == '\'', "lexeme %q", w)
				require.NotContains(t, w[1:len(w)-1], `'`)
				require.NotContains(t, w[1:len(w)-1], `\`)
			}
		}
	})
}

func TestPorterStem(t *testing.T) {
	// Porter's paper, step by step; FTS5's variant (bli → ble, logi → log).
	for in, want := range map[string]string{
		"caresses": "caress", "ponies": "poni", "ties": "ti", "caress": "caress", "cats": "cat",
		"feed": "feed", "agreed": "agre", "plastered": "plaster", "bled": "bled", "motoring": "motor", "sing": "sing",
		"conflated": "conflat", "troubled": "troubl", "sized": "size", "hopping": "hop", "tanned": "tan",
		"falling": "fall", "hissing": "hiss", "fizzed": "fizz", "failing": "fail", "filing": "file",
		"happy": "happi", "sky": "sky", "relational": "relat", "conditional": "condit", "rational": "ration",
		"valenci": "valenc", "digitizer": "digit", "conformabli": "conform", "radicalli": "radic",
		"differentli": "differ", "vileli": "vile", "analogousli": "analog", "vietnamization": "vietnam",
		"predication": "predic", "operator": "oper", "feudalism": "feudal", "decisiveness": "decis",
		"hopefulness": "hope", "callousness": "callous", "formaliti": "formal", "sensitiviti": "sensit",
		"sensibiliti": "sensibl", "triplicate": "triplic", "formative": "form", "formalize": "formal",
		"electriciti": "electr", "electrical": "electr", "hopeful": "hope", "goodness": "good",
		"revival": "reviv", "allowance": "allow", "inference": "infer", "airliner": "airlin",
		"gyroscopic": "gyroscop", "adjustable": "adjust", "defensible": "defens", "irritant": "irrit",
		"replacement": "replac", "adjustment": "adjust", "dependent": "depend", "adoption": "adopt",
		"homologou": "homolog", "communism": "commun", "activate": "activ", "angulariti": "angular",
		"homologous": "homolog", "effective": "effect", "bowdlerize": "bowdler", "probate": "probat",
		"rate": "rate", "cease": "ceas", "controll": "control", "roll": "roll", "generalizations": "gener",
		"oscillators": "oscil", "archaeology": "archaeolog",
		// Short, long and odd tokens.
		"is": "is", "ed": "ed", "eed": "e", "aed": "a", "ies": "ie", "sses": "sse", "é": "é",
		strings.Repeat("a", 60) + "ing": strings.Repeat("a", 60),         // 63 bytes: stemmed
		strings.Repeat("b", 62) + "ing": strings.Repeat("b", 62) + "ing", // 65 bytes: passed through
	} {
		assert.Equal(t, want, core.PorterStem(in), "%q", in)
	}
}

func TestIndexTerms(t *testing.T) {
	assert.Equal(t, []string{"the", "deploi", "script", "fail", "at", "step", "3", "the", "deploi"},
		core.IndexTerms("The deploy-script FAILED at step:3; the deploys"))
	assert.Empty(t, core.IndexTerms(" ?! "))
}
