package benchkit

import (
	"math"
	"sort"
	"strings"
	"unicode"
)

// The baseline search: plain Okapi BM25 over documents (for the
// benchmarks: the raw messages of a file, each with the text a benchmark
// gives it).
//
//   - Tokens: the text lower-cased and split on every character that is
//     not a Unicode letter or digit ("Maya's" → "maya", "s"); tokens in
//     stopWords are dropped. No stemming.
//   - Score: Σ over the query's distinct terms of
//     idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl)),
//     idf(t) = ln(1 + (N − n(t) + 0.5) / (n(t) + 0.5)) (never negative),
//     k1 = 1.2, b = 0.75.
//   - Ranking: score descending, ties to the later document; documents
//     scoring 0 (no query term) are not hits.

const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// stopWords is NLTK's English stop word list (nltk.corpus.stopwords,
// "english", the 179 words of NLTK 3.8).
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`i me my myself we our ours ourselves you you're you've you'll you'd your yours
yourself yourselves he him his himself she she's her hers herself it it's its itself they them their theirs
themselves what which who whom this that that'll these those am is are was were be been being have has had
having do does did doing a an the and but if or because as until while of at by for with about against
between into through during before after above below to from up down in out on off over under again further
then once here there when where why how all any both each few more most other some such no nor not only own
same so than too very s t can will just don don't should should've now d ll m o re ve y ain aren aren't
couldn couldn't didn didn't doesn doesn't hadn hadn't hasn hasn't haven haven't isn isn't ma mightn mightn't
mustn mustn't needn needn't shan shan't shouldn shouldn't wasn wasn't weren weren't won won't wouldn wouldn't`) {
		m[w] = true
	}
	return m
}()

// BM25Tokens is the baseline's tokenizer.
func BM25Tokens(s string) []string {
	fields := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	out := fields[:0]
	for _, f := range fields {
		if !stopWords[f] {
			out = append(out, f)
		}
	}
	return out
}

// Doc is one document of a BM25 index.
type Doc struct {
	ID   string
	Text string
}

// BM25 is the baseline's index over one conversation.
type BM25 struct {
	ids   []string
	tf    []map[string]int
	dl    []float64
	df    map[string]int
	avgdl float64
}

// NewBM25 indexes docs.
func NewBM25(docs []Doc) *BM25 {
	ix := &BM25{df: map[string]int{}}
	total := 0.0
	for i := range docs {
		toks := BM25Tokens(docs[i].Text)
		tf := map[string]int{}
		for _, t := range toks {
			tf[t]++
		}
		for t := range tf {
			ix.df[t]++
		}
		ix.ids = append(ix.ids, docs[i].ID)
		ix.tf = append(ix.tf, tf)
		ix.dl = append(ix.dl, float64(len(toks)))
		total += float64(len(toks))
	}
	if len(docs) > 0 {
		ix.avgdl = total / float64(len(docs))
	}
	return ix
}

// Search returns the ids of the best limit documents for query, best
// first, and how many documents matched at all.
func (ix *BM25) Search(query string, limit int) (ids []string, matched int) {
	seen := map[string]bool{}
	var terms []string
	for _, t := range BM25Tokens(query) {
		if !seen[t] {
			seen[t] = true
			terms = append(terms, t)
		}
	}
	type scored struct {
		i int
		s float64
	}
	var res []scored
	for i := range ix.ids {
		if s := ix.score(i, terms); s > 0 {
			res = append(res, scored{i, s})
		}
	}
	sort.Slice(res, func(a, b int) bool {
		if res[a].s != res[b].s {
			return res[a].s > res[b].s
		}
		return res[a].i > res[b].i
	})
	for k := 0; k < len(res) && k < limit; k++ {
		ids = append(ids, ix.ids[res[k].i])
	}
	return ids, len(res)
}

// score is document i's BM25 score for the (distinct) query terms.
func (ix *BM25) score(i int, terms []string) float64 {
	n := float64(len(ix.ids))
	s := 0.0
	for _, t := range terms {
		f := float64(ix.tf[i][t])
		if f == 0 {
			continue
		}
		df := float64(ix.df[t])
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		s += idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*ix.dl[i]/ix.avgdl))
	}
	return s
}
