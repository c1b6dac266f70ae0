package api

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// TestObjectOf: the one-walk object answers as gjson's Get does: the
// first member of a name, escaped keys by their text, missing ones not
// there.
func TestObjectOf(t *testing.T) {
	r := gjson.Parse(`{"model":"a","messages":[{"role":"user","content":"x"}],"model":"b","max\u005ftokens":7}`)
	get := objectOf(r).Get
	for _, k := range []string{"model", "messages", "max_tokens", "system"} {
		require.Equal(t, r.Get(k).Raw, get(k).Raw, k)
		require.Equal(t, r.Get(k).Exists(), get(k).Exists(), k)
	}
	require.Equal(t, "a", get("model").Str)
}

// TestModelRequestSizedOnce: a request's messages are read into a slice
// made once when the scanner counted them.
func TestModelRequestSizedOnce(t *testing.T) {
	in := []byte(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]}`)
	root, err := parseInput(in)
	require.NoError(t, err)
	_, n := root.array("messages")
	req, err := decodeModelFields(root, n, "request", nil)
	require.NoError(t, err)
	require.Len(t, req.Messages, 3)
	require.Equal(t, 3, cap(req.Messages))
	require.Equal(t, "m", req.Model)
	require.Equal(t, 5, req.MaxTokens)
}

// TestModelMessagesWalkerMatchesGJSON holds the walker's reading of a
// request's messages to gjson's ForEach: the same messages and errors.
func TestModelMessagesWalkerMatchesGJSON(t *testing.T) {
	for _, ms := range []string{
		`[]`, ` [ ] `,
		`[{"role":"user","content":"hi"}]`,
		`[ {"role" : "user" , "content" : "a \"q\" \\ \u00e9" } , {"content":"x","role":"assistant"} ]`,
		`[{"role":"user","role":"assistant","content":"first role wins","content":"no"}]`,
		`[{"role":"system","content":[{"type":"text","text":"part"},{"type":"text","text":"two"}]}]`,
		`[{"role":"user","content":null}]`,
		`[{"role":"user","content":7}]`,
		`[{"role":"tool","content":"x"}]`,
		`[{"role":"robot","content":"x"}]`,
		`[{"content":"no role"}]`,
		`[{"role":"user","content":"ok"},"not an object"]`,
		`[{"role":"user","content":"ok"},[1,2]]`,
		`[{"role":"user","content":"x","extra":{"deep":[{"role":"assistant"}]},"n":-1.5e3,"t":true}]`,
		`[{"role":"us\u0065r","content":"escaped role"}]`,
		`[{}]`,
	} {
		var a1, a2 arena
		got, gotErr := walkModelMessages(ms, "request", nil, &a1)
		want, wantErr := modelMessagesGJSON(gjson.Parse(ms), "request", nil, &a2)
		require.NotErrorIs(t, gotErr, errNotWalked, ms)
		if wantErr != nil {
			require.Error(t, gotErr, ms)
			assert.Equal(t, wantErr.Error(), gotErr.Error(), ms)
			continue
		}
		require.NoError(t, gotErr, ms)
		assert.Equal(t, want, got, ms)
	}
}
