package benchdata

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestHistory: valid JSON in the compact form JSON.stringify writes (the
// Node bench re-encodes the parsed file on every call), ~400 bytes per
// message, times one second apart.
func TestHistory(t *testing.T) {
	for _, n := range []int{1, 10, 1000, 100_000} {
		in := History(n)
		var v struct {
			Messages []struct {
				ID, Role, Content string
				CreatedAt         time.Time `json:"created_at"`
			}
			Config map[string]int
		}
		require.NoError(t, json.Unmarshal(in, &v), "n=%d", n)
		require.Len(t, v.Messages, n)
		require.Equal(t, 20, v.Config["keep_recent"])
		var compact bytes.Buffer
		require.NoError(t, json.Compact(&compact, in))
		require.Equal(t, compact.Bytes(), in)
		base := time.Date(2026, 2, 28, 10, 0, 0, 0, time.UTC)
		for i, m := range v.Messages {
			require.Equal(t, base.Add(time.Duration(i)*time.Second), m.CreatedAt, "message %d", i)
		}
		if n >= 1000 {
			per := float64(len(in)) / float64(n)
			require.InDelta(t, 400, per, 20, "bytes per message")
		}
	}
}
