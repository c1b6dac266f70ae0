package sqlite_test

// core's query analysis held to the real FTS5 engine: the words core
// finds and the terms it stems are the index's, and no query text ever
// makes FTS5 answer a syntax error.

import (
	"database/sql"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/clipfold/clipfold/core"
)

// ftsTokenizer is the tokenizer of the store's search index.
const ftsTokenizer = `porter unicode61 remove_diacritics 2`

// engine is a scratch FTS5 table with the store's tokenizer and a view of
// its terms.
type engine struct {
	db *sql.DB
}

func newEngine(t testing.TB) *engine {
	t.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	require.NoError(t, err)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	_, err = db.Exec(`CREATE VIRTUAL TABLE doc USING fts5(body, tokenize = '` + ftsTokenizer + `');
CREATE VIRTUAL TABLE doc_terms USING fts5vocab(doc, instance);`)
	require.NoError(t, err)
	return &engine{db: db}
}

// terms indexes each text as a document and returns the terms FTS5 holds
// for each, in order.
func (e *engine) terms(t testing.TB, texts []string) [][]string {
	t.Helper()
	_, err := e.db.Exec(`DELETE FROM doc`)
	require.NoError(t, err)
	tx, err := e.db.Begin()
	require.NoError(t, err)
	stmt, err := tx.Prepare(`INSERT INTO doc (rowid, body) VALUES (?, ?)`)
	require.NoError(t, err)
	for i, s := range texts {
		_, err := stmt.Exec(i+1, s)
		require.NoError(t, err)
	}
	require.NoError(t, tx.Commit())
	out := make([][]string, len(texts))
	rows, err := e.db.Query(`SELECT doc, term FROM doc_terms ORDER BY doc, "offset"`)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var doc int
		var term string
		require.NoError(t, rows.Scan(&doc, &term))
		out[doc-1] = append(out[doc-1], term)
	}
	require.NoError(t, rows.Err())
	return out
}

// corpus is every word-ish text the tests can find: the bundled
// conversations, Porter's classic examples, words built from stems and
// suffixes, random letter strings and non-ASCII samples.
func corpus(t testing.TB) []string {
	var texts []string
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "conversations", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		gjson.ParseBytes(b).ForEach(func(_, m gjson.Result) bool {
			if c := m.Get("content").String(); c != "" {
				texts = append(texts, c)
			}
			return true
		})
	}
	texts = append(texts, porterExamples...)
	suffixes := []string{"", "s", "es", "ies", "sses", "ss", "ed", "eed", "ing", "at", "bl", "iz", "y", "ational", "tional",
		"enci", "anci", "izer", "logi", "bli", "alli", "entli", "eli", "ousli", "ization", "ation", "ator", "alism",
		"iveness", "fulness", "ousness", "aliti", "iviti", "biliti", "ical", "ness", "icate", "iciti", "ful", "ative",
		"alize", "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "sion", "tion",
		"ou", "ism", "ate", "iti", "ous", "ive", "ize", "e", "ll", "le"}
	stems := []string{"", "a", "e", "y", "b", "ab", "ya", "by", "tr", "hop", "fil", "ros", "conflat", "gener", "cr",
		"ey", "oy", "sky", "feud", "adjust", "sens", "rel", "dep", "contr", "w", "x", "bow", "box", "play", "i", "é",
		"ß", "naïv", "über", "日本"}
	for _, st := range stems {
		var b strings.Builder
		for _, s1 := range suffixes {
			for _, s2 := range []string{"", "s", "ing", "ed", "ly", "ness", "e"} {
				b.WriteString(st + s1 + s2 + " ")
			}
		}
		texts = append(texts, b.String())
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const letters = "aaeeiioouuyybcdfghlmnprstvwxzsl"
	for i := 0; i < 200; i++ {
		var b strings.Builder
		for j := 0; j < 50; j++ {
			n := 1 + rng.IntN(14)
			for k := 0; k < n; k++ {
				b.WriteByte(letters[rng.IntN(len(letters))])
			}
			b.WriteByte(' ')
		}
		texts = append(texts, b.String())
	}
	texts = append(texts,
		"Café résumé naïve ÉCOLE Straße Œuvre Ångström Dvořák Łódź İstanbul ǅemal ﬁle",
		"e\u0301cole cafe\u0301s a\u0308\u0308b \u0301x",
		"Ελληνικά ΚΑΛΗΜΕΡΑ Русский ТЕКСТ עברית العربية हिन्दी 日本語のテキスト 한국어",
		"emoji 😀 sep👍arate it's don't e-mail foo_bar a.b.c 1,000 3.14 v2 x86_64 C++ #tag @user",
		"ＡＢＣ ｆｕｌｌｗｉｄｔｈ 𝐛𝐨𝐥𝐝 𐐀𐐁 deseret ²³ ½ Ⅻ",
		strings.Repeat("a", 63)+"ing "+strings.Repeat("b", 62)+"ing "+strings.Repeat("x", 300),
	)
	return texts
}

// porterExamples are words from Porter's paper and the rules' edge cases.
var porterExamples = []string{
	"caresses ponies ties caress cats feed agreed plastered bled motoring sing conflated troubled sized hopping " +
		"tanned falling hissing fizzed failing filing happy sky relational conditional rational valenci hesitanci " +
		"digitizer conformabli radicalli differentli vileli analogousli vietnamization predication operator " +
		"feudalism decisiveness hopefulness callousness formaliti sensitiviti sensibiliti triplicate formative " +
		"formalize electriciti electrical hopeful goodness revival allowance inference airliner gyroscopic " +
		"adjustable defensible irritant replacement adjustment dependent adoption homologou communism activate " +
		"angulariti homologous effective bowdlerize probate rate cease controll roll generalizations oscillators",
	"eed ied ies sses aed ing bing yed eying dying lying tying ays abys a aa aaa aaaa s ss sss ssss",
}

// TestIndexTermsMatchFTS5: core.IndexTerms (tokenizer, folding, Porter)
// gives exactly the terms FTS5 indexes, on every text of the corpus.
func TestIndexTermsMatchFTS5(t *testing.T) {
	e := newEngine(t)
	texts := corpus(t)
	got := e.terms(t, texts)
	diffs := 0
	for i, text := range texts {
		want := core.IndexTerms(text)
		if !assert.Equal(t, got[i], nilIfEmpty(want), "text %d: %.200q", i, text) {
			if diffs++; diffs > 5 {
				t.FailNow()
			}
		}
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// hostileQueries are query texts that break naive FTS5 and tsquery
// builders; the PostgreSQL store's tests run them too.
var hostileQueries = []string{
	``, ` `, `?`, `"`, `""`, `"""`, `"deploy`, `deploy"`, `'`, `''`, `deploy's`, `-`, `--`, `-deploy`, `*`, `deploy*`,
	`:`, `step:3`, `body:error`, `^deploy`, `+deploy`, `(`, `)`, `()`, `(deploy`, `NOT`, `AND`, `OR`, `NEAR`,
	`deploy AND`, `OR deploy`, `NOT deploy`, `NEAR(deploy script)`, `deploy NEAR/2 script`, `{body}: deploy`,
	`'; DROP TABLE messages; --`, `%`, `_`, `\`, `\"`, `[`, `]`, `<->`, `!`, `&`, `|`, `!deploy & (script | error)`,
	`deploy:*`, `'deploy':*A`, `😀`, "tab\tnewline\nnul\x00byte", "bad utf8 \xff\xfe deploy", "\xed\xa0\x80 surrogate",
	`the`, `what is it`, `who what when where how did does`, `"the"`, `" "`, `"?!"`, `e.g.`, `a.b.c`, `1-2`, `\x00`,
	strings.Repeat("deploy ", 2000), strings.Repeat("(", 500), strings.Repeat(`"`, 501), strings.Repeat("a", 10000),
	strings.Repeat("what ", 2000), strings.Repeat("ab ", 3400), "“smart quotes” and ‘single’", `"unclosed phrase`,
	"\u0301\u0301", "ﬁle Ⅻ ²", strings.Repeat("é", 300),
}

// TestHostileQueriesFTS5: every hostile query's FTS5 expression runs
// (bm25-ranked, as the store runs it) without error.
func TestHostileQueriesFTS5(t *testing.T) {
	e := newEngine(t)
	e.terms(t, []string{"the deploy script failed at step 3", "what is it? e.g. a.b.c", strings.Repeat("a", 10000)})
	for _, q := range hostileQueries {
		checkFTS5(t, e, q)
	}
}

func checkFTS5(t *testing.T, e *engine, q string) {
	t.Helper()
	a, err := core.AnalyzeSearchQuery(q, "")
	require.NoError(t, err)
	require.True(t, utf8.ValidString(a.FTS5), "%q", q)
	require.NotContains(t, a.FTS5, "\x00")
	if a.FTS5 == "" {
		require.Empty(t, a.TSQuery)
		return
	}
	rows, err := e.db.Query(`SELECT rowid, bm25(doc) FROM doc WHERE doc MATCH ? ORDER BY bm25(doc)`, a.FTS5)
	require.NoError(t, err, "query %.80q: FTS5 %.200q", q, a.FTS5)
	for rows.Next() {
	}
	require.NoError(t, rows.Err(), "query %.80q: FTS5 %.200q", q, a.FTS5)
	require.NoError(t, rows.Close())
}

// FuzzSearchQueryFTS5: any query text gives an FTS5 expression FTS5 runs,
// and a document holding the query's text is found by it.
func FuzzSearchQueryFTS5(f *testing.F) {
	for _, q := range hostileQueries {
		if len(q) < 1000 {
			f.Add(q)
		}
	}
	f.Add(`What did we decide about the "connection pool" size?`)
	e := newEngine(f)
	f.Fuzz(func(t *testing.T, q string) {
		a, err := core.AnalyzeSearchQuery(q, "")
		require.NoError(t, err)
		if a.FTS5 == "" {
			require.Empty(t, a.Terms)
			return
		}
		require.True(t, utf8.ValidString(a.FTS5))
		if !utf8.ValidString(q) {
			checkFTS5(t, e, q) // FTS5 reads invalid UTF-8 its own way: only no error
			return
		}
		e.terms(t, []string{q, "unrelated filler text"})
		var n int
		require.NoError(t, e.db.QueryRow(`SELECT count(*) FROM doc WHERE doc MATCH ? AND rowid = 1`, a.FTS5).Scan(&n),
			"query %q: FTS5 %q", q, a.FTS5)
		require.Equal(t, 1, n, "the query's own text is not found by its analysis: %q → %q", q, a.FTS5)
		idx := map[string]bool{}
		for _, term := range core.IndexTerms(q) {
			idx[term] = true
		}
		for _, term := range a.Terms {
			require.True(t, idx[term], "term %q of %q is not among the text's index terms", term, q)
		}
	})
}
