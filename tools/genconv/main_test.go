package main

import (
	"bytes"
	"os"
	"path/filepath"
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
