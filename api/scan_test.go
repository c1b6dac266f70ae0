package api

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// oldVerdict is what parseInput accepted before scanInput: checkShape,
// gjson.Valid, and an object at the root.
func oldVerdict(in []byte) bool {
	return checkShape(in) == nil && gjson.ValidBytes(in) && gjson.ParseBytes(in).IsObject()
}

func scanInputSeeds() []string {
	return []string{
		`{}`, ` { } `, `{"a":1}`, `{"a":[1,2,{"b":null}],"c":"x"}`, `[]`, `"s"`, `1`, ``, ` `,
		`{"a":1,}`, `{"a" 1}`, `{"a":01}`, `{"a":-0.5e+10}`, `{"a":1.}`, `{"a":.5}`, `{"a":-}`, `{"a":1e}`,
		`{"a":"\u00e9\n\"\\\/\b\f\r\t"}`, `{"a":"\x"}`, `{"a":"\u12"}`, "{\"a\":\"\x01\"}", "{\"a\":\"\xff\"}",
		"{\"a\":\"\xed\xa0\x80\"}", `{"a":tru}`, `{"a":true}{}`, `{"a":nul}`, `{"a":[}`, `{"a":{"b":]}}`,
		`{"a\"b":1,"a":2}`, `{"a":1,"a":2}`, "{\"a\":1}\n", `{"a":1} x`, `{"a":"é"}`, "\xef\xbb\xbf{}",
		`{` + strings.Repeat(`"a":[`, 1) + strings.Repeat("[", 254) + strings.Repeat("]", 255) + `}`,
		`{"a":` + strings.Repeat("[", 255) + strings.Repeat("]", 255) + `}`,
		`{"a":` + strings.Repeat("[", 256) + strings.Repeat("]", 256) + `}`,
	}
}

func TestScanInputAgreesWithOldChecks(t *testing.T) {
	for _, s := range scanInputSeeds() {
		_, ok := scanInput([]byte(s))
		if want := oldVerdict([]byte(s)); ok != want {
			t.Errorf("scanInput(%.60q) = %v, old checks say %v", s, ok, want)
		}
	}
}

func TestObjectGet(t *testing.T) {
	o, ok := scanInput([]byte(`{"a":1,"b":{"c":[1,2]},"a":2,"d\u0065":"x","s":"q\"z","n":null}`))
	if !ok {
		t.Fatal("refused")
	}
	for _, tc := range []struct{ key, raw string }{
		{"a", "1"}, {"b", `{"c":[1,2]}`}, {"de", `"x"`}, {"s", `"q\"z"`}, {"n", "null"}, {"missing", ""},
	} {
		if got := o.Get(tc.key); got.Raw != tc.raw {
			t.Errorf("Get(%q).Raw = %q, want %q", tc.key, got.Raw, tc.raw)
		}
	}
	if got := o.Get("s").Str; got != `q"z` {
		t.Errorf("Get(s).Str = %q", got)
	}
	if got := o.Get("b").Get("c.1").Int(); got != 2 {
		t.Errorf("nested Get = %d", got)
	}
}

// FuzzScanInput holds the one-pass scanner to the checks it replaces:
// the same verdict on every input, and members that gjson finds too.
func FuzzScanInput(f *testing.F) {
	for _, s := range scanInputSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		o, ok := scanInput(in)
		if want := oldVerdict(in); ok != want {
			t.Fatalf("scanInput(%q) = %v, old checks say %v", in, ok, want)
		}
		if !ok {
			return
		}
		root := gjson.ParseBytes(in)
		for _, m := range o.members {
			key := gjson.Parse(`"` + m.key + `"`).Str
			if g := root.Get(gjson.Escape(key)); o.Get(key).Raw != g.Raw {
				t.Fatalf("Get(%q) = %q, gjson says %q", key, o.Get(key).Raw, g.Raw)
			}
		}
	})
}

// TestPlainWord: plainWord never calls a word plain that holds a byte a
// string cannot take as is, wherever the byte sits.
func TestPlainWord(t *testing.T) {
	for c := 0; c < 256; c++ {
		for p := 0; p < 8; p++ {
			w := []byte("abcdefgh")
			w[p] = byte(c)
			x := uint64(0)
			for i := 7; i >= 0; i-- {
				x = x<<8 | uint64(w[i])
			}
			if plainWord(x) && !plainStringByte[c] {
				t.Fatalf("plainWord missed byte %#x at %d", c, p)
			}
			if !plainWord(x) && plainStringByte[c] {
				t.Errorf("plainWord false alarm on %#x at %d", c, p)
			}
		}
	}
	for seed := uint64(1); seed < 200000; seed++ {
		x := seed * 0x9E3779B97F4A7C15
		all := true
		for i := 0; i < 8; i++ {
			all = all && plainStringByte[byte(x>>(8*i))]
		}
		if plainWord(x) && !all {
			t.Fatalf("plainWord(%#x) missed a byte", x)
		}
	}
}
