package core

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// SearchQuery is one analysis of a natural-language search query, shared
// by every host (the searchQuery export): the stores take FTS5 or
// tsquery text from it instead of splitting the user's words themselves.
//
// Matching is any term (OR), ranked by BM25 (SQLite) or ts_rank_cd
// (PostgreSQL): a question whose words are spread over a conversation
// still finds the turns holding some of them, best first. Nothing the
// user types reaches an engine as syntax: every word is a quoted string
// of letters and digits.
type SearchQuery struct {
	// Terms are the distinct stems searched for, in query order: each
	// word as the SQLite index holds it (folded, then Porter-stemmed).
	Terms []string
	// FTS5 is an FTS5 MATCH expression: quoted words and phrases joined by
	// OR. The words are folded, not stemmed (the porter tokenizer stems
	// what is inside the quotes). "" means the query has nothing to
	// search for: a store answers no hits.
	FTS5 string
	// TSQuery is the same query for PostgreSQL's to_tsquery: quoted
	// lower-case words joined by |, a phrase as words joined by <->. ""
	// when FTS5 is "".
	TSQuery string
}

// Limits of one query: a pasted page must not become a thousand-term OR.
const (
	// MaxQueryTokens caps the words searched for (phrases' words included);
	// later words are ignored.
	MaxQueryTokens = 64
	// MaxTokenBytes is the longest word searched for, folded, in bytes;
	// longer runs of letters (base64, hashes of hashes) are ignored.
	MaxTokenBytes = 255
)

// AnalyzeSearchQuery analyses query (any bytes) for language, which must
// be "english" or "" (the default). Words are Unicode letter/digit runs
// split and folded exactly as SQLite's unicode61 tokenizer with
// remove_diacritics 2 does (any other character separates words; case and
// diacritics are folded). Text between double quotes (" or “ ”) is a
// phrase. English stop words (PostgreSQL's list: the, what, did, how, …)
// are dropped outside phrases — unless nothing else is left, so that a
// query of stop words still searches for them.
func AnalyzeSearchQuery(query, language string) (SearchQuery, error) {
	if language != "" && language != "english" {
		return SearchQuery{}, Invalid("language", `only "english" is supported, got `+quoteClip(language))
	}
	var a queryAnalysis
	a.parse(query)
	items := a.items
	kept := items[:0:0]
	for _, it := range items {
		if len(it.tokens) > 1 || !isStopWord(it.tokens[0].folded) {
			kept = append(kept, it)
		}
	}
	if len(kept) == 0 {
		kept = items // only stop words: search for them after all
	}
	var q SearchQuery
	var fts, tsq []byte
	seenTerm := map[string]bool{}
	for i, it := range kept {
		if i > 0 {
			fts = append(fts, " OR "...)
			tsq = append(tsq, " | "...)
		}
		fts = append(fts, '"')
		if len(it.tokens) > 1 {
			tsq = append(tsq, '(')
		}
		for j, t := range it.tokens {
			if j > 0 {
				fts = append(fts, ' ')
				tsq = append(tsq, " <-> "...)
			}
			fts = append(fts, t.folded...) // letters and digits only: no quote to double
			tsq = appendTSLexeme(tsq, t.lower)
			if s := PorterStem(t.folded); !seenTerm[s] {
				seenTerm[s] = true
				q.Terms = append(q.Terms, s)
			}
		}
		fts = append(fts, '"')
		if len(it.tokens) > 1 {
			tsq = append(tsq, ')')
		}
	}
	q.FTS5, q.TSQuery = string(fts), string(tsq)
	if q.Terms == nil {
		q.Terms = []string{}
	}
	return q, nil
}

// IndexTerms returns the terms SQLite's index ("porter unicode61
// remove_diacritics 2") holds for text, in order, repeats included: each
// word folded, then stemmed. Hosts that rank in memory can index with it.
func IndexTerms(text string) []string {
	ts := tokenize(text)
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = PorterStem(t.folded)
	}
	return out
}

// appendTSLexeme writes s as a quoted tsquery operand. Words hold only
// letters, digits and diacritics, but quotes and backslashes are escaped
// all the same.
func appendTSLexeme(b []byte, s string) []byte {
	b = append(b, '\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' || s[i] == '\\' {
			b = append(b, s[i])
		}
		b = append(b, s[i])
	}
	return append(b, '\'')
}

func quoteClip(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return string(AppendJSONString(nil, s))
}

// queryToken is one word of a query: folded as the SQLite index folds it,
// and lower-cased with its diacritics kept (PostgreSQL's english
// configuration keeps them).
type queryToken struct {
	folded, lower string
	// start and end are the word's byte offsets in the tokenized text.
	start, end int
}

// queryItem is a word (one token) or a phrase (several).
type queryItem struct {
	tokens []queryToken
}

type queryAnalysis struct {
	items  []queryItem
	seen   map[string]bool // items already taken, by their folded text
	tokens int             // tokens taken, against MaxQueryTokens
}

// parse splits query into items: the text between paired quotes is a
// phrase, the rest words. An unpaired quote is ignored.
func (a *queryAnalysis) parse(query string) {
	a.seen = map[string]bool{}
	var quotes []int // byte offsets of quote marks
	for i := 0; i < len(query); {
		r, w := utf8.DecodeRuneInString(query[i:])
		if r == '"' || r == '“' || r == '”' {
			quotes = append(quotes, i)
		}
		i += w
	}
	if len(quotes)%2 == 1 {
		quotes = quotes[:len(quotes)-1]
	}
	pos := 0
	for k := 0; k < len(quotes); k += 2 {
		a.words(query[pos:quotes[k]])
		open := quotes[k] + quoteWidth(query, quotes[k])
		a.phrase(query[open:quotes[k+1]])
		pos = quotes[k+1] + quoteWidth(query, quotes[k+1])
	}
	a.words(query[pos:])
}

func quoteWidth(s string, i int) int {
	_, w := utf8.DecodeRuneInString(s[i:])
	return w
}

// words adds each word of s as an item.
func (a *queryAnalysis) words(s string) {
	for _, t := range tokenize(s) {
		if len(t.folded) <= MaxTokenBytes {
			a.add([]queryToken{t})
		}
	}
}

// phrase adds the words of s as one phrase (a word if there is one). An
// overlong word splits it in two.
func (a *queryAnalysis) phrase(s string) {
	ts := tokenize(s)
	start := 0
	for i := 0; i <= len(ts); i++ {
		if i == len(ts) || len(ts[i].folded) > MaxTokenBytes {
			if i > start {
				a.add(ts[start:i])
			}
			start = i + 1
		}
	}
}

func (a *queryAnalysis) add(ts []queryToken) {
	if left := MaxQueryTokens - a.tokens; len(ts) > left {
		ts = ts[:left]
	}
	if len(ts) == 0 {
		return
	}
	key := ts[0].folded
	for _, t := range ts[1:] {
		key += " " + t.folded
	}
	if a.seen[key] {
		return
	}
	a.seen[key] = true
	a.tokens += len(ts)
	a.items = append(a.items, queryItem{tokens: ts})
}

// tokenize splits s as SQLite's unicode61 tokenizer does: a word starts at
// a token character and runs over token characters and diacritics; every
// other character (and every byte that is not UTF-8) separates words.
func tokenize(s string) []queryToken {
	var out []queryToken
	var folded, lower []byte
	inWord := false
	start, end := 0, 0
	flush := func() {
		if inWord && len(folded) > 0 {
			out = append(out, queryToken{folded: string(folded), lower: string(lower), start: start, end: end})
		}
		folded, lower, inWord = folded[:0], lower[:0], false
	}
	word := func(at, next int) {
		if !inWord {
			start, inWord = at, true
		}
		end = next
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
				word(i-1, i)
				folded, lower = append(folded, c), append(lower, c)
			case 'A' <= c && c <= 'Z':
				word(i-1, i)
				folded, lower = append(folded, c+32), append(lower, c+32)
			default:
				flush()
			}
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		i += w
		switch {
		case r == utf8.RuneError && w == 1:
			flush()
		case isTokenRune(r):
			word(i-w, i)
			folded = utf8.AppendRune(folded, foldRune(r))
			lower = utf8.AppendRune(lower, unicode.ToLower(r))
		case inWord:
			if f, ok := diacriticFolding(r); ok {
				if f != 0 {
					folded = utf8.AppendRune(folded, f)
				}
				lower = utf8.AppendRune(lower, r)
				end = i
				continue
			}
			flush()
		}
	}
	flush()
	return out
}

// isTokenRune reports whether non-ASCII r is a token character.
func isTokenRune(r rune) bool {
	u := uint32(r)
	lo, hi := 0, len(tokenRanges)/2
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if tokenRanges[2*m+1] < u {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(tokenRanges)/2 && tokenRanges[2*lo] <= u
}

// diacriticFolding returns what diacritic r becomes inside a word (0:
// dropped); ok is false when r is not one.
func diacriticFolding(r rune) (rune, bool) {
	for i, d := range diacritics {
		if d == uint32(r) {
			return rune(diacriticFold[i]), true
		}
	}
	return 0, false
}

// foldRune folds non-ASCII token character r as unicode61 with
// remove_diacritics 2 does.
func foldRune(r rune) rune {
	u := uint32(r)
	// The last run starting at or before r.
	lo, hi := 0, len(foldRuns)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if foldRuns[m]&(1<<21-1) <= u {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return r
	}
	run := foldRuns[lo-1]
	start := run & (1<<21 - 1)
	count := run>>21&63 + 1
	step := run>>27&1 + 1
	off := u - start
	if off%step != 0 || off/step >= count {
		return r
	}
	return r + rune(foldDeltas[lo-1])
}

// isStopWord reports whether folded word w is an English stop word.
func isStopWord(w string) bool {
	if len(w) > 10 {
		return false
	}
	_, ok := stopWords[w]
	return ok
}

// stopWords is PostgreSQL's english.stop (Snowball's original English
// list, 127 words): question words and auxiliaries included, so "what did
// we decide about the cache?" searches for decide and cache.
var stopWords = func() map[string]struct{} {
	m := make(map[string]struct{}, 127)
	for _, w := range strings.Fields(`i me my myself we our ours ourselves you your yours yourself yourselves
he him his himself she her hers herself it its itself they them their theirs themselves what which who whom
this that these those am is are was were be been being have has had having do does did doing a an the and
but if or because as until while of at by for with about against between into through during before after
above below to from up down in out on off over under again further then once here there when where why how
all any both each few more most other some such no nor not only own same so than too very s t can will just
don should now`) {
		m[w] = struct{}{}
	}
	return m
}()
