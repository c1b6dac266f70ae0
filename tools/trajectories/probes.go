package main

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/clipfold/clipfold/internal/benchkit"

	"github.com/tidwall/gjson"
)

// The probes are derived from the data by these rules (docs/trajectories.md
// states them in words):
//
//   - A fact probe is a value an agent learned from a tool early and used
//     later: a scalar argument value of a tool call (a string of at least
//     minFactLen characters, or a number with at least two digits) that
//     appears (case-insensitively) in the content of a tool result lying in
//     the first half of the trajectory, before the call, and in no user or
//     system message before the call (what the user said is not learned
//     from a tool). One probe per distinct value; its sources are the
//     tool results of the first half that show it. A value appears in a
//     text when it stands there whole: not inside a longer run of letters
//     and digits ("12" is not in "412.5").
//   - A fact is in a context when a clip-archive there holds it, or one of
//     its sources is there and still holds it (a cleared result does not).
//     A later call repeating the value does not count: that is the use of
//     the fact, not the early output it came from.
//   - A call probe asks for a tool result the way an agent remembers a
//     tool use: "what did <tool> <argument values> return?", the values in
//     the call's order, separated by spaces. A call without argument
//     values gives no probe; calls that give the same question are one
//     probe, and a result of any of them answers it.

// minFactLen is the shortest string value that makes a fact probe.
const minFactLen = 4

// factProbe is one early fact.
type factProbe struct {
	Value   string   `json:"value"`
	Sources []string `json:"sources"` // the early tool results that show it
	UsedBy  string   `json:"used_by"` // the first message whose call repeats it
}

// callProbe is one question by the call.
type callProbe struct {
	Query   string   `json:"query"`
	Results []string `json:"results"` // the tool results that answer it
}

// argValues returns the scalar values of a call's JSON arguments, in
// order (argLeaves).
func argValues(arguments string) []string {
	if !gjson.Valid(arguments) {
		return nil
	}
	var out []string
	for _, l := range argLeaves(gjson.Parse(arguments)) {
		out = append(out, l.text)
	}
	return out
}

// factCandidate reports whether a value is specific enough to be a fact.
func factCandidate(v string, number bool) bool {
	if number {
		digits := 0
		for _, r := range v {
			if r >= '0' && r <= '9' {
				digits++
			}
		}
		return digits >= 2
	}
	return len([]rune(v)) >= minFactLen
}

// factProbes derives the fact probes of t.
func factProbes(t *trajectory) []factProbe {
	half := len(t.Messages) / 2
	seen := map[string]bool{}
	var out []factProbe
	for k := range t.Messages {
		for _, tc := range t.Messages[k].ToolCalls {
			if !gjson.Valid(tc.Arguments) {
				continue
			}
			for _, v := range argLeaves(gjson.Parse(tc.Arguments)) {
				if !factCandidate(v.text, v.number) {
					continue
				}
				key := strings.ToLower(v.text)
				if seen[key] {
					continue
				}
				var srcs []string
				told := false
				for j := 0; j < k; j++ {
					m := &t.Messages[j]
					if !containsWhole(strings.ToLower(m.Content), key) {
						continue
					}
					switch m.Role {
					case "user", "system":
						told = true
					case "tool":
						if j < half {
							srcs = append(srcs, m.ID)
						}
					}
				}
				if told || len(srcs) == 0 {
					continue
				}
				seen[key] = true
				out = append(out, factProbe{Value: v.text, Sources: srcs, UsedBy: t.Messages[k].ID})
			}
		}
	}
	return out
}

// leaf is one scalar argument value.
type leaf struct {
	text   string
	number bool
}

// argLeaves returns the scalar values under r, in order: arrays give
// their elements, objects their values, depth first; empty strings,
// booleans and nulls are left out.
func argLeaves(r gjson.Result) []leaf {
	var out []leaf
	var walk func(r gjson.Result)
	walk = func(r gjson.Result) {
		switch {
		case r.IsObject() || r.IsArray():
			r.ForEach(func(_, v gjson.Result) bool {
				walk(v)
				return true
			})
		case r.Type == gjson.String:
			if s := strings.TrimSpace(r.String()); s != "" {
				out = append(out, leaf{text: s})
			}
		case r.Type == gjson.Number:
			out = append(out, leaf{text: r.Raw, number: true})
		}
	}
	walk(r)
	return out
}

// callQuery is the question an agent asks about one call ("" when the
// call has no argument values).
func callQuery(name, arguments string) string {
	vals := argValues(arguments)
	if len(vals) == 0 {
		return ""
	}
	return "what did " + name + " " + strings.Join(vals, " ") + " return?"
}

// callProbes derives the call probes of t, in the order of their first
// result.
func callProbes(t *trajectory) []callProbe {
	at := map[string]int{}
	var out []callProbe
	for i := range t.Messages {
		m := &t.Messages[i]
		tc, ok := t.call(m)
		if !ok {
			continue
		}
		q := callQuery(tc.Name, tc.Arguments)
		if q == "" {
			continue
		}
		if k, dup := at[q]; dup {
			out[k].Results = append(out[k].Results, m.ID)
			continue
		}
		at[q] = len(out)
		out = append(out, callProbe{Query: q, Results: []string{m.ID}})
	}
	return out
}

// hasFact reports whether a context holds the fact (case-insensitively):
// in a clip-archive, or in one of its sources kept there.
func hasFact(ctx []message, p *factProbe) bool {
	v := strings.ToLower(p.Value)
	for i := range ctx {
		m := &ctx[i]
		if !isArchive(m) && !slices.Contains(p.Sources, m.ID) {
			continue
		}
		if containsWhole(strings.ToLower(m.Content), v) {
			return true
		}
	}
	return false
}

// containsWhole reports whether v stands in s whole: at an occurrence
// whose neighbours are not letters or digits when v's own ends are.
func containsWhole(s, v string) bool {
	if v == "" {
		return false
	}
	first, _ := utf8.DecodeRuneInString(v)
	last, _ := utf8.DecodeLastRuneInString(v)
	for from := 0; ; {
		i := strings.Index(s[from:], v)
		if i < 0 {
			return false
		}
		i += from
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[i+len(v):])
		if !(i > 0 && alnum(first) && alnum(before)) && !(i+len(v) < len(s) && alnum(last) && alnum(after)) {
			return true
		}
		from = i + 1
	}
}

func alnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// isArchive reports whether m is a clip-archive message.
func isArchive(m *message) bool { return benchkit.IsArchive(m) }
