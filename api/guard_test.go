package api

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckShape(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+1)
	for _, tc := range []struct {
		name, in string
		wantErr  string // "" means accepted
	}{
		{"brackets inside strings do not nest", `{"a":"` + deep + `"}`, ""},
		{"escaped quote keeps the string open", `{"a":"x\"` + deep + `"}`, ""},
		{"an even run of backslashes closes it", `{"a":"x\\\\"` + `,"b":` + deep, "nests deeper"},
		{"deep nesting outside strings", `{"a":` + deep, "nests deeper"},
		{"exactly MaxDepth is fine", strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth), ""},
		{"unterminated string is left to the validator", `{"a":"abc`, ""},
		{"invalid UTF-8 names the byte", "{\"a\":\"\xff\"}", "at byte 6"},
		{"empty", "  ", "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkShape([]byte(tc.in))
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.wantErr)
		})
	}
}

// TestMaxElements: an array of more than MaxElements elements anywhere in
// an input is refused with too_large naming it, before anything is
// decoded; MaxElements elements are fine.
func TestMaxElements(t *testing.T) {
	arr := func(n int, item string) string {
		return "[" + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + "]"
	}
	over := arr(MaxElements+1, "1")
	for _, tc := range []struct {
		in, path string
	}{
		{`{"messages":` + over + `}`, "messages"},
		{`{"a":1, "history" : ` + over + `, "z":2}`, "history"},
		{`{"provider":"anthropic","request":{"model":"m","messages":` + over + `}}`, "request.messages"},
		{`{"batches":[{"content":"s"},{"x":{"y":` + over + `}}]}`, "batches[1].x.y"},
		{`{"m":[[1],[2,` + over + `]]}`, "m[1][1]"},
		{`{"messages":` + arr(MaxElements+1, `{"role":"user","content":"hi"}`) + `,"bad":}`, "messages"},
	} {
		_, err := parseInput([]byte(tc.in))
		require.Error(t, err, tc.path)
		require.Equal(t, "too_large: "+tc.path+": has more than 250000 elements; the limit is 250000", err.Error())
	}
	o, err := parseInput([]byte(`{"messages":` + arr(MaxElements, "1") + `}`))
	require.NoError(t, err)
	_, n := o.array("messages")
	require.Equal(t, MaxElements, n)
	// A long object is not an array.
	_, err = parseInput([]byte(`{"o":{` + strings.TrimSuffix(strings.Repeat(`"k":1,`, MaxElements+1), ",") + `}}`))
	require.NoError(t, err)
}

func TestPathAt(t *testing.T) {
	s := `{"a":[1,{"b":"x","c":[true]}], "d" : {"e":null}}`
	for _, tc := range []struct {
		sub  string
		path string
	}{
		{`[1,{`, "a"}, {`{"b"`, "a[1]"}, {`"x"`, "a[1].b"}, {`[true]`, "a[1].c"}, {`true`, "a[1].c[0]"},
		{`{"e"`, "d"}, {`null`, "d.e"}, {`"a"`, "input"},
	} {
		require.Equal(t, tc.path, pathAt(s, strings.Index(s, tc.sub)), tc.sub)
	}
	require.Equal(t, "input", pathAt(s, 0))
}
