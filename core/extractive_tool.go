package core

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// Tool calls and results in the extractive summarizer.
//
// A tool result is said with its call: its line is labelled "Tool " + the
// call ("Tool get_order(4471): status: shipped; total: 23.5"), the call
// written compactly (compactCall), so "Tool: 23553.0" becomes
// "Tool calculate(2 * 11776.5): 23553.0". A call whose result is in the
// same input is not said again on a line of its own; a call without its
// result (or whose result says nothing) is a "Tool call: …" line.
//
// Output that is JSON (a document, or JSON lines among text) is read as
// facts, not prose: every scalar member becomes "key: value" (strings
// unquoted, a list of scalars "key: a, b, c", a small flat object inline
// "key (a: 1, b: 2)"), the facts of one object are one sentence (cut
// into several when long), each object of a list its own sentence. What
// the call's arguments already show and an id that repeats its object's
// key are left out. Ids, numbers, paths and error names are all values
// of members, so they are kept with their keys; the summarizer then
// chooses among the sentences like any others.

const (
	// callLabelArgs bounds the arguments of a call in a result's label,
	// in code points.
	callLabelArgs = 48
	// factSentenceBytes: the facts of one object are cut into sentences of
	// about this many bytes.
	factSentenceBytes = 240
	// factTailBytes: the end of a cut object shorter than this joins the
	// sentence before it.
	factTailBytes = 48
	// factStringMax: a string value longer than this (in bytes) is prose,
	// said as a sentence of its own.
	factStringMax = 200
	// factListMax: a list of scalars shows this many values, then the count
	// of the rest.
	factListMax = 10
	// factInlineMax: an object of at most this many scalar members, whose
	// JSON text is at most factInlineBytes, is written inline.
	factInlineMax   = 8
	factInlineBytes = 200
	// factDepthMax: JSON nested deeper is not read as facts (nor parsed:
	// gjson recurses, and the plug-in's stack is small).
	factDepthMax = 24
)

// compactCall is a call as a summary shows it: name(arguments), a JSON
// object's members as "key=value" joined with ", " (a lone member's value
// alone: "read_file(orders/repository.go)"), strings unquoted, other
// values as their JSON text, anything else as given; whitespace runs are
// one space. maxArgs > 0 cuts the arguments to that many code points
// (ending with "…"), and makes any "): " in them ") : ", so that the label
// of a summary line always ends at its first "): ".
func compactCall(name, args string, maxArgs int) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('(')
	a := strings.ReplaceAll(compactArgs(args), "\n", " ")
	if maxArgs > 0 {
		a = strings.ReplaceAll(a, "): ", ") : ")
	}
	limit := maxArgs
	if limit <= 0 {
		limit = 1 << 30
	}
	writeCollapsed(&b, a, limit)
	b.WriteByte(')')
	return b.String()
}

// compactArgs is the arguments part of compactCall, before cutting.
func compactArgs(args string) string {
	t := strings.TrimSpace(args)
	if len(t) < 2 || t[0] != '{' || !jsonFits(t) || !gjson.Valid(t) {
		return t
	}
	obj := gjson.Parse(t)
	n := 0
	obj.ForEach(func(_, _ gjson.Result) bool { n++; return true })
	var b strings.Builder
	obj.ForEach(func(k, v gjson.Result) bool {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		if n > 1 {
			b.WriteString(k.String())
			b.WriteByte('=')
		}
		if v.Type == gjson.String {
			b.WriteString(v.Str)
		} else {
			b.WriteString(v.Raw)
		}
		return true
	})
	return b.String()
}

// jsonFits reports whether s nests no deeper than factDepthMax (brackets
// outside strings), so gjson may walk it.
func jsonFits(s string) bool {
	depth := 0
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if in {
			if c == '\\' {
				i++
			} else if c == '"' {
				in = false
			}
			continue
		}
		switch c {
		case '"':
			in = true
		case '{', '[':
			if depth++; depth > factDepthMax {
				return false
			}
		case '}', ']':
			depth--
		}
	}
	return true
}

// isJSONText reports whether s (trimmed) is a JSON object or array that
// can be read as facts.
func isJSONText(s string) bool {
	return len(s) >= 2 && (s[0] == '{' && s[len(s)-1] == '}' || s[0] == '[' && s[len(s)-1] == ']') &&
		jsonFits(s) && gjson.Valid(s)
}

// factWriter turns JSON into fact sentences.
type factWriter struct {
	b      strings.Builder
	prefix string   // "key: " written before the next item of a new object
	skip   []string // values the call's arguments show
	sents  []string
	// left is how many more bytes of facts to write (< 0: no limit); the
	// walk stops when none are left.
	left int
	// split: the last sentence was cut for its length, and the current
	// one continues its object.
	split bool
}

// jsonFacts calls emit with the fact sentences of the JSON text s (see
// isJSONText); argVals are the values the call's arguments show, not
// repeated. limit > 0 stops the facts (not the headline) at about that
// many bytes. The first sentence is its headline (jsonHeadline) when the
// facts do not fit in one, or the one sentence they fit in; headline says
// which.
func jsonFacts(s string, argVals []string, limit int, emit func(fact string)) {
	root := gjson.Parse(s)
	w := factWriter{skip: argVals, left: limit}
	w.value("", "", root)
	w.flush()
	if len(w.sents) > 1 {
		if h := jsonHeadline(root, argVals); h != "" {
			emit(h)
		}
	}
	for _, f := range w.sents {
		emit(f)
	}
}

// A fact of a JSON document, for its headline.
type jsonFact struct {
	key, val string
	rank     int8 // factID, factNumber, factWord
	order    int32
}

// Ranks of facts in a headline: ids, names of errors and statuses first,
// then numbers, then short words.
const (
	factID = iota
	factNumber
	factWord
	factOther
)

// headlineBytes bounds a headline; a headline is chosen among the first
// headlineFactsMax facts of a document.
const (
	headlineBytes    = 180
	headlineFactsMax = 2000
)

// jsonHeadline is one sentence of a document's most telling facts: its
// ids (values of letters and digits, and values of keys that name ids,
// numbers, codes, errors, statuses, paths or messages), then its numbers,
// then its short words, each key once with all its values ("flight_number:
// HAT028, HAT277"), in the order the keys first appear, at most about
// headlineBytes long. A nested object's members are keyed
// "object.member" ("prices.economy: 121").
func jsonHeadline(root gjson.Result, argVals []string) string {
	var facts []jsonFact
	var walk func(parent, key string, v gjson.Result, depth int)
	walk = func(parent, key string, v gjson.Result, depth int) {
		switch {
		case v.Type == gjson.Null || depth > factDepthMax || len(facts) >= headlineFactsMax:
		case v.IsObject():
			v.ForEach(func(k, m gjson.Result) bool {
				ks := k.String()
				if m.IsObject() && looksLikeID(ks) {
					// An object keyed by its id: "credit_card_4421486": {…}.
					facts = append(facts, jsonFact{key: key, val: ks, rank: factID, order: int32(len(facts))})
				}
				walk(key, ks, m, depth+1)
				return true
			})
		case v.IsArray():
			v.ForEach(func(_, e gjson.Result) bool {
				walk(parent, key, e, depth+1)
				return true
			})
		default:
			t := scalarText(v)
			if t == "" || len(t) > 64 || t == parent {
				return
			}
			for _, a := range argVals {
				if a == t {
					return
				}
			}
			k := key
			if parent != "" && v.Type == gjson.Number {
				k = parent + "." + key
			}
			facts = append(facts, jsonFact{key: k, val: t, rank: factRank(key, t, v.Type), order: int32(len(facts))})
		}
	}
	walk("", "", root, 0)
	// Group the facts by key, keys in the order they first appear, each
	// value once; a key ranks as its best value.
	type group struct {
		key  string
		vals []string
		rank int8
		size int
	}
	var groups []group
	byKey := map[string]int{}
	seen := map[[2]string]struct{}{}
	for i := range facts {
		f := &facts[i]
		g, ok := byKey[f.key]
		if !ok {
			g = len(groups)
			byKey[f.key] = g
			groups = append(groups, group{key: f.key, rank: f.rank, size: len(f.key) + 4})
		}
		gr := &groups[g]
		if _, dup := seen[[2]string{f.key, f.val}]; !dup {
			seen[[2]string{f.key, f.val}] = struct{}{}
			gr.vals = append(gr.vals, f.val)
			gr.size += len(f.val) + 2
		}
		gr.rank = min(gr.rank, f.rank)
	}
	// Choose whole keys by rank, then order, while they fit; a key of ids
	// too long to fit shows the values that do, then "…".
	order := Identity(len(groups))
	slices.SortStableFunc(order, func(a, b int) int { return int(groups[a].rank) - int(groups[b].rank) })
	take := make([]int, len(groups)) // values taken per key
	size := 0
	for _, k := range order {
		g := &groups[k]
		if g.rank == factOther {
			break
		}
		if size+g.size <= headlineBytes {
			take[k] = len(g.vals)
			size += g.size
			continue
		}
		if g.rank != factID {
			continue
		}
		n := len(g.key) + 4 + len(" …")
		for _, v := range g.vals {
			if size+n+len(v)+2 > headlineBytes {
				break
			}
			n += len(v) + 2
			take[k]++
		}
		if take[k] > 0 {
			size += n
		}
	}
	var b strings.Builder
	for k := range groups {
		if take[k] == 0 {
			continue
		}
		g := &groups[k]
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		if g.key != "" {
			b.WriteString(g.key)
			b.WriteString(": ")
		}
		for i, v := range g.vals[:take[k]] {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(v)
		}
		if take[k] < len(g.vals) {
			b.WriteString(" …")
		}
	}
	return b.String()
}

// factRank ranks a fact for a headline.
func factRank(key, val string, t gjson.Type) int8 {
	if t == gjson.Number {
		if isIDKey(key) {
			return factID
		}
		return factNumber
	}
	if t != gjson.String {
		return factWord
	}
	if isIDKey(key) || looksLikeID(val) {
		return factID
	}
	if len(val) <= 24 && strings.Count(val, " ") <= 2 && !timeLike(val) {
		return factWord
	}
	return factOther
}

// isIDKey reports a key that names an id, a number, a code, an error, a
// status, a path or a message.
func isIDKey(key string) bool {
	k := strings.ToLower(key)
	if k == "id" || strings.HasSuffix(k, "_id") || strings.HasSuffix(k, "id") && len(k) > 2 && isUpper(key[len(key)-2]) {
		return true
	}
	for _, w := range [...]string{"number", "code", "error", "err", "status", "state", "path", "file", "url", "message", "msg", "reason", "exception"} {
		if k == w || strings.HasSuffix(k, "_"+w) || strings.HasPrefix(k, w+"_") {
			return true
		}
	}
	return false
}

// looksLikeID reports a value of letters and digits (no spaces) that is
// not a date, a time or a plain number, or a path, a URL or an e-mail
// address.
func looksLikeID(v string) bool {
	if strings.IndexByte(v, ' ') >= 0 || timeLike(v) {
		return false
	}
	var letters, digits bool
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case isDigit(c):
			digits = true
		case isASCIILetter(c):
			letters = true
		case c == '/' || c == '@':
			return len(v) > 2
		}
	}
	return letters && digits
}

// argValues are the scalar values of a JSON object of arguments, as
// strings ("4471", "orders/repository.go").
func argValues(args string) []string {
	t := strings.TrimSpace(args)
	if len(t) < 2 || t[0] != '{' || !jsonFits(t) || !gjson.Valid(t) {
		return nil
	}
	var out []string
	gjson.Parse(t).ForEach(func(_, v gjson.Result) bool {
		if v.Type != gjson.JSON && v.Type != gjson.Null {
			out = append(out, scalarText(v))
		}
		return true
	})
	return out
}

// flush ends the current sentence: the end of an object, or of one
// cut for its length. A short end of a cut object joins the sentence
// before it.
func (w *factWriter) flush() {
	if n := w.b.Len(); n > 0 {
		if w.left >= 0 {
			w.left = max(w.left-n, 0)
		}
		if w.split && n < factTailBytes && len(w.sents) > 0 {
			w.sents[len(w.sents)-1] += "; " + w.b.String()
		} else {
			w.sents = append(w.sents, w.b.String())
		}
		w.b.Reset()
	}
	w.prefix = ""
	w.split = false
}

// item writes "key: val" into the current sentence.
func (w *factWriter) item(key, val string) {
	if w.b.Len() > 0 {
		w.b.WriteString("; ")
	} else if w.prefix != "" {
		w.b.WriteString(w.prefix)
		w.prefix = ""
	}
	if key != "" {
		w.b.WriteString(key)
		w.b.WriteString(": ")
	}
	w.b.WriteString(val)
	if w.b.Len() >= factSentenceBytes {
		w.flush()
		w.split = true
	}
}

// shown reports whether val is a value the call's arguments show or the
// key of the object holding it ("id": "credit_card_4421486" under
// "credit_card_4421486").
func (w *factWriter) shown(val, parent string) bool {
	if val == parent && parent != "" {
		return true
	}
	for _, s := range w.skip {
		if s == val {
			return true
		}
	}
	return false
}

func scalarText(v gjson.Result) string {
	if v.Type == gjson.String {
		return v.Str
	}
	return v.Raw
}

// full reports that the facts written reached the limit.
func (w *factWriter) full() bool { return w.left == 0 || w.left > 0 && w.b.Len() >= w.left }

// value writes the member key (of the object under parent) with value v.
func (w *factWriter) value(parent, key string, v gjson.Result) {
	if w.full() {
		return
	}
	switch {
	case v.Type == gjson.Null:
	case v.IsObject():
		if key != "" {
			if in, ok := inlineObject(v); ok {
				if in != "" {
					w.item("", key+" ("+in+")")
				}
				return
			}
		}
		w.flush()
		if key != "" {
			w.prefix = key + ": "
		}
		v.ForEach(func(k, m gjson.Result) bool {
			w.value(key, k.String(), m)
			return !w.full()
		})
		w.flush()
	case v.IsArray():
		if list, ok := scalarList(v); ok {
			if list != "" {
				w.item(key, list)
			}
			return
		}
		w.flush()
		v.ForEach(func(_, e gjson.Result) bool {
			if e.IsObject() || e.IsArray() {
				w.flush()
				w.value(key, "", e)
				w.flush()
			} else if t := scalarText(e); t != "" && !w.shown(t, parent) {
				w.item(key, t)
			}
			return !w.full()
		})
		w.flush()
	default:
		t := scalarText(v)
		if t == "" || w.shown(t, parent) {
			return
		}
		if len(t) > factStringMax {
			// Prose: a sentence of its own.
			w.flush()
			w.item(key, t)
			w.flush()
			return
		}
		w.item(key, t)
	}
}

// inlineObject writes a small object of scalars as "a: 1, b: 2" (ok
// false when it is not one).
func inlineObject(v gjson.Result) (string, bool) {
	if len(v.Raw) > factInlineBytes {
		return "", false
	}
	var b strings.Builder
	n, ok := 0, true
	v.ForEach(func(k, m gjson.Result) bool {
		if m.Type == gjson.JSON {
			ok = false
			return false
		}
		if n++; n > factInlineMax {
			ok = false
			return false
		}
		if t := scalarText(m); m.Type != gjson.Null && t != "" {
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			b.WriteString(k.String())
			b.WriteString(": ")
			b.WriteString(t)
		}
		return true
	})
	return b.String(), ok
}

// scalarList writes a list of scalars as "a, b, c", at most factListMax
// of them and then "… (+N)" (ok false when it is not one).
func scalarList(v gjson.Result) (string, bool) {
	var b strings.Builder
	n, ok := 0, true
	v.ForEach(func(_, e gjson.Result) bool {
		if e.Type == gjson.JSON {
			ok = false
			return false
		}
		n++
		if t := scalarText(e); n <= factListMax && e.Type != gjson.Null && t != "" {
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			b.WriteString(t)
		}
		return true
	})
	if ok && n > factListMax {
		b.WriteString(" … (+")
		b.WriteString(strconv.Itoa(n - factListMax))
		b.WriteByte(')')
	}
	return b.String(), ok
}

// callKey is what the calls of two tool results must share for their
// outputs to collapse into one line (see score): the tool's name and the
// shape of the arguments in the label "Tool name(arguments)" (the letters
// of the whitespace-separated tokens that hold no digit, but the last one
// when the arguments were cut), so that "tail -n 40 …" and "tail -n 41 …"
// retried share it and two tools, or the same tool on two files, do not.
// 0 for any other label.
func callKey(label string) uint64 {
	const prime, offset = 1099511628211, 14695981039346656037
	rest, ok := strings.CutPrefix(label, "Tool ")
	if !ok || rest == "call" {
		return 0
	}
	h := uint64(offset)
	i := strings.IndexByte(rest, '(')
	if i < 0 {
		i = len(rest)
	}
	for k := 0; k < i; k++ {
		h = (h ^ uint64(rest[k])) * prime
	}
	h = (h ^ '(') * prime
	toks := strings.Fields(rest[i:])
	if n := len(toks); n > 0 && strings.HasSuffix(toks[n-1], "…)") {
		toks = toks[:n-1] // cut (compactCall): where it was cut depends on the numbers before
	}
	for _, tok := range toks {
		th, dig := uint64(offset), false
		for k := 0; k < len(tok); {
			r, w := utf8.DecodeRuneInString(tok[k:])
			k += w
			switch {
			case r >= '0' && r <= '9':
				dig = true
			case r < utf8.RuneSelf && isASCIILetter(byte(r)):
				th = (th ^ uint64(r|0x20)) * prime
			case r >= utf8.RuneSelf:
				th = (th ^ uint64(r)) * prime
			}
		}
		if !dig {
			h = (h ^ th) * prime
		}
	}
	if h == 0 {
		h = 1
	}
	return h
}

// timeLike reports whether a token is a date, a time or a number with
// separators ("2024-05-20", "14:06:22", "3.5"): it starts with a digit and
// holds '-', ':' or '.'. An id that starts with a digit ("8JX2QK") is not.
func timeLike(tok string) bool {
	for len(tok) > 0 && strings.IndexByte("\"'([{", tok[0]) >= 0 {
		tok = tok[1:]
	}
	return len(tok) > 0 && isDigit(tok[0]) && strings.ContainsAny(tok, "-:.")
}

// hashIdent hashes a token's letters and digits, lower-cased.
func hashIdent(tok string) uint64 {
	const prime, offset = 1099511628211, 14695981039346656037
	h := uint64(offset)
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; isDigit(c) || isASCIILetter(c) {
			h = (h ^ uint64(c|0x20*b2u(isUpper(c)))) * prime
		}
	}
	return h
}
