// Command gensearchtables writes core/searchtables.go: which code points
// SQLite's FTS5 unicode61 tokenizer (remove_diacritics 2) treats as token
// characters, which it folds into a token as diacritics, and what it folds
// each of them to. The tables are read off the real engine (modernc.org/sqlite,
// the driver the Go store uses) rather than transcribed from Unicode data,
// so core's query analysis splits and folds words exactly as the index does.
//
//	go run ./tools/gensearchtables            # rewrites core/searchtables.go
//	go run ./tools/gensearchtables -check     # exits 1 if the file is stale
package main

import (
	"bytes"
	"database/sql"
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
	"unicode/utf8"

	_ "modernc.org/sqlite"
)

const out = "core/searchtables.go"

func main() {
	check := flag.Bool("check", false, "compare with the committed file instead of writing it")
	flag.Parse()
	alnum, dia, fold, err := probe()
	if err != nil {
		log.Fatal(err)
	}
	src, err := render(alnum, dia, fold)
	if err != nil {
		log.Fatal(err)
	}
	if *check {
		old, err := os.ReadFile(out)
		if err != nil {
			log.Fatal(err)
		}
		if !bytes.Equal(old, src) {
			log.Fatalf("%s is stale: run go run ./tools/gensearchtables", out)
		}
		return
	}
	if err := os.WriteFile(out, src, 0o644); err != nil {
		log.Fatal(err)
	}
}

// probe tokenizes every code point twice with the real tokenizer: alone
// (a token iff it is a token character) and between 'a' and 'b' (one
// token for a token character or a diacritic, two for a separator).
// Its results are indexed by code point: alnum, a token character
// (starts or continues a token); dia, not a token character but folded
// into a token it follows (a diacritic); fold, what a token character or
// diacritic becomes, -1 when dropped.
func probe() (alnum, dia []bool, fold []int32, err error) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return nil, nil, nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range []string{
		`CREATE VIRTUAL TABLE alone USING fts5(x, tokenize = 'unicode61 remove_diacritics 2')`,
		`CREATE VIRTUAL TABLE inside USING fts5(x, tokenize = 'unicode61 remove_diacritics 2')`,
		`CREATE VIRTUAL TABLE alone_v USING fts5vocab(alone, instance)`,
		`CREATE VIRTUAL TABLE inside_v USING fts5vocab(inside, instance)`,
	} {
		if _, err := db.Exec(q); err != nil {
			return nil, nil, nil, err
		}
	}
	tx, err := db.Begin()
	if err != nil {
		return nil, nil, nil, err
	}
	a, _ := tx.Prepare(`INSERT INTO alone (rowid, x) VALUES (?, ?)`)
	in, _ := tx.Prepare(`INSERT INTO inside (rowid, x) VALUES (?, ?)`)
	for c := rune(1); c <= utf8.MaxRune; c++ {
		if !utf8.ValidRune(c) {
			continue
		}
		if _, err := a.Exec(int64(c), string(c)); err != nil {
			return nil, nil, nil, err
		}
		if _, err := in.Exec(int64(c), "a"+string(c)+"b"); err != nil {
			return nil, nil, nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, nil, nil, err
	}
	n := utf8.MaxRune + 1
	alnum, dia, fold = make([]bool, n), make([]bool, n), make([]int32, n)
	for i := range fold {
		fold[i] = -1
	}
	rows, err := db.Query(`SELECT doc, term FROM alone_v`)
	if err != nil {
		return nil, nil, nil, err
	}
	for rows.Next() {
		var doc int64
		var term string
		if err := rows.Scan(&doc, &term); err != nil {
			return nil, nil, nil, err
		}
		r, size := utf8.DecodeRuneInString(term)
		if size != len(term) {
			return nil, nil, nil, fmt.Errorf("U+%04X folds to %q, not one code point", doc, term)
		}
		alnum[doc] = true
		fold[doc] = r
	}
	if err := rows.Err(); err != nil {
		return nil, nil, nil, err
	}
	count := map[int64]int{}
	terms := map[int64]string{}
	rows, err = db.Query(`SELECT doc, term FROM inside_v`)
	if err != nil {
		return nil, nil, nil, err
	}
	for rows.Next() {
		var doc int64
		var term string
		if err := rows.Scan(&doc, &term); err != nil {
			return nil, nil, nil, err
		}
		count[doc]++
		terms[doc] = term
	}
	if err := rows.Err(); err != nil {
		return nil, nil, nil, err
	}
	for c := rune(1); c <= utf8.MaxRune; c++ {
		if !utf8.ValidRune(c) {
			continue
		}
		k := int64(c)
		switch {
		case count[k] == 1 && alnum[c]:
			want := "a" + string(fold[c]) + "b"
			if terms[k] != want {
				return nil, nil, nil, fmt.Errorf("U+%04X: inside a word gives %q, alone %q", c, terms[k], string(fold[c]))
			}
		case count[k] == 1:
			dia[c] = true
			t := terms[k]
			if len(t) < 2 || t[0] != 'a' || t[len(t)-1] != 'b' {
				return nil, nil, nil, fmt.Errorf("U+%04X: inside a word gives %q", c, t)
			}
			if mid := t[1 : len(t)-1]; mid != "" {
				r, size := utf8.DecodeRuneInString(mid)
				if size != len(mid) {
					return nil, nil, nil, fmt.Errorf("U+%04X folds to %q", c, mid)
				}
				fold[c] = r
			}
		case count[k] == 2 && !alnum[c]:
		default:
			return nil, nil, nil, fmt.Errorf("U+%04X: %d tokens inside a word, alone a token: %v", c, count[k], alnum[c])
		}
	}
	return alnum, dia, fold, nil
}

func render(alnum, dia []bool, fold []int32) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`// Code generated by tools/gensearchtables from SQLite's FTS5 unicode61
// tokenizer (remove_diacritics 2), as modernc.org/sqlite runs it. DO NOT EDIT.

package core

`)
	// Token characters above ASCII, as [lo, hi] ranges.
	var ranges [][2]rune
	for c := rune(0x80); c <= utf8.MaxRune; c++ {
		if !alnum[c] {
			continue
		}
		if n := len(ranges); n > 0 && ranges[n-1][1] == c-1 {
			ranges[n-1][1] = c
		} else {
			ranges = append(ranges, [2]rune{c, c})
		}
	}
	fmt.Fprintf(&b, "// tokenRanges are the non-ASCII token characters, as sorted [lo, hi] pairs.\nvar tokenRanges = [...]uint32{\n")
	for i, r := range ranges {
		fmt.Fprintf(&b, "0x%X, 0x%X, ", r[0], r[1])
		if i%6 == 5 {
			b.WriteString("\n")
		}
	}
	b.WriteString("}\n\n")
	var dias []rune
	for c := rune(0); c <= utf8.MaxRune; c++ {
		if dia[c] {
			dias = append(dias, c)
		}
	}
	fmt.Fprintf(&b, "// diacritics are the code points that are not token characters but\n// continue a token (and fold to diacriticFold), sorted.\nvar diacritics = [...]uint32{\n")
	for _, c := range dias {
		fmt.Fprintf(&b, "0x%X, ", c)
	}
	b.WriteString("\n}\n\n")
	fmt.Fprintf(&b, "// diacriticFold is what each of diacritics becomes inside a token; 0: dropped.\nvar diacriticFold = [...]uint32{\n")
	for _, c := range dias {
		f := fold[c]
		if f < 0 {
			f = 0
		}
		fmt.Fprintf(&b, "0x%X, ", f)
	}
	b.WriteString("\n}\n\n")
	// Folds of token characters that change them, as runs: lo, count,
	// step, delta (c = lo + k*step for k < count folds to c + delta).
	type run struct {
		lo, n, step, delta int32
	}
	var runs []run
	var changed []rune
	for c := rune(0x80); c <= utf8.MaxRune; c++ {
		if alnum[c] && fold[c] != c {
			changed = append(changed, c)
		}
	}
	for i := 0; i < len(changed); {
		c := changed[i]
		d := fold[c] - c
		best := run{lo: c, n: 1, step: 1, delta: d}
		for _, step := range []int32{1, 2} {
			n := int32(1)
			for j := i + 1; j < len(changed) && changed[j] == c+n*step && fold[changed[j]]-changed[j] == d; j++ {
				n++
			}
			if n > best.n {
				best = run{lo: c, n: n, step: step, delta: d}
			}
		}
		runs = append(runs, best)
		// skip the run's members
		end := best.lo + (best.n-1)*best.step
		for i < len(changed) && changed[i] <= end {
			if (changed[i]-best.lo)%best.step != 0 {
				break
			}
			i++
		}
	}
	// Check the runs reproduce the table exactly.
	got := map[rune]rune{}
	for _, r := range runs {
		for k := int32(0); k < r.n; k++ {
			c := r.lo + k*r.step
			if _, dup := got[c]; dup {
				return nil, fmt.Errorf("U+%04X in two runs", c)
			}
			got[c] = c + r.delta
		}
	}
	for c := rune(0x80); c <= utf8.MaxRune; c++ {
		want := c
		if alnum[c] {
			want = fold[c]
		}
		g, ok := got[c]
		if !ok {
			g = c
		}
		if alnum[c] && g != want {
			return nil, fmt.Errorf("runs fold U+%04X to U+%04X, SQLite to U+%04X", c, g, want)
		}
	}
	fmt.Fprintf(&b, "// foldRuns are the non-ASCII token characters folding changes, as runs\n"+
		"// sorted by start: lo | (count-1)<<21 | (step-1)<<27 — lo + k*step (k < count)\n"+
		"// folds to itself + foldDeltas[i].\nvar foldRuns = [...]uint32{\n")
	for i, r := range runs {
		if r.lo >= 1<<21 || r.n < 1 || r.n > 64 || r.step < 1 || r.step > 2 {
			return nil, fmt.Errorf("run %+v does not pack", r)
		}
		fmt.Fprintf(&b, "0x%X, ", uint32(r.lo)|uint32(r.n-1)<<21|uint32(r.step-1)<<27)
		if i%8 == 7 {
			b.WriteString("\n")
		}
	}
	b.WriteString("\n}\n\n// foldDeltas are the runs' deltas.\nvar foldDeltas = [...]int32{\n")
	for i, r := range runs {
		fmt.Fprintf(&b, "%d, ", r.delta)
		if i%12 == 11 {
			b.WriteString("\n")
		}
	}
	b.WriteString("\n}\n")
	// ASCII: token characters must be exactly [0-9A-Za-z], folded to lower case.
	for c := rune(1); c < 0x80; c++ {
		isAlnum := c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if alnum[c] != isAlnum || dia[c] {
			return nil, fmt.Errorf("ASCII %q: token character %v in SQLite", c, alnum[c])
		}
		if isAlnum && c >= 'A' && c <= 'Z' && fold[c] != c+32 {
			return nil, fmt.Errorf("ASCII %q folds to %q", c, fold[c])
		}
	}
	return format.Source(b.Bytes())
}
