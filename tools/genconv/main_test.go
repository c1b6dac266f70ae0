package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommittedFilesAreFresh regenerates every conversation (which also
// validates it) and checks that the committed files are exactly what the
// generator writes, so the files and their generator never drift apart.
func TestCommittedFilesAreFresh(t *testing.T) {
	files, err := generateAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join("..", "..", "testdata", f.kind, f.name))
		if err != nil {
			t.Fatalf("%s: %v (run go run ./tools/genconv)", f.name, err)
		}
		if !bytes.Equal(got, f.data) {
			t.Errorf("%s is stale: run go run ./tools/genconv", f.name)
		}
	}
}

// TestGenerationIsDeterministic generates twice and compares.
func TestGenerationIsDeterministic(t *testing.T) {
	a, err := generateAll()
	if err != nil {
		t.Fatal(err)
	}
	b, err := generateAll()
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if a[i].name != b[i].name || !bytes.Equal(a[i].data, b[i].data) {
			t.Errorf("%s differs between two runs", a[i].name)
		}
	}
}

// TestValidateRejects checks that the validator catches what it promises
// to catch.
func TestValidateRejects(t *testing.T) {
	g := newGen(1)
	writeSupport(g)
	base := g.msgs
	mutate := func(f func(m []message) []message) []message {
		c := append([]message(nil), base...)
		return f(c)
	}
	cases := map[string][]message{
		"duplicate id":    mutate(func(m []message) []message { m[5].ID = m[4].ID; return m }),
		"bad role":        mutate(func(m []message) []message { m[3].Role = "bot"; return m }),
		"time not rising": mutate(func(m []message) []message { m[9].CreatedAt = m[8].CreatedAt; return m }),
		"orphan tool":     mutate(func(m []message) []message { return append(m[:4:4], m[5:]...) }),
		"too short":       base[:100],
		"unanswered call": mutate(func(m []message) []message { return append(m[:5:5], m[6:]...) }),
		"empty content":   mutate(func(m []message) []message { m[2].Content = ""; return m }),
	}
	for name, msgs := range cases {
		if err := validate(msgs, g.facts); err == nil {
			t.Errorf("%s: validate accepted it", name)
		}
	}
	if err := validate(base, g.facts); err != nil {
		t.Fatalf("the unmodified conversation: %v", err)
	}
	late := append([]fact(nil), g.facts...)
	late[0].MessageIDs = []string{base[len(base)-1].ID}
	if err := validate(base, late); err == nil {
		t.Error("a fact stated late was accepted")
	}
}

// TestValidateFidelityRejects checks that the fidelity validator catches
// what testdata/fidelity/README.md promises.
func TestValidateFidelityRejects(t *testing.T) {
	sc := fidelityScenarios[0]
	g := newGen(sc.seed)
	sc.write(g)
	qf := finishQuestions(g, sc)
	if err := validateFidelity(g.msgs, g.sessions, qf.Questions); err != nil {
		t.Fatalf("the unmodified conversation: %v", err)
	}
	find := func(cat string) int {
		for i, q := range qf.Questions {
			if q.Category == cat {
				return i
			}
		}
		t.Fatalf("no %s question", cat)
		return -1
	}
	what, when := find(catWhat), find(catWhen)
	mutate := func(f func(qs []question)) []question {
		qs := make([]question, len(qf.Questions))
		for i, q := range qf.Questions {
			q.Answers = append([]string(nil), q.Answers...)
			q.Evidence = append([]string(nil), q.Evidence...)
			qs[i] = q
		}
		f(qs)
		return qs
	}
	evidenceText := messageText(&g.msgs[indexOf(g.msgs, qf.Questions[what].Evidence[0])])
	rareWord := ""
	for _, w := range words(evidenceText) {
		if len(w) >= minSharedLen && !strings.EqualFold(w, qf.Questions[what].Answers[0]) {
			n := 0
			for i := range g.msgs {
				if strings.Contains(strings.ToLower(messageText(&g.msgs[i])), w) {
					n++
				}
			}
			if n == 1 {
				rareWord = w
				break
			}
		}
	}
	if rareWord == "" {
		t.Fatal("no rare word in the evidence to test with")
	}
	type bad struct {
		qs   []question
		want string // in the error
	}
	cases := map[string]bad{
		"unknown evidence":       {mutate(func(qs []question) { qs[what].Evidence = []string{"nope-0001"} }), "unknown evidence"},
		"answer not in evidence": {mutate(func(qs []question) { qs[what].Answers = []string{"zebra crossing"} }), "is not in the evidence"},
		"answer elsewhere too":   {mutate(func(qs []question) { qs[what].Answers = []string{commonWord(t, g.msgs, evidenceText)} }), "which is not evidence"},
		"answer in question":     {mutate(func(qs []question) { qs[what].Question += " " + qs[what].Answers[0] + "?" }), "gives its answer"},
		"rare word shared":       {mutate(func(qs []question) { qs[what].Question = "What about " + rareWord + "?" }), "rare word"},
		"wrong date":             {mutate(func(qs []question) { qs[when].Answers[0] = "1999-01-01" }), "want the first evidence's date"},
		"anchor not in evidence": {mutate(func(qs []question) { qs[when].Anchors = []string{"zebra crossing"} }), "anchor"},
		"bad category":           {mutate(func(qs []question) { qs[what].Category = "why" }), "unknown category"},
		"duplicate id":           {mutate(func(qs []question) { qs[1].ID = qs[0].ID }), "duplicate id"},
		"too few":                {qf.Questions[:10], "10 questions"},
	}
	for name, c := range cases {
		err := validateFidelity(g.msgs, g.sessions, c.qs)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error about %q", name, err, c.want)
		}
	}
	if err := validateFidelity(g.msgs, g.sessions[:10], qf.Questions); err == nil {
		t.Error("10 sessions were accepted")
	}
	merged := append([]int{g.sessions[0]}, g.sessions[2:]...) // sessions 1 and 2 run over two days
	if err := validateFidelity(g.msgs, merged, qf.Questions); err == nil {
		t.Error("a session spanning two days was accepted")
	}
}

func indexOf(msgs []message, id string) int {
	for i := range msgs {
		if msgs[i].ID == id {
			return i
		}
	}
	return -1
}

// commonWord returns a word of text (5+ letters) that many messages
// contain.
func commonWord(t *testing.T, msgs []message, text string) string {
	for _, w := range words(text) {
		if len(w) < minSharedLen {
			continue
		}
		n := 0
		for i := range msgs {
			if strings.Contains(strings.ToLower(messageText(&msgs[i])), w) {
				n++
			}
		}
		if n > 20 {
			return w
		}
	}
	t.Fatal("no common word in the evidence")
	return ""
}
