package api

import (
	"github.com/clipfold/clipfold/core"
)

// SearchQuery is the searchQuery export: {query, language?} →
// {"terms":[…],"fts5":"…","tsquery":"…"}, core.AnalyzeSearchQuery's
// analysis of a natural-language query. Empty strings mean the query has
// nothing to search for; a store answers that with no hits, not an error.
func (e *Env) SearchQuery(in []byte) ([]byte, error) {
	root, err := parseInput(in)
	if err != nil {
		return nil, err
	}
	query, err := requiredString(root, "query")
	if err != nil {
		return nil, err
	}
	lang, err := optString(root.Get("language"), "language")
	if err != nil {
		return nil, err
	}
	a, err := core.AnalyzeSearchQuery(query, lang)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 64+3*len(a.FTS5))
	b = append(b, `{"terms":`...)
	b = appendStrings(b, a.Terms)
	b = append(b, `,"fts5":`...)
	b = core.AppendJSONString(b, a.FTS5)
	b = append(b, `,"tsquery":`...)
	b = core.AppendJSONString(b, a.TSQuery)
	return append(b, '}'), nil
}
