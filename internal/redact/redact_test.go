package redact

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The vectors every host's redaction passes (Python and Node read the same
// file).
type vectors struct {
	URL  []struct{ In, Out string } `json:"url"`
	Text []struct{ In, Out string } `json:"text"`
}

func loadVectors(t *testing.T) vectors {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/redact/vectors.json")
	require.NoError(t, err)
	var v vectors
	require.NoError(t, json.Unmarshal(raw, &v))
	require.NotEmpty(t, v.URL)
	require.NotEmpty(t, v.Text)
	return v
}

func TestURLVectors(t *testing.T) {
	for _, c := range loadVectors(t).URL {
		assert.Equal(t, c.Out, URL(c.In), "URL(%q)", c.In)
		assert.Equal(t, c.Out, Text(c.In), "a URL alone is running text too: Text(%q)", c.In)
		assert.Equal(t, c.Out, URL(URL(c.In)), "idempotent: %q", c.In)
	}
}

func TestTextVectors(t *testing.T) {
	for _, c := range loadVectors(t).Text {
		assert.Equal(t, c.Out, Text(c.In), "Text(%q)", c.In)
	}
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"https://u:p@h/?key=1", "x://", "://@", "a://b@c?d=e&f#g=h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Text(s)
		assert.Equal(t, out, Text(out), "redacting twice changes nothing")
	})
}
